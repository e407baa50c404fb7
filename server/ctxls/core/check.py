"""The rule engine: `run_checks` runs every selected rule over a workspace (core/workspace.py) and reports their
findings in order, suppression comments applied.

One crashing rule is caught, logged and skipped: it never takes the others down.  Results are plain
`Finding`s; the CLI formats them and the language server converts them to diagnostics. With ``jobs`` > 1 the
rules run over two processes (core/parallel.py).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Callable, Iterable

from .findings import SEVERITY_RANK, Finding, order_key
from .parallel import run_split, usable_cpus
from .workspace import CheckConfig, FileInfo, FilesByName, Workspace, same_items

__all__ = ["CheckConfig", "CheckResult", "FileInfo", "FilesByName", "Workspace", "at_or_above", "order_key",
           "report_order", "run_checks", "run_rule", "same_items", "suppressed", "usable_cpus"]
# (CheckConfig, FileInfo, FilesByName, Workspace, same_items and usable_cpus are re-exported for callers that
# import them from here: the CLI, the tests, the bench scripts.)

log = logging.getLogger("ctxls.check")


@dataclass
class CheckResult:
    findings: list[Finding]
    errors: list[str]
    """Rules that crashed (caught), with the exception."""


def run_checks(ws: Workspace, paths: Iterable[Path] | None = None,
               codes: Callable[[str], bool] | None = None, jobs: int = 1) -> CheckResult:
    """Run every enabled rule (``codes`` narrows them further) over ``ws``.

    With ``jobs`` > 1 (the CLI; never a long-lived server, which has threads) about half of the rules run
    in a forked process while this one runs the others: see `parallel.run_split`."""
    from .rules import load_all

    registry = load_all()
    selected = [c for c in registry if ws.config.enabled(c) and (codes is None or codes(c))]
    per_rule: dict[str, tuple[list[Finding], str | None]] | None = None
    if jobs > 1 and len(selected) > 1:
        per_rule = run_split(ws, selected, run_rule)
    if per_rule is None:
        per_rule = {c: run_rule(ws, c) for c in selected}
    findings: list[Finding] = []
    errors: list[str] = []
    for code in selected:  # registry order, whichever process ran the rule
        got, error = per_rule[code]
        findings.extend(got)
        if error:
            errors.append(error)
    wanted = [Path(os.path.abspath(p)) for p in paths or ()]
    if wanted and ws.root not in wanted:  # the root itself means everything, memory outside it included
        findings = [f for f in findings if any(f.path == w or _under(f.path, w) for w in wanted)]
    return CheckResult(report_order(ws, findings), errors)


def report_order(ws: Workspace, findings: list[Finding]) -> list[Finding]:
    """Findings as they are reported: suppressed ones dropped, in report order (`order_key`), repeats (same
    path, span, code and message) dropped."""
    marks: dict[str, tuple] = {}  # by path string: Path equality is slow, and many findings share a file
    kept = []
    for f in findings:
        k = str(f.path)
        m = marks.get(k)
        if m is None:
            m = marks[k] = ws.file(f.path).suppressions
        if not m or not suppressed(f, ws):
            kept.append(f)
    if len(kept) < 2:
        return kept
    keyed = [(order_key(f), f) for f in kept]
    keyed.sort(key=itemgetter(0))
    # Repeats sort next to each other, among the findings with the same order key.
    unique = []
    last: tuple | None = None
    messages: set[str] = set()
    for k, f in keyed:
        if k != last:
            last = k
            messages = {f.message}
        elif f.message in messages:
            continue
        else:
            messages.add(f.message)
        unique.append(f)
    return unique


def run_rule(ws: Workspace, code: str) -> tuple[list[Finding], str | None]:
    """One rule's findings (severity overrides applied), or the error that stopped it: one broken rule never
    takes the others down."""
    from .rules import REGISTRY

    info = REGISTRY[code]
    try:
        got = info.func(ws)
        if type(got) is not list:  # a rule that keeps its findings hands back the same list: keep it
            got = list(got)
    except Exception as exc:
        log.exception("rule %s crashed", code)
        return [], f"{code} ({info.name}) crashed: {type(exc).__name__}: {exc}"
    got = _fixtures_info(ws, got)
    severity = ws.config.severity.get(code)
    if severity is not None:
        for f in got:
            f.severity = severity
    return got, None


def _fixtures_info(ws: Workspace, got: list[Finding]) -> list[Finding]:
    """Warnings and errors on a test fixture of agent configuration (`tests/fail/.claude/rules/x.md`:
    `CheckConfig.in_test_fixture`) are info: the fixture is broken on purpose."""
    seen: dict[str, bool] = {}
    out = None
    for i, f in enumerate(got):
        if f.severity not in ("warning", "error"):
            continue
        k = str(f.path)
        hit = seen.get(k)
        if hit is None:
            hit = seen[k] = _under(f.path, ws.root) and ws.config.in_test_fixture(ws.rel(f.path))
        if hit:
            if out is None:
                out = list(got)
            out[i] = dataclasses.replace(f, severity="info",
                                         message=f"{f.message} (in a test fixture: broken on purpose, as it seems)")
    return got if out is None else out


def _under(path: Path, base: Path) -> bool:
    try:
        path.relative_to(base)
        return True
    except ValueError:
        return False


def suppressed(f: Finding, ws: Workspace) -> bool:
    """`<!-- ctxls-ignore CTX201 -->` on the finding's line or the line above; `<!-- ctxls-ignore-file CTX201 -->`
    anywhere in the file. Without codes, every rule is silenced."""
    marks = ws.file(f.path).suppressions
    if not marks:
        return False
    for whole_file, codes, line, alone in marks:
        if codes and not any(f.code.startswith(c) for c in codes):
            continue
        if whole_file:
            return True
        if line == f.span.start_line:
            return True
        # on the line above only when the comment stands alone there (a trailing comment covers its own line)
        if line == f.span.start_line - 1 and alone:
            return True
    return False


def at_or_above(findings: Iterable[Finding], level: str) -> list[Finding]:
    rank = SEVERITY_RANK[level]
    return [f for f in findings if SEVERITY_RANK.get(f.severity, 9) <= rank]
