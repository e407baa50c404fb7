"""Rules: skills and rules (CTX501-CTX507).

Frontmatter of rules, skills, legacy commands and memory files (spec A5, A7, B2), the portable Agent Skills
constraints on `name` and `description`, the size of a SKILL.md body (B4), files a skill names that it does
not bundle, and `paths:` globs that are invalid or match nothing.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import unquote

import yaml

from .. import discovery as D
from ..loader import is_within
from ..workspace import FileInfo, Workspace
from ..findings import Edit, Finding, Fix, Span
from ..globs import PathGlobs, parse_paths, split_outside_braces
from ..markdown import _TOP_KEY_VALUE_RE, _YAML_LOADER, code_spans, first_paragraph, quote_problem_values, structure
from ..skills import command_files, skill_dirs, truthy
from . import rule

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

# Frontmatter of other tools that people copy into Claude Code files.
_FOREIGN = {
    "globs": "a Cursor field",
    "alwaysApply": "a Cursor field",
    "applyTo": "a GitHub Copilot field",
    "trigger": "a Windsurf field",
}

NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
PORTABLE_NAME_MAX = 64
PORTABLE_DESC_MAX = 1024
_RESERVED = ("anthropic", "claude")

_KEY_LINE_RE = re.compile(r"^([A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]|$)")


# --------------------------------------------------------------------------------------------- helpers
def _home_files(ws: Workspace) -> list[FileInfo]:
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


def _walk(top: Path, follow: bool = False, limit: int = 5_000) -> Iterator[tuple[str, list[str], list[str]]]:
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
    for fi in _home_files(ws):
        if fi.kind in kinds and fi.path not in seen and (ws.scope is None or fi.path in ws.scope):
            seen.add(fi.path)
            out.append(fi)
    return out


@dataclass
class _FM:
    """Frontmatter of one file with the positions rules need."""

    data: dict[str, Any] | None
    close: int
    """0-based line of the closing `---` (0 when there is none)."""
    keys: dict[str, int]
    """Top-level key -> 0-based line."""


def _frontmatter(fi: FileInfo) -> _FM | None:
    fm = fi.prepared.frontmatter
    if not fm.present:
        return None
    close = fm.end_line - 1
    keys: dict[str, int] = {}
    for i in range(1, close):
        m = _KEY_LINE_RE.match(fi.lines[i])
        if m and m.group(1) not in keys:
            keys[m.group(1)] = i
    return _FM(fm.data, close, keys)


def _key_span(fi: FileInfo, line: int, key: str | None = None) -> Span:
    text = fi.lines[line] if 0 <= line < len(fi.lines) else ""
    text = text.rstrip("\r")
    if key is not None and text.startswith(key):
        return Span(line, 0, line, len(key))
    return Span(line, 0, line, len(text))


def _value_span(fi: FileInfo, line: int) -> Span:
    text = fi.lines[line].rstrip("\r") if 0 <= line < len(fi.lines) else ""
    m = re.match(r"^[^:]*:[ \t]*", text)
    start = m.end() if m and m.end() < len(text) else 0
    return Span(line, start, line, len(text))


def _kind_word(kind: str) -> str:
    return {D.RULE: "rule", D.SKILL: "skill", D.COMMAND: "command", D.MEMORY_INDEX: "memory index",
            D.MEMORY_TOPIC: "memory file", D.CLAUDE_MD: "CLAUDE.md", D.CLAUDE_LOCAL_MD: "CLAUDE.local.md"}.get(kind, "file")


def _claude_base(path: Path) -> tuple[Path, Path] | None:
    """(.claude directory, the directory containing it) of a rule or skill path."""
    parts = path.parts
    if ".claude" not in parts[:-1]:
        return None
    i = len(parts) - 2 - parts[-2::-1].index(".claude")
    claude = Path(*parts[: i + 1])
    return claude, claude.parent


def _skill_dir_name(fi: FileInfo) -> str:
    return fi.path.parent.name


# ============================================================================================ CTX501
_CONSEQUENCE = {
    D.RULE: "Claude Code cannot read its `paths:`, so the rule loads in every session",
    D.SKILL: "Claude Code ignores every field (the description falls back to the first paragraph)",
    D.COMMAND: "Claude Code ignores every field of it",
    D.MEMORY_TOPIC: "the memory's name, description and type are lost",
    D.MEMORY_INDEX: "its fields are lost",
}


@rule("CTX501", "frontmatter-invalid", "skills", "error",
      summary="YAML frontmatter of a rule, skill, command or memory file does not parse, parses only with Claude "
              "Code's lenient retry, is never closed, or does not start on line 1.",
      why="When the frontmatter does not parse, Claude Code drops every field in it: a rule's `paths:` is lost "
          "and the rule loads in every session, a skill falls back to its first paragraph as description. Before "
          "giving up it tries once more with every top-level value that holds a YAML-special character (`: `, "
          "`*`, `{`, `[`, `#`, ...) quoted, so `paths: **/*.ts` or `description: Deploy: runs it` still work "
          "there (a warning: other agents, editors and YAML tools drop those fields). A `---` opener without a "
          "closing `---` is not frontmatter at all, so the raw `key: value` lines are sent to the model as text; "
          "neither is a block below line 1 (under a title).",
      example="```markdown\n---\ndescription: Deploy: runs the release script\n---\n```\n(a warning: Claude Code "
              "reads it by quoting the value), or an error when even that cannot help:\n\n```markdown\n---\n"
              "paths:\n  - \"src/api/**\n---\n```",
      fix="Fix the YAML at the reported line (quote values that contain `: ` or start with a special "
          "character). When Claude Code's retry reads the block, the quick fix makes the same quoting edits "
          "(safe: the fields read the same, now as valid YAML); for an unclosed block it offers to insert the "
          "closing `---` after the last field, and to move a block found under the title to the top (neither "
          "applied by --fix).")
def frontmatter_invalid(ws: Workspace):
    for fi in sources(ws, D.RULE, D.SKILL, D.COMMAND, D.MEMORY_INDEX, D.MEMORY_TOPIC):
        text = fi.text or ""
        if not text.startswith("---"):
            if "\n---" in text[:4000]:
                f = _misplaced(fi)
                if f is not None:
                    yield f
            continue
        fm = fi.prepared.frontmatter
        if fm.present:
            if fm.error is None and fm.strict_error is None:
                continue
            yield _invalid_yaml(ws, fi, fm.end_line - 1, fm.data if fm.error is None else None)
        elif fm.error and fi.lines[0].rstrip("\r").rstrip() == "---":
            f = _unclosed(fi)
            if f is not None:
                yield f


def _invalid_yaml(ws: Workspace, fi: FileInfo, close: int, lenient: dict | None) -> Finding:
    """The block does not parse; ``lenient`` is what Claude Code's retry reads from it (None: nothing)."""
    raw = "\n".join(l.rstrip("\r") for l in fi.lines[1:close])
    line, col, problem = 0, 0, "does not parse"
    try:
        data = yaml.load(raw, Loader=_YAML_LOADER)
        problem = f"is a {type(data).__name__}, not a mapping of fields"
        line = 1 if close > 1 else 0
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        ctx = getattr(exc, "context_mark", None)
        if mark is not None and mark.line + 1 >= close and ctx is not None:
            mark = ctx  # an unclosed `[`, `{` or quote fails at the end: point where it opened
        if mark is not None:
            line, col = min(mark.line + 1, close), mark.column
        problem = (getattr(exc, "problem", None) or str(exc).splitlines()[0]).strip()
    except Exception as exc:  # pragma: no cover - odd yaml failures
        problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    text = fi.lines[line].rstrip("\r")
    span = Span(line, min(col, len(text)), line, len(text)) if col < len(text) else Span(line, 0, line, len(text))
    if lenient is not None:
        fixes = _quote_fix(fi, close, lenient)
        msg = (f"Frontmatter is not valid YAML (line {line + 1}: {problem}): Claude Code reads it only by quoting "
               f"values itself, other agents and YAML tools drop its fields; quote the values")
        return Finding("CTX501", "warning", fi.path, span, msg, fixes=fixes)
    consequence = _CONSEQUENCE.get(fi.kind, "its fields are lost")
    msg = f"Frontmatter does not parse (line {line + 1}: {problem}): {consequence}; fix the YAML"
    return Finding("CTX501", "error", fi.path, span, msg)


