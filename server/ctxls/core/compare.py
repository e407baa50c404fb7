"""Which agent loads what: one row per instruction file, one column per agent (`ctxls compare`).

For each agent the session comes from its profile (core/loader.py PROFILES); a file the session has no block
for is explained by the session's skipped entries, else by the profile's `unloaded`. Statuses: `startup`,
`on touch` (loaded by a `--touch`, or would load when a matching file is touched), `on request` (the model may
fetch it: Cursor's Agent Requested rules) and `never`. Pure; never raises on bad input.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from . import model as M
from .fs import FileSystem
from .loader import load_session
from .model import Session, display_path
from .profiles import AGENTS, module
from .profiles.common import scan_agent_files
from .settings import Settings
from .tokens import TokenCounter, factor_for

COMPARE_SCHEMA = "ctxls.compare/1"
STARTUP, ON_TOUCH, ON_REQUEST, NEVER = "startup", "on touch", "on request", "never"
_WHEN = {"touch": ON_TOUCH, "request": ON_REQUEST, "manual": NEVER, None: NEVER}
_NOT_FILES = (M.READ, M.SYSTEM_PROMPT, M.TOOL_SCHEMAS)
FOREIGN = "not a file "
"""How a profile's `unloaded` starts the reason for another agent's kind of file (left out of the notes)."""


@dataclass
class Cell:
    status: str
    tokens: int = 0
    lines: tuple[int, int] | None = None
    cut: str | None = None
    reason: str | None = None
    loaded: bool = False
    """True when this session holds the file (at startup or from a --touch)."""


@dataclass
class Row:
    source: Path
    cells: dict[str, Cell]


@dataclass
class Totals:
    startup_tokens: int
    """Instruction tokens before the first prompt (wrappers and listings included, fixed overhead not)."""
    touch_tokens: int
    """Instruction tokens the touches added (the touched files' own read results not counted)."""
    files: int
    """Instruction files loaded, at startup or on a touch."""
    fixed_tokens: int = 0


@dataclass
class Comparison:
    start: Path
    root: Path
    agents: tuple[str, ...]
    touched: list[Path]
    rows: list[Row]
    sessions: dict[str, Session]
    totals: dict[str, Totals] = field(default_factory=dict)
    window: int = 0
    token_method: str = ""

    def display(self, p: Path | None) -> str:
        return display_path(p, self.root) or "."


def compare(start: Path, touched: Sequence[Path] = (), settings: Settings | None = None, *,
            agents: Sequence[str] = AGENTS, root: Path | None = None, fs: FileSystem | None = None,
            counter: TokenCounter | None = None, files: Sequence[Path] | None = None) -> Comparison:
    """Every agent's session in ``start`` after ``touched``, side by side. ``files``: the instruction files to
    list (default: every agent's files found under ``root``, plus whatever a session loads)."""
    settings = settings or Settings()
    root = root or start
    fs = fs or FileSystem(max_bytes=settings.max_file_bytes)
    counter = counter or TokenCounter(factor_for(settings.model, settings.token_factor))
    sessions = {a: load_session(start, touched, settings, root=root, fs=fs, counter=counter, profile=a)
                for a in agents}
    paths: dict[Path, None] = dict.fromkeys(scan_agent_files(root, settings) if files is None else files)
    for s in sessions.values():
        for b in s.blocks:
            if b.source is not None and b.kind not in _NOT_FILES:
                paths.setdefault(b.source)
        for k in s.skipped:
            if k.kind not in _NOT_FILES and (k.when is not None or fs.is_file(k.source)):
                paths.setdefault(k.source)
    by = {a: _by_source(s) for a, s in sessions.items()}
    rows = [Row(p, {a: _cell(p, sessions[a], by[a], a, settings, fs) for a in agents})
            for p in sorted(paths, key=_order(root))]
    cmp = Comparison(start, root, tuple(agents), list(touched), rows, sessions, window=settings.window,
                     token_method=counter.method)
    for a, s in sessions.items():
        fixed = sum(b.tokens for b in s.blocks if b.kind in (M.SYSTEM_PROMPT, M.TOOL_SCHEMAS))
        startup = sum(b.tokens for b in s.blocks if b.startup and b.kind not in _NOT_FILES)
        touch = sum(b.tokens for b in s.blocks if not b.startup and b.kind not in _NOT_FILES)
        loaded = {b.source for b in s.blocks if b.source is not None and b.kind not in _NOT_FILES}
        cmp.totals[a] = Totals(startup, touch, len(loaded), fixed)
    return cmp


def _order(root: Path):
    """Sort key of the rows: files in the workspace by relative path, then the others (the user's home)."""
    prefix = str(root).rstrip(os.sep) + os.sep

    def key(p: Path) -> tuple[bool, str]:
        s = str(p)
        return (False, s[len(prefix):]) if s.startswith(prefix) else (True, s)

    return key


def _by_source(s: Session) -> tuple[dict, dict]:
    """A session's file blocks and skipped entries by source (a table row looks each file up in each)."""
    blocks: dict[Path, list] = {}
    for b in s.blocks:
        if b.source is not None and b.kind not in _NOT_FILES:
            blocks.setdefault(b.source, []).append(b)
    skipped = {k.source: k for k in s.skipped}  # (the last entry of a source wins)
    return blocks, skipped


def _cell(path: Path, session: Session, by: tuple[dict, dict], agent: str, settings: Settings,
          fs: FileSystem) -> Cell:
    blocks = by[0].get(path, ())
    if blocks:
        first = min(b.lines[0] for b in blocks if b.lines) if any(b.lines for b in blocks) else None
        last = max(b.lines[1] for b in blocks if b.lines) if first is not None else None
        cut = "; ".join(b.cut for b in blocks if b.cut and "stripped" not in b.cut) or None
        status = STARTUP if any(b.startup for b in blocks) else ON_TOUCH
        return Cell(status, sum(b.tokens for b in blocks), (first, last) if first else None, cut,
                    None if status == STARTUP else blocks[0].trigger, True)
    k = by[1].get(path)
    if k is not None:
        return Cell(_WHEN[k.when], reason=k.reason)
    try:
        when, reason = module(agent).unloaded(path, session, settings, fs)
    except Exception as exc:  # a profile's explanation must never take the table down
        when, reason = None, f"internal error: {exc}"
    return Cell(_WHEN.get(when, NEVER), reason=reason)


# -- output ---------------------------------------------------------------------------------------------------
def compare_to_json(cmp: Comparison) -> dict[str, Any]:
    def cell(c: Cell) -> dict[str, Any]:
        d: dict[str, Any] = {"status": c.status, "loaded": c.loaded, "tokens": c.tokens,
                             "lines": list(c.lines) if c.lines else None}
        if c.cut:
            d["cut"] = c.cut
        if c.reason:
            d["reason"] = c.reason
        return d

    return {
        "schema": COMPARE_SCHEMA,
        "start_dir": cmp.display(cmp.start),
        "touched": [cmp.display(t) for t in cmp.touched],
        "agents": list(cmp.agents),
        "window": cmp.window,
        "token_method": cmp.token_method,
        "files": [{"source": cmp.display(r.source), "agents": {a: cell(c) for a, c in r.cells.items()}}
                  for r in cmp.rows],
        "totals": {a: {"startup_tokens": t.startup_tokens, "touch_tokens": t.touch_tokens,
                       "total_tokens": t.startup_tokens + t.touch_tokens, "files": t.files,
                       "fixed_tokens": t.fixed_tokens}
                   for a, t in cmp.totals.items()},
    }


def cell_text(c: Cell) -> str:
    """A cell in a few characters: `startup 1-12 · 340`, `on touch · 80 (cut)`, `on request`, `never`."""
    if not c.loaded:
        return c.status
    where = f" {c.lines[0]}-{c.lines[1]}" if c.lines else ""
    return f"{c.status}{where} · {c.tokens:,}" + (" (cut)" if c.cut else "")


def notes(cmp: Comparison) -> list[tuple[str, str, str]]:
    """(file, agent, why) worth saying under the table: every cut, and why an agent does not load a file
    another one loads."""
    out = []
    for r in cmp.rows:
        some = any(c.loaded for c in r.cells.values())
        for a, c in r.cells.items():
            if c.cut:
                out.append((cmp.display(r.source), a, c.cut))
            elif some and not c.loaded and c.reason and not c.reason.startswith(FOREIGN):
                out.append((cmp.display(r.source), a, f"{c.status}: {c.reason}"))
    return out


def compare_markdown(cmp: Comparison) -> str:
    """The table as markdown (the language server's report; `ctxls compare --format markdown`)."""
    names = [M.AGENT_NAMES.get(a, a) for a in cmp.agents]
    out = [f"# Which agent loads what in `{cmp.display(cmp.start)}`", ""]
    if cmp.touched:
        out += ["Touched: " + ", ".join(f"`{cmp.display(t)}`" for t in cmp.touched), ""]
    out += ["| file | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for r in cmp.rows:
        out.append(f"| `{cmp.display(r.source)}` | " + " | ".join(cell_text(r.cells[a]) for a in cmp.agents) + " |")
    out.append("| **startup tokens** | " + " | ".join(f"{cmp.totals[a].startup_tokens:,}" for a in cmp.agents) + " |")
    out.append("| **on touch** | " + " | ".join(f"{cmp.totals[a].touch_tokens:,}" for a in cmp.agents) + " |")
    out.append("| **files loaded** | " + " | ".join(str(cmp.totals[a].files) for a in cmp.agents) + " |")
    got = notes(cmp)
    if got:
        out += ["", "## Why", ""]
        out += [f"- `{f}`, {M.AGENT_NAMES.get(a, a)}: {why}" for f, a, why in got]
    out += ["", f"Tokens: {cmp.token_method}, instruction blocks only (Claude Code's fixed overhead of "
                f"{cmp.totals.get('claude-code', Totals(0, 0, 0)).fixed_tokens:,} tokens not included)."]
    return "\n".join(out) + "\n"
