"""The rule engine: a workspace model that rules query, and `run_checks` that runs every selected rule.

One crashing rule is caught, logged and skipped: it never takes the others down.  Results are plain
`Finding`s; the CLI formats them and the language server converts them to diagnostics.
"""

from __future__ import annotations

import dataclasses
import logging
import operator
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping

from . import discovery as D
from .findings import SEVERITIES, SEVERITY_RANK, Finding
from .fs import FileSystem
from .loader import auto_memory_dir, is_inert_dir, load_session, loads_as_parent
from .markdown import Prepared, prepare
from .model import Session
from .settings import Settings
from .tokens import TokenCounter, factor_for

if TYPE_CHECKING:
    from .history import History

log = logging.getLogger("ctxls.check")


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
    `_templates` / `-templates`): their copies of the root's instructions are on purpose (CTX201/CTX202) and the
    paths they name are the generated project's (CTX401 says info)."""
    agents: tuple[str, ...] = ()
    """The agents the workspace targets (CTX8xx), in table order; empty = those whose files exist. (A tuple, as
    for template_dirs: the result cache keys on the repr of the options.)"""

    def in_template_dir(self, rel: str) -> bool:
        """Whether root-relative posix path ``rel`` (a file) lies under one of `template_dirs`."""
        for seg in rel.split("/")[:-1]:
            low = seg.lower()
            if low in self.template_dirs or low.endswith(("_templates", "-templates")):
                return True
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
            elif key == "fail_level":
                if value not in SEVERITIES:
                    errors.append(f"[check] fail_level must be one of {', '.join(SEVERITIES)}")
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


class Workspace:
    """Everything rules may ask about one workspace. Expensive answers are computed once and cached."""

    def __init__(self, root: Path, settings: Settings | None = None, config: CheckConfig | None = None, *,
                 fs: FileSystem | None = None, counter: TokenCounter | None = None,
                 index: D.WorkspaceIndex | None = None) -> None:
        self.root = Path(os.path.abspath(root))
        self.settings = settings or Settings()
        self.config = config or CheckConfig()
        self.fs = fs or FileSystem(max_bytes=self.settings.max_file_bytes)
        self.counter = counter or TokenCounter(factor_for(self.settings.model, self.settings.token_factor))
        self._index = index
        self._sessions: dict[Path, Session] = {}
        self._prefetched = False  # the startup renderings are counted (see prefetch_tokens)
        self._session_list: list[Session] | None = None
        self._files: dict[Path, FileInfo] = {}
        self.walked_dirs: list[Path] = []
        self.scope: set[Path] | None = None
        """When set, `files()` yields only these (an incremental re-check of per-file rules)."""

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
        if self._index is None:
            self._index = D.scan_workspace(self.root, self.settings)
        return self._index

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

    def _walk(self) -> tuple[list[tuple[str, str, list[str]]], list[Path]]:
        """Every directory of the workspace (vendor and build directories skipped) as (absolute path, posix
        path relative to the root ('' for the root), file names), and the directories walked. Kept in the
        file-system snapshot, so a long-lived engine walks the tree again only after a file appears or
        disappears. Plain strings: building a Path for each of tens of thousands of files costs more than the
        walk."""
        key = ("walk", self.root)
        got = self.fs.memo.get(key)
        if got is None:
            entries: list[tuple[str, str, list[str]]] = []
            walked: list[Path] = []
            links: list[str] = []
            root = str(self.root)
            cut = len(root.rstrip(os.sep)) + 1
            islink = os.path.islink
            join = os.path.join
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = [d for d in dirnames if d not in D.SKIP_DIRS]
                walked.append(Path(dirpath))
                rel = dirpath[cut:].replace(os.sep, "/") if dirpath != root else ""
                entries.append((dirpath, rel, filenames))
                for d in dirnames:  # (os.walk lists links to directories there and does not enter them)
                    if islink(join(dirpath, d)):
                        links.append(f"{rel}/{d}" if rel else d)
            got = self.fs.memo[key] = (entries, walked, links)
        self.walked_dirs = got[1]
        return got

    def tree(self) -> tuple[list[tuple[str, str, list[str]]], list[str]]:
        """The one walk of the workspace tree that rules read (see `_walk`): its directory entries, and the
        posix paths (relative to the root) of the symlinks to directories it did not enter."""
        got = self._walk()
        return got[0], got[2]

    @property
    def rel_files(self) -> list[str]:
        """Every file of the workspace, relative to the root (posix), for existence and glob lookups."""
        entries = self._walk()[0]  # first: it records the walk this answer depends on
        key = ("rel_files", self.root)
        got = self.fs.memo.get(key)
        if got is None:
            got = self.fs.memo[key] = [f"{rel}/{n}" if rel else n for _, rel, names in entries for n in names]
        return got

    @cached_property
    def files_by_name(self) -> "FilesByName":
        """Basename -> files of the workspace with that name (to suggest where a moved file went)."""
        entries = self._walk()[0]  # first: it records the walk this answer depends on
        key = ("files_by_name", self.root)
        names = self.fs.memo.get(key)
        if names is None:
            names = {}
            for d, _, files in entries:
                for n in files:
                    got = names.get(n)
                    if got is None:
                        names[n] = [d]
                    else:
                        got.append(d)
            self.fs.memo[key] = names
        return FilesByName(names)

    def session(self, start: Path, prefixes: dict | None = None) -> Session:
        s = self._sessions.get(start)
        if s is None:
            s = load_session(start, (), self.settings, root=self.root, fs=self.fs, counter=self.counter,
                             prefixes=prefixes)
            self._sessions[start] = s
        return s

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
        if not self._sessions and not self._prefetched:
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

    def rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

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