def _quote_fix(fi: FileInfo, close: int, lenient: dict) -> list[Fix]:
    """Claude Code's retry edits (`quote_problem_values`: each problem value double-quoted) as a fix, offered when
    they make the block valid YAML that reads exactly as the agent reads it now."""
    new_lines = [l.rstrip("\r") for l in fi.lines[1:close]]
    edits = []
    for i, line in enumerate(new_lines):
        quoted = quote_problem_values(line)
        if quoted == line:
            continue
        m = _TOP_KEY_VALUE_RE.match(line)
        if m is None:  # pragma: no cover - only such lines are rewritten
            continue
        value = quoted[len(m.group(1)) + 2:]
        new_lines[i] = line[:m.start(2)] + value
        edits.append(Edit(fi.path, Span(i + 1, m.start(2), i + 1, len(line)), value))
    if not edits:
        return []
    try:
        data = yaml.load("\n".join(new_lines), Loader=_YAML_LOADER)
    except Exception:
        return []
    if data != lenient:
        return []
    return [Fix("Quote the frontmatter values as Claude Code does", tuple(edits))]


_FIELDS_OF = {D.RULE: RULE_FIELDS | {"globs", "description", "alwaysApply"}, D.SKILL: SKILL_FIELDS,
              D.COMMAND: SKILL_FIELDS, D.MEMORY_INDEX: MEMORY_FIELDS, D.MEMORY_TOPIC: MEMORY_FIELDS}


def _misplaced(fi: FileInfo) -> Finding | None:
    """A frontmatter block that does not start on line 1 (under a title, after a blank line): Claude Code reads
    frontmatter only at the very start, so its fields are ignored and its lines sent as text."""
    lines = fi.lines
    st = structure(fi.text or "")
    hidden = st.code_lines | st.comment_lines  # an example of frontmatter in a code block is just that
    seen = 0
    for i in range(min(len(lines), 40)):
        if i in hidden:
            if lines[i].strip():
                seen += 1
            continue
        line = lines[i].rstrip("\r").rstrip()
        if line != "---":
            if line:
                seen += 1
                if seen > 3:
                    return None  # deep in the body: a thematic break, not a misplaced block
            continue
        close = next((j for j in range(i + 1, min(len(lines), i + 30))
                      if j not in hidden and lines[j].rstrip("\r").rstrip() == "---"), None)
        if close is not None and any(j in hidden for j in range(i, close + 1)):
            return None
        if close is None or close == i + 1:
            return None
        try:
            data = yaml.load("\n".join(l.rstrip("\r") for l in lines[i + 1:close]), Loader=_YAML_LOADER)
        except Exception:
            return None
        if not isinstance(data, dict) or not any(isinstance(k, str) and k in _FIELDS_OF.get(fi.kind, ())
                                                 for k in data):
            return None
        consequence = {D.RULE: "its `paths:` is ignored and the rule loads in every session",
                       D.SKILL: "its fields are ignored (the description falls back to the first paragraph)"
                       }.get(fi.kind, "its fields are ignored")
        block = "".join(l.rstrip("\r") + "\n" for l in lines[i:close + 1])
        # (not applied by --fix: moving it changes when the rule loads, which the author should confirm)
        fix = Fix("Move the frontmatter block to the top of the file",
                  (Edit(fi.path, Span(0, 0, 0, 0), block), Edit(fi.path, Span(i, 0, close + 1, 0), "")), safe=False)
        return Finding("CTX501", "error", fi.path, Span(i, 0, i, 3),
                       f"Frontmatter on line {i + 1} is not on line 1, so it is not frontmatter: Claude Code sends "
                       f"its lines as text and {consequence}; move the block to the top of the file", fixes=[fix])
    return None


def _unclosed(fi: FileInfo) -> Finding | None:
    last = 0
    for i in range(1, min(len(fi.lines), 200)):
        line = fi.lines[i].rstrip("\r")
        if _KEY_LINE_RE.match(line) or (last and line[:1] in (" ", "\t") and line.strip()) or \
                (last and line.lstrip().startswith("- ")):
            last = i
            continue
        break
    if last == 0:
        return None  # a thematic break followed by prose: not meant as frontmatter
    fix = Fix("Close the frontmatter after its last field", (Edit(fi.path, Span(last + 1, 0, last + 1, 0), "---\n"),),
              safe=False)
    msg = (f"Frontmatter opened on line 1 is never closed: it is not frontmatter, its fields are ignored and sent "
           f"to the model as text; add a `---` line after line {last + 1}")
    return Finding("CTX501", "error", fi.path, Span(0, 0, 0, 3), msg, fixes=[fix])


