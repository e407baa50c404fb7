"""How CTX201's findings read when many of them say one thing (issue 15): one file that is a copy or a variant of
another, and the lead-in of a section that a template repeats in each file.

- **Copies.** When one file repeats `COPY_MIN` or more instructions of another, the line findings are info and
  one finding says what is worth acting on: the file is a copy of the other. It is info too when the two files'
  names say they are variants (`constitution.md` and `constitution-py.md`: one kit, one file per language) and a
  warning otherwise.
- **Layout lines.** `- `agent.py` - Main agent definition` in two directories' files describes two files of
  one name (each relative to its own directory): info.
- **Variants.** CTX202 between two such variants is info: their versions are meant to differ.
- **Lists' lead-ins and lines that point back.** "When reviewing pull requests:" under `### API files` and
  again under `### NuGet feeds`, each followed by its own list, says nothing without its list; "Such tests are not
  run by the regular workflow" under `## Quarantined tests` and `## Outerloop tests` means other tests in each.
  Deleting either copy breaks its section: info.
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
        if f.severity == "warning" and f.related and _code_differs(ws, f, memo):
            continue  # `type: description` and `[type] description`: two formats, alike only without punctuation
        if f.severity == "warning" and f.related and (where := _restating_section(_lines(ws, f.path, memo),
                                                                                  f.span.start_line)):
            f = dataclasses.replace(
                f, severity="info", fixes=[],
                message=f"{f.message.split(';', 1)[0]}; this copy sits in {where}, which restates on purpose",
                data={**(f.data or {}), "explain": [f"the copy to delete is in {where}: a summary or a numbered "
                                                    "procedure repeats what it needs to read as a whole"]})
        elif f.severity == "warning" and f.related and f.related[0].path.parent != f.path.parent \
                and _describes_a_relative_path(ws, f, memo):
            f = dataclasses.replace(
                f, severity="info", fixes=[],
                message=f"{f.message.split(';', 1)[0]}; the line describes a relative path, which names another "
                        f"file in each directory: check both descriptions are meant",
                data={**(f.data or {}), "explain": ["a layout line (`- `x.py` - what it holds`) in files of two "
                                                    "directories: two files of one name"]})
        elif f.severity == "warning" and f.related and (why := _bound_to_context(ws, f, memo)):
            f = dataclasses.replace(
                f, severity="info", fixes=[],
                message=f"{f.message.split(';', 1)[0]}; {why[0]}",
                data={**(f.data or {}), "explain": [why[1]]})
        elif f.severity == "warning" and f.related and _lead_ins(ws, f, memo):
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


_LIST_START = re.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|\||```|~~~)")
_ITEM_MARK = re.compile(r"^\s*(?:>\s*)?(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*|__)?")
# A line whose subject points back at what its section is about ("Such tests ...", "These files ...").
_POINTS_BACK = re.compile(r"(?:such|these|those|this|they|them|it|the\s+same|both)\b", re.IGNORECASE)


def _lines(ws: Workspace, path: Path, memo: dict) -> list[str]:
    lines = memo.get(path)
    if lines is None:
        lines = memo[path] = ws.file(path).lines
    return lines


_CODE_SPAN = re.compile(r"`([^`]+)`")
# Sections that repeat by design: a summary of the file, or a numbered step of a procedure read as a whole.
_SUMMARY = re.compile(r"\b(?:summary|recap|tl;?\s?dr|cheat\s*-?sheet|at\s+a\s+glance|quick\s+(?:reference|start|summary))\b",
                      re.IGNORECASE)
_STEP_HEADING = re.compile(r"^(?:step\s+)?\d+[.):]\s", re.IGNORECASE)


def _code_differs(ws: Workspace, f: Finding, memo: dict) -> bool:
    """Whether the two copies' code spans differ: what normalising for a match dropped (punctuation, brackets)
    is what the line is about (`type: description` vs `[type] description`)."""
    r = f.related[0]
    a, b = _lines(ws, f.path, memo), _lines(ws, r.path, memo)
    i, j = f.span.start_line, r.span.start_line
    if not (i < len(a) and j < len(b)) or "`" not in a[i] or "`" not in b[j]:
        return False
    return [" ".join(c.split()) for c in _CODE_SPAN.findall(a[i])] != \
        [" ".join(c.split()) for c in _CODE_SPAN.findall(b[j])]


def _restating_section(lines: list[str], i: int) -> str | None:
    """'the summary under ...' or 'step 1 ...' when line ``i`` is in a section (its heading, or the lead-in its
    list hangs from) that is a summary, or under a numbered step heading; else None."""
    for k in range(min(i, len(lines)) - 1, -1, -1):
        line = lines[k].strip()
        m = _HEADING.match(lines[k])
        if m:
            title = m.group(1).strip()
            if _SUMMARY.search(title):
                return f"the summary '{title[:60]}'"
            if _STEP_HEADING.match(title):
                return f"the procedure step '{title[:60]}'"
            return None
        if line and not _LIST_START.match(lines[k]) and line.rstrip("*_ ").endswith(":") and _SUMMARY.search(line):
            return f"a summary ('{line[:60]}')"
    return None


def _introduces_a_list(lines: list[str], i: int) -> bool:
    """Whether line ``i`` ends with a colon and the next non-blank line starts a list, a table or a code block."""
    if not 0 <= i < len(lines) or not lines[i].rstrip().rstrip("*_").rstrip().endswith(":"):
        return False
    j = i + 1
    while j < len(lines) and not lines[j].strip():
        j += 1
    return j < len(lines) and _LIST_START.match(lines[j]) is not None


def _heading_above(lines: list[str], i: int) -> str | None:
    """The normalised title of the nearest heading above line ``i``, or None."""
    for k in range(min(i, len(lines)) - 1, -1, -1):
        m = _HEADING.match(lines[k])
        if m:
            return " ".join(re.sub(r"[^\w\s]", " ", m.group(1).lower()).split())
    return None


def _bound_to_context(ws: Workspace, f: Finding, memo: dict) -> tuple[str, str] | None:
    """(message tail, explanation) when both copies mean something only with what surrounds them: each
    introduces its own list, or each points back ("Such tests") at sections of different titles."""
    r = f.related[0]
    a, b = _lines(ws, f.path, memo), _lines(ws, r.path, memo)
    i, j = f.span.start_line, r.span.start_line
    if _introduces_a_list(a, i) and _introduces_a_list(b, j):
        return ("each copy introduces its own list: a lead-in, bound to what follows it",
                "both copies end with a colon and open a list: a lead-in, meaningless without its list")
    if i < len(a) and j < len(b):
        head_a, head_b = _ITEM_MARK.sub("", a[i], 1), _ITEM_MARK.sub("", b[j], 1)
        if _POINTS_BACK.match(head_a) and _POINTS_BACK.match(head_b):
            sa, sb = _heading_above(a, i), _heading_above(b, j)
            if sa is not None and sb is not None and sa != sb:
                return (f"it points back at its section (\"{head_a.split()[0]} ...\"), and the copies sit under "
                        f"different headings: the same words about different things",
                        "both copies start with a word that points back (such, these, it, ...) and sit under "
                        "headings of different titles")
    return None


def _variants(a: Path, b: Path) -> bool:
    """`constitution.md` / `constitution-py.md`, `rules.ts.md` / `rules.py.md`: one stem, a suffix apart."""
    sa, sb = a.stem.lower(), b.stem.lower()
    if sa == sb:
        return False
    return _VARIANT_SUFFIX.sub("", sa) in (sb, _VARIANT_SUFFIX.sub("", sb)) or \
        _VARIANT_SUFFIX.sub("", sb) == sa


_LAYOUT_LINE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\*\*)?`(?!/|~|https?:)([^`\s]+)`(?:\*\*)?\s*(?:[-—–:]|\()")


def _describes_a_relative_path(ws: Workspace, f: Finding, memo: dict) -> bool:
    """`- `agent.py` - Main agent definition` in the root and in `use-cases/x/`: each describes its own file."""
    lines = memo.get(f.path)
    if lines is None:
        lines = memo[f.path] = ws.file(f.path).lines
    line = lines[f.span.start_line] if f.span.start_line < len(lines) else ""
    return _LAYOUT_LINE.match(line) is not None


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