@dataclass
class CheckResult:
    findings: list[Finding]
    errors: list[str]
    """Rules that crashed (caught), with the exception."""


_SUPPRESS_RE = re.compile(r"<!--\s*ctxls-(ignore-file|ignore|disable)(?![\w-])([^>]*)-->")


def run_checks(ws: Workspace, paths: Iterable[Path] | None = None,
               codes: Callable[[str], bool] | None = None, jobs: int = 1) -> CheckResult:
    """Run every enabled rule (``codes`` narrows them further) over ``ws``.

    With ``jobs`` > 1 (the CLI; never a long-lived server, which has threads) about half of the rules run
    in a forked process while this one runs the others: see `_run_split`."""
    from .rules import load_all

    registry = load_all()
    selected = [c for c in registry if ws.config.enabled(c) and (codes is None or codes(c))]
    per_rule: dict[str, tuple[list[Finding], str | None]] | None = None
    if jobs > 1 and len(selected) > 1:
        per_rule = _run_split(ws, selected)
    if per_rule is None:
        per_rule = {c: run_rule(ws, c) for c in selected}
    findings: list[Finding] = []
    errors: list[str] = []
    for code in selected:  # registry order, whichever process ran the rule
        got, error = per_rule[code]
        findings.extend(got)
        if error:
            errors.append(error)
    wanted = [Path(os.path.abspath(p)) for p in paths or ()]
    if wanted and ws.root not in wanted:  # the root itself means everything, memory outside it included
        findings = [f for f in findings if any(f.path == w or _under(f.path, w) for w in wanted)]
    return CheckResult(report_order(ws, findings), errors)


def report_order(ws: Workspace, findings: list[Finding]) -> list[Finding]:
    """Findings as they are reported: suppressed ones dropped, in report order (`order_key`), repeats (same
    path, span, code and message) dropped."""
    marks: dict[str, tuple] = {}  # by path string: Path equality is slow, and many findings share a file
    kept = []
    for f in findings:
        k = str(f.path)
        m = marks.get(k)
        if m is None:
            m = marks[k] = ws.file(f.path).suppressions
        if not m or not suppressed(f, ws):
            kept.append(f)
    if len(kept) < 2:
        return kept
    keyed = [(order_key(f), f) for f in kept]
    keyed.sort(key=itemgetter(0))
    # Repeats sort next to each other, among the findings with the same order key.
    unique = []
    last: tuple | None = None
    messages: set[str] = set()
    for k, f in keyed:
        if k != last:
            last = k
            messages = {f.message}
        elif f.message in messages:
            continue
        else:
            messages.add(f.message)
        unique.append(f)
    return unique


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity, so a container pinned to one CPU says 1)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def run_rule(ws: Workspace, code: str) -> tuple[list[Finding], str | None]:
    """One rule's findings (severity overrides applied), or the error that stopped it: one broken rule never
    takes the others down."""
    from .rules import REGISTRY

    info = REGISTRY[code]
    try:
        got = info.func(ws)
        if type(got) is not list:  # a rule that keeps its findings hands back the same list: keep it
            got = list(got)
    except Exception as exc:
        log.exception("rule %s crashed", code)
        return [], f"{code} ({info.name}) crashed: {type(exc).__name__}: {exc}"
    severity = ws.config.severity.get(code)
    if severity is not None:
        for f in got:
            f.severity = severity
    return got, None


