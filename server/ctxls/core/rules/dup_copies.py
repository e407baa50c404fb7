"""How CTX201's findings read when many of them say one thing (issue 15): one file that is a copy or a variant of
another, and the lead-in of a section that a template repeats in each file.

- **Copies.** When one file repeats `COPY_MIN` or more instructions of another, the line findings are info and
  one finding says what is worth acting on: the file is a copy of the other. It is info too when the two files'
  names say they are variants (`constitution.md` and `constitution-py.md`: one kit, one file per language) and a
  warning otherwise.
- **Layout lines.** `- `agent.py` - Main agent definition` in two directories' files describes two files of
  one name (each relative to its own directory): info.
- **Variants.** CTX202 between two such variants is info: their versions are meant to differ.
- **One file, two sections.** The same line under two headings of one file ("- `llm` (optional): ..." under
  `#### Agent Definition` and `#### Crew Agent Definition`; "Thin presentation layer ONLY" under each package)
  states a fact of each section's subject, and the author sees both: info. A repeat within one section, and
  every repeat across files (the copies that drift apart), stay warnings.
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
from dataclasses import dataclass
from pathlib import Path

from .. import lazyre
from ..findings import Finding, Related
from ..markdown import code_spans
from ..mentions import generated_regions, in_region
from ..words import plural
from ..workspace import Workspace
from .sources import claude_base

_KEPT = ("dup_copies.regroup",)
_FACTS = ("dup_copies.facts",)
"""Keys of the kept verdicts and line facts in the snapshot's memo."""

COPY_MIN = 5
"""Instructions of one file repeated in another from which the two are reported as one copy."""

_HEADING = lazyre.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_VARIANT_SUFFIX = lazyre.compile(r"[-_.][A-Za-z0-9]{1,12}$")


def regroup(ws: Workspace, findings: list[Finding]) -> list[Finding]:
    """CTX201's findings with lead-ins and the lines of a copied file made info, plus one finding per copy.

    The language server re-checks after every edit, and the analysis hands back the same finding objects for
    what the edit did not touch: each one's verdict is kept against its two files' line lists (the same
    objects while their text is), so a re-check judges only what changed."""
    out: list[Finding] = []
    facts = _FactsOf(ws)
    kept: dict[int, _Verdict] = ws.fs.memo.get(_KEPT, {})
    now: dict[int, _Verdict] = {}
    for f in findings:
        if f.severity != "warning" or not f.related:
            out.append(f)
            continue
        a, b = facts(f.path), facts(f.related[0].path)
        about = b.about(f.related[0].span.start_line, f.related[0].span.end_line)
        got = kept.get(id(f))
        # (a copy in an edited file: its verdict holds while what the judge reads of that line is the same)
        if got is not None and got.finding is f and got.a is a and (got.b is b or got.about == about):
            v = _Verdict(f, a, b, about, got.judged, got.info)
        else:
            v = _Verdict(f, a, b, about, _judge(f, a, b))
        now[id(f)] = v
        if v.judged is not None:
            out.append(v.judged)
    groups: dict[tuple[str, str], list[int]] = {}  # (paths as strings: hashing and comparing Paths costs)
    for i, f in enumerate(out):
        if f.severity == "warning" and f.related:
            here, there = str(f.path), str(f.related[0].path)
            if here != there:
                groups.setdefault((here, there), []).append(i)
    extra = []
    for idx in groups.values():
        if len(idx) < COPY_MIN:
            continue
        path, other = out[idx[0]].path, out[idx[0]].related[0].path
        lines = [out[i].span.start_line + 1 for i in idx]
        for i in idx:
            out[i] = _as_info(out[i], now)
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
    ws.fs.memo[_KEPT] = now
    return out + extra


@dataclass(slots=True)
class _Verdict:
    """What `regroup` made of one line finding, kept for the next check (see `regroup`)."""

    finding: Finding
    a: "_Facts"
    b: "_Facts"
    about: tuple
    """What the judge read of the related copy's line (`_Facts.about`)."""
    judged: Finding | None
    """The finding as reported (None: dropped)."""
    info: Finding | None = None
    """``judged`` at info, as a line of a copied file (made once)."""


