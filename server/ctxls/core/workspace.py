"""The workspace model the rules query: its configuration (`CheckConfig`), its files (`FileInfo`) and everything
else a rule may ask about it (`Workspace`: the index, sessions, what loads where, the file tree, git history).
Expensive answers are computed once and cached. Rules import this module, never the engine that runs them
(core/check.py)."""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import operator
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

from . import lazyre
from . import discovery as D
from .findings import SEVERITIES
from .fs import FileSystem
from .loader import auto_memory_dir, is_inert_dir, load_session, loads_as_parent
from .markdown import Prepared, prepare
from .model import Session
from .paths import rel_path
from .settings import Settings
from .tokens import TokenCounter, factor_for

if TYPE_CHECKING:
    from .history import History


_TEST_DIRS = frozenset({"test", "tests", "spec", "specs", "__tests__", "e2e", "testdata", "test-fixtures",
                        "test_fixtures", "__fixtures__"})
_AGENT_DIRS = frozenset({".claude", ".cursor", ".github", ".agents", ".gemini", ".codex", ".windsurf", ".kiro"})
_CASE_DIRS = frozenset({"pass", "fail", "valid", "invalid", "good", "bad"})


@dataclass(frozen=True)
class CheckConfig:
    """Options of the rule engine (`[check]` table of .ctxls.toml; defaults documented in docs/rules.md)."""

    select: frozenset[str] = frozenset()
    """Codes or prefixes to run (empty = all)."""
    ignore: frozenset[str] = frozenset()
    severity: Mapping[str, str] = field(default_factory=dict)
    """Per-code severity overrides."""
    fail_level: str = "warning"
    file_budget_tokens: int = 2_000
    """A single always-loaded instruction file above this is over budget."""
    session_budget_tokens: int = 10_000
    """Instruction tokens a directory may load at startup (fixed overhead excluded)."""
    large_file_chars: int = 40_000
    max_lines: int = 200
    skill_max_lines: int = 500
    skill_max_tokens: int = 5_000
    duplicate_threshold: float = 0.8
    """Jaccard similarity of content-word sets (function, modal and negation words and numbers left out; see
    CTX202) at or above which two instructions are near-duplicates."""
    duplicate_min_words: int = 4
    git_history: bool = True
    """Say which version of a diverged instruction (CTX202) is newer from git history (`git blame` of the two
    versions' lines) when the files are tracked, rather than from file modification times alone."""
    never_committed: str = "info"
    """Severity of a CTX401 claim in a git repository whose whole history never had the path (a plan, an
    example, another repository's file, or a made-up layout: info); "warning" reports them as the rule's other
    claims."""
    critical_depth_fraction: float = 0.5
    """No longer used (CTX601 measures depth in tokens: `critical_after_tokens`); accepted so that existing
    configuration files stay valid."""
    critical_min_lines: int = 60
    """No longer used (see `critical_depth_fraction`)."""
    section_min_tokens: int = 150
    """A task-specific section smaller than this is not worth extracting."""
    critical_after_tokens: int = 2_000
    """A MUST/NEVER line is buried when this many tokens of the always-loaded file come before it (CTX601)."""
    # (a sorted tuple, not a set: the result cache keys on the repr of the options, and a set's order changes
    # from one process to the next)
    template_dirs: tuple[str, ...] = ("boilerplate", "example", "examples", "fixture", "fixtures", "samples",
                                      "scaffold", "scaffolds", "skeleton", "template", "templates", "testdata")
    """Directories whose instruction files ship into other projects (a directory named so, or ending in
    `_templates` / `-templates`, or `.Template(s)` as a `dotnet new` template package is named): their copies of the root's instructions are on purpose (CTX201/CTX202) and the
    paths they name are the generated project's (CTX401 says info)."""
    agents: tuple[str, ...] = ()
    """The agents the workspace targets (CTX8xx), in table order; empty = those whose files exist. (A tuple, as
    for template_dirs: the result cache keys on the repr of the options.)"""

    def in_template_dir(self, rel: str) -> bool:
        """Whether root-relative posix path ``rel`` (a file) lies under one of `template_dirs`."""
        for seg in rel.split("/")[:-1]:
            low = seg.lower()
            # (`src/CoreEx.Template/content/`: a `dotnet new` template package is named X.Template(s))
            if low in self.template_dirs or low.endswith(("_templates", "-templates", ".template", ".templates")):
                return True
        return False

    def in_test_fixture(self, rel: str) -> bool:
        """Whether root-relative posix path ``rel`` lies in a test fixture of agent configuration: an agent's
        folder (`.claude/`, `.cursor/`, ...) or a `pass/` / `fail/` case under a test directory
        (`tests/fail/.claude/rules/x.md`, the cases of a linter of instruction files). Nobody's agent reads it as
        this project's instructions, and its mistakes are on purpose."""
        segs = [s.lower() for s in rel.split("/")[:-1]]
        for i, seg in enumerate(segs):
            if seg in _TEST_DIRS:
                return any(t in _AGENT_DIRS or t in _CASE_DIRS for t in segs[i + 1:])
        return False

    def enabled(self, code: str) -> bool:
        if self.select and not any(code.startswith(s) for s in self.select):
            return False
        return not any(code.startswith(s) for s in self.ignore)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> tuple["CheckConfig", list[str]]:
        import dataclasses

        errors: list[str] = []
        changes: dict[str, Any] = {}
        fields = {f.name for f in dataclasses.fields(cls)}
        for raw, value in data.items():
            key = raw.replace("-", "_")
            if key not in fields:
                errors.append(f"unknown [check] setting {raw!r}")
                continue
            if key in ("select", "ignore"):
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    errors.append(f"[check] {raw} must be a list of codes")
                    continue
                changes[key] = frozenset(v.strip().upper() for v in value)
            elif key == "template_dirs":
                if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
                    errors.append(f"[check] {raw} must be a list of directory names")
                    continue
                changes[key] = tuple(sorted({v.strip().strip("/").lower() for v in value}))
            elif key == "severity":
                if not isinstance(value, dict) or not all(v in SEVERITIES for v in value.values()):
                    errors.append(f"[check] severity must map codes to one of {', '.join(SEVERITIES)}")
                    continue
                changes[key] = {k.upper(): v for k, v in value.items()}
            elif key == "agents":
                from .profiles import AGENTS

                if not isinstance(value, list) or not all(isinstance(v, str) and v in AGENTS for v in value):
                    errors.append(f"[check] agents must be a list of {', '.join(AGENTS)}")
                    continue
                changes[key] = tuple(a for a in AGENTS if a in value)
            elif key in ("fail_level", "never_committed"):
                if value not in SEVERITIES:
                    errors.append(f"[check] {key} must be one of {', '.join(SEVERITIES)}")
                    continue
                changes[key] = value
            elif isinstance(getattr(cls(), key), bool):
                if not isinstance(value, bool):
                    errors.append(f"[check] {raw} must be true or false")
                    continue
                changes[key] = value
            else:
                default = getattr(cls(), key)
                if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                    errors.append(f"[check] {raw} must be a non-negative number")
                    continue
                changes[key] = type(default)(value)
        return cls(**changes), errors


