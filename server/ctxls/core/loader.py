"""The session model: which blocks an agent session holds, in the order it sends them.

`load_session(start_dir, touched, settings)` follows `shared/spec/loading.md` sections A and B for Claude Code.
Agents are profiles (`PROFILES`): a profile turns (start dir, touched files, settings) into blocks; only
Claude Code is implemented, and the data model (`Block`, `Session`) is agent-neutral so Codex, Cursor,
Copilot and Gemini CLI can be added beside it.

Nothing here raises on bad input: unreadable or odd files become `Skipped` entries or block notes.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from . import lazyre
from . import model as M
from .discovery import rule_files
from .fs import FileSystem
from .globs import PathGlobs, parse_paths
from .markdown import ImportRef, Prepared, line_count, prepare, split_lines
from .model import Block, Session, SkillInfo, SkillListing, Skipped
from .settings import Settings
from .skills import build_listing, command_files, parse_skill, render_listing, skill_dirs
from .tokens import TokenCounter, factor_for

LABELS = {
    "Project": "project instructions, checked into the codebase",
    "Local": "user's private project instructions, not checked in",
    "AutoMem": "user's auto-memory, persists across conversations",
    "User": "user's private global instructions for all projects",
    "Managed": "user's private global instructions for all projects",
}

CONTEXT_HEADER_TEXT = (
    "<system-reminder>\n"
    "As you answer the user's questions, you can use the following context:\n"
    "# claudeMd\n"
    "Codebase and user instructions are shown below. Be sure to adhere to these instructions. "
    "IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.\n\n"
)
CONTEXT_FOOTER_TEMPLATE = (
    "# currentDate\nToday's date is {today}.\n\n"
    "      IMPORTANT: this context may or may not be relevant to your tasks. "
    "You should not respond to this context unless it is highly relevant to your task.\n"
    "</system-reminder>\n"
)
MEMORY_WARNING = (
    "\n\n> WARNING: MEMORY.md is {lines} lines and {kb:.1f}KB. Only part of it was loaded. "
    "Keep index entries to one line each and move detail into topic files."
)

# Files @-imports may pull in (TEXT_FILE_EXTENSIONS in spirit): anything else is skipped as non-text.
TEXT_EXTENSIONS = frozenset(
    ".md .markdown .mdx .txt .rst .adoc .org .json .jsonc .json5 .yaml .yml .toml .ini .cfg .conf .env .xml .html .htm "
    ".css .scss .less .csv .tsv .sql .graphql .proto .py .pyi .js .jsx .mjs .cjs .ts .tsx .go .rs .java .kt .kts .scala "
    ".c .h .cc .cpp .hpp .cs .rb .php .swift .m .mm .sh .bash .zsh .fish .ps1 .bat .lua .vim .el .clj .ex .exs .erl "
    ".hs .ml .r .jl .dart .tf .hcl .nix .gradle .properties .lock .mk .cmake .dockerfile .gitignore .editorconfig".split()
)

_SANITIZE_RE = lazyre.compile(r"[^A-Za-z0-9]")


def resolve_import(parent: Path, ref: str, home: Path) -> Path:
    """Target of `@ref` written in ``parent`` (spec A4): relative to the importing file, `~/`, or absolute."""
    if ref.startswith("~/") or ref == "~":
        p = home / ref[2:]
    elif ref.startswith("/"):
        p = Path(ref)
    else:
        p = parent.parent / ref
    return Path(os.path.normpath(p))


def render_file(path: Path, tier: str, content: str, lazy: bool) -> str:
    """A file's text as Claude Code sends it (spec A3)."""
    if lazy:
        return f"<system-reminder>\nContents of {path}:\n\n{content}\n</system-reminder>"
    return f"Contents of {path} ({LABELS[tier]}):\n\n{content}\n\n"


def sanitize_project_path(path: str) -> str:
    """Auto-memory directory name (spec A7): every char not [A-Za-z0-9] becomes '-'.

    Past 200 chars Claude Code appends a Bun.hash that Python cannot reproduce; we use the djb2 fallback
    Claude Code uses on Node, so such paths are marked approximate.
    """
    s = _SANITIZE_RE.sub("-", path)
    if len(s) <= 200:
        return s
    h = 5381
    for ch in path:
        h = ((h << 5) + h + ord(ch)) & 0xFFFFFFFF
    return s[:200] + "-" + _base36(h)


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def find_git_root(start: Path, fs: FileSystem) -> Path | None:
    """The nearest directory from ``start`` up that holds `.git` (memoized per directory in the snapshot)."""
    key = ("git_root", start)
    got = fs.memo.get(key, key)
    if got is not key:
        return got
    if ".git" in fs.listing(start):
        got = start
    else:
        got = None if start.parent == start else find_git_root(start.parent, fs)
    fs.memo[key] = got
    return got


def auto_memory_dir(start_dir: Path, settings: Settings, fs: FileSystem) -> Path:
    if settings.auto_memory_dir is not None:
        return settings.auto_memory_dir
    project = find_git_root(start_dir, fs) or start_dir
    return settings.claude_dir / "projects" / sanitize_project_path(str(project)) / "memory"


