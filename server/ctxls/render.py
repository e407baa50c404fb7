"""Terminal rendering for the CLI (rich). Pure presentation over core data."""

from __future__ import annotations

import contextlib
import sys
from typing import Iterator

from rich import box
from rich.console import Console
from rich.table import Table

from .core import model as M
from .core.budget import READ_TOKENS, TURN_TOKENS, BudgetReport
from .core.model import KIND_LABELS, Session



def _console() -> Console:
    # Wide enough for paths when piped; a real terminal uses its own width.
    return Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 160)


def print_context(session: Session) -> None:
    con = _console()
    w = session.window
    t = Table(box=box.SIMPLE_HEAD, title=f"Context of a {M.AGENT_NAMES.get(session.agent, session.agent)} session in "
                    f"{session.display_source(session.start_dir) or '.'}",
              title_justify="left")
    t.add_column("#", justify="right", style="dim")
    t.add_column("block")
    t.add_column("source", overflow="fold")
    t.add_column("lines", justify="right")
    t.add_column("trigger", overflow="fold")
    t.add_column("tokens", justify="right")
    t.add_column("total", justify="right")
    t.add_column("% win", justify="right")
    for i, b in enumerate(session.blocks, 1):
        kind = KIND_LABELS.get(b.kind, b.kind)
        if b.tier and b.kind in (M.CLAUDE_MD, M.RULE, M.IMPORT):
            kind += f" ({b.tier})"
        lines = f"{b.lines[0]}-{b.lines[1]}" if b.lines else ""
        src = session.display_source(b.source) or ""
        if b.cut:
            src += f"\n[yellow]cut: {b.cut}[/]"
        for n in b.notes:
            src += f"\n[dim]note: {n}[/]"
        tokens = f"{b.tokens:,}" + ("~" if b.estimated else "")
        t.add_row(str(i), kind, src, lines, b.trigger, tokens, f"{b.cumulative:,}", f"{100 * b.cumulative / w:.1f}%")
    con.print(t)
    pct = 100 * session.total_tokens / w
    con.print(f"Startup: [bold]{session.startup_tokens:,}[/] tokens · total: [bold]{session.total_tokens:,}[/] tokens "
              f"= [bold]{pct:.1f}%[/] of a {w:,}-token window. Tokens: {session.token_method} (~ = estimate).")
    if session.skills is not None and session.skills.over_budget:
        sk = session.skills
        con.print(f"[yellow]Skills listing over budget:[/] {sk.full_chars:,} chars > {sk.budget_chars:,}; "
                  f"{sum(1 for s in sk.skills if s.description_dropped)} descriptions dropped.")
    if session.skipped:
        con.print("\n[bold]Not loaded:[/]")
        for s in session.skipped:
            con.print(f"  {session.display_source(s.source)} [dim]({s.trigger})[/]: {s.reason}")


def print_budget(rep: BudgetReport, top: int = 5) -> None:
    con = _console()
    s = rep.settings
    w = s.window
    idx = rep.index
    con.print(f"[bold]Context budget for {rep.root}[/]  ({len(idx.dirs):,} directories, {idx.file_count:,} files, "
              f"{len(idx.sources):,} instruction sources; window {w:,}; tokens: {rep.token_method})")
    agent = rep.root_session.agent
    if agent != "claude-code":
        con.print(f"Agent: {M.AGENT_NAMES.get(agent, agent)} (instruction files only: its system prompt and tool "
                  "schemas are not counted)\n")
    else:
        con.print(f"Fixed overhead in every session: {rep.fixed_tokens:,} tokens (system prompt "
                  f"{s.system_prompt_tokens:,} + tool schemas {s.tool_schema_tokens:,}, configurable estimates)\n")

    t = Table(box=box.SIMPLE_HEAD, title=f"Most expensive places to start a session (of {len(rep.dirs):,})",
              title_justify="left")
    t.add_column("directory", overflow="fold")
    t.add_column("startup tokens", justify="right")
    t.add_column("% window", justify="right")
    t.add_column("from files", justify="right")
    t.add_column("files", justify="right")
    t.add_column("largest block", overflow="fold")
    for d in rep.dirs[:top]:
        t.add_row(rep.rel(d.dir) if d.dir != rep.root else ".", f"{d.startup_tokens:,}",
                  f"{100 * d.startup_tokens / w:.1f}%", f"{d.instruction_tokens:,}", str(d.files),
                  f"{rep.rel(d.top_source)} ({d.top_tokens:,})" if d.top_source else "-")
    con.print(t)

    f = Table(box=box.SIMPLE_HEAD, title="Largest instruction files", title_justify="left")
    f.add_column("file", overflow="fold")
    f.add_column("kind")
    f.add_column("tokens", justify="right")
    f.add_column("lines", justify="right")
    for fc in rep.files[:top]:
        f.add_row(rep.rel(fc.path), fc.kind, f"{fc.tokens:,}", f"{fc.lines:,}")
    con.print(f)

    listing = rep.root_session.skills
    if listing is not None and listing.skills:
        listed = sum(1 for k in listing.skills if k.listed)
        dropped = sum(1 for k in listing.skills if k.description_dropped)
        state = "[red]over budget[/]" if listing.over_budget else "[green]within budget[/]"
        con.print(f"Skills listing (root): {listed} listed of {len(listing.skills)}, {listing.full_chars:,} chars "
                  f"vs budget {listing.budget_chars:,} ({state}); {rep.skills_tokens:,} tokens sent"
                  + (f"; {dropped} descriptions dropped" if dropped else ""))
    else:
        con.print("Skills listing (root): no skills")
    if rep.memory_source is not None:
        con.print(f"Auto memory head: {rep.memory_tokens:,} tokens from {rep.rel(rep.memory_source)}"
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
        con.print(f"\n[yellow]{len(idx.skipped)} path(s) could not be scanned[/], e.g. "
                  f"{idx.skipped[0][0]}: {idx.skipped[0][1]}")
    con.print("\n[bold]Suggested budget policy[/]")
    for line in rep.policy:
        con.print(f"  - {line}")


@contextlib.contextmanager
def budget_progress(enabled: bool) -> Iterator:
    if not enabled:
        yield None
        return
    from rich.progress import BarColumn, Progress, TextColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  console=Console(file=sys.stderr), transient=True) as prog:
        task = prog.add_task("scanning", total=None)

        def update(phase: str, done: int, total: int) -> None:
            if phase == "scan":
                prog.update(task, description=f"scanning ({done:,} dirs)", completed=done)
            else:
                prog.update(task, description="sizing sessions", completed=done, total=total)

        yield update