@dataclass
class FileInfo:
    path: Path
    kind: str
    text: str | None
    error: str | None
    mtime_ns: int = 0

    @cached_property
    def lines(self) -> list[str]:
        return (self.text or "").split("\n")

    @cached_property
    def prepared(self) -> Prepared:
        return prepare(self.text or "")

    @cached_property
    def suppressions(self) -> tuple[tuple[bool, tuple[str, ...], int, bool], ...]:
        """The file's `ctxls-ignore` comments, parsed once: (whole file, upper-cased codes (empty: all), 0-based
        line, alone on its line so that it covers the next one)."""
        text = self.text
        if text is None or "ctxls-" not in text:
            return ()
        out = []
        for m in _SUPPRESS_RE.finditer(text):
            kind, codes = m.group(1), m.group(2).replace(",", " ").split()
            line_start = text.rfind("\n", 0, m.start()) + 1
            out.append((kind in ("ignore-file", "disable"), tuple(c.upper() for c in codes),
                        text.count("\n", 0, m.start()), not text[line_start:m.start()].strip()))
        return tuple(out)


class Sessions(dict):
    """Startup sessions by start directory, each loaded on first ask: the one session API. The engine keeps one
    for its hovers and code lenses and hands it to each check's workspace, whose rules fill it."""

    def startup(self, start: Path, settings: Settings, root: Path, fs: FileSystem, counter: TokenCounter,
                prefixes: dict | None = None) -> Session:
        """The session an agent started in ``start`` holds before the first prompt (``prefixes``: a batch's
        walk states, see `load_session`)."""
        s = self.get(start)
        if s is None:
            s = self[start] = load_session(start, (), settings, root=root, fs=fs, counter=counter, prefixes=prefixes)
        return s


