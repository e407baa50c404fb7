"""Instruction units of the duplication rules (CTX201, CTX202): what a unit is, its words, and the records the
analysis keeps of files, units and matches.

An *instruction unit* is a list item (with its continuation lines), a paragraph, a table row, or one line of a
paragraph whose every line ends a sentence.  Headings, code blocks, HTML comments, frontmatter, table separators
and header rows, `@import` lines and units under `duplicate_min_words` words are skipped, and only the lines a
session actually loads count (MEMORY.md past its cut does not).

Normalisation (for both rules): inline HTML comments, list markers and numbering, blockquote markers, emphasis
(`*`, `_`, `~~`), backticks and link brackets are dropped, text is lower-cased, and the rest is split into
words; punctuation between words (trailing full stops, commas, semicolons, parentheses, quotes) and whitespace
do not count.  Two units with the same word sequence are *exact* duplicates.

Similarity (CTX202) is the Jaccard index |A ∩ B| / |A ∪ B| of the units' sets of *content words*: function
words (articles, prepositions, pronouns, auxiliaries), modal and negation words (must, should, never, always,
not, please, ...) and numbers are left out (see `duplication` for what that keeps together).

Units are cached per file content (their words per text, and per whitespace-separated chunk).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .. import lazyre
from ..markdown import prepare, structure

# ----------------------------------------------------------------------------------------------- vocabulary

STOP_WORDS = frozenset("""
a an the this that these those it its it's they them their there here
and or but nor so yet if then else than as when while where whether because since until unless though
of to in on at by for from with without into onto over under about above below between through during
after before per via within across against along among around upon like
is are was were be been being am do does did done doing has have had having get gets got
i we you he she me us our your my his her one ones
must should shall may might can could will would need needs ought
not no never always don't doesn't didn't isn't aren't wasn't won't can't cannot shouldn't mustn't
please try also only just even still very really ever again too more most less least much many
all any each every some such both either neither other another same own
what which who whom whose how why
e.g i.e etc
""".split())

_TOKEN_RE = lazyre.compile(r"\w(?:[\w'./@+#:=-]*[\w+#/])?")
_INLINE_COMMENT_RE = lazyre.compile(r"<!--.*?-->")
_UNDERSCORE_EMPH_RE = lazyre.compile(r"(?<!\w)_+|_+(?!\w)")
# A placeholder directory of a path, `.thinking/<task-folder>/`: two copies that call the slot `<task>` and
# `<task-folder>` say the same thing (not a component, `<Button>`, which no slash encloses).
_PATH_SLOT_RE = lazyre.compile(r"(?<=/)<[a-z][\w-]*>(?=/)")
_IMPORT_RE = lazyre.compile(r"(?:^|\s)@[A-Za-z0-9._~/-]")

ITEM_RE = lazyre.compile(r"^( *)(?:[-*+]|\d{1,9}[.)])(?: +|$)")
_HEADING_RE = lazyre.compile(r"^ {0,3}#{1,6}(?:\s|$)")
_SETEXT_RE = lazyre.compile(r"^ {0,3}(?:=+|-+) *$")
_HR_RE = lazyre.compile(r"^ {0,3}(?:(?:\* *){3,}|(?:- *){3,}|(?:_ *){3,})$")
_TABLE_SEP_RE = lazyre.compile(r"^ *\|? *:?-+:? *(?:\| *:?-+:? *)*\|? *$")
_QUOTE_RE = lazyre.compile(r"^ {0,3}(?:> ?)+")
_EXAMPLE_MARKS = frozenset("✅✓✔❌✗✘🚫👍👎")
_WRONG_MARKS = frozenset("❌✗✘🚫👎")
_WRONG_MARKED = lazyre.compile(r"^[\s>*+|-]*(?:\d+[.)]\s*)?[❌✗✘🚫👎]", re.MULTILINE)
"""A line that opens with a wrong-way mark: where a file has one, its right-way marks (✅) show examples; where it
has none, a ✅ line is a done item of a status list (a milestone copied from the parent), an instruction like
any other."""

_DATED = lazyre.compile(r"^[\s*_`\[(|]*\d{4}-\d{2}-\d{2}\b")
"""A line that opens with its date (`2026-03-20` — Initial CLAUDE.md created.): an entry of a log, which records
what happened that day in that file's place, not an instruction (every nested CLAUDE.md's "Recent Changes" has
its own "Initial CLAUDE.md created")."""


# ----------------------------------------------------------------------------------------------- records

@dataclass(slots=True)
class File:
    fid: int
    path: Path
    real: str
    mask: int
    lines: list[str]
    mtime_ns: int
    private: bool
    """Not shared with teammates: CLAUDE.local.md and its imports, the user's and managed files, auto memory,
    anything outside the workspace."""
    agents: bool = False
    """An AGENTS.md: other agents read it without the CLAUDE.md files."""
    pos: int = 0
    """Place in the load order."""
    rel: str | None = None
    text: str = ""
    """The content the units were taken from."""
    span: tuple[int, int] = (0, 0)
    """1-based first and last line the sessions load."""
    runs: list[int] | None = None
    """`dup_parallel.line_runs` of ``lines``, once asked for."""
    lists: dict | None = None
    """(list or table, number of words) -> its units, once asked for (`dup_pairs.template`)."""


@dataclass(slots=True)
class Unit:
    uid: int
    fid: int
    start: int
    """0-based first and last line (inclusive)."""
    end: int
    col: int
    key: str
    """The normalised word sequence: equal keys are exact duplicates."""
    words: frozenset
    """Content words (for similarity)."""
    nested: bool = False
    """A list item with nested content below it: deleting it would re-parent that content."""


@dataclass(slots=True)
class Match:
    later: Unit
    earlier: Unit
    exact: bool
    similarity: float


@dataclass(slots=True)
class Source:
    """One file the startup sessions load, as the analysis needs it."""

    real: str
    path: Path
    tier: str | None
    span: tuple[int, int]
    mask: int
    text: str
    mtime_ns: int
    rows: tuple
    private: bool
    agents: bool


# ----------------------------------------------------------------------------------------------- normalisation

def normalise(text: str) -> list[str]:
    """The words of a unit's text (markers already removed): see the module docstring."""
    if "<!--" in text:
        text = _INLINE_COMMENT_RE.sub(" ", text)
    text = text.lower()
    if "_" in text:
        text = _UNDERSCORE_EMPH_RE.sub(" ", text)
    if "/<" in text:
        text = _PATH_SLOT_RE.sub("slot", text)
    return _TOKEN_RE.findall(text)