# ============================================================================================ CTX502
@rule("CTX502", "frontmatter-unknown-field", "skills", "warning",
      summary="A frontmatter field the agent does not know (or ignores) in a rule, skill, command or memory file.",
      why="Unknown fields are silently ignored: a misspelt `allowed_tools` grants nothing, a Cursor-style `globs:` "
          "on a rule does not scope it (the rule loads in every session), `paths:` on a command or a CLAUDE.md does "
          "nothing. Skills uploaded to claude.ai or the Skills API (the portable Agent Skills spec) accept only "
          "`name`, `description`, `license`, `compatibility`, `metadata` and `allowed-tools`: any other field is "
          "a hard upload error, so keep custom data under `metadata:`. A field that is merely unknown to a rule or "
          "memory file is reported as info: it is stripped and costs nothing.",
      example="```markdown\n---\nglobs: src/**/*.ts\n---\n# TypeScript rules\n```",
      fix="Rename the field to the one the agent reads, delete it, or move custom data under `metadata:`. The "
          "quick fix renames misspelt fields; --fix applies it only when case or `_`/`-` alone differ and the field "
          "grants no permissions (`argument_hint` -> `argument-hint`); `allowed_tools` -> `allowed-tools` and "
          "`globs` -> `paths` change what the agent may do or load, so they are offered, not applied.")
def frontmatter_unknown_field(ws: Workspace):
    for fi in sources(ws, D.RULE, D.SKILL, D.COMMAND, D.MEMORY_INDEX, D.MEMORY_TOPIC, D.CLAUDE_MD, D.CLAUDE_LOCAL_MD):
        fm = _frontmatter(fi)
        if fm is None or not isinstance(fm.data, dict):
            continue
        for key in fm.data:
            if not isinstance(key, str):
                continue
            line = fm.keys.get(key)
            if line is None:
                continue
            got = _unknown_field(fi.kind, key, fm.data)
            if got is None:
                continue
            msg, rename = got
            shared = _other_reader(ws, fi, key) if fi.kind == D.RULE and key in _FOREIGN else None
            if shared is not None:
                agent = _FOREIGN[key].removeprefix("a ").removesuffix(" field")
                if key == "globs" and "paths" not in fm.data:
                    msg = (f"`globs:` is {agent}'s field ({shared}); Claude Code ignores it, so for Claude Code the "
                           f"rule is unconditional and loads in every session: add `paths:` with the same patterns "
                           f"and keep `globs:` for {agent}")
                    yield Finding("CTX502", "warning", fi.path, _key_span(fi, line, key), msg)
                else:
                    msg = (f"`{key}` is {agent}'s field ({shared}): Claude Code ignores it and scopes the rule by "
                           f"`paths:` alone; keep it for {agent}")
                    yield Finding("CTX502", "info", fi.path, _key_span(fi, line, key), msg,
                                  data={"explain": [f"another agent reads this file: {shared}"]})
                continue
            # A field that is merely unknown to a rule or memory file costs nothing (frontmatter is stripped):
            # report it as info; misspellings and other tools' fields change behaviour and stay warnings.
            severity = "info" if fi.kind in (D.RULE, D.MEMORY_INDEX, D.MEMORY_TOPIC) and rename is None \
                and key not in _FOREIGN and key != "globs" else "warning"
            fixes = []
            if rename is not None and rename not in fm.data:
                # A spelling fix (case or separators only) is safe, except for fields that grant permissions or run
                # code; `globs` -> `paths` and guessed names change what loads, so the user decides.
                safe = _norm(key) == _norm(rename) and rename not in _PERMISSION_FIELDS
                fixes.append(Fix(f"Rename `{key}` to `{rename}`", (Edit(fi.path, Span(line, 0, line, len(key)), rename),),
                                 safe=safe))
            yield Finding("CTX502", severity, fi.path, _key_span(fi, line, key), msg, fixes=fixes)


_PERMISSION_FIELDS = frozenset({"allowed-tools", "hooks", "shell", "agent", "context"})

# Where each agent whose fields a rule may carry reads rule files (relative to the workspace root): a folder
# that is, or links to, the rule's real folder means that agent reads the very file.
_AGENT_RULE_DIRS = {
    "globs": (".cursor/rules",), "alwaysApply": (".cursor/rules",),
    "applyTo": (".github/instructions",),
    "trigger": (".windsurf/rules", ".agent/rules", ".agents/rules"),
}
# Files or folders whose presence says the workspace uses that agent at all.
_AGENT_MARKERS = {
    "globs": (".cursor", ".cursorrules"), "alwaysApply": (".cursor", ".cursorrules"),
    "applyTo": (".github/instructions", ".github/copilot-instructions.md"),
    "trigger": (".windsurf", ".windsurfrules", ".agent", ".agents/rules"),
}


def _other_reader(ws: Workspace, fi, key: str) -> str | None:
    """Why another agent, whose field ``key`` is, reads rule file ``fi`` too (None: no sign of it): its rule
    folder is (or links to) this rule's real folder, the rule's text lives outside `.claude/` in a folder shared by
    construction (`.ai/rules`, `.agents/rules`, linked in), or the workspace has that agent's files."""
    real = ws.fs.realpath(fi.path)
    real_dir = os.path.dirname(real)
    for d in _AGENT_RULE_DIRS.get(key, ()):
        p = ws.root / d
        if os.path.isdir(p) and ws.fs.realpath(p) == real_dir:
            return f"{d} is this rule's folder" if not os.path.islink(p) else f"{d} links to this rule's folder"
    if real != str(fi.path) and "/.claude/" not in real.replace(os.sep, "/"):
        return f"its text lives in {ws.rel(Path(real)) if is_within(real, str(ws.root)) else real}, a folder shared with other agents"
    for m in _AGENT_MARKERS.get(key, ()):
        if os.path.exists(ws.root / m):
            return f"the workspace has {m}"
    return None


def _norm(key: str) -> str:
    return key.lower().replace("_", "-")


def _close_match(key: str, known: frozenset[str]) -> str | None:
    norm = _norm(key)
    for k in known:
        if _norm(k) == norm:
            return k
    got = difflib.get_close_matches(norm, sorted(known), n=1, cutoff=0.85)
    return got[0] if got else None


