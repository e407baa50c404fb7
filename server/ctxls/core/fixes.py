"""Applying fixes: pure text transformation. The CLI writes the results; the LSP sends them as WorkspaceEdits."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from .findings import Edit, Finding, Fix, Span


def offset_of(text: str, line: int, col: int) -> int:
    """Code-point offset of (line, col); positions past the end clamp to the end."""
    pos = 0
    for _ in range(line):
        nl = text.find("\n", pos)
        if nl < 0:
            return len(text)
        pos = nl + 1
    end = text.find("\n", pos)
    end = len(text) if end < 0 else end
    return min(pos + col, end)


def apply_to_text(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits of one file (bottom-up, so earlier offsets stay valid)."""
    spans = sorted(((offset_of(text, e.span.start_line, e.span.start_col),
                     offset_of(text, e.span.end_line, e.span.end_col), e.new_text) for e in edits if e.span),
                   reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


@dataclass
class FixPlan:
    files: dict[Path, str] = field(default_factory=dict)
    """New full text of every file touched (created files included)."""
    created: set[Path] = field(default_factory=set)
    applied: list[tuple[Finding, Fix]] = field(default_factory=list)
    skipped: list[tuple[Finding, str]] = field(default_factory=list)


def plan_fixes(findings: Iterable[Finding], read: Callable[[Path], str | None], safe_only: bool = True) -> FixPlan:
    """Choose the first fix of each finding and combine them; a fix whose edits overlap one already chosen,
    or that creates a file that exists, is skipped (run again to apply it)."""
    plan = FixPlan()
    taken: dict[Path, list[tuple[Span, Span]]] = {}
    pending: dict[Path, list[Edit]] = {}
    for f in findings:
        fix = next((x for x in f.fixes if x.safe or not safe_only), None)
        if fix is None:
            continue
        problem = None
        for e in fix.edits:
            if e.create:
                if e.path in plan.created or read(e.path) is not None:
                    problem = f"{e.path} already exists"
            elif e.span is not None:
                for a, _ in taken.get(e.path, []):
                    if not (e.span.end_line, e.span.end_col) <= (a.start_line, a.start_col) and \
                            not (a.end_line, a.end_col) <= (e.span.start_line, e.span.start_col):
                        problem = "overlaps another fix"
        if problem:
            plan.skipped.append((f, problem))
            continue
        for e in fix.edits:
            if e.create:
                plan.created.add(e.path)
                plan.files[e.path] = e.new_text
            elif e.span is not None:
                taken.setdefault(e.path, []).append((e.span, e.span))
                pending.setdefault(e.path, []).append(e)
        plan.applied.append((f, fix))
    for path, edits in pending.items():
        base = plan.files.get(path)
        if base is None:
            base = read(path)
        if base is None:
            continue
        plan.files[path] = apply_to_text(base, edits)
    return plan