def content_words(words: list[str]) -> frozenset:
    """The words that carry a rule's subject: no function, modal or negation words, no numbers."""
    return frozenset(w for w in set(words).difference(STOP_WORDS) if not w[0].isdigit())


def similarity(a: frozenset, b: frozenset) -> float:
    """Jaccard index of two content-word sets (1.0 for two empty sets)."""
    if not a and not b:
        return 1.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


# ----------------------------------------------------------------------------------------------- units

def indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def ends_sentence(text: str) -> bool:
    """``re.search(r"[.!?:][*_`)\"']* *$", text)`` (a stripped line), without trying every position."""
    text = text.rstrip(" ").rstrip("*_`)\"'")
    return text[-1:] in (".", "!", "?", ":")


UnitRow = tuple  # (start, end, col, key, words, nested)
_NORM: dict[str, tuple[int, str, frozenset]] = {}
"""Unit text -> (word count, key, content words): instruction files repeat themselves a lot."""
_CHUNKS: dict[str, tuple[list[str], list[str]]] = {}
"""Lower-cased whitespace-separated chunk -> (its words, its content words)."""


def normalised(text: str) -> tuple[int, str, frozenset]:
    """``(len(words), " ".join(words), content_words(words))`` for ``words = normalise(text)``, computed chunk by
    chunk: no word, underscore run or lookaround of the patterns spans whitespace (none of their characters is
    whitespace), so the words of a text are its whitespace-separated chunks' words in turn, and chunks repeat far
    more than texts do."""
    if "<!--" in text:
        text = _INLINE_COMMENT_RE.sub(" ", text)
    chunks = _CHUNKS
    if len(chunks) > 100_000:
        chunks.clear()
    words: list[str] = []
    content: list[str] = []
    for chunk in text.lower().split():
        got = chunks.get(chunk)
        if got is None:
            c = _UNDERSCORE_EMPH_RE.sub(" ", chunk) if "_" in chunk else chunk
            if "/<" in c:
                c = _PATH_SLOT_RE.sub("slot", c)
            ws = _TOKEN_RE.findall(c)
            got = chunks[chunk] = (ws, [w for w in ws if w not in STOP_WORDS and not w[0].isdigit()])
        words += got[0]
        content += got[1]
    return len(words), " ".join(words), frozenset(content)


