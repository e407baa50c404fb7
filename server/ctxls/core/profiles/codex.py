"""OpenAI Codex CLI (spec C2): one file per directory from the project root to cwd, a shared byte budget.

- Global: `$CODEX_HOME/AGENTS.override.md` when non-empty, else `AGENTS.md` (trimmed); only the first used.
- Project: the root is the nearest directory from cwd up holding a `project_root_markers` entry (`.git`);
  without one only cwd. In each directory root -> cwd the first existing of `AGENTS.override.md`, `AGENTS.md`,
  then the fallback names: at most one file per directory (an empty override still shadows AGENTS.md).
- The docs share `project_doc_max_bytes` (32 KiB), root first: the file that crosses it is cut at the byte
  where the budget ends, later files are dropped. Whitespace-only docs are skipped. Nothing below cwd loads.
- Assembly: global + "\\n\\n--- project-doc ---\\n\\n" + docs joined by "\\n\\n", in one user message
  `# AGENTS.md instructions for <cwd>\\n\\n<INSTRUCTIONS>\\n...\\n</INSTRUCTIONS>`. The blocks' texts are
  exactly the pieces of that message, so their tokens add up to it. No `@import`.
"""

from __future__ import annotations

from pathlib import Path

from .. import model as M
from ..fs import FileSystem
from ..model import Session
from ..settings import Settings
from ..tokens import TokenCounter
from .common import Builder, dirs_down, find_marker_root, is_within, trimmed

AGENT = "codex"
HEADER = "# AGENTS.md instructions for {cwd}\n\n<INSTRUCTIONS>\n"
FOOTER = "\n</INSTRUCTIONS>"
SEPARATOR = "\n\n--- project-doc ---\n\n"
OVERRIDE = "AGENTS.override.md"
DEFAULT = "AGENTS.md"
BELOW_CWD = ("below the start directory: Codex never loads it (child_agents_md only asks the model to honour "
             "the AGENTS.md files it reads)")


def codex_home(settings: Settings) -> Path:
    return settings.codex_home if settings.codex_home is not None else settings.home / ".codex"


def candidates(settings: Settings) -> tuple[str, ...]:
    out = [OVERRIDE, DEFAULT]
    for name in settings.codex_fallback_filenames:
        if name and name not in out:
            out.append(name)
    return tuple(out)


def project_root(start: Path, settings: Settings, fs: FileSystem) -> Path | None:
    return find_marker_root(start, settings.codex_project_root_markers, fs, settings.ceiling)


def project_dirs(start: Path, settings: Settings, fs: FileSystem) -> list[Path]:
    root = project_root(start, settings, fs)
    return dirs_down(root, start) if root is not None else [start]


def load(start: Path, touched: list[Path], settings: Settings, root: Path, fs: FileSystem,
         counter: TokenCounter, prefixes: dict | None = None) -> Session:
    b = Builder(AGENT, start, root, settings, fs, counter, touched)
    header = b.add(M.CONTEXT_HEADER, HEADER.format(cwd=start))
    has_global = _global(b)
    has_docs = _project_docs(b, has_global)
    if has_global or has_docs:
        b.add(M.CONTEXT_FOOTER, FOOTER)
    else:
        b.blocks.remove(header)  # nothing to say: no instructions message at all
    names = candidates(settings)
    for t in touched:
        trigger = b.trigger(t)
        b.read_block(t, trigger)
        if not is_within(t, start) or t.parent == start:
            continue
        for d in dirs_down(start, t.parent)[1:]:
            for name in names:
                p = d / name
                if fs.listing(d).get(name) in ("f", "o") and not b.seen(p):
                    b.mark(p)
                    b.skip(p, BELOW_CWD, trigger, M.AGENTS_MD)
    return b.session()


def _global(b: Builder) -> bool:
    home = codex_home(b.settings)
    names = b.fs.listing(home)
    chosen = None
    for name in (OVERRIDE, DEFAULT):
        p = home / name
        if names.get(name) is None:
            continue
        if chosen is not None:
            b.skip(p, f"shadowed by {chosen.name} (Codex uses the first non-empty global file)",
                   kind=M.GLOBAL_INSTRUCTIONS)
            continue
        src = b.read(p, M.STARTUP, M.GLOBAL_INSTRUCTIONS)
        if src is None:
            continue
        content, lines = trimmed(src.text or "")
        if not content:
            b.skip(p, "empty or whitespace-only: Codex tries the next global file", kind=M.GLOBAL_INSTRUCTIONS)
            continue
        b.add(M.GLOBAL_INSTRUCTIONS, content, source=p, tier="User", lines=lines, notes=src.notes)
        chosen = p
    return chosen is not None


def _project_docs(b: Builder, has_global: bool) -> bool:
    s = b.settings
    budget = s.codex_project_doc_max_bytes
    remaining = budget
    first = True
    names = candidates(s)
    for d in project_dirs(b.start, s, b.fs):
        listing = b.fs.listing(d)
        present = [d / n for n in names if listing.get(n) in ("f", "o")]
        if not present:
            continue
        chosen, shadowed = present[0], present[1:]
        for p in shadowed:
            b.skip(p, f"shadowed by {chosen.name} in the same directory (Codex loads at most one file per "
                      "directory)")
        if budget == 0:
            b.skip(chosen, "project_doc_max_bytes = 0: project docs are disabled")
            continue
        src = b.read(chosen, M.STARTUP, M.AGENTS_MD)
        if src is None:
            continue
        if remaining <= 0:
            if (src.text or "").strip():
                b.skip(chosen, f"dropped: the {budget:,}-byte project-doc budget is used up by the files before it")
            else:
                b.skip(chosen, "empty or whitespace-only")
            continue
        data = (src.text or "").encode("utf-8")
        kept = data[:remaining]
        text = kept.decode("utf-8", errors="replace")  # from_utf8_lossy: a cut character becomes U+FFFD
        if not text.strip():
            reason = "empty or whitespace-only"
            if chosen.name == OVERRIDE and len(present) > 1:
                reason += f": it still shadows {shadowed[0].name} there and contributes nothing"
            b.skip(chosen, reason)
            continue
        cut = None
        last_line = text.count("\n") + (0 if text.endswith("\n") else 1)
        if len(data) > remaining:
            cut = (f"truncated: the {budget:,}-byte project-doc budget ends on line {last_line} "
                   f"(byte {remaining:,} of {len(data):,}); the rest is not loaded")
        prefix = (SEPARATOR if has_global else "") if first else "\n\n"
        b.add(M.AGENTS_MD, prefix + text, source=chosen, tier="Project", lines=(1, last_line), cut=cut,
              notes=src.notes)
        remaining -= len(kept)
        first = False
    return not first


def unloaded(path: Path, session: Session, settings: Settings, fs: FileSystem) -> tuple[str | None, str]:
    """Why Codex does not load ``path`` (a file the session has no block for): (when, reason)."""
    start = session.start_dir
    if path.name not in candidates(settings):
        return None, "not a file Codex reads"
    if path.parent in project_dirs(start, settings, fs):
        return None, "on the path from the project root, but not loaded"
    if is_within(path, start):
        return None, BELOW_CWD
    return None, "not on the path from the project root to the start directory"
