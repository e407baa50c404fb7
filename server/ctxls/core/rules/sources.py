"""What the frontmatter and skill rules read (CTX501-CTX507, and CTX701 for the user's files): the sources of
each kind, the user's own (~/.claude) included, found as the session model finds them; their frontmatter with
the line of each key; and the tables of the fields Claude Code reads."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from .. import lazyre
from .. import discovery as D
from ..loader import is_within
from ..workspace import FileInfo, Workspace
from ..findings import Span
from ..skills import command_files, skill_dirs

# --------------------------------------------------------------------------------------------- field tables
# Spec B2: every field Claude Code reads from a SKILL.md (all optional).
SKILL_FIELDS = frozenset({
    "name", "description", "when_to_use", "argument-hint", "arguments", "disable-model-invocation",
    "user-invocable", "allowed-tools", "disallowed-tools", "model", "effort", "context", "agent", "background",
    "hooks", "paths", "shell", "metadata", "license", "compatibility",
})
# The Agent Skills spec / claude.ai / Skills API accept only these; anything else is an upload error.
PORTABLE_FIELDS = frozenset({"name", "description", "license", "compatibility", "metadata", "allowed-tools"})
# Legacy commands read the skill fields except `name` and `paths` (spec B1).
COMMAND_IGNORED = frozenset({"name", "paths"})
RULE_FIELDS = frozenset({"paths"})
MEMORY_FIELDS = frozenset({"name", "description", "type", "modified"})


NAME_RE = lazyre.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
PORTABLE_NAME_MAX = 64
PORTABLE_DESC_MAX = 1024



KEY_LINE_RE = lazyre.compile(r"^([A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]|$)")


# --------------------------------------------------------------------------------------------- helpers
def home_files(ws: Workspace) -> list[FileInfo]:
    """User-scope sources that load in every project: ~/.claude/CLAUDE.md, rules, skills and commands."""
    key = ("ctxls.rules.home_files", ws.settings.claude_dir)
    got = ws.fs.memo.get(key)
    if got is None:
        # Found as the session model finds them (rules read recursively through symlinks, skills behind linked
        # directories, namespaced commands): one way to list each kind.
        cd = ws.settings.claude_dir
        paths: list[tuple[Path, str]] = [(cd / "CLAUDE.md", D.CLAUDE_MD)]
        paths += [(p, D.RULE) for p in D.rule_files(cd / "rules")[0]] if os.path.isdir(cd / "rules") else []
        paths += [(p, D.SKILL) for p in skill_dirs(cd, ws.fs)]
        paths += [(p, D.COMMAND) for p in command_files(cd, ws.fs)]
        got = [p for p in paths if os.path.isfile(p[0])]
        ws.fs.memo[key] = got
    out = []
    for path, kind in got:
        if is_within(path, ws.root):
            continue  # the workspace index already has it (the workspace is the home directory)
        fi = ws.file(path, kind)
        if fi.text is not None:
            out.append(fi)
    return out


def walk_dir(top: Path, follow: bool = False, limit: int = 5_000) -> Iterator[tuple[str, list[str], list[str]]]:
    seen: set[str] = set()
    n = 0
    for dirpath, dirnames, filenames in os.walk(top, followlinks=follow):
        real = os.path.realpath(dirpath)
        if real in seen:
            dirnames[:] = []
            continue
        seen.add(real)
        dirnames[:] = sorted(d for d in dirnames if d not in D.SKIP_DIRS)
        n += len(filenames)
        yield dirpath, dirnames, filenames
        if n > limit:
            return



def sources(ws: Workspace, *kinds: str) -> list[FileInfo]:
    """Workspace sources of the given kinds plus the user's own (~/.claude) ones, each once."""
    out = ws.files(*kinds)
    seen = {f.path for f in out}
    for fi in home_files(ws):
        if fi.kind in kinds and fi.path not in seen and (ws.scope is None or fi.path in ws.scope):
            seen.add(fi.path)
            out.append(fi)
    return out