def _unknown_field(kind: str, key: str, data: dict) -> tuple[str, str | None] | None:
    if kind in (D.CLAUDE_MD, D.CLAUDE_LOCAL_MD):
        if key in ("paths", "globs"):
            return (f"`{key}:` in a {_kind_word(kind)} is ignored: the file always loads; move the "
                    f"instructions to a `.claude/rules/` file with `paths:` to scope them", None)
        return None
    if kind == D.RULE:
        if key in RULE_FIELDS:
            return None
        if key == "globs":
            if "paths" in data:
                return ("`globs:` is not a Claude Code field and is ignored here (the rule is scoped by `paths:`); "
                        "delete it", None)
            return ("`globs:` is not a Claude Code field: the rule is unconditional and loads in every session; "
                    "rename it to `paths:` to scope it", "paths")
        near = _close_match(key, RULE_FIELDS)
        if near:
            return (f"Unknown rule field `{key}` (did you mean `{near}`?): it is ignored and the rule loads in "
                    f"every session; rename it", near)
        origin = f" ({_FOREIGN[key]})" if key in _FOREIGN else ""
        return (f"Unknown rule field `{key}`{origin}: rules read only `paths:`, so Claude Code ignores it; "
                f"delete it (it is stripped and costs no tokens)" if not origin else
                f"Unknown rule field `{key}`{origin}: rules read only `paths:`, so Claude Code ignores it; delete it",
                None)
    if kind in (D.MEMORY_INDEX, D.MEMORY_TOPIC):
        if key in MEMORY_FIELDS:
            return None
        near = _close_match(key, MEMORY_FIELDS)
        if near:
            return f"Unknown memory field `{key}` (did you mean `{near}`?); rename it", near
        return (f"Unknown memory field `{key}`: memory files use only name, description, type and modified; "
                f"delete it", None)
    if kind == D.COMMAND:
        if key in COMMAND_IGNORED:
            what = "the command name is the file name" if key == "name" else "commands always load"
            return (f"`{key}:` is ignored in a legacy command ({what}); delete it, or turn the command into a "
                    f"skill under .claude/skills/", None)
        if key in SKILL_FIELDS:
            return None
        near = _close_match(key, SKILL_FIELDS - COMMAND_IGNORED)
        if near:
            return f"Unknown command field `{key}` (did you mean `{near}`?): it is ignored; rename it", near
        return f"Unknown command field `{key}`: Claude Code ignores it; delete it", None
    if kind == D.SKILL:
        if key in SKILL_FIELDS:
            return None
        near = _close_match(key, SKILL_FIELDS)
        if near:
            return (f"Unknown skill field `{key}` (did you mean `{near}`?): Claude Code ignores it; rename it",
                    near)
        if key == "globs":
            return "`globs:` is not a skill field: Claude Code ignores it; rename it to `paths:`", "paths"
        return (f"Unknown skill field `{key}`: Claude Code ignores it and the Agent Skills API rejects the upload; "
                f"move it under `metadata:` or delete it", None)
    return None


# ============================================================================================ CTX503
@rule("CTX503", "skill-name-invalid", "skills", "warning",
      summary="A skill `name` that breaks the portable Agent Skills spec.",
      why="The Agent Skills spec (claude.ai, the Skills API, other agents) requires `name` to be 1-64 characters "
          "of `[a-z0-9-]`, without leading, trailing or double hyphens, equal to the skill's directory name; the "
          "API also rejects the reserved words \"anthropic\" and \"claude\". Claude Code only shows `name` as a "
          "label (the command is still the directory name), so a mismatch also makes `/name` differ from what "
          "the listing says.",
      example="```markdown\n<!-- .claude/skills/deploy/SKILL.md -->\n---\nname: Deploy Helper\n---\n```",
      fix="Set `name` to the directory name (or rename the directory). The quick fix sets it to the directory "
          "name; it is applied by --fix only when the two differ in case or separators alone.")
def skill_name_invalid(ws: Workspace):
    for fi in sources(ws, D.SKILL):
        fm = _frontmatter(fi)
        if fm is None or not isinstance(fm.data, dict) or "name" not in fm.data:
            continue
        line = fm.keys.get("name")
        if line is None:
            continue
        name = fm.data["name"]
        dirname = _skill_dir_name(fi)
        problem = _name_problem(name, dirname)
        if problem is None:
            continue
        fixes = []
        if NAME_RE.match(dirname) and len(dirname) <= PORTABLE_NAME_MAX and \
                not any(w in dirname for w in _RESERVED) and name != dirname:
            norm = re.sub(r"[^a-z0-9]+", "-", str(name).lower()).strip("-")
            safe = norm == dirname
            span = _value_span(fi, line)
            fixes.append(Fix(f"Set name to '{dirname}' (the directory name)",
                             (Edit(fi.path, span, dirname),), safe=safe))
        yield Finding("CTX503", "warning", fi.path, _value_span(fi, line), problem, fixes=fixes)


def _name_problem(name: Any, dirname: str) -> str | None:
    if not isinstance(name, str):
        return f"Skill `name` must be a string, not {type(name).__name__}; set it to '{dirname}'"
    if not name:
        return f"Skill `name` is empty; set it to '{dirname}' (the directory name) or delete it"
    if len(name) > PORTABLE_NAME_MAX:
        return (f"Skill `name` is {len(name)} characters, over the portable limit of {PORTABLE_NAME_MAX}; "
                f"shorten it (and the directory) to match")
    if not NAME_RE.match(name):
        if re.search(r"[^a-z0-9-]", name):
            why = "lowercase letters, digits and hyphens only"
        else:
            why = "no leading, trailing or double hyphens"
        if NAME_RE.match(dirname) and len(dirname) <= PORTABLE_NAME_MAX:
            return f"Skill `name` '{name}' breaks the portable spec ({why}); set it to '{dirname}', the directory name"
        return f"Skill `name` '{name}' breaks the portable spec ({why}); rename it and its directory"
    if name != dirname:
        return (f"Skill `name` '{name}' differs from its directory '{dirname}': the portable spec requires them "
                f"equal and Claude Code names the command /{dirname}; make them the same")
    for w in _RESERVED:
        if w in name:
            return f"Skill `name` contains the reserved word '{w}': the Skills API rejects it on upload; rename it"
    return None