def _as_info(f: Finding, now: dict[int, _Verdict]) -> Finding:
    """``f`` (the judged finding of a verdict in ``now``) at info, as a line of a copied file: the same object
    as the last check's while the verdict holds."""
    v = now.get(id(f))
    if v is None or v.judged is not f:
        return dataclasses.replace(f, severity="info")
    if v.info is None:
        v.info = dataclasses.replace(f, severity="info")
    return v.info


_LIST_START = lazyre.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|\||```|~~~)")
_ITEM_MARK = lazyre.compile(r"^\s*(?:>\s*)?(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*|__)?")
# A line whose subject points back at what its section is about ("Such tests ...", "These files ...").
_POINTS_BACK = lazyre.compile(r"(?:such|these|those|this|they|them|it|the\s+same|both)\b", re.IGNORECASE)
_ITEM = lazyre.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+")
# Sections that repeat by design: a summary of the file, or a numbered step of a procedure read as a whole.
_SUMMARY = lazyre.compile(r"\b(?:summary|recap|tl;?\s?dr|cheat\s*-?sheet|at\s+a\s+glance|quick\s+(?:reference|start|summary))\b",
                      re.IGNORECASE)
_BOLD_LINE = lazyre.compile(r"^(\*\*|__)[^*_\n]+\1\s*:?$")
_STEP_HEADING = lazyre.compile(r"^(?:step\s+)?\d+[.):]\s", re.IGNORECASE)
_NAV_LINK = lazyre.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\*\*)?\[[^\]]*\]\(\s*<?([^)\s>]+)>?\s*\)")
_LAYOUT_LINE = lazyre.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\*\*)?`(?!/|~|https?:)([^`\s]+)`(?:\*\*)?\s*(?:[-—–:]|\()")


def _title(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


# A lead-in that speaks of the file's own place: "Modify this package when:", "**DO NOT** work here for:".
# "**See also:**" over "- Root `AGENTS.md` for general project overview": each nested guide's own way to the others
_NAV_LEAD = lazyre.compile(r"^\W*(?:see\s+also|related(?:\s+(?:docs|documents|files|guides))?|navigation|further\s+"
                       r"reading)\W*$", re.IGNORECASE)
_NAMES_GUIDE = lazyre.compile(r"\b(?:AGENTS|CLAUDE|GEMINI)\.md\b")
_ABOUT_HERE = lazyre.compile(r"\b(?:this\s+(?:package|module|directory|folder|component|crate|service|library|app|"
                         r"subsystem|layer|plugin)|here)\b", re.IGNORECASE)
_TABLE_RULE = lazyre.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")


class _Facts:
    """What CTX201's second look needs of each line of one version of a file, worked out on first use: a file
    changed by an edit is read again, the others keep theirs (and so their findings' verdicts, see `regroup`)."""

    __slots__ = ("lines", "_restates", "_context", "_memo", "_generated")

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self._restates: list[str | None] | None = None
        self._context: list[tuple] | None = None
        self._memo: dict[tuple[str, int], object] = {}
        self._generated: list[tuple[int, int, str]] | None = None

    def _scan(self) -> None:
        """One pass: the section each line restates in, if any, and each line's context (the headings above it and
        the list items it is nested under)."""
        restates, context = [], []
        where = None
        heads: list[tuple[int, str]] = []
        items: list[tuple[int, str]] = []
        label = ""  # a paragraph that labels what follows: `**For Hooks:**`, "For agent files (*.agent.md):"
        for line in self.lines:
            restates.append(where)
            item = _ITEM.match(line)
            if item:
                indent = len(item.group(1).expandtabs(4))
                while items and items[-1][0] >= indent:
                    items.pop()
                context.append((tuple(heads), label, tuple(t for _, t in items)))
                items.append((indent, line.strip()))
            else:
                t = line.strip()
                if t and not line[:1].isspace():
                    items.clear()
                    if (t.rstrip("*_ ").endswith(":") or _BOLD_LINE.match(t)) and not _HEADING.match(line):
                        label = t  # (a line all in bold, `**Button Styles**`, heads what follows as a heading does)
                context.append((tuple(heads), label, tuple(t for _, t in items)))
            m = _HEADING.match(line)
            if m:
                level = len(line.lstrip()) - len(line.lstrip().lstrip("#"))
                while heads and heads[-1][0] >= level:
                    heads.pop()
                heads.append((level, _title(m.group(1))))
                items.clear()
                label = ""
                title = m.group(1).strip()
                where = (f"the summary '{title[:60]}'" if _SUMMARY.search(title) else
                         f"the procedure step '{title[:60]}'" if _STEP_HEADING.match(title) else None)
            elif where is None or not where.startswith("the "):
                t = line.strip()
                if t and not _LIST_START.match(line) and t.rstrip("*_ ").endswith(":") and _SUMMARY.search(t):
                    where = f"a summary ('{t[:60]}')"
        self._restates, self._context = restates, context

    def context(self, i: int) -> tuple:
        """The headings above line ``i`` (outermost first, with their levels), the paragraph that labels its part
        of the section (`**For Hooks:**`) and the first lines of the list items it is nested under."""
        if self._context is None:
            self._scan()
        return self._context[i] if 0 <= i < len(self.lines) else ((), "", ())

    def about(self, i: int, end: int) -> tuple:
        """What `_judge` reads of the unit at lines ``i`` to ``end`` as the copy another finding repeats (compared
        when this file changed and that finding did not)."""
        got = self._memo.get(("about", i, end))
        if got is None:
            got = self._memo["about", i, end] = (self.text(i, end), self.context(i)[1], self.introduces_a_list(i),
                                                 self.points_back(i), self.heading_above(i), self.section_opened(i))
        return got  # type: ignore[return-value]

    def line(self, i: int) -> str:
        return self.lines[i] if 0 <= i < len(self.lines) else ""

    def generated(self, i: int) -> str | None:
        """The marker of the tool-written block line ``i`` is in (`<claude-mem-context>`), if any."""
        if self._generated is None:
            self._generated = generated_regions(self.lines)
        return in_region(self._generated, i)

    def restates(self, i: int) -> str | None:
        """Where line ``i`` sits when that is a summary or a numbered procedure step (its heading, or the
        lead-in its list hangs from), else None."""
        if self._restates is None:
            self._scan()
        return self._restates[i] if 0 <= i < len(self.lines) else None

    def heading_above(self, i: int) -> str | None:
        """The normalised title of the nearest heading above line ``i``, or None."""
        heads = self.context(i)[0]
        return heads[-1][1] if heads else None

    def text(self, i: int, end: int) -> str:
        """Lines ``i`` to ``end`` (a unit's), joined by spaces."""
        return self.line(i) if end <= i else " ".join(self.line(k) for k in range(i, end + 1))

    def introduces_a_list(self, i: int) -> bool:
        """Whether line ``i`` ends with a colon and the next non-blank line starts a list, a table or a code
        block."""
        lines = self.lines
        if not self.line(i).rstrip().rstrip("*_").rstrip().endswith(":"):
            return False
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        return j < len(lines) and _LIST_START.match(lines[j]) is not None

    def points_back(self, i: int) -> str | None:
        """The first word of line ``i`` when it points back at its section ("Such tests ..."), else None."""
        head = _ITEM_MARK.sub("", self.line(i), 1)
        return head.split()[0] if _POINTS_BACK.match(head) and head.split() else None

    def table_header(self, i: int) -> str | None:
        """The header row (normalised) of the table line ``i`` is a row of, or None when it is no table row."""
        if not self.line(i).lstrip().startswith("|"):
            return None
        k = i
        while k > 0 and self.lines[k - 1].lstrip().startswith("|"):
            k -= 1
        if k + 1 < len(self.lines) and _TABLE_RULE.match(self.lines[k + 1]):
            return " ".join(c.strip().lower() for c in self.lines[k].strip().strip("|").split("|"))
        return None

    def section_opened(self, i: int) -> str | None:
        """The title of the heading right above line ``i`` (blank lines aside), normalised, or None."""
        k = i - 1
        while k >= 0 and not self.lines[k].strip():
            k -= 1
        m = _HEADING.match(self.lines[k]) if 0 <= k < len(self.lines) else None
        return (_title(m.group(1)) or None) if m else None


class _FactsOf:
    """`_Facts` per file, kept in the snapshot's memo while the file's line list is the same object."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.kept: dict[str, _Facts] = ws.fs.memo.setdefault(_FACTS, {})
        self.now: dict[str, _Facts] = {}

    def __call__(self, path: Path) -> _Facts:
        key = str(path)
        got = self.now.get(key)
        if got is None:
            lines = self.ws.file(path).lines
            got = self.kept.get(key)
            if got is None or got.lines is not lines:
                got = self.kept[key] = _Facts(lines)
            self.now[key] = got
        return got


def _reads_from(path: Path) -> Path:
    """The directory an instruction file's relative paths start from: the project's for `.claude/CLAUDE.md` and
    `.claude/rules/**` (a rule beside the root CLAUDE.md names the same `CHANGELOG.md`), else its own."""
    cb = claude_base(path)
    if cb is not None and (path.parent == cb[0] or path.parts[len(cb[0].parts)] == "rules"):
        return cb[1]
    return path.parent


_SELF_REFERENCE = lazyre.compile(r"\b(?:this|the\s+present)\s+(?:file|document|guide|CLAUDE\.md|AGENTS\.md|ADR|header)\b"
                             r"|(?:此|本)(?:文件|头部|頭部|文档)", re.I)
"""(`MUST supersede this ADR` closing each ADR; `[PROTOCOL]: 变更时更新此头部`, "update this header", ending each
module's CLAUDE.md: each copy speaks of its own file)"""


def _judge(f: Finding, a: _Facts, b: _Facts) -> Finding | None:
    """One line finding (a warning with its related copy; ``a``, ``b`` their files) as reported: dropped
    (None), made info, or as it is."""
    i, j = f.span.start_line, f.related[0].span.start_line
    # (the whole unit: a paragraph soft-wrapped over two lines has code spans on both)
    ta, tb = a.text(i, f.span.end_line), b.text(j, f.related[0].span.end_line)
    gap = _span_gap(ta, tb) if "`" in ta and "`" in tb else None
    if gap == "format":
        return None  # `type: description` and `[type] description`: two formats, alike only without punctuation
    head = f.message.split(";", 1)[0]
    tool = a.generated(i) or b.generated(j)
    if tool is not None:
        return _info(f, f"{head}; a tool writes this text into the file ({tool}) and rewrites it on its next "
                        f"update: change what the tool writes, not the copy",
                     "one copy is inside a block a tool generates (BEGIN/END comments, or an element with an "
                     "'auto-generated' comment)")
    where = a.restates(i)
    if where:
        return _info(f, f"{head}; this copy sits in {where}, which restates on purpose",
                     f"the copy to delete is in {where}: a summary or a numbered procedure repeats what it needs "
                     "to read as a whole")
    apart = _reads_from(f.related[0].path) != _reads_from(f.path)
    if apart and _LAYOUT_LINE.match(a.line(i)):
        # `- `agent.py` - Main agent definition` in the root and in `use-cases/x/`: each describes its own file
        return _info(f, f"{head}; the line describes a relative path, which names another file in each directory: "
                        f"check both descriptions are meant",
                     "a layout line (`- `x.py` - what it holds`) in files of two directories: two files of one name")
    if apart:
        la, lb = _NAV_LINK.match(a.line(i)), _NAV_LINK.match(b.line(j))
        if la and lb and la.group(1) != lb.group(1):
            # `- [ARCHITECTURE.md](../../ARCHITECTURE.md) — package map` in each package guide: the same target,
            # written from each file's own directory; deleting one breaks that file's navigation
            return _info(f, f"{head}; each file links from its own directory (`{la.group(1)}` / `{lb.group(1)}`): "
                            f"its own navigation, check both are meant",
                         "a list item that is a link, in files of two directories, with targets written differently")
    if apart and _NAMES_GUIDE.search(a.line(i)) and _NAV_LEAD.match(a.context(i)[1]) and \
            _NAV_LEAD.match(b.context(j)[1]):
        return _info(f, f"{head}; each file's \"{a.context(i)[1].strip('*: ')}\" list points at the other guides: "
                        f"its own navigation, check both are meant",
                     "an item naming an instruction file, in a See also (Related, Navigation) list of files in two "
                     "directories")
    if f.related[0].path != f.path and _SELF_REFERENCE.search(a.line(i)) and _SELF_REFERENCE.search(b.line(j)):
        # "The goal of this file is to describe the common mistakes ..." heading every service's CLAUDE.md: in each
        # file it describes that file
        return _info(f, f"{head}; each copy speaks of its own file (\"this file\"): a header the files share, "
                        f"bound to each",
                     "both copies say \"this file\" or \"this document\": each describes the file it is in")
    if a.introduces_a_list(i) and b.introduces_a_list(j):
        return _info(f, f"{head}; each copy introduces its own list: a lead-in, bound to what follows it",
                     "both copies end with a colon and open a list: a lead-in, meaningless without its list")
    word = a.points_back(i)
    if word and b.points_back(j):
        sa, sb = a.heading_above(i), b.heading_above(j)
        if sa is not None and sb is not None and sa != sb:
            return _info(f, f"{head}; it points back at its section (\"{word} ...\"), and the copies sit under "
                            f"different headings: the same words about different things",
                         "both copies start with a word that points back (such, these, it, ...) and sit under "
                         "headings of different titles")
    la, lb = a.context(i)[1], b.context(j)[1]
    if a is not b and _ABOUT_HERE.search(la) and _ABOUT_HERE.search(lb):
        # "**DO NOT** modify this package for:" / "- Event bus infrastructure → Use `pkg/events`" in each package's
        # guide: an item of a list about each file's own place
        return _info(f, f"{head}; each copy is an item of a list about its own file's place (\"{la[:40]}\"): check "
                        f"both lists are meant", "both copies sit in lists whose lead-ins speak of 'this package' or "
                        "'here': the same item in the lists of two places", keep_fixes=True)
    if a is b and a.context(i) != b.context(j):
        return _info(f, f"{head}; both copies are in this file, in different sections: each section may say it "
                        f"for its own subject; delete this copy if it says the same thing twice",
                     "a copy in the same file under other headings or list items: the author sees both, and each "
                     "section (one model's fields, one package's rules) may state it for itself", keep_fixes=True)
    opened = a.section_opened(i)
    if opened is not None and b.section_opened(j) == opened:
        return _info(f, f"{head}; both copies open a section of the same title: the wording a template gives that "
                        f"section, bound to it",
                     "both copies are the first block under a heading of the same title: a template's section lead-in")
    if gap is not None:
        x, y = gap
        return _info(f, f"{head}; the copies write a code span differently (`{x}` / `{y}`): check they name the "
                        f"same thing, then keep one", "a code span differs only in punctuation at its edges "
                        "(`:core:paging` / core:paging, `perf:` / `perf: ...`)", keep_fixes=True)
    return f


_EDGES = lazyre.compile(r"^[^\w]+|[^\w]+$")


def _span_gap(ta: str, tb: str):
    """How the code spans of two copies (their units' text) differ: None when every span of each is in the other's
    text, backticks aside (one copy marks as code words the other writes plainly: `Priority` / Priority);
    "format" when one is not even with the punctuation at its edges stripped (`type: description` /
    `[type] description`: two formats, alike only without punctuation); else the first such pair of spellings,
    (`:core:paging`, core:paging): the same name written with or without a sigil or placeholder."""
    gap = None
    for x, y in ((ta, tb), (tb, ta)):
        plain = " ".join(y.replace("`", " ").split())
        for m in code_spans(x):
            sp = " ".join(m.group(2).split())
            if not sp or _has(plain, sp):
                continue
            core = _EDGES.sub("", sp)
            if not core or not _has(plain, core):
                return "format"
            if gap is None:
                gap = (sp, core)
    return gap


def _has(text: str, part: str) -> bool:
    """Whether ``part`` occurs in ``text`` not inside a longer word."""
    return re.search(r"(?<!\w)" + re.escape(part) + r"(?!\w)", text) is not None


def _info(f: Finding, message: str, explain: str, keep_fixes: bool = False) -> Finding:
    return dataclasses.replace(f, severity="info", fixes=f.fixes if keep_fixes else [], message=message,
                               data={**(f.data or {}), "explain": [explain]})


def _variants(a: Path, b: Path) -> bool:
    """`constitution.md` / `constitution-py.md`, `rules.ts.md` / `rules.py.md`: one stem, a suffix apart."""
    sa, sb = a.stem.lower(), b.stem.lower()
    if sa == sb:
        return False
    return _VARIANT_SUFFIX.sub("", sa) in (sb, _VARIANT_SUFFIX.sub("", sb)) or \
        _VARIANT_SUFFIX.sub("", sb) == sa


_PROHIBITION = lazyre.compile(r"\b(?:don'?\s?ts?|do\s+not|avoid|never|anti-?patterns?|prohibited|forbidden|must\s+not)\b",
                         re.IGNORECASE)


def negated_by_heading(ws: Workspace, f: Finding) -> bool:
    """Whether exactly one of a CTX202 finding's two versions sits under a heading or label that negates what it
    lists (`## Don't`, `**Avoid:**`): its plain wording then says the "not" of the other version."""
    facts = _FactsOf(ws)
    r = f.related[0]

    def under(path: Path, i: int) -> bool:
        heads, label, _ = facts(path).context(i)
        return any(_PROHIBITION.search(t) for _, t in heads[-1:]) or bool(label and _PROHIBITION.search(label))

    return under(f.path, f.span.start_line) != under(r.path, r.span.start_line)


def lead_in_info(ws: Workspace, f: Finding, kind: str = "") -> Finding:
    """A CTX202 finding between two lead-ins of lists ("Phase 3 milestones are:" / "Phase 1 milestones are:"):
    each introduces its own list, so a changed number or word names another list, not a stale copy: info."""
    if f.severity != "warning" or not f.related:
        return f
    facts = _FactsOf(ws)
    r = f.related[0]
    a, b, i, j = facts(f.path), facts(r.path), f.span.start_line, r.span.start_line
    head = f.message.split(';', 1)[0]
    tool = a.generated(i) or b.generated(j)
    if tool is not None:
        # (`<!-- gitnexus:start -->`: each run writes its own index's counts, "16979 symbols" here, "372358" there)
        return _info(f, f"{head}; a tool writes this text into the file ({tool}) and rewrites it on its next "
                        f"update: change what the tool writes, not the copy",
                     "one version is inside a block a tool generates (BEGIN/END comments)", keep_fixes=True)
    if a.introduces_a_list(i) and b.introduces_a_list(j):
        return _info(f, f"{head}; each version introduces its own list: check they are meant to differ",
                     "both versions end with a colon and open a list: lead-ins of two lists", keep_fixes=True)
    if f.path == r.path and a.heading_above(i) != b.heading_above(j) and kind not in ("negation", "strength"):
        # "**Resources:** 5 resource files" under `### frontend-dev-guidelines`, "6 resource files" under
        # `### backend-dev-guidelines`: each section states it of its own subject (not a negation or a modal
        # strength: "Run the formatter" under one heading and "Do not run the formatter" under another contradict)
        return _info(f, f"{head}; both versions are in this file, under different headings: each may say it of its "
                        f"own subject", "two sections of one file (`### frontend-skill` / `### backend-skill`): the "
                        "same sentence about two subjects, which the author sees side by side", keep_fixes=True)
    ha, hb = a.table_header(i), b.table_header(j)
    if ha is not None and hb is not None and ha != hb:
        # `RUST_LOG | all | Tracing log level` in a table of who uses each variable, `RUST_LOG | No | Tracing log
        # level` in one of which are required: two records of two tables
        return _info(f, f"{head}; rows of two tables with different columns: each records its own facts",
                     "both versions are table rows, under different header rows", keep_fixes=True)
    return f


def wording_info(f: Finding, kind: str = "content") -> Finding:
    """A CTX202 finding whose versions differ only in a content word (no number, negation or strength changed):
    on real repositories that was two wordings of one rule, or parallel rules for two subjects (`#### Agent
    Files` / `#### Instruction Files`), far more often than a stale copy: info. So is an elaboration (``kind``),
    one version that adds a word or two to the other: a fuller copy, or the stale one (`iex -S mix phx.server` /
    `iex -S mix`)."""
    if f.severity != "warning":
        return f
    if kind == "elaboration":
        return _info(f, f"{f.message.split(';', 1)[0]}; one version adds a word or two to the other: check the "
                        f"shorter one is not out of date, or keep one",
                     "one version only adds a word or two to the other: a fuller copy more often than a stale one",
                     keep_fixes=True)
    return _info(f, f"{f.message.split(';', 1)[0]}; the versions differ in wording only (no number, negation or "
                    f"strength changed): check they say the same thing, or keep one",
                 "the versions differ in a content word only: a rewording or a rule for another subject, seldom a "
                 "stale copy", keep_fixes=True)


def variant_info(f: Finding) -> Finding:
    """A CTX202 finding between two variants of one file (`development-guidelines.md` and
    `development-guidelines-py.md`): the versions are meant to differ, so it is info."""
    if f.severity != "warning" or not f.related or not _variants(f.path, f.related[0].path):
        return f
    return dataclasses.replace(f, severity="info", fixes=[],
                               message=f"{f.message.split(';', 1)[0]}; the two files' names say they are variants "
                                       f"of one file, meant to differ: check this difference is one of them")