class Workspace:
    """Everything rules may ask about one workspace. Expensive answers are computed once and cached."""

    def __init__(self, root: Path, settings: Settings | None = None, config: CheckConfig | None = None, *,
                 fs: FileSystem | None = None, counter: TokenCounter | None = None,
                 index: D.WorkspaceIndex | None = None, sessions: Sessions | None = None) -> None:
        """``sessions``: a cache of startup sessions by directory to share (the engine's: rules fill it, hovers
        reuse it)."""
        self.root = Path(os.path.abspath(root))
        self.settings = settings or Settings()
        self.config = config or CheckConfig()
        self.fs = fs or FileSystem(max_bytes=self.settings.max_file_bytes)
        self.counter = counter or TokenCounter(factor_for(self.settings.model, self.settings.token_factor))
        self._index = index
        self._sessions = sessions if sessions is not None else Sessions()
        self._prefetched = False  # the startup renderings are counted (see prefetch_tokens)
        self._session_list: list[Session] | None = None
        self._files: dict[Path, FileInfo] = {}
        self.walked_dirs: list[Path] = []
        self.scope: set[Path] | None = None
        self.also_check: set[Path] = set()
        """Files a per-file rule found its findings on may change because of an edit in the scope (it reads a
        word of theirs across files): the engine re-checks them too (see Engine.check)."""
        """When set, `files()` yields only these (an incremental re-check of per-file rules)."""

    # ---------------------------------------------------------------- what carries across checks
    def carry_over(self, prev: "Workspace", unchanged: Callable[[FileInfo], bool],
                   cached: Callable[[Path], Session | None]) -> None:
        """Take over ``prev``'s file records (split lines, parsed markdown, suppression comments) for which
        ``unchanged`` holds, and its list of every directory's session when each of them is still the one
        ``cached`` returns for its directory (an edit patched them in place). The caller vouches that both
        workspaces share one index, settings and configuration."""
        files = self._files
        for path, fi in list(prev._files.items()):
            if unchanged(fi):
                files.setdefault(path, fi)
        listed = prev._session_list
        if listed is not None and self._session_list is None and all(cached(s.start_dir) is s for s in listed):
            self._session_list = listed

    @property
    def needs_prefetch(self) -> bool:
        """Whether no session was built and no startup rendering counted yet: the moment to count them all in
        one batch (`prefetch_tokens`), or to split that count between processes (core/parallel.py)."""
        return not self._sessions and not self._prefetched

    def mark_prefetched(self) -> None:
        """Every startup rendering is counted (by whoever did it): `sessions()` need not batch them again."""
        self._prefetched = True

    @contextmanager
    def unscoped(self) -> Iterator[None]:
        """Lift `scope` for a while: a rule that reports on scoped files only may need to see every file to
        know how those load."""
        scope, self.scope = self.scope, None
        try:
            yield
        finally:
            self.scope = scope

    # ---------------------------------------------------------------- inventory
    @property
    def index(self) -> D.WorkspaceIndex:
        """The workspace's one walk: the index given (the engine's), else one scan per file-system snapshot."""
        if self._index is not None:
            return self._index
        key = ("index", self.root, self.settings.respect_gitignore)  # (all the scan depends on)
        got = self.fs.memo.get(key)
        if got is None:
            got = self.fs.memo[key] = D.scan_workspace(self.root, self.settings, fs=self.fs)
        return got

    @cached_property
    def memory_dir(self) -> Path:
        return auto_memory_dir(self.root, self.settings, self.fs)

    @cached_property
    def memory_files(self) -> list[Path]:
        # Through the snapshot: the language server builds a workspace per check, and the snapshot lists the
        # directory once until the watcher says it changed.
        names = sorted(n for n in self.fs.listing(self.memory_dir) if n.endswith(".md"))
        return [self.memory_dir / n for n in names]

    def file(self, path: Path, kind: str | None = None) -> FileInfo:
        fi = self._files.get(path)
        if fi is None:
            src = self.fs.read(path, self.settings.max_file_bytes)
            if kind is None:
                kind = self.kind_of(path)
            fi = FileInfo(path, kind, src.text, src.error, src.mtime_ns)
            self._files[path] = fi
        return fi

    def kind_of(self, path: Path) -> str:
        if path.parent == self.memory_dir:
            return D.MEMORY_INDEX if path.name == "MEMORY.md" else D.MEMORY_TOPIC
        try:
            rel = path.relative_to(self.root).parts
        except ValueError:
            rel = path.parts
        return D.classify(rel) or "other"

    def files(self, *kinds: str) -> list[FileInfo]:
        """Instruction sources of the given kinds (all when none), memory files included."""
        scope = self.scope
        if scope is None:
            out = [self.file(s.path, s.kind) for s in self.index.sources if not kinds or s.kind in kinds]
        else:  # an incremental re-check: a few files of thousands, in scan order
            order = self._source_order
            found = sorted((order[p], p) for p in scope if p in order)
            sources = self.index.sources
            out = [self.file(p, sources[i].kind) for i, p in found if not kinds or sources[i].kind in kinds]
        if not kinds or D.MEMORY_INDEX in kinds or D.MEMORY_TOPIC in kinds:
            for p in self.memory_files:
                k = D.MEMORY_INDEX if p.name == "MEMORY.md" else D.MEMORY_TOPIC
                if (not kinds or k in kinds) and (scope is None or p in scope):
                    out.append(self.file(p, k))
        return [f for f in out if f.text is not None]

    @cached_property
    def _source_order(self) -> dict[Path, int]:
        """Path of each instruction source -> its place in the scan."""
        return {src.path: i for i, src in enumerate(self.index.sources)}

    def tree(self) -> tuple[list[tuple[str, str, list[str]]], list[str]]:
        """The workspace's file tree, from the one walk (`discovery.scan_workspace`): its directory entries
        (absolute path, posix path relative to the root, names of what is not a directory), and the posix
        paths of the symlinks to directories it did not enter. Asking records the directories it depends on
        (`walked_dirs`)."""
        index = self.index
        self.walked_dirs = index.tree_dirs
        return index.tree, index.dir_links

    @property
    def rel_files(self) -> list[str]:
        """Every file of the workspace, relative to the root (posix), for existence and glob lookups."""
        index = self.index
        self.walked_dirs = index.tree_dirs
        return index.rel_files

    def files_under(self, d: Path) -> list[str] | None:
        """The files of the workspace below the directory ``d`` (reached through the tree, symlinks resolved),
        relative to it (posix), sorted; None when ``d`` is not in the workspace's tree."""
        real_root = self.fs.realpath(self.root)
        real = self.fs.realpath(d)
        if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
            return None
        index = self.index
        self.walked_dirs = index.tree_dirs
        return index.files_under(real[len(real_root):].strip(os.sep).replace(os.sep, "/"))

    @property
    def files_by_name(self) -> "FilesByName":
        """Basename -> files of the workspace with that name (to suggest where a moved file went)."""
        index = self.index
        self.walked_dirs = index.tree_dirs
        return FilesByName(index.dirs_by_name)

    def session(self, start: Path, prefixes: dict | None = None) -> Session:
        return self._sessions.startup(start, self.settings, self.root, self.fs, self.counter, prefixes)

    def prefetch_tokens(self) -> None:
        """Count every instruction file's startup rendering in one parallel batch (see budget)."""
        from .budget import prefetch_tokens

        prefetch_tokens(self.index, self.settings, self.fs, self.counter)
        self._prefetched = True

    def sessions(self) -> list[Session]:
        """The startup session of every directory of the workspace.

        A directory with no instruction files, no `.claude/` and no `.git` loads exactly what its parent
        loads, so it shares the parent's blocks (only `start_dir` differs). Computed once per workspace."""
        if self._session_list is not None:
            return list(self._session_list)
        out: list[Session] = []
        by_dir: dict[str, Session] = {}  # by string: a Path hashes and compares in Python
        if self.needs_prefetch:
            self.prefetch_tokens()
        prefixes: dict = {}  # this batch's walk states (see load_session): parents come before children
        root = str(self.root)
        for d in self.index.dirs:
            sd = str(d)
            parent = by_dir.get(os.path.dirname(sd)) if sd != root else None
            if parent is not None and is_inert_dir(d, self.fs) and loads_as_parent(parent, d):
                s = self._sessions.get(d) or dataclasses.replace(parent, start_dir=d)
                self._sessions[d] = s
            else:
                s = self.session(d, prefixes)
            by_dir[sd] = s
            out.append(s)
        self._session_list = out
        return list(out)

    @cached_property
    def start_mask(self) -> int:
        """Bits (index.dirs order, as in `loads_in`) of the directories a session starts in: not agent config
        or docs folders (core/startdirs.py). Messages that say "in N sessions" count these."""
        return sum(1 << i for i, d in enumerate(self.index.dirs) if self.is_start(d))

    def is_start(self, d: Path) -> bool:
        """Whether a user would start a session in ``d``: not agent configuration, docs or a skill's bundle."""
        from .startdirs import is_start_dir

        return is_start_dir(d, self.root) and not (self.skill_bundles and _in_bundle(d, self.skill_bundles))

    @cached_property
    def skill_bundles(self) -> frozenset[Path]:
        """The directories that hold a SKILL.md, anywhere in the workspace: a skill's bundle, whose files (an
        `AGENTS.md` "with all rules expanded" beside the SKILL.md) are read on demand, where nobody starts a
        session."""
        return frozenset(Path(d) for d, _, names in self.index.tree if "SKILL.md" in names)

    def sessions_in(self, mask: int) -> int:
        """How many start directories of ``mask`` (a `loads_in` mask) load the file; all of them when none of
        those is a start directory (a file that loads only under docs/ still loads somewhere)."""
        return (mask & self.start_mask).bit_count() or mask.bit_count()

    @cached_property
    def loads_in(self) -> dict[str, int]:
        """Real path of each file -> bitmask of the directory sessions (index.dirs order) that load it.

        Kept in the file-system snapshot for as long as every session keeps its list of blocks (an edit that
        changes only a file's own block patches the list in place, which never changes what loads)."""
        lists = [s.blocks for s in self.sessions()]
        key = ("loads_in", self.root)
        got = self.fs.memo.get(key)
        if got is not None and same_items(got[0], lists):
            return got[1]
        # Inert directories share their parent's blocks: walk each list of blocks once, for all its sessions.
        shared: dict[int, tuple[list, int]] = {}
        for i, blocks in enumerate(lists):
            prev = shared.get(id(blocks))
            shared[id(blocks)] = (blocks, (prev[1] if prev else 0) | 1 << i)
        masks: dict[str, int] = {}
        realpath = self.fs.realpath
        for blocks, bits in shared.values():
            for b in blocks:
                if b.source is not None:
                    k = realpath(b.source)
                    masks[k] = masks.get(k, 0) | bits
        self.fs.memo[key] = (lists, masks)
        return masks

    def sessions_loading(self, path: Path) -> int:
        return bin(self.loads_in.get(self.fs.realpath(path), 0)).count("1")

    def git(self) -> "History | None":
        """The workspace's git history, when `[check] git_history` is on and the workspace is in a repository
        whose `HEAD` is a commit. What says where `HEAD` is (its file, the branch's ref file, packed-refs)
        joins what a stored report depends on, whether or not git could answer: a first commit, a commit or a
        checkout changes the answers."""
        if not self.config.git_history:
            return None
        from .history import History  # (subprocess and friends: imported when git is asked)

        key = ("history", self.root)
        history = self.fs.memo.get(key)
        if history is None:
            history = self.fs.memo[key] = History(self.root)
        usable = history.refresh()
        for path in history.state_files():
            self.fs.depend(path)
        return history if usable else None

    def published_with(self, path: Path) -> str | None:
        """The npm package ``path`` ships in: the nearest package.json above it, below the root, that is not
        private and whose `files` lists the file's name (`"AGENTS.md"`, `"*.md"`). Its copy of the root's
        instructions is on purpose: it goes to every user of the package (CTX201, CTX202)."""
        d = path.parent
        while d != self.root and self.root in d.parents:
            key = ("published", d)
            if key not in self.fs.memo:
                self.fs.memo[key] = _package_files(self.fs.read(d / "package.json"))
            got = self.fs.memo[key]
            if got is not None:  # (the nearest package.json decides)
                name, files = got
                rest = path.relative_to(d).as_posix()
                return name if any(fnmatch.fnmatchcase(rest, f.strip("/").removeprefix("./")) for f in files) \
                    else None
            d = d.parent
        return None

    def rel(self, path: Path) -> str:
        return rel_path(path, self.root)

    def exists(self, path: Path) -> bool:
        return self.fs.stat(path) is not None