@dataclass
class FM:
    """Frontmatter of one file with the positions rules need."""

    data: dict[str, Any] | None
    close: int
    """0-based line of the closing `---` (0 when there is none)."""
    keys: dict[str, int]
    """Top-level key -> 0-based line."""


def read_frontmatter(fi: FileInfo) -> FM | None:
    fm = fi.prepared.frontmatter
    if not fm.present:
        return None
    close = fm.end_line - 1
    keys: dict[str, int] = {}
    for i in range(1, close):
        m = KEY_LINE_RE.match(fi.lines[i])
        if m and m.group(1) not in keys:
            keys[m.group(1)] = i
    return FM(fm.data, close, keys)


def key_span(fi: FileInfo, line: int, key: str | None = None) -> Span:
    text = fi.lines[line] if 0 <= line < len(fi.lines) else ""
    text = text.rstrip("\r")
    if key is not None and text.startswith(key):
        return Span(line, 0, line, len(key))
    return Span(line, 0, line, len(text))


def value_span(fi: FileInfo, line: int) -> Span:
    text = fi.lines[line].rstrip("\r") if 0 <= line < len(fi.lines) else ""
    m = re.match(r"^[^:]*:[ \t]*", text)
    start = m.end() if m and m.end() < len(text) else 0
    return Span(line, start, line, len(text))


def kind_word(kind: str) -> str:
    return {D.RULE: "rule", D.SKILL: "skill", D.COMMAND: "command", D.MEMORY_INDEX: "memory index",
            D.MEMORY_TOPIC: "memory file", D.CLAUDE_MD: "CLAUDE.md", D.CLAUDE_LOCAL_MD: "CLAUDE.local.md"}.get(kind, "file")


def claude_base(path: Path) -> tuple[Path, Path] | None:
    """(.claude directory, the directory containing it) of a rule or skill path."""
    parts = path.parts
    if ".claude" not in parts[:-1]:
        return None
    i = len(parts) - 2 - parts[-2::-1].index(".claude")
    claude = Path(*parts[: i + 1])
    return claude, claude.parent


def skill_dir_name(fi: FileInfo) -> str:
    return fi.path.parent.name


# Frontmatter of a skill copied from another repository (`metadata: {github-repo: ..., github-tree-sha: ...}`).
_UPSTREAM_KEYS = frozenset({"github-repo", "github-tree-sha", "source-repo", "upstream", "source"})
# Lock files of skill installers, which pin a skill to an upstream source by name.
_SKILL_LOCKS = ("skills-lock.json", "agents.toml", "skills.lock", ".skills-lock.json", "boost.json",  # (Laravel Boost)
                "prpm.lock", "skiller-lock.json")  # (PRPM's registry installs, `"@prpm/x-skill#claude"`; skiller)


def vendored(ws: Workspace, fi: FileInfo) -> str | None:
    """Why a skill is a copy of another repository's (see `_vendored`), memoised per file for the snapshot:
    CTX401, CTX502, CTX504 and CTX505 each ask."""
    key = ("vendored", fi.path, hash(fi.text))
    if key not in ws.fs.memo:
        ws.fs.memo[key] = _vendored(ws, fi)
    return ws.fs.memo[key]


