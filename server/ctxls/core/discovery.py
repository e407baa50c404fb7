"""Find every instruction source in a workspace, fast.

One `os.scandir` pass over the tree (symlinked directories are not followed, so symlink loops cannot trap
it), skipping VCS metadata, dependency folders and build output, and optionally gitignored paths.  The
result records every directory (a place a session can start) and every instruction source with its kind.
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
        if below == ("commands",) and name.endswith(".md"):
            return COMMAND
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


def scan_workspace(
    root: Path,
    settings: Settings | None = None,
    progress: Callable[[int], None] | None = None,
) -> WorkspaceIndex:
    """Scan ``root``. Errors (unreadable directories, files vanishing) become ``skipped`` entries."""
    settings = settings or Settings()
    root = Path(os.path.abspath(root))
    idx = WorkspaceIndex(root)
    ignore = _GitIgnore(root) if settings.respect_gitignore else None
    stack: list[tuple[Path, tuple[str, ...]]] = [(root, ())]
    while stack:
        d, parts = stack.pop()
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
        subdirs: list[tuple[Path, tuple[str, ...]]] = []
        in_claude = ".claude" in parts
        with it:
            for e in it:
                name = e.name
                try:
                    is_dir = e.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir:
                    if name in SKIP_DIRS:
                        continue
                    sub = parts + (name,)
                    if ignore is not None and ignore.ignored(sub, True):
                        continue
                    subdirs.append((Path(e.path), sub))
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
                idx.sources.append(Source(Path(e.path), kind, st.st_size, st.st_mtime_ns))
        for sd in sorted(subdirs, reverse=True):
            stack.append(sd)
        # symlinked directories inside .claude/rules are followed (cycles handled by the loader's realpath set)
        if in_claude or parts[-1:] == (".claude",):
            _follow_rule_links(d, parts, idx)
        if progress is not None:
            progress(len(idx.dirs))
    idx.sources = _dedupe(idx.sources)
    return idx


def _dedupe(sources: list[Source]) -> list[Source]:
    """One entry per real file (symlinked rule directories can reach a file twice); shortest path wins."""
    best: dict[str, Source] = {}
    for s in sorted(sources, key=lambda s: (len(s.path.parts), s.path.as_posix())):
        try:
            real = os.path.realpath(s.path)
        except (OSError, ValueError):
            real = str(s.path)
        best.setdefault(real, s)
    return sorted(best.values(), key=lambda s: s.path.as_posix())


def _follow_rule_links(d: Path, parts: tuple[str, ...], idx: WorkspaceIndex) -> None:
    if "rules" not in parts:
        return
    try:
        entries = list(os.scandir(d))
    except OSError:
        return
    for e in entries:
        try:
            if e.is_symlink() and e.is_dir():
                seen: set[str] = set()
                for dirpath, dirnames, filenames in os.walk(e.path, followlinks=True):
                    real = os.path.realpath(dirpath)
                    if real in seen:
                        dirnames[:] = []
                        continue
                    seen.add(real)
                    for f in filenames:
                        if f.endswith(".md"):
                            p = Path(dirpath) / f
                            try:
                                st = p.stat()
                            except OSError:
                                continue
                            idx.sources.append(Source(p, RULE, st.st_size, st.st_mtime_ns))
        except OSError:
            continue


class _GitIgnore:
    """Stacked .gitignore files, matched with pathspec's gitignore implementation."""

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