class FilesByName:
    """Basename -> the workspace's files with that name, as Paths built on demand."""

    def __init__(self, dirs: dict[str, list[str]]) -> None:
        self._dirs = dirs

    def get(self, name: str, default: list[Path] | None = None) -> list[Path] | None:
        dirs = self._dirs.get(name)
        if dirs is None:
            return default
        return [Path(os.path.join(d, name)) for d in dirs]


_SUPPRESS_RE = lazyre.compile(r"<!--\s*ctxls-(ignore-file|ignore|disable)(?![\w-])([^>]*)-->")


VENDOR_DIRS = frozenset({"vendor", "third_party", "third-party", "3rdparty"})
"""Directories of other projects' files copied in (Go modules, Composer packages): their instruction files are
upstream's."""


def in_vendor_dir(rel: str) -> bool:
    """Whether root-relative posix path ``rel`` (a file) lies under a `VENDOR_DIRS` directory."""
    return any(seg in VENDOR_DIRS for seg in rel.split("/")[:-1])


def _package_files(src) -> tuple[str, list[str]] | None:
    """(name, `files` entries) of a package.json read (`fs.read`), or None when there is none. A private
    package, or one without a `files` list (npm then publishes the whole directory, which says nothing of this
    file on purpose), or a file that is not JSON lists nothing."""
    if not src.ok or src.text is None:
        return None
    try:
        data = json.loads(src.text)
    except ValueError:
        return "", []
    if not isinstance(data, dict) or data.get("private") is True or not isinstance(data.get("files"), list):
        return "", []
    return str(data.get("name") or "?"), [f for f in data["files"] if isinstance(f, str)]


def same_items(a: list, b: list) -> bool:
    """The two lists hold the very same objects, in the same order."""
    return a is b or (len(a) == len(b) and all(map(operator.is_, a, b)))


def _in_bundle(d: Path, bundles: frozenset[Path]) -> bool:
    """Whether ``d`` is a skill bundle directory or below one."""
    return d in bundles or any(p in bundles for p in d.parents)
