"""Find every instruction source in a workspace, fast.

One `os.scandir` pass over the tree, skipping VCS metadata, dependency folders and build output, and
optionally gitignored paths.  The result records every directory (a place a session can start) and every
instruction source with its kind.

Symlinks.  Symlinked directories are not followed in general (dependency trees are full of them).  They are
followed where Claude Code itself follows them, in the agent's source directories only: a symlinked
`.claude`, `.claude/rules`, `.claude/skills` or `.claude/commands`, any directory below `.claude/rules/`
(rules are read recursively, symlinks followed: spec A5) and each `.claude/skills/<name>` (spec B1).  Links
to a directory on the way down (an ancestor, or one already entered on the same branch) are cycles: not
followed, recorded in ``skipped``.

Which path names a source reached through a symlink: the *link path*, the path under `.claude/` through
which the agent finds it (`.claude/skills/x/SKILL.md`, not `.agents/skills/x/SKILL.md`).  The session
simulation shows that path, a skill's name and a path-scoped skill's base directory come from it, it lies
inside the workspace even when the target does not, and editing it edits the target.  Findings are reported
there.  One real file reachable as several sources (a link plus the file's own place under another
`.claude/`, or two links) is listed once: under its own, symlink-free path when that is one of them, else
under the shortest path, then the alphabetically first (`_dedupe`).
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from .settings import Settings

if TYPE_CHECKING:
    from .fs import FileSystem

_BUILD_DIR_BESIDE = frozenset({"target"})
"""Skipped directories that are build output only beside a build manifest (`_BUILD_DIR_MAKERS`): elsewhere a
`target/` is source like any other (`src/adapters/target/target.converter.ts`)."""
_BUILD_DIR_MAKERS = frozenset({"Cargo.toml", "pom.xml", "build.sbt", "build.gradle", "build.gradle.kts", "project.clj"})
"""Build manifests whose tool writes `target/` beside them (cargo, maven, sbt, gradle's Kotlin plugins, lein)."""


def _drop_build_dirs(subdirs: list, files) -> list:
    """``subdirs`` without the `target/` a build manifest among ``files`` (names) writes."""
    if not _BUILD_DIR_MAKERS.intersection(files):
        return subdirs
    return [s for s in subdirs if s[1][-1] not in _BUILD_DIR_BESIDE]


SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".ctxls", ".idea", ".gradle", ".next", ".nuxt", ".turbo", ".cache",
    "dist", "build", "target", "out", "coverage", ".terraform", "bower_components", ".eggs",
})

# Directories below `.claude/` whose symlinked forms Claude Code follows (see the module docstring).
_LINKED_IN_CLAUDE = frozenset({"rules", "skills", "commands"})
MAX_LINKED_DIRS = 10_000
"""Directories entered through symlinks per scan at most, each below a followed link included (a link to a
huge tree outside the workspace)."""


def _too_many_linked() -> str:
    return f"symlinked directories: stopped following after {MAX_LINKED_DIRS:,}"

# kind -> how the loader treats it
CLAUDE_MD = "claude_md"
CLAUDE_LOCAL_MD = "claude_local_md"
AGENTS_MD = "agents_md"
GEMINI_MD = "gemini_md"
"""Gemini CLI's context file: no Claude Code session loads it, but its `@imports`, paths and secrets are checked
like any instruction file's (a GEMINI.md-only repository is not a repository without instructions)."""
RULE = "rule"
SKILL = "skill"
COMMAND = "command"
MEMORY_INDEX = "memory_index"
MEMORY_TOPIC = "memory_topic"