@lru_cache(maxsize=4096)
def file_units(text: str, first: int, last: int, min_words: int) -> tuple[UnitRow, ...]:
    """Instruction units of lines ``first..last`` (0-based, inclusive) of a file, frontmatter, code blocks and
    HTML comments excluded. Cached by content: an editor re-check only redoes the files that changed."""
    lines = text.split("\n")
    offset = prepare(text).frontmatter.end_line
    st = structure("\n".join(lines[offset:]) if offset else text)
    skip = set()
    if st.code_lines or st.comment_lines:
        skip = {offset + i for i in st.code_lines} | {offset + i for i in st.comment_lines}
    return tuple(_units(lines, max(first, offset, 0), min(last, len(lines) - 1), skip, min_words))


_LABEL_RE = lazyre.compile(r"(\*\*|__)([^*_]+)\1[ \t]*(:?)")


def _is_label(stripped: str) -> bool:
    """A line that is only a bold label ending in a colon (`**Before opening a PR:**`): a heading in all but
    syntax, not an instruction."""
    m = _LABEL_RE.fullmatch(stripped)
    return m is not None and (m.group(3) == ":" or m.group(2).rstrip().endswith(":"))


def _units(lines: list[str], first: int, last: int, skip: set[int], min_words: int) -> list[UnitRow]:
    blocks: list[tuple[str, int, int, list[str], int]] = []  # kind, start, end, texts, indent
    cur: list | None = None  # the open item or paragraph: [kind, start, end, texts, indent]
    for i in range(first, last + 1):
        raw = lines[i]
        if "\t" in raw:
            raw = raw.replace("\t", "    ")
        stripped = raw.strip()
        if not stripped or i in skip:
            if cur is not None:
                blocks.append(tuple(cur))
                cur = None
            continue
        c = stripped[0]
        if c == ">":
            raw = _QUOTE_RE.sub("", raw)
            stripped = raw.strip()
            if not stripped:
                if cur is not None:
                    blocks.append(tuple(cur))
                    cur = None
                continue
            c = stripped[0]
        if c in "#-*_=|":
            if (c == "#" and _HEADING_RE.match(raw)) or (c in "*_" and stripped[-1] in ":*_" and _is_label(stripped)):
                if cur is not None:
                    blocks.append(tuple(cur))
                    cur = None
                continue
            # A setext underline or a thematic break ends with the character it starts with: list items and
            # most other lines skip both patterns.
            rule_like = stripped[-1] == c
            if rule_like and c in "-=" and _SETEXT_RE.match(raw):
                if cur is not None and cur[0] == "para":
                    cur = None  # the paragraph was a setext heading
                    continue
                if c == "=":
                    continue
            if rule_like and c in "-*_" and _HR_RE.match(raw):
                if cur is not None:
                    blocks.append(tuple(cur))
                    cur = None
                continue
            if c == "|":
                if cur is not None:
                    blocks.append(tuple(cur))
                    cur = None
                if not _TABLE_SEP_RE.match(stripped):
                    blocks.append(("row", i, i, [stripped.replace("|", " ")], indent(raw)))
                elif blocks and blocks[-1][0] == "row" and blocks[-1][1] == i - 1:
                    blocks.pop()  # the header row: column labels, not an instruction
                continue
        if c in "-*+" or c.isdigit():
            if raw[1:2] == " " and raw[0] == c and c in "-*+" and raw[2:3] != " ":  # "- text": `ITEM_RE`'s way
                if cur is not None:
                    blocks.append(tuple(cur))
                cur = ["item", i, i, [raw[2:]], 0]
                continue
            m = ITEM_RE.match(raw)
            if m:
                if cur is not None:
                    blocks.append(tuple(cur))
                cur = ["item", i, i, [raw[m.end():]], len(m.group(1))]
                continue
        if cur is None:
            cur = ["para", i, i, [stripped], indent(raw)]
        else:
            cur[2] = i
            cur[3].append(stripped)
    if cur is not None:
        blocks.append(tuple(cur))

    out: list[UnitRow] = []
    norm = _NORM
    if len(norm) > 100_000:
        norm.clear()
    n_lines = len(lines)
    contrast: dict[int, bool] = {}  # section start -> whether it marks a wrong way (asked at its first ✅ line;
    # key -1: the start of each line's section)
    for kind, start, end, texts, ind in blocks:
        if kind == "para" and len(texts) > 1 and all(ends_sentence(t) for t in texts):
            parts = [(start + k, start + k, t) for k, t in enumerate(texts)]
        else:
            parts = ((start, end, " ".join(texts)),)
        for s, e, text in parts:
            if "@" in text and _IMPORT_RE.search(text):
                continue  # an @import line: the import rules own it
            example = False
            if text[:1] in _EXAMPLE_MARKS:
                example = text[:1] in _WRONG_MARKS or _contrasted(lines, s, skip, contrast)
            if example or \
                    (kind == "row" and "](#" in text) or _DATED.match(text):
                # `✅ x` / `❌ y` example lines show a right and a wrong way, not instructions; a table row linking
                # an anchor of its own file (`| [References](#references) | ... |`) is that file's navigation; a
                # dated log entry records an event (`_DATED`)
                continue
            got = norm.get(text)
            if got is None:
                got = norm[text] = normalised(text)
            if got[0] < min_words:
                continue
            nested = False
            if kind == "item" and e + 1 < n_lines:
                j = e + 1
                nxt = lines[j]
                if not nxt or nxt[0].isspace():  # (a line starting with anything else is not nested)
                    while j < n_lines and not lines[j].strip():
                        j += 1
                    nested = j < n_lines and indent(lines[j].replace("\t", "    ")) > ind
            line = lines[s]
            out.append((s, e, len(line) - len(line.lstrip()), got[1], got[2], nested))
    return out


