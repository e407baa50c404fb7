"""Gemini CLI (spec C5): the GEMINI.md hierarchy, JIT loading on touch, `@file` imports.

- Context file names: `context.fileName` (`gemini_context_file_names`, default GEMINI.md), each name in order.
- Startup: `~/.gemini/<name>`, then each directory from the project root (nearest `.git` up; without one the
  upward walk of the Claude Code profile, up to the ceiling) down to cwd.
- JIT (`experimental.jitContext`, the default since 2026-03-16): a context file in a directory below cwd, or
  elsewhere in the project, loads when a tool touches a path there (the directories from the root down to the
  touched file's); legacy eager mode instead scans the directories below cwd at startup (at most
  `context.discoveryMaxDirs`).
- Each file is sent as `--- Context from: <path relative to cwd> ---\\n<content>\\n--- End of Context from:
  <path> ---`, joined by blank lines.
- `@file` imports (outside code blocks and spans) are inlined where they stand, wrapped in `<!-- Imported from:
  x -->` comments; a file five hops deep loads, a sixth does not (memport's maxDepth 5). ctxls shows each
  import as its own block after its parent; circular and repeated imports load once.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import model as M
from ..fs import FileSystem
from ..markdown import find_imports, split_lines, structure
from ..model import Session
from ..settings import Settings
from ..tokens import TokenCounter
from .common import Builder, _skip_dirs, dirs_down, find_marker_root, is_within, trimmed

AGENT = "gemini"
JIT_HEADER = "--- Newly Discovered Project Context ---\n"
_FILE_KINDS = (M.GLOBAL_INSTRUCTIONS, M.GEMINI_MD, M.NESTED_GEMINI_MD)


def project_root(start: Path, settings: Settings, fs: FileSystem) -> Path | None:
    return find_marker_root(start, (".git",), fs, settings.ceiling)


def upward_dirs(start: Path, settings: Settings, fs: FileSystem) -> list[Path]:
    root = project_root(start, settings, fs)
    if root is not None:
        return dirs_down(root, start)
    from ..loader import walk_dirs

    return walk_dirs(start, settings, fs)


def wrap(path: Path, start: Path, content: str) -> str:
    shown = os.path.relpath(path, start)
    return f"--- Context from: {shown} ---\n{content}\n--- End of Context from: {shown} ---"


def load(start: Path, touched: list[Path], settings: Settings, root: Path, fs: FileSystem,
         counter: TokenCounter, prefixes: dict | None = None) -> Session:
    b = Builder(AGENT, start, root, settings, fs, counter, touched)
    names = settings.gemini_context_file_names
    home = settings.home / ".gemini"
    for name in names:
        _add(b, home / name, M.GLOBAL_INSTRUCTIONS, "User", M.STARTUP)
    for d in upward_dirs(start, settings, fs):
        for name in names:
            _add(b, d / name, M.GEMINI_MD, "Project", M.STARTUP)
    if not settings.gemini_jit_context:
        for d in _below(start, settings, fs):
            for name in names:
                _add(b, d / name, M.GEMINI_MD, "Project", M.STARTUP)
    top = project_root(start, settings, fs) or start
    for t in touched:
        trigger = b.trigger(t)
        b.read_block(t, trigger)
        if not settings.gemini_jit_context or not is_within(t, top):
            continue
        first = True
        for d in dirs_down(top, t.parent if t != top else t):
            for name in names:
                if _add(b, d / name, M.NESTED_GEMINI_MD, "Project", trigger, JIT_HEADER if first else ""):
                    first = False
    return b.session()


def _below(start: Path, settings: Settings, fs: FileSystem) -> list[Path]:
    """Legacy eager mode: directories below ``start``, breadth first, at most discoveryMaxDirs (start included
    in the count), dependency and VCS folders skipped."""
    skip = _skip_dirs()
    out, queue, budget = [], [start], settings.gemini_discovery_max_dirs - 1
    while queue and budget > 0:
        d = queue.pop(0)
        for name in sorted(n for n, k in fs.listing(d).items() if k == "d" and n not in skip and not n.startswith(".")):
            if budget <= 0:
                break
            out.append(d / name)
            queue.append(d / name)
            budget -= 1
    return out


def _add(b: Builder, path: Path, kind: str, tier: str, trigger: str, prefix: str = "") -> bool:
    if b.seen(path) or not b.fs.is_file(path):
        return False
    src = b.read(path, trigger, kind)
    if src is None:
        return False
    content, lines = trimmed(src.text or "")
    b.mark(path)
    if not content:
        b.skip(path, "empty or whitespace-only", trigger, kind)
        return False
    sep = "\n\n" if any(x.trigger == trigger and x.kind in _FILE_KINDS for x in b.blocks) else ""
    b.add(kind, prefix + sep + wrap(path, b.start, content), source=path, tier=tier, trigger=trigger,
          lines=lines, notes=src.notes)
    _imports(b, path, src.text or "", tier, trigger, 0)
    return True


def _imports(b: Builder, parent: Path, text: str, tier: str, trigger: str, depth: int) -> None:
    lines = split_lines(text)
    live, _ = find_imports(lines, structure(text))
    if not live:
        return
    itrigger = f"import:{b.display(parent)}"
    limit = b.settings.gemini_import_max_depth
    for ref in live:
        target = Path(os.path.normpath(ref.path if ref.path.startswith("/") else
                                       (b.settings.home / ref.path[2:] if ref.path.startswith("~/") else
                                        parent.parent / ref.path)))
        if depth + 1 > limit:
            b.skip(target, f"import depth limit ({limit}) reached: @{ref.raw} on line {ref.line} not loaded",
                   itrigger, M.IMPORT)
            continue
        if b.seen(target):
            b.skip(target, f"already loaded (duplicate or cycle): @{ref.raw} on line {ref.line}", itrigger, M.IMPORT)
            continue
        if not b.fs.is_file(target):
            b.skip(target, f"import target not found: @{ref.raw} on line {ref.line}", itrigger, M.IMPORT)
            continue
        src = b.read(target, itrigger, M.IMPORT)
        if src is None:
            continue
        b.mark(target)
        content, span = trimmed(src.text or "")
        wrapped = f"<!-- Imported from: {ref.path} -->\n{content}\n<!-- End of import from: {ref.path} -->"
        blk = b.add(M.IMPORT, wrapped, source=target, tier=tier, trigger=itrigger, lines=span,
                    notes=[f"inlined into {b.display(parent)} at line {ref.line}", *src.notes])
        blk.startup = trigger == M.STARTUP
        _imports(b, target, src.text or "", tier, trigger, depth + 1)


def unloaded(path: Path, session: Session, settings: Settings, fs: FileSystem) -> tuple[str | None, str]:
    start = session.start_dir
    if path.name not in settings.gemini_context_file_names:
        if path.name == "AGENTS.md":
            return None, ("AGENTS.md is not in context.fileName (" + ", ".join(settings.gemini_context_file_names)
                          + "): Gemini CLI does not read it")
        return None, "not a file Gemini CLI reads (context.fileName)"
    top = project_root(start, settings, fs) or start
    if not is_within(path, top):
        return None, "outside the project"
    if settings.gemini_jit_context:
        return "touch", "JIT: loads when a tool touches a path in its directory"
    return None, "past the eager scan (context.discoveryMaxDirs) or not in a scanned directory"