def classify(rel_parts: tuple[str, ...]) -> str | None:
    """Kind of instruction source for a path given as parts relative to the workspace root."""
    if not rel_parts:
        return None
    name = rel_parts[-1]
    parent = rel_parts[:-1]
    if name == "CLAUDE.md":
        return CLAUDE_MD
    if name == "CLAUDE.local.md":
        return CLAUDE_LOCAL_MD
    if name == "AGENTS.md":
        return AGENTS_MD
    if name == "GEMINI.md":
        return GEMINI_MD
    if ".claude" in parent:
        i = len(parent) - 1 - parent[::-1].index(".claude")
        below = parent[i + 1:]
        if below[:1] == ("rules",) and name.endswith(".md"):
            return RULE
        if len(below) == 2 and below[0] == "skills" and name == "SKILL.md":
            return SKILL
        if below[:1] == ("commands",) and name.endswith(".md"):
            return COMMAND  # subdirectories too: `.claude/commands/gsd/plan.md` is the command `gsd:plan`
    return None


@dataclass
class Source:
    path: Path
    kind: str
    size: int
    mtime_ns: int


@dataclass
class WorkspaceIndex:
    root: Path
    dirs: list[Path] = field(default_factory=list)
    """Every directory scanned, parents before children."""
    sources: list[Source] = field(default_factory=list)
    file_count: int = 0
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    tree: list[tuple[str, str, list[str]]] = field(default_factory=list)
    """The workspace's file tree as the same scan saw it, for the rules that ask what exists (`Workspace.tree`):
    every directory reached without following a symlink (gitignored ones too), as (absolute path, posix path
    relative to the root ('' for the root), names of what is not a directory in it), parents before children.
    Plain strings: building a Path for each of tens of thousands of files costs more than the scan."""
    dir_links: list[str] = field(default_factory=list)
    """Posix paths (relative to the root) of the symlinks to directories in `tree`'s directories: the tree does
    not enter them (the agent's own source directories are entered for `sources` all the same)."""

    def by_kind(self, kind: str) -> list[Source]:
        return [s for s in self.sources if s.kind == kind]

    @cached_property
    def tree_dirs(self) -> list[Path]:
        """The directories of `tree`: what an answer read from the tree depends on."""
        return [Path(d) for d, _, _ in self.tree]

    @cached_property
    def rel_files(self) -> list[str]:
        """Every file of `tree`, relative to the root (posix)."""
        return [f"{rel}/{n}" if rel else n for _, rel, names in self.tree for n in names]

    @cached_property
    def sorted_files(self) -> list[str]:
        """`rel_files`, sorted (for `files_under`)."""
        return sorted(self.rel_files)

    def files_under(self, rel_dir: str) -> list[str]:
        """The files of `tree` below the directory ``rel_dir`` (posix, relative to the root; '' for the root),
        relative to it, sorted."""
        files = self.sorted_files
        if not rel_dir:
            return files
        prefix = rel_dir.rstrip("/") + "/"
        lo = bisect.bisect_left(files, prefix)
        hi = bisect.bisect_left(files, prefix[:-1] + chr(ord("/") + 1), lo)
        n = len(prefix)
        return [f[n:] for f in files[lo:hi]]

    @cached_property
    def dirs_by_name(self) -> dict[str, list[str]]:
        """File name -> the directories of `tree` (absolute) that hold a file so named."""
        out: dict[str, list[str]] = {}
        for d, _, names in self.tree:
            for n in names:
                got = out.get(n)
                if got is None:
                    out[n] = [d]
                else:
                    got.append(d)
        return out


def follows_link(parts: tuple[str, ...], name: str) -> bool:
    """Whether a symlinked directory ``name`` inside the directory ``parts`` (relative to the workspace root)
    is one of the agent's source directories, which Claude Code reads through symlinks."""
    if name == ".claude":
        return True
    if ".claude" not in parts:
        return False
    i = len(parts) - 1 - parts[::-1].index(".claude")
    below = parts[i + 1:]
    if not below:
        return name in _LINKED_IN_CLAUDE
    return below[0] == "rules" or below == ("skills",)


def _cycle(real: str, chain: tuple[str, ...]) -> str | None:
    """The directory of ``chain`` (real paths of the directories on the way down) that entering the directory
    with real path ``real`` would revisit (``real`` is it or one of its ancestors), or None."""
    prefix = real if real.endswith(os.sep) else real + os.sep
    for c in chain:
        if c == real or c.startswith(prefix):
            return c
    return None