@dataclass(frozen=True)
class _DirProbe:
    """Which instruction files exist in one directory (existing = any kind, so odd ones get reported)."""

    dir: Path
    claude_dir: Path
    claude: Path | None
    dot_claude: Path | None
    local: Path | None
    agents: Path | None
    dot_agents: Path | None
    rules: bool

    @property
    def empty(self) -> bool:
        return not (self.claude or self.dot_claude or self.local or self.rules)

    @classmethod
    def of(cls, d: Path, fs: FileSystem) -> "_DirProbe":
        names = fs.listing(d)
        cd = d / ".claude"
        dot = fs.listing(cd) if names.get(".claude") == "d" else {}
        return cls(d, cd,
                   d / "CLAUDE.md" if "CLAUDE.md" in names else None,
                   cd / "CLAUDE.md" if "CLAUDE.md" in dot else None,
                   d / "CLAUDE.local.md" if "CLAUDE.local.md" in names else None,
                   d / "AGENTS.md" if "AGENTS.md" in names else None,
                   cd / "AGENTS.md" if "AGENTS.md" in dot else None,
                   dot.get("rules") == "d")


def walk_dirs(start_dir: Path, settings: Settings, fs: FileSystem | None = None) -> list[Path]:
    """Directories of the upward walk, outermost first, ending at start_dir. The filesystem root itself is
    excluded (spec A1); a ceiling, when set and above start_dir, is the outermost directory."""
    if fs is not None:  # share Path objects across sessions (their hashes are cached)
        return _walk_memo(str(start_dir), settings.ceiling, fs)
    dirs: list[Path] = []
    d = start_dir
    ceiling = settings.ceiling
    while True:
        if d.parent == d:  # filesystem root: excluded
            break
        dirs.append(d)
        if ceiling is not None and d == ceiling:
            break
        d = d.parent
    dirs.reverse()
    return dirs


def _walk_memo(sd: str, ceiling: Path | None, fs: FileSystem) -> list[Path]:
    """`walk_dirs` memoized per directory (by string: cheaper than Path), a directory's walk being its
    parent's plus itself, so sessions in sibling directories share their ancestors' Path objects."""
    key = ("walk", sd, ceiling)
    got = fs.memo.get(key)
    if got is None:
        parent = os.path.dirname(sd)
        if parent == sd:  # filesystem root: excluded
            got = []
        else:
            d = Path(sd)
            got = [d] if ceiling is not None and d == ceiling else _walk_memo(parent, ceiling, fs) + [d]
        fs.memo[key] = got
    return got


_RELEVANT_NAMES = ("CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", ".claude", ".git")


def is_inert_dir(d: Path, fs: FileSystem) -> bool:
    """True when nothing in ``d`` changes what a session there loads compared with its parent directory
    (no instruction files, no `.claude/`, no `.git`): its startup session costs exactly the parent's."""
    names = fs.listing(d)
    return not any(n in names for n in _RELEVANT_NAMES)


def loads_as_parent(parent: Session, d: Path) -> bool:
    """Whether a session started in ``d``, an inert directory (`is_inert_dir`) below the start directory of
    ``parent``, loads exactly what ``parent`` loads. The one difference there can be: a project import that
    lies outside ``d`` but not outside the parent's start directory is external for ``d`` (a note, or not
    loaded at all when external imports are not approved)."""
    ds = str(d)
    inside = ds if ds.endswith(os.sep) else ds + os.sep
    for b in parent.blocks:  # `_external_for` inlined: this runs for every block of every inert directory
        if b.kind == M.IMPORT and b.tier in ("Project", "Local") and b.source is not None:
            src = str(b.source)
            if src != ds and not src.startswith(inside) and EXTERNAL_IMPORT_NOTE not in b.notes:
                return False
    return True


def is_within(path: Path | str, base: Path | str) -> bool:
    p, b = str(path), str(base)
    return p == b or p.startswith(b if b.endswith(os.sep) else b + os.sep)


@dataclass
class _Rule:
    path: Path
    base: Path
    """Directory the `paths:` globs are relative to."""
    globs: PathGlobs
    tier: str
    frontmatter_error: str | None = None


def _rebased(rule: _Rule, base: Path) -> _Rule:
    """``rule`` with another base (dataclasses.replace, without its cost)."""
    r = object.__new__(_Rule)
    r.__dict__.update(rule.__dict__)
    r.base = base
    return r


EXTERNAL_IMPORT_NOTE = "external import (outside the start directory): loads only after the one-time approval"
_CODE_NOTE_END = " is inside code or a comment: not imported"


def code_notes(refs: Sequence[ImportRef]) -> list[str]:
    """A file block's notes about `@` mentions that do not import (these come last among a block's notes): one
    per name, with every line it is on (a fenced script naming `@acme/web` five times is one note), the name
    without the punctuation that closes its code span or sentence."""
    lines: dict[str, list[int]] = {}
    for ref in refs:
        lines.setdefault(ref.raw.rstrip("`'\",.;:)]") or ref.raw, []).append(ref.line)
    out = []
    for name, ns in lines.items():
        where = f"line {ns[0]}" if len(ns) == 1 else f"lines {', '.join(map(str, ns[:-1]))} and {ns[-1]}"
        out.append(f"@{name} on {where}{_CODE_NOTE_END}")
    return out


def _external_for(b: Block, start: Path) -> bool | None:
    """For a project import block: whether it lies outside ``start`` (None for any other block)."""
    if b.kind != M.IMPORT or b.tier not in ("Project", "Local") or b.source is None:
        return None
    return not is_within(b.source, start)