# ============================================================================================ CTX504
@rule("CTX504", "skill-description", "skills", "warning",
      summary="A skill without a `description`, or with one that is too long.",
      why="The description is what the model reads to decide when to use a skill. Without one, Claude Code uses "
          "the first paragraph of the body, which rarely says when to use it (and the portable spec requires a "
          "description). The Agent Skills spec caps it at 1,024 characters; Claude Code truncates "
          "description + `when_to_use` at 1,536 characters in the skill listing.",
      example="```markdown\n---\nname: deploy\n---\n# Deploy\n\nThis skill has several steps.\n```",
      fix="Write a one- or two-sentence description that says what the skill does and when to use it, under "
          "1,024 characters. The quick fix (not applied by --fix) adds the first paragraph as a starting point.")
def skill_description(ws: Workspace):
    cap = ws.settings.skill_desc_cap
    for fi in sources(ws, D.SKILL, D.COMMAND):
        fm = _frontmatter(fi)
        data = fm.data if fm is not None else None
        if fm is not None and data is None:
            continue  # CTX501 reports the broken frontmatter
        data = data or {}
        desc = data.get("description")
        is_skill = fi.kind == D.SKILL
        if desc is None or (isinstance(desc, str) and not desc.strip()):
            if not is_skill or truthy(data.get("disable-model-invocation")):
                continue  # legacy commands without a description are the norm; manual-only skills are not listed
            yield _missing_description(fi, fm)
            continue
        line = fm.keys.get("description", 1) if fm else 0
        if not isinstance(desc, str):
            yield Finding("CTX504", "warning", fi.path, _value_span(fi, line),
                          f"`description` must be a string, not {type(desc).__name__}; Claude Code falls back to "
                          f"the first paragraph of the body; write it as one line of text")
            continue
        flat = " ".join(desc.split())
        when = data.get("when_to_use")
        listed = flat
        if isinstance(when, str) and when.strip():
            listed = f"{flat} - {' '.join(when.split())}"
        if len(listed) > cap:
            extra = " with when_to_use" if listed != flat else ""
            yield Finding("CTX504", "warning", fi.path, _value_span(fi, line),
                          f"Description{extra} is {len(listed):,} characters: the skill listing truncates it at "
                          f"{cap:,}; shorten it to under {PORTABLE_DESC_MAX:,} and move detail into the body")
        elif is_skill and len(flat) > PORTABLE_DESC_MAX:
            yield Finding("CTX504", "warning", fi.path, _value_span(fi, line),
                          f"Description is {len(flat):,} characters, over the {PORTABLE_DESC_MAX:,}-character limit "
                          f"of the Agent Skills spec (the Skills API rejects it); shorten it and move detail into "
                          f"the body")


def _missing_description(fi: FileInfo, fm: _FM | None) -> Finding:
    body = "\n".join(fi.lines[fm.close + 1:]) if fm else (fi.text or "")
    para = first_paragraph(body)
    dirname = _skill_dir_name(fi)
    if para:
        shown = para if len(para) <= 60 else para[:57] + "..."
        msg = (f"Skill has no `description`: Claude Code falls back to the first paragraph (\"{shown}\"); add a "
               f"description that says what the skill does and when to use it")
    else:
        msg = ("Skill has no `description` and no first paragraph: the listing shows only its name, so the model "
               "cannot tell when to use it; add a description")
    fixes = []
    if para:
        value = json.dumps(para[:PORTABLE_DESC_MAX], ensure_ascii=False)
        if fm is not None:
            line = fm.keys.get("name", 0) + 1
            edit = Edit(fi.path, Span(line, 0, line, 0), f"description: {value}\n")
        else:
            name = f"name: {dirname}\n" if NAME_RE.match(dirname) else ""
            edit = Edit(fi.path, Span(0, 0, 0, 0), f"---\n{name}description: {value}\n---\n\n")
        fixes.append(Fix("Add the first paragraph as description (then edit it)", (edit,), safe=False))
    span = Span(0, 0, 0, len(fi.lines[0].rstrip("\r"))) if fi.lines else Span(0, 0, 0, 0)
    return Finding("CTX504", "warning", fi.path, span, msg, fixes=fixes)


# ============================================================================================ CTX505
@rule("CTX505", "skill-body-too-long", "skills", "warning",
      summary="A SKILL.md body over 500 lines or 5,000 tokens.",
      why="An invoked skill body enters the context as one message and stays for the session; after compaction "
          "only its first 5,000 tokens are re-attached. The skills guide asks for SKILL.md under 500 lines and the "
          "body under 5k tokens, with detail in bundled files the model reads only when needed (progressive "
          "disclosure).",
      example="```markdown\n---\nname: api\ndescription: ...\n---\n# API\n... 800 lines of endpoint reference ...\n```",
      fix="Move reference material (tables, long examples, per-case detail) into files such as "
          "`references/<topic>.md` next to SKILL.md and link them from the body with a line that says when to "
          "read each. Limits: `skill_max_lines` and `skill_max_tokens` in the [check] settings.")
def skill_body_too_long(ws: Workspace):
    max_lines = ws.config.skill_max_lines
    max_tokens = ws.config.skill_max_tokens
    skills = sources(ws, D.SKILL)
    factor = max(1.0, getattr(ws.counter, "factor", 1.0) or 1.0)

    def may_exceed(content: str) -> bool:
        # a BPE token is at least one UTF-8 byte: short bodies cannot be over the budget
        return len(content) * 4 * factor > max_tokens and len(content.encode("utf-8")) * factor > max_tokens

    ws.counter.prefetch(fi.prepared.content for fi in skills if may_exceed(fi.prepared.content))
    for fi in skills:
        fm = fi.prepared.frontmatter
        offset = fm.end_line
        lines = fi.lines[offset:]
        while lines and not lines[-1].strip():
            lines = lines[:-1]
        content = fi.prepared.content
        if len(lines) <= max_lines and not may_exceed(content):
            continue
        tokens = ws.counter.count(content) if content else 0
        if len(lines) > max_lines:
            line = offset + max_lines
            yield Finding("CTX505", "warning", fi.path, Span.line(line, fi.lines[line].rstrip("\r")),
                          f"SKILL.md body is {len(lines):,} lines ({tokens:,} tokens), over {max_lines:,} from this "
                          f"line on; move reference material into bundled files (e.g. references/) linked from "
                          f"the body")
        elif tokens > max_tokens:
            line = _token_cut_line(ws, fi, offset, max_tokens)
            yield Finding("CTX505", "warning", fi.path, Span.line(line, fi.lines[line].rstrip("\r")),
                          f"SKILL.md body is {tokens:,} tokens, over {max_tokens:,} from about this line on; move "
                          f"reference material into bundled files (e.g. references/) linked from the body")