# The rules that read the startup sessions (budgets, duplication, the subdirectory-placement rule) run in
# this process, which builds the sessions while the forked one runs every other rule from the scan alone. On
# the bench monorepo that is ~1.2 s of work here against ~0.9 s there.
_SESSION_RULES = ("CTX1", "CTX2", "CTX602")
# Those of them that build every directory's session (and so count every startup rendering).
_ALL_SESSIONS = ("CTX101", "CTX102", "CTX2", "CTX602")


def _run_split(ws: Workspace, selected: list[str]) -> dict[str, tuple[list[Finding], str | None]] | None:
    """Run the selected rules on two cores: fork right after the scan (the child inherits the index, the
    file cache and, when there is anything to count, the tokenizer), let the child run the rules that need no
    sessions and send back their findings, what it read (so a result cache built from this workspace still
    sees every file the analysis depended on) and the token counts it made, while this process builds the
    sessions and runs `_SESSION_RULES`. A rule in the child that does ask for sessions still gets them (computed there), so the
    split never changes a result. None when forking is unavailable or unsafe; on any failure of the child its
    rules run here, so the result is always the serial one."""
    import pickle

    from .tokens import _encoder

    if not hasattr(os, "fork") or usable_cpus() < 2 or ws.counter.exact is not None:
        return None
    ours = [c for c in selected if c.startswith(_SESSION_RULES)]
    theirs = [c for c in selected if c not in ours]
    if not theirs or not ours:
        return None
    ws.index  # shared by both sides: scan before the fork
    # The sessions this side builds first ask for the startup renderings of every instruction file, and the
    # file budget (CTX101) for each one's content: the child counts half of them (by size) and sends the
    # counts back before it starts on its rules.
    mine: dict[str, str] = {}
    given: dict[str, str] = {}
    if not ws._sessions and not ws._prefetched and any(c.startswith(_ALL_SESSIONS) for c in ours):
        from .budget import startup_texts

        try:
            todo = ws.counter.missing(startup_texts(ws.index, ws.settings, ws.fs, contents="CTX101" in ours))
        except Exception:  # left to the rules, which report it as in a serial run
            todo = {}
        else:
            ws._prefetched = not todo  # all counted already (a kept token cache)
        if todo:
            # Loaded once, here, for both sides. With every count cached it is never loaded before the fork:
            # a side that meets an uncounted text later loads it then (0.1 s).
            try:
                _encoder()
            except Exception:  # the rules that count tokens report it, one by one, as in a serial run
                todo = {}
        if todo and sum(map(len, todo.values())) >= _SPLIT_TOKENIZE_CHARS:
            mine, given = _halves(todo)
        else:
            mine = todo
    fds: list[int] = []
    try:
        fds += os.pipe()
        fds += os.pipe()
        rfd, wfd, tfd_r, tfd_w = fds
        pid = os.fork()
    except OSError:
        for fd in fds:
            os.close(fd)
        return None
    if pid == 0:  # child: never returns
        status = 1
        try:
            os.close(rfd)
            os.close(tfd_r)
            # Always closed before the rules run: the parent waits for its end before reading their results.
            with os.fdopen(tfd_w, "wb") as out:
                if given:
                    try:
                        ws.counter.encode_missing(given)
                        out.write(pickle.dumps({k: ws.counter.cache[k] for k in given},
                                               protocol=pickle.HIGHEST_PROTOCOL))
                    except Exception:  # the parent counts them itself
                        log.exception("the forked token counter failed")
            known = set(ws.counter.cache)
            ws.walked_dirs = []
            results = {c: run_rule(ws, c) for c in theirs}
            payload = pickle.dumps({
                "results": results,
                "reads": ws.fs.read_stats(),
                "walked": ws.walked_dirs,
                "tokens": {k: v for k, v in ws.counter.cache.items() if k not in known},
            }, protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(wfd, "wb") as out:
                out.write(payload)
            status = 0
        except KeyboardInterrupt:
            pass  # interrupted with the parent: nothing to say
        except BaseException:
            log.exception("the forked rule runner failed")
        finally:
            os._exit(status)
    os.close(wfd)
    os.close(tfd_w)
    if mine or given:
        counting = True
        try:
            ws.counter.encode_missing(mine)
        except Exception:  # the rules that count tokens report it, as in a serial run
            counting = False
        counted = {}
        try:
            with os.fdopen(tfd_r, "rb") as inp:
                raw = inp.read()
            if raw:
                counted = pickle.loads(raw)
        except (OSError, pickle.UnpicklingError, EOFError, ValueError):
            pass
        cache = ws.counter.cache
        for k, v in counted.items():
            if k in given and type(v) is int:
                cache[k] = v
        if counting:
            ws.counter.encode_missing({k: t for k, t in given.items() if k not in cache})  # the child's gaps
            ws._prefetched = True
    else:
        os.close(tfd_r)
    out: dict[str, tuple[list[Finding], str | None]] = {c: run_rule(ws, c) for c in ours}
    data = None
    try:
        with os.fdopen(rfd, "rb") as inp:
            raw = inp.read()
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) == 0:
            data = pickle.loads(raw)
    except (OSError, pickle.UnpicklingError, EOFError, ValueError):
        data = None
    if data is None:
        log.warning("the forked rule runner failed; running its rules here")
        out.update({c: run_rule(ws, c) for c in theirs})
        return out
    out.update(data["results"])
    ws.fs.absorb_reads(data["reads"])
    ws.walked_dirs = list(dict.fromkeys(ws.walked_dirs + data["walked"]))
    for k, v in data["tokens"].items():
        ws.counter.cache[k] = v
    return out


