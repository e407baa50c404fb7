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

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .settings import Settings

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

    def by_kind(self, kind: str) -> list[Source]:
        return [s for s in self.sources if s.kind == kind]


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
) -> WorkspaceIndex:
    """Scan ``root``. Errors (unreadable directories, files vanishing, symlink cycles) become ``skipped``
    entries."""
    settings = settings or Settings()
    root = Path(os.path.abspath(root))
    idx = WorkspaceIndex(root)
    ignore = GitIgnore(root) if settings.respect_gitignore else None
    # (directory, its parts relative to root, chain): chain is None for a directory reached without following
    # a symlink, else the real paths of the directories from the one holding the first followed link down to
    # this one (the last item is this directory's real path), what `_cycle` checks against.
    stack: list[tuple[Path, tuple[str, ...], tuple[str, ...] | None]] = [(root, (), None)]
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
        d, parts, chain = stack.pop()
        try:
            it = os.scandir(d)
        except FileNotFoundError:
            idx.skipped.append((d, "directory vanished during the scan"))
            continue
        except PermissionError:
            idx.skipped.append((d, "permission denied"))
            continue
        except OSError as exc:
            idx.skipped.append((d, f"cannot list: {exc.strerror or exc}"))
            continue
        idx.dirs.append(d)
        if ignore is not None:
            ignore.enter(d, parts)
        subdirs: list[tuple[Path, tuple[str, ...], tuple[str, ...] | None]] = []
        in_claude = ".claude" in parts
        here: tuple[str, ...] | None = None  # the chain a link followed from here starts with
        with it:
            for e in it:
                name = e.name
                try:
                    is_dir = e.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                link_dir = False  # a symlink to a directory that Claude Code follows
                if not is_dir and (in_claude or name == ".claude") and e.is_symlink() and follows_link(parts, name):
                    try:
                        link_dir = e.is_dir()  # the target
                    except OSError:
                        link_dir = False
                if is_dir or link_dir:
                    if name in SKIP_DIRS:
                        continue
                    sub = parts + (name,)
                    if ignore is not None and ignore.ignored(sub, True):
                        continue
                    if link_dir:
                        if here is None:
                            here = chain if chain is not None else (_realpath(d),)
                        real = _realpath(e.path)
                        if _cycle(real, here) is not None:
                            idx.skipped.append((Path(e.path), f"symlink cycle: points to {real}, a directory "
                                                              f"on the way down; not followed"))
                        elif take_linked(e.path):
                            subdirs.append((Path(e.path), sub, here + (real,)))
                        continue
                    if chain is None:
                        subdirs.append((Path(e.path), sub, None))
                    else:  # below a followed link: a plain subdirectory can still close a cycle
                        real = os.path.join(chain[-1], name)
                        if _cycle(real, chain) is not None:
                            idx.skipped.append((Path(e.path), f"symlink cycle: {real} was entered on the way "
                                                              f"down; not followed"))
                            continue
                        if not take_linked(e.path):  # every directory below a link counts: it may be a huge tree
                            continue
                        subdirs.append((Path(e.path), sub, chain + (real,)))
                    continue
                idx.file_count += 1
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
        for sd in sorted(subdirs, key=lambda x: x[0], reverse=True):
            stack.append(sd)
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