def scan_workspace(
    root: Path,
    settings: Settings | None = None,
    progress: Callable[[int], None] | None = None,
    fs: "FileSystem | None" = None,
) -> WorkspaceIndex:
    """Scan ``root``: the one walk of the workspace. It finds the instruction sources and every directory a
    session can start in, records the file tree the rules read (`tree`), and, given ``fs``, hands it each
    directory's listing, so that nothing lists them again. Errors (unreadable directories, files vanishing,
    symlink cycles) become ``skipped`` entries."""
    settings = settings or Settings()
    root = Path(os.path.abspath(root))
    idx = WorkspaceIndex(root)
    ignore = GitIgnore(root) if settings.respect_gitignore else None
    # (directory, its parts relative to root, chain): chain is None for a directory reached without following
    # a symlink, else the real paths of the directories from the one holding the first followed link down to
    # this one (the last item is this directory's real path), what `_cycle` checks against.
    # A directory that is gitignored (``respect_gitignore``) is entered for the tree alone: `tree_only` below.
    stack: list[tuple[Path, tuple[str, ...], tuple[str, ...] | None, bool]] = [(root, (), None, False)]
    root_s = str(root)
    cut = len(root_s.rstrip(os.sep)) + 1
    linked: set[Path] = set()
    """Sources reached through a symlink (a followed directory, or the file itself is one)."""
    linked_dirs = 0

    def take_linked(path: str) -> bool:
        """Count one more directory entered through a symlink; False past the bound (said once)."""
        nonlocal linked_dirs
        if linked_dirs >= MAX_LINKED_DIRS:
            if linked_dirs == MAX_LINKED_DIRS:
                idx.skipped.append((Path(path), _too_many_linked()))
                linked_dirs += 1
            return False
        linked_dirs += 1
        return True

    while stack:
        d, parts, chain, tree_only = stack.pop()
        try:
            it = os.scandir(d)
        except FileNotFoundError:
            if not tree_only:
                idx.skipped.append((d, "directory vanished during the scan"))
            continue
        except PermissionError:
            if not tree_only:
                idx.skipped.append((d, "permission denied"))
            continue
        except OSError as exc:
            if not tree_only:
                idx.skipped.append((d, f"cannot list: {exc.strerror or exc}"))
            continue
        sd = str(d)
        rel_d = (sd[cut:].replace(os.sep, "/") if sd != root_s else "") if chain is None else None
        names: list[str] = []  # what is not a directory here, for the tree
        kinds: dict[str, str] | None = {} if fs is not None else None  # the listing `fs` would make
        if tree_only:
            below = []
            with it:
                for e in it:
                    try:
                        if e.is_dir():
                            if e.is_symlink():
                                idx.dir_links.append(f"{rel_d}/{e.name}" if rel_d else e.name)
                            elif e.name not in SKIP_DIRS or e.name in _BUILD_DIR_BESIDE:
                                below.append((Path(e.path), parts + (e.name,), None, True))
                            continue
                    except OSError:
                        pass
                    names.append(e.name)
            stack.extend(_drop_build_dirs(below, names))
            idx.tree.append((sd, rel_d, names))
            continue
        idx.dirs.append(d)
        if ignore is not None:
            ignore.enter(d, parts)
        subdirs: list[tuple[Path, tuple[str, ...], tuple[str, ...] | None, bool]] = []
        makers: list[str] = []  # the build manifests of this directory (Cargo.toml: `target/` is its output)
        in_claude = ".claude" in parts
        here: tuple[str, ...] | None = None  # the chain a link followed from here starts with
        with it:
            for e in it:
                name = e.name
                try:
                    is_dir = e.is_dir(follow_symlinks=False)
                except OSError:
                    if kinds is not None:
                        kinds[name] = "o"
                    if rel_d is not None:
                        names.append(name)
                    continue
                link_dir = False  # a symlink to a directory that Claude Code follows
                target_dir = is_dir  # a directory, or a symlink to one (os.walk's and the listing's view)
                if not is_dir and e.is_symlink():
                    try:
                        target_dir = e.is_dir()  # the target
                    except OSError:
                        target_dir = False
                    if target_dir:
                        if rel_d is not None:
                            idx.dir_links.append(f"{rel_d}/{name}" if rel_d else name)
                        link_dir = (in_claude or name == ".claude") and follows_link(parts, name)
                if kinds is not None:
                    if target_dir:
                        kinds[name] = "d"
                    else:
                        try:
                            kinds[name] = "f" if e.is_file() else "o"
                        except OSError:
                            kinds[name] = "o"
                if not target_dir and rel_d is not None:
                    names.append(name)
                if not target_dir and name in _BUILD_DIR_MAKERS:
                    makers.append(name)
                if is_dir or link_dir:
                    if name in SKIP_DIRS and name not in _BUILD_DIR_BESIDE:
                        continue
                    sub = parts + (name,)
                    if ignore is not None and ignore.ignored(sub, True):
                        if is_dir and chain is None:
                            subdirs.append((Path(e.path), sub, None, True))
                        continue
                    if link_dir:
                        if here is None:
                            here = chain if chain is not None else (_realpath(d),)
                        real = _realpath(e.path)
                        if _cycle(real, here) is not None:
                            idx.skipped.append((Path(e.path), f"symlink cycle: points to {real}, a directory "
                                                              f"on the way down; not followed"))
                        elif take_linked(e.path):
                            subdirs.append((Path(e.path), sub, here + (real,), False))
                        continue
                    if chain is None:
                        subdirs.append((Path(e.path), sub, None, False))
                    else:  # below a followed link: a plain subdirectory can still close a cycle
                        real = os.path.join(chain[-1], name)
                        if _cycle(real, chain) is not None:
                            idx.skipped.append((Path(e.path), f"symlink cycle: {real} was entered on the way "
                                                              f"down; not followed"))
                            continue
                        if not take_linked(e.path):  # every directory below a link counts: it may be a huge tree
                            continue
                        subdirs.append((Path(e.path), sub, chain + (real,), False))
                    continue
                idx.file_count += 1  # (a symlink to a directory the agent does not follow counts, as it did)
                if target_dir:
                    continue  # ... but it is no source
                if not (name.endswith(".md") or in_claude):
                    continue
                rel = parts + (name,)
                kind = classify(rel)
                if kind is None:
                    continue
                if ignore is not None and ignore.ignored(rel, False) and kind != CLAUDE_LOCAL_MD:
                    continue
                try:
                    st = e.stat()  # follows symlinks: a symlinked rule counts as the file it points at
                except OSError as exc:
                    idx.skipped.append((Path(e.path), f"cannot stat: {exc.strerror or exc}"))
                    continue
                p = Path(e.path)
                if chain is not None or e.is_symlink():
                    linked.add(p)
                idx.sources.append(Source(p, kind, st.st_size, st.st_mtime_ns))
        if rel_d is not None:
            idx.tree.append((sd, rel_d, names))
        if kinds is not None:
            fs.prime_listing(d, kinds)
        for sub_dir in sorted(_drop_build_dirs(subdirs, makers), key=lambda x: x[0], reverse=True):
            stack.append(sub_dir)
        if progress is not None:
            progress(len(idx.dirs))
    idx.sources = _dedupe(idx.sources, linked, root)
    return idx