# Below this many characters to count, splitting the count between the two processes saves less than the
# child's pickled answer costs.
_SPLIT_TOKENIZE_CHARS = 200_000


def _halves(todo: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """Split texts to count into two halves of about the same size (largest first, each to the lighter)."""
    a: dict[str, str] = {}
    b: dict[str, str] = {}
    size_a = size_b = 0
    for k, t in sorted(todo.items(), key=lambda kv: -len(kv[1])):
        if size_a <= size_b:
            a[k] = t
            size_a += len(t)
        else:
            b[k] = t
            size_b += len(t)
    return a, b


def same_items(a: list, b: list) -> bool:
    """The two lists hold the very same objects, in the same order."""
    return a is b or (len(a) == len(b) and all(map(operator.is_, a, b)))


def order_key(f: Finding) -> tuple:
    """The order findings are reported in: path, span, code (the span's fields inlined: comparing them as plain
    integers is several times faster than comparing `Span` objects, for the same order)."""
    s = f.span
    return (str(f.path), s.start_line, s.start_col, s.end_line, s.end_col, f.code)


def _under(path: Path, base: Path) -> bool:
    try:
        path.relative_to(base)
        return True
    except ValueError:
        return False


def suppressed(f: Finding, ws: Workspace) -> bool:
    """`<!-- ctxls-ignore CTX201 -->` on the finding's line or the line above; `<!-- ctxls-ignore-file CTX201 -->`
    anywhere in the file. Without codes, every rule is silenced."""
    marks = ws.file(f.path).suppressions
    if not marks:
        return False
    for whole_file, codes, line, alone in marks:
        if codes and not any(f.code.startswith(c) for c in codes):
            continue
        if whole_file:
            return True
        if line == f.span.start_line:
            return True
        # on the line above only when the comment stands alone there (a trailing comment covers its own line)
        if line == f.span.start_line - 1 and alone:
            return True
    return False


def at_or_above(findings: Iterable[Finding], level: str) -> list[Finding]:
    rank = SEVERITY_RANK[level]
    return [f for f in findings if SEVERITY_RANK.get(f.severity, 9) <= rank]