def _contrasted(lines: list[str], i: int, skip: set[int], memo: dict[int, bool]) -> bool:
    """Whether the section of line ``i`` (from the heading above it to the next heading; a `# comment` in a code
    block is none) has a line that opens with a wrong-way mark: there its ✅ lines show the right way; elsewhere a
    ✅ line is a done item of a status list."""
    starts = memo.get(-1)
    if starts is None:  # (once per file: every line's section start, and where each section ends)
        starts, lo = [], 0
        for k, line in enumerate(lines):
            if k not in skip and _HEADING_RE.match(line):
                lo = k
            starts.append(lo)
        memo[-1] = starts  # type: ignore[assignment]
    lo = starts[i]
    got = memo.get(lo)
    if got is None:
        hi = i + 1
        while hi < len(lines) and starts[hi] == lo:
            hi += 1
        first = lo + 1 if lo not in skip and _HEADING_RE.match(lines[lo]) else lo  # (the heading is no mark)
        got = memo[lo] = _WRONG_MARKED.search("\n".join(lines[first:hi])) is not None
    return got


def extract_units(text: str, min_words: int = 4) -> list[Unit]:
    """All units of a whole file (for tests and tools)."""
    rows = file_units(text, 0, text.count("\n"), min_words)
    return [Unit(i, 0, *row) for i, row in enumerate(rows)]