def _realpath(path: Path | str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return os.fspath(path)


def _dedupe(sources: list[Source], linked: set[Path], root: Path) -> list[Source]:
    """One entry per real file, sorted by path. Several sources with one real path (symlinks): the one that
    is no symlink (the file's own place) wins, else the shortest path, else the alphabetically first."""
    if not linked:  # no symlink on the way to any source: no two can be the same file
        return sorted(sources, key=lambda s: s.path.as_posix())
    real_root = _realpath(root)
    cut = len(str(root))
    best: dict[str, tuple[tuple, Source]] = {}
    for s in sources:
        is_linked = s.path in linked
        # a path free of symlinks below the root resolves to the root's real path plus the same tail
        real = _realpath(s.path) if is_linked else real_root + str(s.path)[cut:]
        rank = source_rank(s.path, is_linked)
        got = best.get(real)
        if got is None or rank < got[0]:
            best[real] = (rank, s)
    return sorted((s for _, s in best.values()), key=lambda s: s.path.as_posix())


def source_rank(path: Path, linked: bool) -> tuple[bool, int, str]:
    """Which of several paths to one real file names it (lowest first): see `_dedupe`."""
    return (linked, len(path.parts), path.as_posix())


def rule_files(root: Path, realpath: Callable[[Path], str] = _realpath,
               scandir: Callable = os.scandir) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Every `.md` file under the rules directory ``root``, recursively, as Claude Code reads them (spec A5:
    symlinks followed, cycles handled), sorted by path, one per real file (named as `_dedupe` names a
    source); and the directories that could not be listed, with the reason. A symlink to a directory on the
    way down (the rules directory, its `.claude/`, their ancestors, or a directory entered through a link on
    the same branch) is a cycle: not followed, as in `scan_workspace`. Never raises."""
    try:
        anchor = tuple(dict.fromkeys(realpath(p) for p in (root.parent.parent, root.parent, root)))
        linked0 = os.path.islink(root) or os.path.islink(root.parent)
    except (OSError, ValueError):
        return [], [(root, "cannot resolve the rules directory")]
    best: dict[str, tuple[tuple[bool, int, str], Path]] = {}
    unlisted: list[tuple[Path, str]] = []
    stack: list[tuple[Path, tuple[str, ...], bool]] = [(root, anchor, linked0)]
    linked_dirs = 0
    while stack:
        d, chain, linked = stack.pop()
        try:
            with scandir(d) as it:
                entries = list(it)
        except OSError as exc:
            unlisted.append((d, f"cannot list rules directory: {exc.strerror or exc}"))
            continue
        here = chain[-1]
        for e in entries:
            p = Path(e.path)
            try:
                is_link = e.is_symlink()
                if e.is_dir():
                    real = realpath(p) if is_link else os.path.join(here, e.name)
                    if _cycle(real, chain) is not None:
                        continue
                    if linked or is_link:
                        linked_dirs += 1
                        if linked_dirs > MAX_LINKED_DIRS:
                            if linked_dirs == MAX_LINKED_DIRS + 1:
                                unlisted.append((p, _too_many_linked()))
                            continue
                    stack.append((p, chain + (real,), linked or is_link))
                elif e.name.endswith(".md") and e.is_file():
                    real = realpath(p) if is_link else os.path.join(here, e.name)
                    rank = source_rank(p, linked or is_link)
                    got = best.get(real)
                    if got is None or rank < got[0]:
                        best[real] = (rank, p)
            except (OSError, ValueError):
                continue
    return sorted((p for _, p in best.values()), key=lambda x: x.as_posix()), unlisted


class GitIgnore:
    """Stacked .gitignore files, matched with pathspec's gitignore implementation: `enter` each directory from
    the root down, then ask `ignored` of paths relative to the root."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.specs: list[tuple[tuple[str, ...], object]] = []

    def enter(self, d: Path, parts: tuple[str, ...]) -> None:
        gi = d / ".gitignore"
        try:
            text = gi.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return
        import pathspec

        try:
            spec = pathspec.PathSpec.from_lines("gitignore", text.splitlines())
        except Exception:
            return
        self.specs.append((parts, spec))

    def ignored(self, rel: tuple[str, ...], is_dir: bool) -> bool:
        for base, spec in self.specs:
            if rel[: len(base)] != base:
                continue
            sub = "/".join(rel[len(base):]) + ("/" if is_dir else "")
            if spec.match_file(sub):  # type: ignore[attr-defined]
                return True
        return False
