"""`ctxls compare PATH [--touch FILE ...] [--agents a,b,...]`: which agent loads which instruction file.

Exit codes: 0 success, 2 usage errors.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def add_parser(sub, common) -> None:
    p = sub.add_parser("compare", help="which agent loads which instruction file, side by side")
    p.add_argument("path", type=Path, help="directory the agents start in (a file means its directory)")
    p.add_argument("--touch", action="append", type=Path, default=[], metavar="FILE",
                   help="a file the agents read; repeat for several, in order")
    p.add_argument("--agents", default="", metavar="A,B,...",
                   help="agents to compare (default all: claude-code,codex,cursor,copilot,gemini)")
    common(p)
    for action in p._actions:
        if action.dest == "format":
            action.choices = ("text", "json", "markdown")


def parse_agents(raw: str) -> tuple[str, ...] | str:
    """The --agents list, or an error message."""
    from .core.profiles import AGENTS

    if not raw.strip():
        return AGENTS
    got = tuple(dict.fromkeys(a.strip() for a in raw.split(",") if a.strip()))
    bad = [a for a in got if a not in AGENTS]
    if bad or not got:
        named = ", ".join(bad) if bad else repr(raw)
        return f"--agents: unknown agent(s) {named}; known: {', '.join(AGENTS)}"
    return got


def cmd_compare(args, settings_of, counter_of, usage_error) -> int:
    from .core.compare import compare, compare_markdown, compare_to_json
    from .core.config import find_root

    path = Path(os.path.abspath(args.path))
    if not path.exists():
        print(f"ctxls: {args.path}: no such file or directory", file=sys.stderr)
        return 2
    agents = parse_agents(args.agents)
    if isinstance(agents, str):
        print(f"ctxls: {agents}", file=sys.stderr)
        return 2
    start = path if path.is_dir() else path.parent
    root = find_root(start)
    try:
        settings = settings_of(args, root)
        counter, cache = counter_of(args, root, settings)
    except usage_error as exc:
        print(f"ctxls: {exc}", file=sys.stderr)
        return 2
    cmp = compare(start, [Path(os.path.abspath(t)) for t in args.touch], settings, agents=agents, root=root,
                  counter=counter)
    cache.save()
    if args.format == "json":
        sys.stdout.write(rows_json(compare_to_json(cmp)))
    elif args.format == "markdown":
        sys.stdout.write(compare_markdown(cmp))
    else:
        print_compare(cmp)
    return 0


def rows_json(out: dict) -> str:
    """The JSON with one file row per line. (`json.dump(indent=2)` runs the pure-Python encoder: on the bench
    monorepo's 537 rows it took longer than the five sessions; without indent the C encoder does each row.)"""
    files = out["files"]
    head = json.dumps({k: v for k, v in out.items() if k not in ("files", "totals")})[:-1]
    body = ",\n".join(json.dumps(f, ensure_ascii=False) for f in files)
    return (f'{head}, "files": [\n{body}\n],\n"totals": {json.dumps(out["totals"])}}}\n')


def print_compare(cmp) -> None:
    """The table for a terminal. Paths are shortened from the left at a `/` and cells never break mid-word: a
    cell is `status lines · tokens` on one line when the table fits the width that way, else the status over
    its figures (`startup` / `1-4 · 39`), which fits five agents in 80 columns."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from .core import model as M
    from .core.compare import cell_text, notes
    from .render import LeftPath, _console

    con = _console()
    texts = {(r.source, a): cell_text(r.cells[a]) for r in cmp.rows for a in cmp.agents}
    widest = {a: max([len(M.AGENT_NAMES.get(a, a))] + [len(texts[r.source, a]) for r in cmp.rows]) for a in cmp.agents}
    stacked = 24 + sum(w + 2 for w in widest.values()) > con.width
    def lines_of(a: str) -> list[str]:
        out = [w for w in M.AGENT_NAMES.get(a, a).split()]  # a header may wrap at its spaces
        for r in cmp.rows:
            text, status = texts[r.source, a], r.cells[a].status
            out += [status, text[len(status):].strip()] if stacked and " · " in text else [text]
        return out

    cols = {a: max(map(len, lines_of(a))) for a in cmp.agents}  # the cells never wrap: fixed widths
    paths = max([4] + [len(cmp.display(r.source)) for r in cmp.rows] + [len("startup tokens")])
    t = Table(box=box.SIMPLE_HEAD, title=f"Which agent loads what in {cmp.display(cmp.start)}",
              title_justify="left", pad_edge=False, padding=(0, 1, 0, 0))
    t.add_column("file", width=max(14, min(paths, con.width - sum(w + 2 for w in cols.values()) - 1)))
    for a in cmp.agents:
        t.add_column(M.AGENT_NAMES.get(a, a), width=cols[a])
    style = {"startup": "green", "on touch": "cyan", "on request": "yellow", "never": "dim"}
    for r in cmp.rows:
        cells = []
        for a in cmp.agents:
            text = texts[r.source, a]
            if stacked and " · " in text:
                status = r.cells[a].status
                text = status + "\n" + text[len(status):].strip()
            cells.append(Text(text, style=style[r.cells[a].status], no_wrap=True))
        t.add_row(LeftPath(cmp.display(r.source)), *cells)
    t.add_section()
    t.add_row("[bold]startup tokens[/]", *(f"{cmp.totals[a].startup_tokens:,}" for a in cmp.agents))
    t.add_row("[bold]on touch[/]", *(f"{cmp.totals[a].touch_tokens:,}" for a in cmp.agents))
    t.add_row("[bold]files loaded[/]", *(str(cmp.totals[a].files) for a in cmp.agents))
    con.print(t)
    why_not = Table.grid(padding=(0, 1), pad_edge=True)  # a bullet list: a reason wraps under its own text
    why_not.add_column(no_wrap=True)
    why_not.add_column()
    for f, a, why in notes(cmp):
        why_not.add_row("•", f"{f} [dim]({M.AGENT_NAMES.get(a, a)})[/]: {why}")
    con.print(why_not)
    fixed = cmp.totals["claude-code"].fixed_tokens if "claude-code" in cmp.totals else 0
    con.print(f"Tokens: {cmp.token_method}, instruction blocks only"
              + (f"; Claude Code adds {fixed:,} tokens of system prompt and tool schemas." if fixed else "."))
