"""Terminal rendering for the CLI (rich). Pure presentation over core data."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Iterator

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from .core import model as M
from .core.budget import READ_TOKENS, TURN_TOKENS, BudgetReport
from .core.model import KIND_LABELS, Session
from .core.paths import rel_path
from .core.words import plural


def _console() -> Console:
    # A real terminal uses its own width, a pipe COLUMNS when set, else 160 (wide enough for most paths).
    piped = not sys.stdout.isatty() and not os.environ.get("COLUMNS", "").isdigit()
    return Console(highlight=False, soft_wrap=False, width=160 if piped else None)


class LeftPath:
    """A path in a table cell: whole when it fits, else shortened from the left at a `/` (`…/tests/x.py`), so the
    file name stays readable and a path never breaks mid-word. Its minimum width is its last component (up to
    24 columns): the columns that cannot shrink keep their width."""

    def __init__(self, path: str, suffix: str = "", style: str = "") -> None:
        self.path, self.suffix, self.style = path, suffix, style

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        full = len(self.path) + len(self.suffix)
        name = len(self.path.rsplit("/", 1)[-1]) + (2 if "/" in self.path else 0)
        return Measurement(min(full, max(8, min(24, name))), full)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text(shorten_left(self.path, options.max_width - len(self.suffix)) + self.suffix, style=self.style,
                   no_wrap=True, overflow="ellipsis")


def shorten_left(path: str, width: int) -> str:
    """``path`` in at most ``width`` columns: leading components replaced by `…` (cut at a `/` when one fits)."""
    if len(path) <= width:
        return path
    if width <= 1:
        return "…"[:max(width, 0)]
    tail = path[-(width - 1):]
    cut = tail.find("/")
    if 0 <= cut < len(tail) - 1:
        tail = tail[cut:]
    return "…" + tail


def shown(path: Path | None, root: Path, home: Path | None = None) -> str:
    """A path as the tables show it: relative inside the workspace, `~/…` under the home, else absolute."""
    return "" if path is None else rel_path(path, root, home)


def print_context(session: Session, home: Path | None = None) -> None:
    con = _console()
    w = session.window
    wide = con.width >= 100  # below that, "% win" gives its columns to the paths (the footer has the total %)
    t = Table(box=box.SIMPLE_HEAD, title=f"Context of a {M.AGENT_NAMES.get(session.agent, session.agent)} session in "
                    f"{session.display_source(session.start_dir) or '.'}",
              title_justify="left", pad_edge=False,
              padding=(0, 1, 0, 0))  # two-column gaps (the box's divider and one space): room for the paths
    t.add_column("#", justify="right", style="dim", no_wrap=True)
    t.add_column("block", no_wrap=True)
    t.add_column("source")
    t.add_column("lines", justify="right", no_wrap=True)
    t.add_column("trigger", no_wrap=True)
    t.add_column("tokens", justify="right", no_wrap=True)
    t.add_column("total", justify="right", no_wrap=True)
    if wide:
        t.add_column("% win", justify="right", no_wrap=True)
    notes = []
    row_of: dict[str, int] = {}
    touches = {session.display_source(p): i for i, p in enumerate(session.touched, 1)}
    for i, b in enumerate(session.blocks, 1):
        kind = KIND_LABELS.get(b.kind, b.kind)
        if b.tier and b.kind in (M.CLAUDE_MD, M.RULE, M.IMPORT):
            kind += f" ({b.tier[0]})"  # M(anaged), U(ser), P(roject), L(ocal): the legend is under the table
        lines = f"{b.lines[0]}-{b.lines[1]}" if b.lines else ""
        if b.source is not None:
            row_of.setdefault(session.display_source(b.source), i)  # (triggers name sources as displayed)
        if b.cut:
            notes.append(f"  [yellow]#{i} cut:[/] {b.cut}")
        for n in b.notes:
            notes.append(f"  [dim]#{i} note:[/] {n}")
        tokens = f"{b.tokens:,}" + ("~" if b.estimated else "")
        row = [str(i), kind, LeftPath(shown(b.source, session.root, home)), lines, _trigger(b.trigger, row_of, touches),
               tokens, f"{b.cumulative:,}"]
        t.add_row(*row, *([f"{100 * b.cumulative / w:.1f}%"] if wide else []))
    con.print(t)
    if session.touched:
        con.print("Touches (files the agent reads, in order): " + "; ".join(
            f"{i}. {shown(p, session.root, home)}" for i, p in enumerate(session.touched, 1)))
    con.print("[dim]Tiers: M managed, U user, P project, L local; ~/ is the home ctxls reads; ~ marks an estimate.[/]")
    for line in notes:
        con.print(line)
    pct = 100 * session.total_tokens / w
    con.print(f"Startup: [bold]{session.startup_tokens:,}[/] tokens · total: [bold]{session.total_tokens:,}[/] tokens "
              f"= [bold]{pct:.1f}%[/] of a {w:,}-token window. Tokens: {session.token_method}.")
    if session.skills is not None and session.skills.over_budget:
        sk = session.skills
        dropped = sum(1 for s in sk.skills if s.description_dropped)
        con.print(f"[yellow]Skills listing over budget:[/] {sk.full_chars:,} chars > {sk.budget_chars:,}; "
                  f"{plural(dropped, 'description')} dropped.")
    if session.skipped:
        con.print("\n[bold]Not loaded:[/]")
        for s in session.skipped:
            con.print(f"  {shown(s.source, session.root, home)} [dim]({s.trigger})[/]: {s.reason}")


def _trigger(trigger: str, row_of: dict[str, int], touches: dict[str, int]) -> str:
    """`import #6` (imported by the block in row 6), `touch 1` (the first --touch), `startup`."""
    how, sep, what = trigger.partition(":")
    if not sep:
        return trigger
    if how == "touch" and what in touches:
        return f"touch {touches[what]}"
    got = row_of.get(what)
    return f"{how} #{got}" if got else trigger


def print_budget(rep: BudgetReport, top: int = 5) -> None:
    con = _console()
    s = rep.settings
    w = s.window
    idx = rep.index
    con.print(f"[bold]Context budget for {_here(rep.root)}[/] ({plural(len(idx.dirs), 'directory')}, "
              f"{plural(idx.file_count, 'file')}, {plural(len(idx.sources), 'instruction source')}; window {w:,}; "
              f"tokens: {rep.token_method})")
    agent = rep.root_session.agent
    if agent != "claude-code":
        con.print(f"Agent: {M.AGENT_NAMES.get(agent, agent)} (instruction files only: its system prompt and tool "
                  "schemas are not counted)\n")
    else:
        con.print(f"Fixed overhead in every session: {rep.fixed_tokens:,} tokens (system prompt "
                  f"{s.system_prompt_tokens:,} + tool schemas {s.tool_schema_tokens:,}, configurable estimates)\n")

    home = s.home
    others = f"; --all-dirs adds {len(rep.other_dirs):,} in agent config and docs folders" if rep.other_dirs else ""
    t = _table(f"Most expensive places to start a session (of {len(rep.dirs):,}{others})")
    t.add_column("directory")
    t.add_column("startup", justify="right", no_wrap=True)
    t.add_column("% win", justify="right", no_wrap=True)
    t.add_column("from files", justify="right", no_wrap=True)
    t.add_column("files", justify="right", no_wrap=True)
    t.add_column("largest block")
    for d in rep.dirs[:top]:
        t.add_row(LeftPath(rep.rel(d.dir) if d.dir != rep.root else "."), f"{d.startup_tokens:,}",
                  f"{100 * d.startup_tokens / w:.1f}%", f"{d.instruction_tokens:,}", str(d.files),
                  _largest(rep, d))
    con.print(t)

    f = _table("Largest instruction files")
    f.add_column("file")
    f.add_column("kind", no_wrap=True)
    f.add_column("tokens", justify="right", no_wrap=True)
    f.add_column("lines", justify="right", no_wrap=True)
    for fc in rep.files[:top]:
        f.add_row(LeftPath(shown(fc.path, rep.root, home)), fc.kind, f"{fc.tokens:,}", f"{fc.lines:,}")
    con.print(f)

    listing = rep.root_session.skills
    if listing is not None and listing.skills:
        listed = sum(1 for k in listing.skills if k.listed)
        dropped = sum(1 for k in listing.skills if k.description_dropped)
        state = "[red]over budget[/]" if listing.over_budget else "[green]within budget[/]"
        con.print(f"Skills listing (root): {listed} listed of {len(listing.skills)}, {listing.full_chars:,} chars "
                  f"vs budget {listing.budget_chars:,} ({state}); {rep.skills_tokens:,} tokens sent"
                  + (f"; {plural(dropped, 'description')} dropped" if dropped else ""))
    else:
        con.print("Skills listing (root): no skills")
    if rep.memory_source is not None:
        con.print(f"Auto memory head: {rep.memory_tokens:,} tokens from {shown(rep.memory_source, rep.root, home)}"
                  + (f" [yellow](cut: {rep.memory_cut})[/]" if rep.memory_cut else ""))
    else:
        con.print("Auto memory head: none")

    rc, worst = rep.root_cost, rep.worst
    con.print("\n[bold]Scenarios[/]")
    con.print(f"  Starting at the root ({rc.startup_tokens:,} tokens before the first prompt): "
              f"{rep.reads_until_half(rc):,} reads of {READ_TOKENS}-token files until half the window is gone; "
              f"about {rep.turns_until_compact(rc):,} turns of ~{TURN_TOKENS:,} tokens "
              f"({rep.tokens_until_compact(rc):,} tokens) until auto-compact at {s.autocompact_threshold:,}; "
              f"start fresh after ~{rep.turns_until_half(rc):,} turns to stay under half the window.")
    if worst.dir != rc.dir:
        con.print(f"  Starting in {rep.rel(worst.dir)} (worst, {worst.startup_tokens:,}): "
                  f"{rep.reads_until_half(worst):,} reads until half; ~{rep.turns_until_compact(worst):,} turns "
                  f"until auto-compact; start fresh after ~{rep.turns_until_half(worst):,} turns.")
    if idx.skipped:
        con.print(f"\n[yellow]{plural(len(idx.skipped), 'path')} could not be scanned[/], e.g. "
                  f"{idx.skipped[0][0]}: {idx.skipped[0][1]}")
    con.print("\n[bold]Suggested budget policy[/]")
    for line in rep.policy:
        con.print(f"  - {line}")


def _largest(rep: BudgetReport, d) -> "LeftPath | str":
    if d.top_source is None:
        return "-"
    if d.top_source == rep.memory_source:  # the same long path on every row said nothing: name what it is
        return f"auto memory ({d.top_tokens:,})"
    return LeftPath(shown(d.top_source, rep.root, rep.settings.home), f" ({d.top_tokens:,})")


def _table(title: str) -> Table:
    return Table(box=box.SIMPLE_HEAD, title=title, title_justify="left", pad_edge=False, padding=(0, 1, 0, 0))


def _here(p: Path) -> str:
    """``p`` relative to the current directory when inside it (`.` for itself), else absolute."""
    try:
        rel = p.relative_to(Path.cwd()).as_posix()
    except (ValueError, OSError):
        return str(p)
    return rel or "."


def print_markdown(text: str) -> None:
    """Markdown rendered for a terminal (`ctxls rules`)."""
    from rich.markdown import Markdown

    _console().print(Markdown(text))


@contextlib.contextmanager
def budget_progress(enabled: bool) -> Iterator:
    """A spinner with the count of directories while the tree is scanned (its size is unknown until then), then a
    bar over that count while the sessions are sized."""
    if not enabled:
        yield None
        return
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[count]}"),
                  console=Console(file=sys.stderr), transient=True) as prog:
        task = prog.add_task("scanning", total=None, count="")

        def update(phase: str, done: int, total: int) -> None:
            what, count = progress_text(phase, done, total)
            prog.update(task, description=what, completed=done, total=total if phase != "scan" else None,
                        count=count)

        yield update


def progress_text(phase: str, done: int, total: int) -> tuple[str, str]:
    """What the budget's progress line says: a count while scanning (the total is unknown until the scan
    ends), then done/total while the sessions are sized."""
    if phase == "scan":
        return "scanning", plural(done, "directory")
    return "sizing sessions", f"{done:,}/{total:,} directories"