def _mark_external(notes: list[str], on: bool) -> None:
    """Give or take the external-import note where a fresh load puts it: after the file's own notes, before
    the notes about `@` in code."""
    if (EXTERNAL_IMPORT_NOTE in notes) == on:
        return
    if not on:
        notes.remove(EXTERNAL_IMPORT_NOTE)
        return
    k = len(notes)
    while k and notes[k - 1].endswith(_CODE_NOTE_END):
        k -= 1
    notes.insert(k, EXTERNAL_IMPORT_NOTE)


@dataclass
class ClaudeCodeLoader:
    start_dir: Path
    settings: Settings
    fs: FileSystem
    counter: TokenCounter
    root: Path
    blocks: list[Block] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    processed: set[str] = field(default_factory=set)
    skills: list[SkillInfo] = field(default_factory=list)
    listing: SkillListing | None = None
    _skills_shared: bool = False
    _listing_cache: list | None = None
    agents_fallback: bool | None = None
    """Whether the default AGENTS.md mode fell back to AGENTS.md at startup (no CLAUDE.md from the root to the
    start directory); None before startup was loaded."""
    prefixes: dict | None = None
    """Shared by the sessions of one batch (`load_session(prefixes=...)`): the loader's state after the walk
    reached each directory, so a session started below it continues from there instead of loading every
    ancestor's files again. Valid only while no file changes: a batch owns it, never a snapshot."""

    # ------------------------------------------------------------------ helpers
    def _real(self, path: Path) -> str:
        return self.fs.realpath(path)

    def _excluded(self, path: Path, tier: str) -> bool:
        if tier == "Managed" or not self.settings.claude_md_excludes:
            return False
        s = str(path)
        return any(fnmatch.fnmatchcase(s, g) for g in self.settings.claude_md_excludes)

    def _skip(self, path: Path, reason: str, trigger: str, kind: str) -> None:
        self.skipped.append(Skipped(path, reason, trigger, kind))

    def _read_prepared(self, path: Path, trigger: str, kind: str) -> tuple[Prepared, tuple[str, ...]] | None:
        src = self.fs.read(path, self.settings.max_file_bytes)
        if not src.ok:
            if src.error != "file not found":
                self._skip(path, src.error or "unreadable", trigger, kind)
            return None
        prep = prepare(src.text or "")
        if not prep.content:
            self._skip(path, "empty or whitespace-only after preprocessing", trigger, kind)
            return None
        return prep, src.notes

    # ------------------------------------------------------------------ file blocks
    def _probe(self, d: Path) -> "_DirProbe":
        key = ("probe", d)
        got = self.fs.memo.get(key)
        if got is None:
            got = self.fs.memo[key] = _DirProbe.of(d, self.fs)
        return got

    def add_file(self, path: Path | None, kind: str, tier: str, trigger: str, *, lazy: bool = False,
                 depth: int = 0, note: str | None = None) -> bool:
        """Load one instruction file (and, depth-first, its imports). Returns True when it loaded."""
        if path is None:
            return False
        if not self.fs.is_file(path):
            if self.fs.exists(path) and self._real(path) not in self.processed:  # symlink loop, FIFO, directory...
                self.processed.add(self._real(path))
                self._skip(path, self.fs.read(path).error or "not a regular file", trigger, kind)
            return False
        real = self._real(path)
        if real in self.processed:
            if not lazy and kind != M.IMPORT:  # lazy re-encounters are the normal "once per conversation"
                self._skip(path, "already loaded (the same file reached twice)", trigger, kind)
            return False
        if self._excluded(path, tier):
            self._skip(path, "excluded by claudeMdExcludes", trigger, kind)
            return False
        self.processed.add(real)
        got = self._read_prepared(path, trigger, kind)
        if got is None:
            return False
        prep, notes = got
        # The rendered text and its token count depend only on (file, tier, lazy): build them once per snapshot.
        key = ("render", path, tier, lazy, prep.content)
        rendered = self.fs.memo.get(key)
        if rendered is None:
            text = render_file(path, tier, prep.content, lazy)
            rendered = self.fs.memo[key] = (text, self.counter.count(text))
        text, tokens = rendered
        blk = Block(kind, trigger, text, source=path, tier=tier, lines=(prep.first_line, prep.last_line),
                    startup=not lazy, tokens=tokens, estimated=self.counter.estimated)
        blk.notes.extend(notes)
        if prep.removed:
            blk.cut = "; ".join(prep.removed) + " stripped"
        if note:
            blk.notes.append(note)
        blk.notes.extend(code_notes(prep.skipped_imports))  # last: patching relies on it
        self.blocks.append(blk)
        self._imports(path, prep, tier, depth, lazy)
        return True

    def _import_targets(self, parent: Path, prep: Prepared) -> list[tuple[ImportRef, Path, str | None]]:
        """Each import of ``parent`` resolved, with the reason it can never load (None when it can)."""
        key = ("imports", parent, prep.imports)
        got = self.fs.memo.get(key)
        if got is not None:
            return got
        out = []
        for ref in prep.imports:
            target = self._resolve(parent, ref.path)
            suffix = target.suffix.lower()
            problem = None
            if suffix and suffix not in TEXT_EXTENSIONS and not target.name.startswith("."):
                problem = f"@{ref.raw}: non-text extension {suffix}"
            elif not self.fs.is_file(target):
                reason = "not a regular file" if self.fs.exists(target) else "import target not found"
                problem = f"{reason}: @{ref.raw} on line {ref.line}"
            out.append((ref, target, problem))
        self.fs.memo[key] = out
        return out

    def _imports(self, parent: Path, prep: Prepared, tier: str, depth: int, lazy: bool) -> None:
        if not prep.imports:
            return
        trigger = f"import:{self._display(parent)}"
        targets = self._import_targets(parent, prep)
        if depth + 1 > self.settings.import_max_hops:
            for ref, target, _ in targets:
                self._skip(target, f"import depth limit ({self.settings.import_max_hops} hops) "
                           f"reached: @{ref.raw} on line {ref.line} not loaded", trigger, M.IMPORT)
            return
        for ref, target, problem in targets:
            if problem is not None:
                self._skip(target, problem, trigger, M.IMPORT)
                continue
            if self._real(target) in self.processed:
                self._skip(target, f"already loaded (duplicate or cycle): @{ref.raw} on line {ref.line}",
                           trigger, M.IMPORT)
                continue
            note = None
            if tier in ("Project", "Local") and not is_within(target, self.start_dir):
                if not self.settings.external_imports_approved:
                    self._skip(target, f"@{ref.raw}: outside the start directory and not approved", trigger, M.IMPORT)
                    continue
                note = EXTERNAL_IMPORT_NOTE
            self.add_file(target, M.IMPORT, tier, trigger, lazy=lazy, depth=depth + 1, note=note)

    def _resolve(self, parent: Path, ref: str) -> Path:
        return resolve_import(parent, ref, self.settings.home)

    def _display(self, path: Path) -> str:
        key = ("display", path, self.root)
        got = self.fs.memo.get(key)
        if got is None:
            got = self.fs.memo[key] = M.display_path(path, self.root) or str(path)
        return got

    # ------------------------------------------------------------------ rules
    def _rules_in(self, claude_dir: Path, base: Path, tier: str) -> list[_Rule]:
        """All `.md` under `claude_dir/rules`, recursively, symlinks followed, cycles handled, sorted."""
        # `claude_dir/rules` as one Path object per snapshot, or None when no such directory (structural)
        root = self.fs.memo.get(("rules-root", claude_dir), claude_dir)
        if root is claude_dir:
            root = claude_dir / "rules"
            root = self.fs.memo[("rules-root", claude_dir)] = root if self.fs.is_dir(root) else None
        if root is None:
            return []
        key = ("rules", root, base, tier, self.settings.paths_md_root_only)
        got = self.fs.memo.get(key)
        if got is None:
            # The scan does not depend on the base (user and managed rules take the start directory's): one
            # scan per directory, the rules rebased for each base.
            scan_key = ("rules-scan", root, tier, self.settings.paths_md_root_only)
            scanned = self.fs.memo.get(scan_key)
            if scanned is None:
                scanned = self.fs.memo[scan_key] = self._scan_rules(root, base, tier)
            rules, unlisted = scanned
            for d, reason in unlisted:  # reported by each session that scans, as when each scanned itself
                self._skip(d, reason, M.STARTUP, M.RULE)
            got = self.fs.memo[key] = [r if r.base == base else _rebased(r, base) for r in rules]
        return got

    def _scan_rules(self, root: Path, base: Path, tier: str) -> tuple[list[_Rule], list[tuple[Path, str]]]:
        """The rules under ``root``, and the directories that could not be listed (with the reason). Symlinks
        are followed and cycles cut as the workspace scan does (`discovery.rule_files`), so a rule reached
        through a link is named by the same path here and in `ctxls check` findings (the link path)."""
        found, unlisted = rule_files(root, self._real, self.fs.scandir)  # (the workspace scan's listings)
        rules = []
        for p in found:
            src = self.fs.read(p, self.settings.max_file_bytes)
            globs = PathGlobs((), True)
            fm_error = None
            if src.ok:
                prep = prepare(src.text or "")
                data = prep.frontmatter.data or {}
                fm_error = prep.frontmatter.error
                globs = parse_paths(data.get("paths"), self.settings.paths_md_root_only)
            rules.append(_Rule(p, base, globs, tier, fm_error))
        return rules, unlisted

    def _rule_matches(self, rule: _Rule, target: Path) -> bool:
        if not is_within(target, rule.base):
            return False
        rel = target.relative_to(rule.base).as_posix()
        return rule.globs.matches(rel)

    def _add_rule(self, rule: _Rule, kind: str, trigger: str, lazy: bool) -> None:
        problems = list(rule.globs.errors)
        if rule.frontmatter_error:
            problems.append(f"{rule.frontmatter_error}; `paths:` ignored, so it loads in every session")
        note = "; ".join(problems) or None
        self.add_file(rule.path, kind, rule.tier, trigger, lazy=lazy, note=note)

    # ------------------------------------------------------------------ startup
    def load_startup(self) -> None:
        s = self.settings
        self.blocks.append(Block(M.TOOL_SCHEMAS, M.STARTUP, "", tokens=s.tool_schema_tokens))
        self.blocks.append(Block(M.SYSTEM_PROMPT, M.STARTUP, "", tokens=s.system_prompt_tokens))
        header_at = len(self.blocks)
        self.blocks.append(Block(M.CONTEXT_HEADER, M.STARTUP, CONTEXT_HEADER_TEXT))
        first_file = len(self.blocks)
        managed_only = s.agents_md_mode == "managed-only"

        # 1. Managed
        self.add_file(s.managed_dir / "CLAUDE.md", M.CLAUDE_MD, "Managed", M.STARTUP)
        for r in self._rules_in(s.managed_dir / ".claude", self.start_dir, "Managed"):
            if r.globs.unconditional:
                self._add_rule(r, M.RULE, M.STARTUP, False)
        if not managed_only:
            # 2. User
            self.add_file(s.claude_dir / "CLAUDE.md", M.CLAUDE_MD, "User", M.STARTUP)
            for r in self._rules_in(s.claude_dir, self.start_dir, "User"):
                if r.globs.unconditional:
                    self._add_rule(r, M.RULE, M.STARTUP, False)
            # 3. Project + Local, root -> cwd
            probes = [self._probe(d) for d in walk_dirs(self.start_dir, s, self.fs)]
            agents_fallback = s.agents_md_mode == "claude-md-or-agents-md" and not any(
                p.claude or p.dot_claude or p.local for p in probes)
            agents_too = s.agents_md_mode == "claude-md-and-agents-md"
            self.agents_fallback = agents_fallback
            every = agents_fallback or agents_too
            prefixes, mode, done = self.prefixes, (agents_fallback, agents_too), 0
            if prefixes is not None:
                for i in range(len(probes) - 1, -1, -1):
                    state = prefixes.get((probes[i].dir, mode))
                    if state is not None:
                        if self._restore(state):
                            done = i + 1
                        break
            for p in probes[done:]:
                if every or not p.empty:
                    self._load_dir(p, every)
                if prefixes is not None and (p.dir, mode) not in prefixes:  # the first (shallowest) walker's
                    prefixes[(p.dir, mode)] = (tuple(self.blocks), tuple(self.skipped), frozenset(self.processed),
                                               self.start_dir)
        # 4. Auto memory
        mem = self._auto_memory()
        if mem is not None:
            if s.auto_memory_position == "first":
                self.blocks.insert(first_file, mem)
            else:
                self.blocks.append(mem)
        if len(self.blocks) == header_at + 1:
            del self.blocks[header_at]  # nothing loaded: no claudeMd message at all
        else:
            self.blocks.append(Block(M.CONTEXT_FOOTER, M.STARTUP, CONTEXT_FOOTER_TEMPLATE.format(today=s.today)))
        # 5. Skill listing
        if not managed_only:
            self._collect_skills()
        self._listing_block(M.STARTUP, self.skills)

    def _load_dir(self, p: "_DirProbe", agents: bool) -> None:
        """One directory of the walk: CLAUDE.md, .claude/CLAUDE.md, AGENTS.md (when ``agents``), unconditional
        rules, CLAUDE.local.md."""
        self.add_file(p.claude, M.CLAUDE_MD, "Project", M.STARTUP)
        self.add_file(p.dot_claude, M.CLAUDE_MD, "Project", M.STARTUP)
        if agents:
            for path in (p.agents, p.dot_agents):
                if path is not None:
                    self._add_agents(path, M.AGENTS_MD, M.STARTUP, False)
        if p.rules:
            for r in self._rules_in(p.claude_dir, p.dir, "Project"):
                if r.globs.unconditional:
                    self._add_rule(r, M.RULE, M.STARTUP, False)
        self.add_file(p.local, M.CLAUDE_MD, "Local", M.STARTUP)

    def _restore(self, state: tuple) -> bool:
        """Continue from the state another session's walk reached in one of our ancestors (see `prefixes`),
        with blocks of our own. What depends on where a session starts is whether a project import lies
        outside the start directory: the walk that recorded the state judged that from its own start
        directory, so here the external-import notes are set again for ours. When external imports are not
        approved, an external one does not load at all: the state is reused only when it was recorded by a
        session started here or above and loads nothing external for us; otherwise nothing is restored
        (False) and the walk starts over."""
        blocks, skipped, processed, recorder = state
        start = self.start_dir
        approved = self.settings.external_imports_approved
        if not approved and not is_within(start, recorder):
            return False
        ds = str(start)
        inside = ds if ds.endswith(os.sep) else ds + os.sep
        own = []
        for b in blocks:
            c = object.__new__(Block)
            c.__dict__.update(b.__dict__)
            c.notes = list(b.notes)
            if b.kind == M.IMPORT and b.tier in ("Project", "Local") and b.source is not None:  # `_external_for`
                src = str(b.source)
                external = src != ds and not src.startswith(inside)
                if external and not approved:
                    return False
                _mark_external(c.notes, external)
            own.append(c)
        self.blocks = own
        self.skipped = list(skipped)
        self.processed = set(processed)
        return True

    def _add_agents(self, path: Path, kind: str, trigger: str, lazy: bool) -> None:
        if self.settings.agents_md_mode == "claude-md-and-agents-md" and self.fs.is_file(path):
            src = self.fs.read(path, self.settings.max_file_bytes)
            if src.ok:
                content = prepare(src.text or "").content
                if any(b.source is not None and content and content in b.text for b in self.blocks):
                    self._skip(path, "AGENTS.md content already loaded through CLAUDE.md", trigger, kind)
                    self.processed.add(self._real(path))
                    return
        self.add_file(path, kind, "Project", trigger, lazy=lazy)

    def _auto_memory(self) -> Block | None:
        s = self.settings
        if not s.auto_memory_enabled:
            return None
        # One Path object per project (git root) and snapshot: its hash is computed once, not per session
        project = find_git_root(self.start_dir, self.fs) or self.start_dir
        key = ("memory-file", project, s.auto_memory_dir, s.config_dir, s.home)
        path = self.fs.memo.get(key)
        if path is None:
            path = self.fs.memo[key] = auto_memory_dir(self.start_dir, s, self.fs) / "MEMORY.md"
        if not self.fs.is_file(path):
            return None
        real = self._real(path)
        if real in self.processed:
            return None
        self.processed.add(real)
        src = self.fs.read(path, s.max_file_bytes)
        if not src.ok:
            self._skip(path, src.error or "unreadable", M.STARTUP, M.AUTO_MEMORY)
            return None
        key = ("memory", path, src.text, s.memory_max_lines, s.memory_max_bytes)
        got = self.fs.memo.get(key)
        if got is None:
            got = self.fs.memo[key] = self._render_memory(path, src.text or "")
        if got is None:
            self._skip(path, "empty or whitespace-only", M.STARTUP, M.AUTO_MEMORY)
            return None
        text, lines, cut, tokens = got
        blk = Block(M.AUTO_MEMORY, M.STARTUP, text, source=path, tier="AutoMem", lines=lines, cut=cut,
                    tokens=tokens, estimated=self.counter.estimated)
        blk.notes.extend(src.notes)
        return blk

    def _render_memory(self, path: Path, text: str):
        s = self.settings
        head, cut = cut_memory(text, s.memory_max_lines, s.memory_max_bytes)
        prep = prepare(head)
        if not prep.content:
            return None
        content = prep.content
        if cut is not None:
            total_lines = line_count(text)
            content += MEMORY_WARNING.format(lines=total_lines, kb=len(text.encode()) / 1000)
        rendered = f"Contents of {path} ({LABELS['AutoMem']}):\n\n{content}\n\n"
        return rendered, (prep.first_line, prep.last_line), cut, self.counter.count(rendered)

    # ------------------------------------------------------------------ skills
    def _collect_skills(self) -> None:
        s = self.settings
        top = find_git_root(self.start_dir, self.fs) or self.root
        # Sessions in sibling directories usually see the same skills: share the parsed listing, keyed by the
        # `.claude` directories that contribute (their contents are memoized per snapshot).
        if is_within(self.start_dir, top):
            contributing = self._contributing(self.start_dir, top)
        else:
            cd = self._probe(self.start_dir).claude_dir
            contributing = (cd,) if skill_dirs(cd, self.fs) or command_files(cd, self.fs) else ()
        key = ("skills", contributing, s.managed_dir, s.claude_dir, s.skill_budget, s.skill_desc_cap,
               s.paths_md_root_only, tuple(sorted(s.skill_invocations.items())))
        got = self.fs.memo.get(key)
        if got is None:
            found: list[tuple[Path, str]] = []
            found += [(p, "managed") for p in skill_dirs(s.managed_dir / ".claude", self.fs)]
            found += [(p, "personal") for p in skill_dirs(s.claude_dir, self.fs)]
            for b in contributing:
                found += [(p, "project") for p in skill_dirs(b, self.fs)]
            found += [(p, "command") for p in command_files(s.claude_dir, self.fs)]
            for b in contributing:
                found += [(p, "command") for p in command_files(b, self.fs)]
            skills = self._dedupe_skills([self._parsed_skill(p, scope) for p, scope in found])
            # the third item: the startup listing block's (text, cut, tokens), rendered once (`_listing_block`)
            got = self.fs.memo[key] = (skills, build_listing(skills, s), [])
        self.skills, self.listing, self._listing_cache = got
        self._skills_shared = True

    def _parsed_skill(self, path: Path, scope: str) -> tuple[SkillInfo, str]:
        """``path`` parsed as a ``scope`` skill, with its real path, once per snapshot. The SkillInfo is a
        template: listings mutate theirs, so `_dedupe_skills` hands out copies."""
        s = self.settings
        key = ("skills", "parsed", path, scope, s.skill_desc_cap, s.paths_md_root_only)
        got = self.fs.memo.get(key)
        if got is None:
            got = self.fs.memo[key] = (parse_skill(path, scope, self.fs, s), self._real(path))
        return got

    def _contributing(self, d: Path, top: Path) -> tuple[Path, ...]:
        """The `.claude` directories with skills or commands from ``d`` up to ``top``, nearest first (memoized
        per directory: a child's answer is its own directory's plus its parent's)."""
        key = ("contributing", d, top)
        got = self.fs.memo.get(key)
        if got is None:
            cd = self._probe(d).claude_dir
            # no `.claude` directory (most directories): nothing to list (listing it would fail anyway)
            own = (cd,) if self.fs.listing(d).get(".claude") == "d" and (
                skill_dirs(cd, self.fs) or command_files(cd, self.fs)) else ()
            got = own if d == top or d.parent == d else own + self._contributing(d.parent, top)
            self.fs.memo[key] = got
        return got

    def _own_skills(self) -> None:
        """Copy the shared skill objects before a touch changes them."""
        if self._skills_shared:
            self.skills = [dataclasses.replace(x) for x in self.skills]
            self._skills_shared = False

    def _dedupe_skills(self, found: Iterable[tuple[SkillInfo, str]]) -> list[SkillInfo]:
        """Precedence: managed > personal > project (nearest first) > command; same real path loads once.
        ``found``: (template, real path) pairs (`_parsed_skill`); the result holds fresh copies."""
        by_name: dict[str, SkillInfo] = {}
        seen_real: set[str] = set()
        out: list[SkillInfo] = []
        for template, real in found:
            if real in seen_real:
                continue
            seen_real.add(real)
            sk = object.__new__(SkillInfo)  # a shallow copy, as dataclasses.replace makes, without its cost
            sk.__dict__.update(template.__dict__)
            winner = by_name.get(sk.name)
            if winner is not None:
                sk.listed = False
                sk.shadowed_by = winner.source
                sk.hidden_reason = f"shadowed by {self._display(winner.source)}"
                out.append(sk)
                continue
            by_name[sk.name] = sk
            out.append(sk)
        return out

    def _listing_block(self, trigger: str, entries: Sequence[SkillInfo]) -> None:
        if trigger != M.STARTUP:
            self.listing = build_listing(self.skills, self.settings)
        # A startup listing of shared skills is the same for every session sharing them: render it once.
        cache = self._listing_cache if trigger == M.STARTUP and self._skills_shared else None
        if cache and cache[0] is self.counter:
            _, text, cut, tokens = cache
        else:
            text, cut = self._render_listing(entries)
            tokens = self.counter.count(text) if cache is not None and text else 0
            if cache is not None:
                cache[:] = (self.counter, text, cut, tokens)
        if not text:
            return
        blk = Block(M.SKILL_LISTING, trigger, text, startup=trigger == M.STARTUP, cut=cut)
        if tokens:  # counted here for a shared listing (`finish` counts the others)
            blk.tokens, blk.estimated = tokens, self.counter.estimated
        self.blocks.append(blk)

    def _render_listing(self, entries: Sequence[SkillInfo]) -> tuple[str, str | None]:
        listing = self.listing
        shown = [e for e in entries if e.listed]
        text = render_listing(shown)
        cut = None
        dropped = sum(1 for e in shown if e.description_dropped)
        if text and dropped:
            cut = (f"descriptions of {dropped} of {len(shown)} skills dropped: listing needs "
                   f"{listing.full_chars:,} chars, budget {listing.budget_chars:,}")
        return text, cut

    # ------------------------------------------------------------------ touches
    def touch(self, target: Path) -> None:
        trigger = f"touch:{self._display(target)}"
        s = self.settings
        self._read_block(target, trigger)
        self.processed.add(self._real(target))  # not injected if the model read that exact file
        inside = is_within(target, self.start_dir) and target != self.start_dir
        # Phase 1: managed and user conditional rules (relative to the start dir)
        for claude_dir, tier in ((s.managed_dir / ".claude", "Managed"), (s.claude_dir, "User")):
            if tier == "User" and s.agents_md_mode == "managed-only":
                continue
            for r in self._rules_in(claude_dir, self.start_dir, tier):
                if not r.globs.unconditional and self._rule_matches(r, target):
                    self._add_rule(r, M.PATH_RULE, trigger, True)
        if s.agents_md_mode == "managed-only":
            return
        # Phase 2: directories strictly below the start dir down to the file's directory
        new_skills: list[SkillInfo] = []
        self._own_skills()
        if inside:
            rel_parts = target.parent.relative_to(self.start_dir).parts
            d = self.start_dir
            for part in rel_parts:
                d = d / part
                has_claude = self.fs.is_file(d / "CLAUDE.md")
                self.add_file(d / "CLAUDE.md", M.NESTED_CLAUDE_MD, "Project", trigger, lazy=True)
                self.add_file(d / ".claude" / "CLAUDE.md", M.NESTED_CLAUDE_MD, "Project", trigger, lazy=True)
                self.add_file(d / "CLAUDE.local.md", M.NESTED_CLAUDE_MD, "Local", trigger, lazy=True)
                # (the default mode attaches a nested AGENTS.md only in the fallback: no CLAUDE.md, .claude/CLAUDE.md
                # or CLAUDE.local.md from the root to the start directory; spec A8)
                if s.agents_md_mode == "claude-md-and-agents-md" or (
                    s.agents_md_mode == "claude-md-or-agents-md" and self.agents_fallback is not False
                    and not has_claude
                ):
                    self._add_agents(d / "AGENTS.md", M.NESTED_AGENTS_MD, trigger, True)
                for r in self._rules_in(d / ".claude", d, "Project"):
                    if r.globs.unconditional:
                        self._add_rule(r, M.NESTED_RULE, trigger, True)
                    elif self._rule_matches(r, target):
                        self._add_rule(r, M.PATH_RULE, trigger, True)
                for p in skill_dirs(d / ".claude", self.fs):
                    if self._real(p) in {self._real(x.source) for x in self.skills}:
                        continue
                    sk = parse_skill(p, "project", self.fs, s)
                    if any(x.name == sk.name and x.listed for x in self.skills):
                        sk.name = f"{d.relative_to(self.start_dir).as_posix()}:{sk.name}"
                        sk.entry = f"- {sk.name}: {sk.description}" if sk.description else f"- {sk.name}"
                    self.skills.append(sk)
                    if sk.listed:
                        new_skills.append(sk)
        # Phase 3: conditional rules of every directory root -> start dir
        for d in walk_dirs(self.start_dir, s, self.fs):
            for r in self._rules_in(self._probe(d).claude_dir, d, "Project"):
                if not r.globs.unconditional and self._rule_matches(r, target):
                    self._add_rule(r, M.PATH_RULE, trigger, True)
        # Path-scoped skills become listed when a matching file is touched
        for sk in self.skills:
            if sk.paths and not sk.listed and sk.shadowed_by is None and not (sk.hidden_reason or "").startswith("disable"):
                base = sk.source.parent.parent.parent.parent  # <base>/.claude/skills/<name>/SKILL.md
                if is_within(target, base) and PathGlobs(sk.paths, False).matches(target.relative_to(base).as_posix()):
                    sk.listed = True
                    sk.hidden_reason = None
                    new_skills.append(sk)
        if new_skills:
            self._listing_block(trigger, new_skills)

    def _read_block(self, target: Path, trigger: str) -> None:
        src = self.fs.read(target, self.settings.max_file_bytes)
        if not src.ok:
            self._skip(target, f"cannot be read: {src.error}", trigger, M.READ)
            return
        text = src.text or ""
        lines = split_lines(text)[: line_count(text)]
        shown = lines[: self.settings.read_max_lines]
        body = "\n".join(f"{i:>6}\t{line[:2000]}" for i, line in enumerate(shown, 1))
        blk = Block(M.READ, trigger, body, source=target, lines=(1, len(shown)) if shown else None, startup=False)
        if len(lines) > len(shown):
            blk.cut = f"lines {len(shown) + 1}-{len(lines)} not read (Read tool shows {len(shown)} lines by default)"
        blk.notes.extend(src.notes)
        self.blocks.append(blk)

    # ------------------------------------------------------------------ totals
    def finish(self) -> None:
        total = 0
        for b in self.blocks:
            if b.kind not in (M.SYSTEM_PROMPT, M.TOOL_SCHEMAS) and not b.tokens:  # file blocks count when built
                b.tokens = self.counter.count(b.text)
                b.estimated = self.counter.estimated
            total += b.tokens
            b.cumulative = total


