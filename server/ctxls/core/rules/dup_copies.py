"""How CTX201's findings read when many of them say one thing (issue 15): one file that is a copy or a variant of
another, and the lead-in of a section that a template repeats in each file.

- **Copies.** When one file repeats `COPY_MIN` or more instructions of another, the line findings are info and
  one finding says what is worth acting on: the file is a copy of the other. It is info too when the two files'
  names say they are variants (`constitution.md` and `constitution-py.md`: one kit, one file per language) and a
  warning otherwise.
- **Variants.** CTX202 between two such variants is info: their versions are meant to differ.
- **Lead-ins.** "These rules CANNOT be overridden." right under `## HARD Rules` in each of ten rule files is the
  template's wording of that section, bound to it: deleting one copy changes what its section says. A copy
  whose two places are both the first block under a heading of the same title is info.

Findings are never modified (the analysis keeps and hands back the same objects): changed ones are copies.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from ..findings import Finding, Related
from ..words import plural
from ..workspace import Workspace

COPY_MIN = 5
"""Instructions of one file repeated in another from which the two are reported as one copy."""

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_VARIANT_SUFFIX = re.compile(r"[-_.][A-Za-z0-9]{1,12}$")


def regroup(ws: Workspace, findings: list[Finding]) -> list[Finding]:
    """CTX201's findings with lead-ins and the lines of a copied file made info, plus one finding per copy."""
    out: list[Finding] = []
    memo: dict = {}
    for f in findings:
        if f.severity == "warning" and f.related and _lead_ins(ws, f, memo):
            f = dataclasses.replace(
                f, severity="info", fixes=[],
                message=f"{f.message.split(';', 1)[0]}; both copies open a section of the same title: the wording "
                        f"a template gives that section, bound to it",
                data={**(f.data or {}), "explain": ["both copies are the first block under a heading of the same "
                                                    "title: a template's section lead-in"]})
        out.append(f)
    groups: dict[tuple[Path, Path], list[int]] = {}
    for i, f in enumerate(out):
        if f.severity == "warning" and f.related and f.related[0].path != f.path:
            groups.setdefault((f.path, f.related[0].path), []).append(i)
    extra = []
    for (path, other), idx in groups.items():
        if len(idx) < COPY_MIN:
            continue
        lines = [out[i].span.start_line + 1 for i in idx]
        for i in idx:
            out[i] = dataclasses.replace(out[i], severity="info")
        tokens = sum((out[i].data or {}).get("tokens", 0) for i in idx)
        variant = _variants(path, other)
        where = ws.rel(other)
        shown = ", ".join(map(str, lines[:8])) + (", ..." if len(lines) > 8 else "")
        msg = (f"{len(idx)} instructions of this file repeat {where} (lines {shown}; ~{plural(tokens, 'token')}): "
               + ("the names say the two are variants of one file; load only the one that applies, or keep the "
                  "shared part in one file both import" if variant else
                  "one is a copy of the other; keep the shared instructions in one place"))
        first = out[idx[0]]
        extra.append(Finding("CTX201", "info" if variant else "warning", path, first.span, msg,
                             [Related(other, first.related[0].span, "the file it repeats")], [],
                             {"tokens": tokens, "copies": len(idx),
                              "explain": [f"{len(idx)} line findings between the same two files (at least "
                                          f"{COPY_MIN}) are reported as one copy"]}))
    return out + extra


def _variants(a: Path, b: Path) -> bool:
    """`constitution.md` / `constitution-py.md`, `rules.ts.md` / `rules.py.md`: one stem, a suffix apart."""
    sa, sb = a.stem.lower(), b.stem.lower()
    if sa == sb:
        return False
    return _VARIANT_SUFFIX.sub("", sa) in (sb, _VARIANT_SUFFIX.sub("", sb)) or \
        _VARIANT_SUFFIX.sub("", sb) == sa


def _lead_ins(ws: Workspace, f: Finding, memo: dict) -> bool:
    """Whether the finding's copy and the copy it repeats each open a section of the same title."""
    a = _section_opened(ws, f.path, f.span.start_line, memo)
    if a is None:
        return False
    r = f.related[0]
    return _section_opened(ws, r.path, r.span.start_line, memo) == a


def _section_opened(ws: Workspace, path: Path, line: int, memo: dict) -> str | None:
    """The title of the heading right above ``line`` (blank lines aside), normalised, or None."""
    lines = memo.get(path)
    if lines is None:
        lines = memo[path] = ws.file(path).lines
    i = line - 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    m = _HEADING.match(lines[i]) if 0 <= i < len(lines) else None
    if m is None:
        return None
    return " ".join(re.sub(r"[^\w\s]", " ", m.group(1).lower()).split()) or None


def variant_info(f: Finding) -> Finding:
    """A CTX202 finding between two variants of one file (`development-guidelines.md` and
    `development-guidelines-py.md`): the versions are meant to differ, so it is info."""
    if f.severity != "warning" or not f.related or not _variants(f.path, f.related[0].path):
        return f
    return dataclasses.replace(f, severity="info", fixes=[],
                               message=f"{f.message.split(';', 1)[0]}; the two files' names say they are variants "
                                       f"of one file, meant to differ: check this difference is one of them")