def _token_cut_line(ws: Workspace, fi: FileInfo, offset: int, budget: int) -> int:
    total = 0
    last = offset
    for i in range(offset, len(fi.lines)):
        line = fi.lines[i]
        if line.strip():
            last = i
        total += ws.counter.count(line + "\n")
        if total > budget:
            return i
    return last


# ============================================================================================ CTX506
_BUNDLE_DIRS = ("scripts", "references", "reference", "assets", "templates")
_SKILL_DIR_VAR = r"\$\{?CLAUDE_SKILL_DIR\}?/"
_SKILL_DIR_VAR_RE = re.compile("^" + _SKILL_DIR_VAR)
_BUNDLE_RE = re.compile(
    r"(?<![\w./$}\\-])(" + _SKILL_DIR_VAR + r"[\w./-]+|(?:\./)?(?:" + "|".join(_BUNDLE_DIRS) + r")/[\w./-]+)")
_CODE_BUNDLE_RE = re.compile(
    r"(?<![\w./$}\\-])(" + _SKILL_DIR_VAR + r"[\w./-]+|(?:\./)?(?:scripts|references)/[\w./-]+)")
_LINK_RE = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*(<[^>\n]*>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
_EXT_RE = re.compile(r"\.[A-Za-z0-9]{1,8}$")
_PLACEHOLDER_NEXT = set("<{*[$%?")
# Lines about files the skill makes rather than reads.
_CREATES_RE = re.compile(
    r"\b(?:creat(?:e|es|ed|ing)|(?:re)?generat(?:e|es|ed|ing)|outputs?|save[sd]?|saving|writes?|written|writing|"
    r"emits?|produces?|scaffold\w*|renam(?:e|ed|ing)|moved?|delet(?:e|ed|ing)|remov(?:e|ed|ing)|add(?:s|ed|ing)?\s+"
    r"(?:a|an|new)|new\s+file|placeholder|for\s+example)\b|\be\.g\.")
_OUTPUT_ARG_RE = re.compile(r"(?:>>?|\s-o|--out(?:put)?(?:=|\s))\s*[\"']?$")


@rule("CTX506", "skill-missing-bundled-file", "skills", "warning",
      summary="A file the SKILL.md body names relative to the skill directory does not exist.",
      why="Skills bundle scripts and references next to SKILL.md and the body tells the model to run or read "
          "them (`scripts/validate.py`, `[reference](references/api.md)`). When the file is missing, the model "
          "fails mid-task or improvises.",
      example="```markdown\nRun `python scripts/validate.py` before you finish. See [the API](references/api.md).\n```",
      fix="Add the file to the skill directory or fix the path. When exactly one file of that name exists "
          "elsewhere in the skill directory, the quick fix points the reference at it. References are checked "
          "in markdown links, in code spans and code blocks (`scripts/...`, `references/...`, "
          "`${CLAUDE_SKILL_DIR}/...`) and as bare `scripts/x.py`-style paths; a path that exists relative to the "
          "project instead is not reported. A link that climbs out of the skill (`../../Cargo.toml`) is resolved "
          "from the skill directory, as the model resolves it; when one `../` more or less finds the file, a quick "
          "fix (not applied by --fix) says so.")
def skill_missing_bundled_file(ws: Workspace):
    for fi in sources(ws, D.SKILL):
        if not _may_hold_refs(fi.text or "", False):
            continue  # no line of it can name a file (most skills on a large workspace)
        skill_dir = fi.path.parent
        # A skill behind a symlinked `.claude/skills` lives in its real directory: that is where the model's Read
        # of a relative path lands, so a path is looked up from there too.
        real_dir = Path(os.path.dirname(ws.fs.realpath(fi.path)))
        bases = [skill_dir] + ([real_dir] if real_dir != skill_dir else [])
        cb = _claude_base(fi.path)
        if cb is not None:
            bases.append(cb[1])
        bases.append(ws.root)
        offset = fi.prepared.frontmatter.end_line
        body = fi.lines[offset:]
        st = structure("\n".join(body))
        reported: set[tuple[int, str]] = set()
        listing = None
        code_lines = st.code_lines
        for i, raw in enumerate(body):
            in_code = i in code_lines
            if not _may_hold_refs(raw, in_code) or i in st.comment_lines:
                continue
            line_no = i + offset
            if not in_code and _CREATES_RE.search(raw.lower()):
                continue  # "write the report to `assets/report.md`": the file need not exist yet
            for col, text, target, skill_only in _refs_in_line(raw.rstrip("\r"), in_code):
                rel = os.path.normpath(target)
                if any(seg in D.SKIP_DIRS for seg in rel.split(os.sep)):
                    continue  # `node_modules/x/dist/index.mjs`: the project's dependencies, not the skill's files
                if rel.startswith("..") and not skill_only:
                    if real_dir != skill_dir and is_within(Path(os.path.normpath(real_dir / target)), ws.root) \
                            and ws.exists(Path(os.path.normpath(real_dir / target))):
                        continue  # resolves from the skill's real directory
                    f = _climbing_ref(ws, fi, skill_dir, line_no, col, text, target)
                    if f is not None and (line_no, rel) not in reported:
                        reported.add((line_no, rel))
                        yield f
                    continue
                if rel.startswith("..") or os.path.isabs(rel) or rel == ".":
                    continue
                if (line_no, rel) in reported:
                    continue
                if any(ws.exists(b / rel) for b in (bases[:2] if skill_only else bases)):
                    continue
                reported.add((line_no, rel))
                if listing is None:
                    listing = _skill_files(ws, skill_dir)
                name = os.path.basename(rel)
                cands = [p for p in listing if os.path.basename(p) == name]
                span = Span(line_no, col, line_no, col + len(text))
                fixes = []
                hint = ""
                if len(cands) == 1:
                    hint = f" (a file of that name is at {cands[0]})"
                    m = _SKILL_DIR_VAR_RE.match(text)
                    prefix = m.group(0) if m else ("./" if text.startswith("./") else "")
                    fixes.append(Fix(f"Point the reference at {cands[0]}", (Edit(fi.path, span, prefix + cands[0]),)))
                # A command in a code block (`node scripts/x.mjs`) naming a bundle directory the skill does not have
                # at all may run from another directory (another checkout): unsure, so info.
                top = rel.split(os.sep)[0]
                unsure = in_code and not skill_only and not cands and \
                    not any(os.path.isdir(b / top) for b in bases[:2])
                why = (f"a command in a code block names `{top}/`, which this skill does not bundle at all: it may run "
                       f"from another directory" if unsure else f"looked for it in {ws.rel(skill_dir)}/"
                       + (f", {ws.rel(real_dir)}/ (the real directory)" if real_dir != skill_dir else "")
                       + (", the project" if not skill_only else ""))
                yield Finding("CTX506", "info" if unsure else "warning", fi.path, span,
                              f"The skill names `{rel}` but {ws.rel(skill_dir)}/{rel} does not exist{hint}; add the "
                              f"file to the skill or fix the path", fixes=fixes, data={"explain": [why]})


def _climbing_ref(ws: Workspace, fi: FileInfo, skill_dir: Path, line: int, col: int, text: str,
                  target: str) -> Finding | None:
    """A reference that climbs out of the skill directory (`[Cargo.toml](../../Cargo.toml)`): it resolves from
    the skill directory, as the model reading SKILL.md resolves it. Reported when that lands inside the
    workspace on nothing; the fix takes one `../` more or less when that finds the file."""
    dest = Path(os.path.normpath(skill_dir / target))
    if not is_within(dest, ws.root) or ws.exists(dest):
        return None
    fixes = []
    for other in ("../" + target, target[3:] if target.startswith("../") else None):
        if other and is_within(Path(os.path.normpath(skill_dir / other)), ws.root) and \
                ws.exists(Path(os.path.normpath(skill_dir / other))):
            new = other + text[len(target):] if text.startswith(target) else other
            fixes.append(Fix(f"Point the link at {other}", (Edit(fi.path, Span(line, col, line, col + len(text)),
                                                                  new),), safe=False))
            break
    hint = f" ({fixes[0].title.split(' at ', 1)[1]} exists)" if fixes else ""
    return Finding("CTX506", "warning", fi.path, Span(line, col, line, col + len(text)),
                   f"The skill names `{target}`, which from {ws.rel(skill_dir)}/ is {ws.rel(dest)}: it does not "
                   f"exist{hint}; fix the path (it is relative to the skill directory)", fixes=fixes)


# What `_refs_in_line` needs to find anything: a link, or a path in a bundle directory or under
# ${CLAUDE_SKILL_DIR} (in a code block only scripts/ and references/ count).
_REF_NEEDLES = ("](", "CLAUDE_SKILL_DIR", "scripts/", "references/", "reference/", "assets/", "templates/")
_CODE_REF_NEEDLES = ("CLAUDE_SKILL_DIR", "scripts/", "references/")


def _may_hold_refs(text: str, in_code: bool) -> bool:
    """False when `_refs_in_line` finds no reference in ``text`` (a line, or a whole file for either kind)."""
    return any(n in text for n in (_CODE_REF_NEEDLES if in_code else _REF_NEEDLES))


def _skill_files(ws: Workspace, skill_dir: Path) -> list[str]:
    """The files of a skill's directory, relative to it: from the workspace's one walk when the skill's real
    directory is in the workspace, else (a personal skill) walked here."""
    got = ws.files_under(skill_dir)
    if got is not None:
        return got
    out = []
    for dirpath, _, filenames in _walk(skill_dir, limit=2_000):
        for f in filenames:
            out.append(os.path.relpath(os.path.join(dirpath, f), skill_dir).replace(os.sep, "/"))
    return sorted(out)


def _refs_in_line(line: str, in_code: bool) -> Iterator[tuple[int, str, str, bool]]:
    """(column, text as written, path relative to the skill dir, skill-dir only) of each reference on a line."""
    if in_code:
        for m in _CODE_BUNDLE_RE.finditer(line):
            if _OUTPUT_ARG_RE.search(line[: m.start(1)]):
                continue  # `> scripts/out.txt`, `-o references/new.md`: written, not read
            got = _token(line, m)
            if got:
                yield (m.start(1),) + got
        return
    spans: list[tuple[int, int]] = []
    for m in code_spans(line):
        spans.append((m.start(), m.end()))
        inner = m.group(2)
        for t in _BUNDLE_RE.finditer(inner):
            got = _token(inner, t)
            if got:
                yield (m.start(2) + t.start(1),) + got

    def in_span(pos: int) -> bool:
        return any(a <= pos < b for a, b in spans)

    for m in _LINK_RE.finditer(line):
        if in_span(m.start()):
            continue
        raw, start = m.group(1), m.start(1)
        if raw.startswith("<"):
            raw, start = raw[1:-1], start + 1
        written = raw.split("#", 1)[0].split("?", 1)[0]
        target = _link_target(raw, written)
        if target:
            skill_only = bool(_SKILL_DIR_VAR_RE.match(target))
            yield start, written, _SKILL_DIR_VAR_RE.sub("", target), skill_only
    # bare paths in prose: only the conventional bundle directories, and only with a file extension
    masked = _LINK_RE.sub(lambda m: " " * len(m.group(0)), line)
    for m in _BUNDLE_RE.finditer(masked):
        if in_span(m.start()):
            continue
        got = _token(masked, m)
        if got:
            yield (m.start(1),) + got


def _token(text: str, m: re.Match) -> tuple[str, str, bool] | None:
    ref = m.group(1).rstrip(".")
    end = m.start(1) + len(m.group(1))
    if end < len(text) and text[end] in _PLACEHOLDER_NEXT:
        return None  # `scripts/<name>.py`, `references/*.md`: a pattern, not a file
    if not _EXT_RE.search(ref):
        return None
    v = _SKILL_DIR_VAR_RE.match(ref)
    if v:
        return ref, ref[v.end():], True
    return ref, ref, False


def _link_target(raw: str, written: str) -> str | None:
    if not raw or raw[0] in "#/~<{" or "://" in raw or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", raw):
        return None
    if raw[0] == "$" and not _SKILL_DIR_VAR_RE.match(raw):
        return None
    if not written or any(c in _SKILL_DIR_VAR_RE.sub("", written) for c in "<>{}*[]$"):
        return None
    return unquote(written)


# ============================================================================================ CTX507
@rule("CTX507", "paths-glob", "skills", "warning",
      summary="A `paths:` glob of a rule or skill that is invalid or matches no file in the workspace.",
      why="A rule or skill with `paths:` loads only when Claude reads a matching file. A pattern that is invalid "
          "matches nothing; a pattern that matches no file (a renamed directory, a wrong extension, a path "
          "written relative to the wrong directory) means the instructions never load. Patterns are matched with "
          "gitignore semantics relative to the directory that contains `.claude/`.",
      example="```markdown\n---\npaths:\n  - \"src/api/**/*.ts\"   # the code moved to services/api/\n---\n```",
      fix="Fix the pattern so it matches the files the rule is for (relative to the directory containing "
          "`.claude/`), or delete it. Directories ctxls never scans (node_modules, dist, build...) are not "
          "checked. A pattern whose directory exists (or that has none, like `**/*.tsx`) while another pattern "
          "of the same rule matches is only info: a kind of file the project has none of yet.")
def paths_glob(ws: Workspace):
    root_only = ws.settings.paths_md_root_only
    for fi in sources(ws, D.RULE, D.SKILL):
        fm = _frontmatter(fi)
        if fm is None or not isinstance(fm.data, dict) or fm.data.get("paths") is None:
            continue
        value = fm.data["paths"]
        key_line = fm.keys.get("paths", 1)
        whole = parse_paths(value, root_only)
        if not isinstance(value, (str, list)):
            for err in whole.errors:
                yield Finding("CTX507", "warning", fi.path, _key_span(fi, key_line, "paths"),
                              f"`paths:` {err.split('paths ', 1)[-1]}: Claude Code loads the "
                              f"{_kind_word(fi.kind)} in every session; write a list of globs")
            continue
        if whole.unconditional and not whole.errors:
            continue
        # one entry per pattern as Claude Code splits them (commas outside braces, list items too)
        entries = [e for item in ([value] if isinstance(value, str) else value)
                   for e in (split_outside_braces(item) if isinstance(item, str) else [item])]
        cb = _claude_base(fi.path)
        base = cb[1] if cb is not None else None
        check_matches = base is not None and is_within(base, ws.root) and \
            not (cb is not None and cb[0] == ws.settings.claude_dir)
        misses: list[tuple[str, int]] = []
        matched = False
        for entry in entries:
            line = _entry_line(fi, fm, key_line, entry)
            if not isinstance(entry, str):
                yield Finding("CTX507", "warning", fi.path, _key_span(fi, line),
                              f"`paths:` entry {entry!r} is not a string: it matches nothing; quote it")
                continue
            if not entry:
                continue
            one = parse_paths([entry], root_only)
            if one.errors:
                err = one.errors[0].replace("pattern ", "Glob ", 1)
                yield Finding("CTX507", "warning", fi.path, _entry_span(fi, line, entry),
                              f"{err}; fix the pattern")
                continue
            if one.unconditional or not check_matches:
                continue
            if _skipped_area(one.patterns):
                continue
            if _any_match(ws, base, one, root_only):
                matched = True
            else:
                misses.append((entry, line))
        for entry, line in misses:
            where = ws.rel(base) if base != ws.root else "the workspace root"
            where = where if where != "." else "the workspace root"
            if matched and _dir_exists(ws, base, entry):
                # `**/*.tsx` beside a `**/*.ts` that matches: a kind of file the project has none of yet, while
                # the rule loads for its other patterns (a directory that is gone stays a warning: it moved)
                yield Finding("CTX507", "info", fi.path, _entry_span(fi, line, entry),
                              f"Glob '{entry}' matches no file under {where} yet (the {_kind_word(fi.kind)} loads "
                              f"for its other patterns); drop it if no such file is coming")
                continue
            yield Finding("CTX507", "warning", fi.path, _entry_span(fi, line, entry),
                          f"Glob '{entry}' matches no file under {where}: the {_kind_word(fi.kind)} never "
                          f"loads for it; fix the pattern (it is relative to the directory containing .claude/)")


def _dir_exists(ws: Workspace, base: Path, entry: str) -> bool:
    """Whether the literal directory a glob starts with (`src/web` of `src/web/**/*.tsx`; none for `**/*.tsx`)
    exists under ``base``."""
    cut = min((i for i in (entry.find(c) for c in "*?[{") if i >= 0), default=len(entry))
    d = entry[:cut].rpartition("/")[0].strip("/")
    return not d or ws.fs.is_dir(base / d)


def _entry_line(fi: FileInfo, fm: _FM, key_line: int, entry: Any) -> int:
    if isinstance(entry, str) and entry:
        for i in range(key_line, fm.close):
            if entry in fi.lines[i]:
                return i
    return key_line


def _entry_span(fi: FileInfo, line: int, entry: str) -> Span:
    text = fi.lines[line].rstrip("\r")
    col = text.find(entry)
    if col >= 0 and line != 0:
        return Span(line, col, line, col + len(entry))
    return Span(line, 0, line, len(text))


def _skipped_area(patterns: tuple[str, ...]) -> bool:
    """Patterns that point into directories the workspace scan never enters (node_modules, dist...)."""
    for p in patterns:
        first = p.lstrip("/").split("/", 1)[0]
        if first in D.SKIP_DIRS or first.startswith(".") and first not in (".", "..", ".claude", ".github"):
            return True
        if any(seg in D.SKIP_DIRS for seg in p.split("/")):
            return True
    return False


def _all_files(ws: Workspace) -> list[str]:
    """Every file of the workspace relative to its root (posix)."""
    return ws.rel_files


def _any_match(ws: Workspace, base: Path, globs: PathGlobs, root_only: bool) -> bool:
    """Whether a file of the workspace under ``base`` matches ``globs``."""
    files = ws.files_under(base) or []
    from ..globs import _spec  # the loader's own compiled matcher

    spec = _spec(globs.patterns, root_only)
    regexes = [(p.regex, p.include) for p in spec.patterns if getattr(p, "regex", None) is not None]
    if all(inc for _, inc in regexes):
        return any(any(map(rx.match, files)) for rx, _ in regexes)  # (map: the loop runs in C)
    return any(spec.match_file(f) for f in files)