def cut_memory(text: str, max_lines: int, max_bytes: int) -> tuple[str, str | None]:
    """MEMORY.md head (spec A7): truncate by lines first, then at the last newline before max_bytes."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines = lines[:-1]
    total_lines = len(lines)
    reasons: list[str] = []
    head = text
    if total_lines > max_lines:
        head = "\n".join(lines[:max_lines])
        reasons.append(f"lines {max_lines + 1}-{total_lines} past the {max_lines}-line cut")
    data = head.encode("utf-8")
    if len(data) > max_bytes:
        cut_at = data.rfind(b"\n", 0, max_bytes)
        if cut_at <= 0:
            cut_at = max_bytes
        kept = data[:cut_at].decode("utf-8", errors="ignore")
        kept_lines = kept.count("\n") + 1
        reasons.append(f"lines {kept_lines + 1}-{total_lines} past the {max_bytes:,}-byte cut")
        head = kept
    return head, ("; ".join(reasons) if reasons else None)


Loader = Callable[..., Session]


def load_session(
    start_dir: Path | str,
    touched: Sequence[Path | str] = (),
    settings: Settings | None = None,
    *,
    root: Path | None = None,
    fs: FileSystem | None = None,
    counter: TokenCounter | None = None,
    profile: str = "claude-code",
    prefixes: dict | None = None,
) -> Session:
    """The ordered blocks of a session started in ``start_dir`` after reading each of ``touched``.

    ``prefixes``: a dict shared by the sessions of one batch over an unchanging file system (every directory
    of a workspace), so that each continues from the deepest ancestor directory another already walked."""
    settings = settings or Settings()
    if profile not in PROFILES:
        raise ValueError(f"unknown agent profile {profile!r}; known: {', '.join(PROFILES)}")
    start = Path(os.path.abspath(start_dir))
    fs = fs or FileSystem(max_bytes=settings.max_file_bytes)
    counter = counter or TokenCounter(factor_for(settings.model, settings.token_factor))
    return PROFILES[profile](start, [Path(os.path.abspath(t)) for t in touched], settings,
                             root or start, fs, counter, prefixes)


def _claude_code(start: Path, touched: list[Path], settings: Settings, root: Path, fs: FileSystem,
                 counter: TokenCounter, prefixes: dict | None = None) -> Session:
    ld = ClaudeCodeLoader(start, settings, fs, counter, root, prefixes=prefixes)
    ld.load_startup()
    for t in touched:
        ld.touch(t)
    ld.finish()
    return Session(start, root, ld.blocks, ld.skipped, ld.listing, settings.window,
                   counter.method, touched)


PROFILES: dict[str, Callable[..., Session]] = {"claude-code": _claude_code}

# The other agents (spec C), each in its own module under core/profiles/.
from .profiles import PROFILES as _OTHER_PROFILES  # noqa: E402  (they use the helpers above)

PROFILES.update(_OTHER_PROFILES)