def _vendored(ws: Workspace, fi: FileInfo) -> str | None:
    """Where a skill is pinned from, when it is a copy of another repository's (its frontmatter's upstream metadata,
    or a skills lock file at the root naming it), else None: its text is upstream's, and edits here are lost on
    the next update."""
    fm = read_frontmatter(fi)
    meta = fm.data.get("metadata") if fm is not None and isinstance(fm.data, dict) else None
    if isinstance(meta, dict) and _UPSTREAM_KEYS.intersection(meta):
        repo = meta.get("github-repo") or meta.get("source-repo") or meta.get("upstream") or meta.get("source")
        return f"its frontmatter pins it to {repo}" if isinstance(repo, str) else "its frontmatter pins it upstream"
    if isinstance(meta, dict):
        # `metadata: {author: samber, openclaw: {homepage: https://github.com/samber/cc-skills-golang}}`: a skill
        # published from another repository (not this one's own remote)
        home = next((m.group(1) for v in _strings(meta) if (m := _GITHUB_REPO.search(v))), None)
        if home is not None and home.lower() != (_origin(ws) or "").lower():
            return f"its frontmatter names its home, {home}"
    locks = ws.fs.memo.get(("skill-locks", ws.root))
    if locks is None:
        locks = {}
        for name in _SKILL_LOCKS:
            src = ws.fs.read(ws.root / name)
            if src.ok and src.text:
                locks[name] = src.text
        ws.fs.memo[("skill-locks", ws.root)] = locks
    name = skill_dir_name(fi)
    for lock, text in locks.items():
        if re.search(r"[\"'/\[]" + re.escape(name) + r"[\"'/\]#@]", text):
            return f"{lock} pins it to an upstream source"
    manifest = _checksum_manifest(ws, fi.path.parent.parent, name)
    if manifest is not None:
        return f"{manifest} records its checksum: a tool installed it and overwrites it"
    for lic in _LICENCES:
        # (a project's own skill falls under the project's licence; one that ships its own is a copy of another's:
        # Anthropic's skill-creator carries LICENSE.txt)
        if ws.exists(fi.path.parent / lic) and fi.path.parent != ws.root:
            return f"it ships its own licence ({lic}): a copy of another project's skill"
    return None


def _checksum_manifest(ws: Workspace, skills_dir: Path, name: str) -> str | None:
    """A JSON file among the skill directories that maps `<name>/SKILL.md` to a checksum
    (`.claude/skills/.mizerAgents.json`: `"build-model/SKILL.md": "46dff4d6..."`): what an installer writes to
    know whether a user edited the files it overwrites. Its name, relative to the workspace, else None."""
    key = ("skill-manifests", skills_dir)
    manifests = ws.fs.memo.get(key)
    if manifests is None:
        manifests = {}
        for entry, kind in ws.fs.listing(skills_dir).items():
            if kind == "f" and entry.endswith(".json"):
                src = ws.fs.read(skills_dir / entry)
                if src.ok and src.text and len(src.text) < 1_000_000:
                    manifests[entry] = src.text
        ws.fs.memo[key] = manifests
    for entry, text in manifests.items():
        if re.search(r"\"" + re.escape(name) + r"/SKILL\.md\"\s*:\s*\"[0-9a-fA-F]{32,}\"", text):
            return ws.rel(skills_dir / entry)
    return None


_GITHUB_REPO = lazyre.compile(r"github\.com[/:]([\w.-]+/[\w.-]+?)(?:\.git)?(?:[/#?]|$)")


def _strings(value, depth: int = 0):
    """The strings of a frontmatter value, nested mappings and lists included (a few levels deep)."""
    if isinstance(value, str):
        yield value
    elif depth < 4 and isinstance(value, dict):
        for v in value.values():
            yield from _strings(v, depth + 1)
    elif depth < 4 and isinstance(value, list):
        for v in value:
            yield from _strings(v, depth + 1)


def _origin(ws: Workspace) -> str | None:
    """`owner/name` of the workspace's `origin` remote on GitHub, from .git/config (no git call), or None."""
    key = ("origin-remote", ws.root)
    if key not in ws.fs.memo:
        src = ws.fs.read(ws.root / ".git" / "config")
        m = _GITHUB_REPO.search(src.text) if src.ok and src.text else None
        ws.fs.memo[key] = m.group(1) if m else None
    return ws.fs.memo[key]


_LICENCES = ("LICENSE", "LICENSE.txt", "LICENSE.md", "LICENCE", "LICENCE.txt", "COPYING")
