"""Rules: stale duplicated instructions (CTX201-CTX202).

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
not, please, ...) and numbers are left out.  So a copy that changed "MUST" to "should", "never" to "always" or
"30s" to "60s" keeps similarity 1 and is reported as diverged, while two parallel rules about different
things ("Run `make lint` before pushing" / "Run `make test` before pushing") stay apart.  At the default
threshold of 0.8, one content word swapped for another counts only in instructions of 9 or more content words
(8 shared / 10 in all); one content word added counts from 4 on (4 / 5).

Which copy is reported: the one that loads later in the session (files in one load order consistent with every
startup session's block order; lines in file order), with the earlier copy as related location.

Speed: exact duplicates are grouped by key.  Near-duplicate candidates come from prefix filtering (ppjoin: units
in size order, each indexed under its rarest content words, the minimum a pair at the threshold must share,
plus a positional bound), and only between files that load together in at least one startup session
(`Workspace.loads_in`), so nothing is compared all-against-all; the copies of one unit in several files probe
once, as one.  Both rules share one analysis per workspace, and units are cached per file content (their words
per text, and per whitespace-separated chunk).

Incremental: a long-lived file-system snapshot (the language server's) keeps the analysis, and after edits that
leave the load order alone it is updated rather than rebuilt: only the edited files' units are redone (units
whose text is unchanged keep their identity, also when lines above them moved), their near-duplicate links come
from a word index, and only the units whose copies or near duplicates changed are matched again.  Findings are
kept per match and rebuilt only when the match or a line they quote changes.  Updates give exactly what a full
build gives (tests/test_engine.py checks this on random edits).
"""

from __future__ import annotations

import gc
import math
import os
import re
import weakref
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING

from .. import model as M
from ..findings import order_key
from ..workspace import Workspace, same_items
from ..paths import rel_path
from ..words import plural
from ..findings import Edit, Finding, Fix, Related, Span
from ..markdown import code_spans, prepare, structure
from . import rule
from .dup_parallel import block_of, line_runs, list_templates, masked, one_template

if TYPE_CHECKING:
    from ..history import Change, History

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

_TOKEN_RE = re.compile(r"\w(?:[\w'./@+#:=-]*[\w+#/])?")
_INLINE_COMMENT_RE = re.compile(r"<!--.*?-->")
_UNDERSCORE_EMPH_RE = re.compile(r"(?<!\w)_+|_+(?!\w)")
_IMPORT_RE = re.compile(r"(?:^|\s)@[A-Za-z0-9._~/-]")

_ITEM_RE = re.compile(r"^( *)(?:[-*+]|\d{1,9}[.)])(?: +|$)")
_HEADING_RE = re.compile(r"^ {0,3}#{1,6}(?:\s|$)")
_SETEXT_RE = re.compile(r"^ {0,3}(?:=+|-+) *$")
_HR_RE = re.compile(r"^ {0,3}(?:(?:\* *){3,}|(?:- *){3,}|(?:_ *){3,})$")
_TABLE_SEP_RE = re.compile(r"^ *\|? *:?-+:? *(?:\| *:?-+:? *)*\|? *$")
_QUOTE_RE = re.compile(r"^ {0,3}(?:> ?)+")
_EXAMPLE_MARKS = frozenset("✅✓✔❌✗✘🚫👍👎")

TEXT_SUFFIXES = frozenset({"", ".md", ".markdown", ".mdx", ".txt"})
LOADED_KINDS = frozenset({M.CLAUDE_MD, M.AGENTS_MD, M.RULE, M.IMPORT, M.AUTO_MEMORY})


# ----------------------------------------------------------------------------------------------- data

@dataclass(slots=True)
class _File:
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
    """List or table -> its units, once asked for (`_Analysis._template`)."""


@dataclass(slots=True)
class _Unit:
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
class _Match:
    later: _Unit
    earlier: _Unit
    exact: bool
    similarity: float


@dataclass(slots=True)
class _Source:
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


_CACHE: "weakref.WeakKeyDictionary[Workspace, tuple[tuple, _Analysis]]" = weakref.WeakKeyDictionary()


# ----------------------------------------------------------------------------------------------- normalisation

def normalise(text: str) -> list[str]:
    """The words of a unit's text (markers already removed): see the module docstring."""
    if "<!--" in text:
        text = _INLINE_COMMENT_RE.sub(" ", text)
    text = text.lower()
    if "_" in text:
        text = _UNDERSCORE_EMPH_RE.sub(" ", text)
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

def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _ends_sentence(text: str) -> bool:
    """``re.search(r"[.!?:][*_`)\"']* *$", text)`` (a stripped line), without trying every position."""
    text = text.rstrip(" ").rstrip("*_`)\"'")
    return text[-1:] in (".", "!", "?", ":")


UnitRow = tuple  # (start, end, col, key, words, nested)
_NORM: dict[str, tuple[int, str, frozenset]] = {}
"""Unit text -> (word count, key, content words): instruction files repeat themselves a lot."""
_CHUNKS: dict[str, tuple[list[str], list[str]]] = {}
"""Lower-cased whitespace-separated chunk -> (its words, its content words)."""


def _normalised(text: str) -> tuple[int, str, frozenset]:
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


_LABEL_RE = re.compile(r"(\*\*|__)([^*_]+)\1[ \t]*(:?)")


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
                    blocks.append(("row", i, i, [stripped.replace("|", " ")], _indent(raw)))
                elif blocks and blocks[-1][0] == "row" and blocks[-1][1] == i - 1:
                    blocks.pop()  # the header row: column labels, not an instruction
                continue
        if c in "-*+" or c.isdigit():
            if raw[1:2] == " " and raw[0] == c and c in "-*+" and raw[2:3] != " ":  # "- text": `_ITEM_RE`'s way
                if cur is not None:
                    blocks.append(tuple(cur))
                cur = ["item", i, i, [raw[2:]], 0]
                continue
            m = _ITEM_RE.match(raw)
            if m:
                if cur is not None:
                    blocks.append(tuple(cur))
                cur = ["item", i, i, [raw[m.end():]], len(m.group(1))]
                continue
        if cur is None:
            cur = ["para", i, i, [stripped], _indent(raw)]
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
    for kind, start, end, texts, ind in blocks:
        if kind == "para" and len(texts) > 1 and all(_ends_sentence(t) for t in texts):
            parts = [(start + k, start + k, t) for k, t in enumerate(texts)]
        else:
            parts = ((start, end, " ".join(texts)),)
        for s, e, text in parts:
            if "@" in text and _IMPORT_RE.search(text):
                continue  # an @import line: the import rules own it
            if text[:1] in _EXAMPLE_MARKS or (kind == "row" and "](#" in text):
                # `✅ x` / `❌ y` example lines show a right and a wrong way, not instructions; a table row linking
                # an anchor of its own file (`| [References](#references) | ... |`) is that file's navigation
                continue
            got = norm.get(text)
            if got is None:
                got = norm[text] = _normalised(text)
            if got[0] < min_words:
                continue
            nested = False
            if kind == "item" and e + 1 < n_lines:
                j = e + 1
                nxt = lines[j]
                if not nxt or nxt[0].isspace():  # (a line starting with anything else is not nested)
                    while j < n_lines and not lines[j].strip():
                        j += 1
                    nested = j < n_lines and _indent(lines[j].replace("\t", "    ")) > ind
            line = lines[s]
            out.append((s, e, len(line) - len(line.lstrip()), got[1], got[2], nested))
    return out


def extract_units(text: str, min_words: int = 4) -> list[_Unit]:
    """All units of a whole file (for tests and tools)."""
    rows = file_units(text, 0, text.count("\n"), min_words)
    return [_Unit(i, 0, *row) for i, row in enumerate(rows)]


# ----------------------------------------------------------------------------------------------- analysis

def _analyse(ws: Workspace) -> "_Analysis":
    """The analysis both rules read. One per workspace; a long-lived file-system snapshot (the language
    server's) keeps it between workspaces and updates it after content-only edits."""
    cfg = ws.config
    key = (cfg.duplicate_threshold, cfg.duplicate_min_words)
    got = _CACHE.get(ws)
    if got is not None and got[0] == key:
        return got[1]
    threshold, min_words = cfg.duplicate_threshold, max(1, cfg.duplicate_min_words)
    # Everything the findings' text depends on besides the files: where the workspace and home are, the
    # severities run_checks writes into the (kept) findings, and how tokens are counted.
    memo_key = ("ctxls.rules.duplication", ws.root, ws.settings.home, threshold, min_words,
                tuple(sorted(cfg.severity.items())), ws.counter.method)
    # The analysis (and reading its units, cold) allocates many small objects; cyclic GC passes over the (large,
    # long-lived) session model would cost more than the analysis itself, so they wait until it is done.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        layout, sequences, sources = _inputs(ws, min_words)
        an = ws.fs.memo.get(memo_key)
        try:
            current = an is not None and an.update(layout, sources)
        except Exception:
            ws.fs.memo.pop(memo_key, None)  # half updated: the next check builds afresh
            raise
        if not current:
            an = _Analysis.build(layout, sequences, sources, threshold, min_words)
            ws.fs.memo[memo_key] = an
    finally:
        if was_enabled:
            gc.enable()
    _CACHE[ws] = (key, an)
    return an


def _inputs(ws: Workspace, min_words: int) -> tuple[tuple, list[tuple[str, ...]], list[_Source]]:
    """What the analysis depends on: the files every startup session loads, in order (`layout`, with their
    masks: a change there means a full rebuild), and each file's content (a change there, an update)."""
    masks = ws.loads_in
    sequences, first = _sequences(ws)
    sources: list[_Source] = []
    root = str(ws.root) + os.sep
    for real, b in first.items():
        path, span, tier = b.source, b.lines, b.tier  # read now: a patched block has the new lines
        if not span or path.suffix.lower() not in TEXT_SUFFIXES:
            continue
        mask = masks.get(real, 0)
        if not mask:
            continue
        src = ws.fs.read(path, ws.settings.max_file_bytes)  # as `ws.file(path)` reads it
        if src.text is None:
            continue
        rows = file_units(src.text, span[0] - 1, span[1] - 1, min_words)
        if not rows:
            continue
        private = tier != "Project" or not str(path).startswith(root) or path.name == "CLAUDE.local.md"
        sources.append(_Source(real, path, tier, span, mask, src.text, src.mtime_ns, rows, private,
                               path.name == "AGENTS.md"))
    layout = (tuple(sequences), tuple((s.real, s.path, s.tier, s.mask) for s in sources))
    return layout, sequences, sources


def _sequences(ws: Workspace) -> tuple[list[tuple[str, ...]], dict[str, M.Block]]:
    """The distinct orders in which startup sessions load files (real paths), and each file's first block.
    Kept in the file-system snapshot for as long as every session keeps its list of blocks (patching a
    session in place never changes which files it loads, nor in what order)."""
    lists = [s.blocks for s in ws.sessions()]
    key = ("ctxls.rules.duplication.sequences", ws.root)
    got = ws.fs.memo.get(key)
    if got is not None and same_items(got[0], lists):
        return got[1], got[2]
    realpath = ws.fs.realpath
    first: dict[str, M.Block] = {}
    per_session: dict[tuple[str, ...], None] = {}
    visited: set[int] = set()
    for blocks in lists:
        if id(blocks) in visited:  # a directory that loads what its parent loads shares the parent's blocks
            continue
        visited.add(id(blocks))
        reals: list[str] = []
        for b in blocks:
            if b.source is None or not b.startup or b.kind not in LOADED_KINDS:
                continue
            real = realpath(b.source)
            reals.append(real)
            if real not in first:
                first[real] = b
        per_session[tuple(reals)] = None
    sequences = list(per_session)
    ws.fs.memo[key] = (lists, sequences, first)
    return sequences, first


class _Analysis:
    """Which unit repeats which: units grouped by key (exact duplicates), the graph of near-duplicate
    representatives (one per file and key, at least two content words, co-loading, similarity at or above the
    threshold), each later unit's match, and the findings built from the matches (kept until a match or a file
    it reads changes).

    A unit's match depends only on its group or its graph neighbours, so after an edit `update` redoes the
    edited files' units, re-links their representatives and re-resolves the units whose group or neighbours
    changed; a full `build` and any sequence of updates give the same matches."""

    def __init__(self, layout: tuple, threshold: float, min_words: int) -> None:
        self.layout = layout
        self.threshold = threshold
        self.min_words = min_words
        self.files: list[_File] = []
        self.units_of: list[list[_Unit]] = []
        self.reps_of: list[dict[str, _Unit]] = []
        """Per file: key -> the first unit with that key and at least two content words."""
        self.by_uid: dict[int, _Unit] = {}
        self.coload: list[set[int]] = []
        """Per file: the files that load with it in at least one session (itself included)."""
        self.groups: dict[str, dict[int, list[_Unit]]] = {}
        """Key -> file -> its units with that key, in line order."""
        self.similar: dict[int, dict[int, float]] = {}
        """Near-duplicate graph: representative uid -> neighbour uid -> similarity."""
        self.matches: dict[int, _Match] = {}
        """Later unit's uid -> its match."""
        self.found: dict[int, Finding] = {}
        """Later unit's uid -> the finding of its match, once built."""
        self._listed: dict[bool, list[tuple[tuple, int, Finding]]] = {}
        """Per rule (exact: CTX201), its findings in report order, with their order keys."""
        self._out: dict[bool, list[Finding]] = {}
        self._stale: dict[bool, set[int]] = {True: set(), False: set()}
        """Per rule, the units whose finding changed since its list was made."""
        self._next_uid = 0
        self._order: dict[str, list[int]] = {}
        self._index: dict[str, set[int]] | None = None
        self._tk: dict[int, tuple | None] = {}
        """Unit uid -> `_template` (None: no instance of a template), once asked for (forgotten for the units of a
        file that changes)."""
        self._head: str | None = None
        """The commit git history was read at for the CTX202 findings built (see `findings`)."""

    # ------------------------------------------------------------------------------------------- build
    @classmethod
    def build(cls, layout: tuple, sequences: list[tuple[str, ...]], sources: list[_Source], threshold: float,
              min_words: int) -> "_Analysis":
        an = cls(layout, threshold, min_words)
        fid_of: dict[str, int] = {}
        for src in sources:
            fid = len(an.files)
            an.files.append(_File(fid, src.path, src.real, src.mask, src.text.split("\n"), src.mtime_ns,
                                  src.private, src.agents, text=src.text, span=src.span))
            fid_of[src.real] = fid
            units = an._new_units(fid, src.rows)
            an.units_of.append(units)
            an.reps_of.append(_reps(units))
        # Which files load together (each with itself), and one load order for all of them.
        an.coload = [{f.fid} for f in an.files]
        fseqs: list[list[int]] = []
        for reals in sequences:
            fids = [fid_of[r] for r in reals if r in fid_of]
            if len(fids) < 2:
                continue
            fseqs.append(fids)
            for f in fids:
                an.coload[f].update(fids)
        pos = _load_order(len(an.files), fseqs)
        for f in an.files:
            f.pos = pos[f.fid]
        an._link_all()
        # Each unit's match, as `_resolve` makes it (nothing to forget yet): an exact duplicate, else a near one.
        matches, by_uid = an.matches, an.by_uid
        for uid, v in an._exact_partners().items():
            matches[uid] = _Match(by_uid[uid], v, True, 1.0)
        for uid in an.similar:
            if uid not in matches:
                u = by_uid[uid]
                got = an._near_partner(u)
                if got is not None:
                    matches[uid] = _Match(u, got[0], False, got[1])
        return an

    def _new_units(self, fid: int, rows) -> list[_Unit]:
        first = self._next_uid
        out = [_Unit(first + i, fid, *row) for i, row in enumerate(rows)]
        self._next_uid = first + len(out)
        by_uid, groups = self.by_uid, self.groups
        for u in out:
            by_uid[u.uid] = u
            by_file = groups.get(u.key)
            if by_file is None:
                groups[u.key] = {fid: [u]}
            elif fid in by_file:
                by_file[fid].append(u)
            else:
                by_file[fid] = [u]
        return out

    def _link_all(self) -> None:
        """Near duplicates by prefix filtering (ppjoin: representatives in size order, each probing with the
        prefix of its rarest words a pair at the threshold must share, indexing the prefix a shorter one must
        share, positional filter), restricted to co-loading files and leaving parallel items apart
        (`dup_parallel`): every other pair at or above the threshold.

        Representatives with the same content words (copies of an instruction in several files, and the items
        of a templated list, which differ only in their numbers) probe as one class: once, in the files any of
        them loads with, each other word set met is compared once, and a pair found is linked to the members
        that load with its file (co-loading is symmetric). Members of one class are linked to each other
        directly (similarity 1, when their keys differ), a list's items never: buckets are kept per file and
        per list, and a member skips its own list's bucket whole, so a templated list of k items costs no k²
        candidates."""
        classes: dict[frozenset, dict[int, list[tuple[_Unit, int | None]]]] = {}  # words -> file -> reps
        mixed: set[frozenset] = set()  # the classes whose members have more than one key
        for fid, reps in enumerate(self.reps_of):
            if not reps:
                continue
            f = self.files[fid]
            runs = f.runs
            if runs is None:
                runs = f.runs = line_runs(f.lines)
            for u in reps.values():
                r = runs[u.start]  # (`block_of`, inline: this runs for every representative)
                blk = r if r >= 0 and runs[u.end] == r else None
                got = classes.get(u.words)
                if got is None:
                    classes[u.words] = {fid: [(u, blk)]}
                    continue
                mine = got.get(fid)
                if mine is None:
                    got[fid] = [(u, blk)]
                    if u.words not in mixed and u.key != next(iter(got.values()))[0][0].key:
                        mixed.add(u.words)
                else:
                    mine.append((u, blk))  # (another key of this file)
                    mixed.add(u.words)
        df: dict[str, int] = {}  # word -> how many representatives have it
        for words, members in classes.items():
            c = sum(map(len, members.values()))
            for w in words:
                df[w] = df.get(w, 0) + c
        rank_of = {w: i for i, (w, _) in enumerate(sorted(df.items(), key=lambda kv: (kv[1], kv[0])))}
        firsts = sorted(((min(us[0][0].uid for us in m.values()), words, m) for words, m in classes.items()),
                        key=lambda x: (len(x[1]), x[0]))
        # word -> file -> (representative, position of the word in its order, its size, its list or table or
        # None), in size order
        index: dict[str, dict[int, list[tuple[_Unit, int, int, int | None]]]] = {}
        t = self.threshold
        ratio = t / (1 + t)
        index_fraction = 2 * t / (1 + t)
        ceil = math.ceil
        coload = self.coload
        parallel = self._templated_pair
        similar = self.similar
        # size -> (least size of a match, shared words needed per size up to it, probe and index prefixes)
        needs: dict[int, tuple] = {}
        for _, words, members in firsts:
            toks = sorted(words, key=rank_of.__getitem__)
            n = len(toks)
            got = needs.get(n)
            if got is None:  # |A ∩ B| >= t/(1+t) (|A| + |B|)  <=>  J >= t, for each |B| <= |A|
                got = needs[n] = (t * n - 1e-9, [ceil(ratio * (n + m) - 1e-9) for m in range(n + 1)],
                                  range(min(n, n - ceil(t * n - 1e-9) + 1)),
                                  range(min(n, n - ceil(index_fraction * n - 1e-9) + 1)))
            lo, need_of, probe, indexed = got
            single = None
            if len(members) == 1:
                (f0, single), = members.items()
                near = coload[f0]
            else:
                near = set().union(*[coload[f] for f in members])
            if words in mixed:
                self._link_class(members, parallel)
            owners: dict[int, list[tuple[_Unit, int | None]]] = {}  # file -> the members that load with it
            verdict: dict[frozenset, float] = {}  # other word set -> similarity, 0.0 below the threshold
            for i in probe:
                bucket = index.get(toks[i])
                if bucket is None:
                    continue
                left = n - i
                # (`keys() & near` would copy every key: a word of a template is in every file)
                for g in ([g for g in near if g in bucket] if len(near) < len(bucket) else bucket.keys() & near):
                    mg = members.get(g)  # the members in file g
                    for v, j, m, blk in bucket[g]:
                        if m < lo:
                            continue
                        sim = verdict.get(v.words)
                        if sim is None:
                            # Decided where the word set is first met: the first shared prefix word is the first
                            # shared word overall (the positional filter's premise).
                            need = need_of[m]
                            if left < need or m - j < need:
                                sim = 0.0  # positional filter: too few words left to reach the threshold
                            else:
                                inter = len(words & v.words)
                                sim = inter / (n + m - inter) if inter >= need else 0.0
                            verdict[v.words] = sim
                        if not sim:
                            continue
                        if single is not None:
                            us = single
                        else:
                            us = owners.get(g)
                            if us is None:
                                us = owners[g] = [x for f in (members.keys() & coload[g]) for x in members[f]]
                        if blk is not None and mg is not None and any(b == blk for _, b in mg):
                            us = [x for x in us if x[1] != blk or x[0].fid != g]  # not the items of v's list
                        vid = v.uid
                        nb = similar.get(vid)
                        nv = -1 if blk is None else v.key.count(" ")
                        for u, bu in us:  # (met again under a later prefix word: linked again)
                            # (only items of two lists, with as many words, can be instances of one template)
                            if u.fid == g or bu is None or nv != u.key.count(" ") or not parallel(u, v):
                                if nb is None:
                                    nb = similar[vid] = {}
                                nb[u.uid] = sim
                                mine = similar.get(u.uid)
                                if mine is None:
                                    similar[u.uid] = {vid: sim}
                                else:
                                    mine[vid] = sim
            # Indexed after probing: a class never meets itself (`_link_class` linked its members).
            for j in indexed:
                bucket = index.get(toks[j])
                if bucket is None:
                    bucket = index[toks[j]] = {}
                for fid, us in members.items():
                    entries = bucket.get(fid)
                    if entries is None:
                        bucket[fid] = [(u, j, n, blk) for u, blk in us]
                    else:
                        entries += [(u, j, n, blk) for u, blk in us]

    def _link_class(self, members: dict[int, list[tuple[_Unit, int | None]]], parallel) -> None:
        """Link the representatives of one class (the same content words: similarity 1, and more than one key)
        that are near duplicates: different keys, co-loading files, not parallel items. Pairs of files that
        load together, or, when the class has few keys (copies of an instruction and of its other version),
        pairs of keys: either way no pair of copies of one key is looked at more than once."""
        by_key: dict[str, dict[int, list[tuple[_Unit, int | None]]]] = {}
        for f, us in members.items():
            for x in us:
                got = by_key.get(x[0].key)
                if got is None:
                    by_key[x[0].key] = {f: [x]}
                else:
                    got.setdefault(f, []).append(x)
        coload, link = self.coload, self._link
        if len(by_key) <= 3:
            groups = list(by_key.values())
            pairs = [(a, b) for i, a in enumerate(groups) for b in groups[i + 1:]]
        else:
            pairs = [(members, members)]
        for m1, m2 in pairs:
            for f, us in m1.items():
                co = coload[f]
                for g in ([g for g in m2 if g in co] if len(m2) < len(co) else co & m2.keys()):
                    if m1 is m2 and g <= f:
                        if g == f and len(us) > 1:
                            self._link_within(us)
                        continue  # (each pair of files once)
                    for u, bu in us:
                        for v, bv in m2[g]:
                            if u.key == v.key:
                                continue
                            if f == g:
                                if bu is not None and bu == bv:
                                    continue  # items of one list
                            elif bu is not None and bv is not None and parallel(u, v):
                                continue
                            link(u, v, 1.0)

    def _link_within(self, us: list[tuple[_Unit, int | None]]) -> None:
        """`_link_class` in one file: its members in different lists (or outside any list) with different keys,
        never two items of one list (so not k² per list)."""
        lists: dict[int | None, list[_Unit]] = {}
        for u, bu in us:
            lists.setdefault(bu, []).append(u)
        if len(lists) == 1 and None not in lists:
            return
        link = self._link
        groups = list(lists.items())
        for a, (bu, xs) in enumerate(groups):
            if bu is None:
                for k, u in enumerate(xs):
                    for v in xs[k + 1:]:
                        if u.key != v.key:
                            link(u, v, 1.0)
            for _, ys in groups[a + 1:]:
                for u in xs:
                    for v in ys:
                        if u.key != v.key:
                            link(u, v, 1.0)

    def _block(self, u: _Unit) -> int | None:
        """The list or table of its file ``u`` is in (None: neither)."""
        f = self.files[u.fid]
        runs = f.runs
        if runs is None:
            runs = f.runs = line_runs(f.lines)
        return block_of(runs, u.start, u.end)

    def _template(self, u: _Unit) -> tuple | None:
        """``u`` as an instance of a template in its list (`dup_parallel.list_templates`): its masked words and
        the list's enumerating positions, or None. Worked out for the whole list the first time."""
        got = self._tk.get(u.uid, False)
        if got is not False:
            return got
        f = self.files[u.fid]
        lists = f.lists
        if lists is None:
            lists = f.lists = {}  # list or table -> its units
            for x in self.units_of[u.fid]:
                b = self._block(x)
                if b is not None:
                    lists.setdefault(b, []).append(x)
        us = lists.get(self._block(u), [u])
        for x, pos in zip(us, list_templates([x.key for x in us])):
            self._tk[x.uid] = None if pos is None else (masked(x.key), pos)
        return self._tk.get(u.uid)

    def _templated_pair(self, u: _Unit, v: _Unit) -> bool:
        """Units of two files that are instances of one template in their own lists (`dup_parallel`)."""
        a = self._template(u)
        if a is None:
            return False
        b = self._template(v)
        return b is not None and one_template(a[0], a[1], b[0], b[1])

    def _parallel(self, u: _Unit, v: _Unit) -> bool:
        """Whether ``u`` and ``v`` are parallel items, never near duplicates: of one list, or of two instances
        of one template."""
        if u.fid == v.fid:
            b = self._block(u)
            return b is not None and b == self._block(v)
        return self._templated_pair(u, v)

    def _link(self, u: _Unit, v: _Unit, sim: float) -> None:
        self.similar.setdefault(u.uid, {})[v.uid] = sim
        self.similar.setdefault(v.uid, {})[u.uid] = sim

    def _unlink(self, u: _Unit, touched: set[int]) -> None:
        for vid in self.similar.pop(u.uid, {}):
            nb = self.similar.get(vid)
            if nb is not None:
                nb.pop(u.uid, None)
                if not nb:
                    del self.similar[vid]
            touched.add(vid)

    # ------------------------------------------------------------------------------------------- matches
    def _exact_partner(self, u: _Unit) -> _Unit | None:
        """An earlier co-loading copy of ``u``, preferring one whose deletion is safe, then the one that loads
        first."""
        by_file = self.groups[u.key]
        if len(by_file) == 1 and len(by_file[u.fid]) == 1:
            return None
        order = self._order.get(u.key)
        if order is None:
            order = self._order[u.key] = sorted(by_file, key=lambda f: self.files[f].pos)
        files = self.files
        co = self.coload[u.fid]
        upos = files[u.fid].pos
        first = None
        for f in order:
            if files[f].pos > upos:
                break
            if f not in co:
                continue
            for v in by_file[f]:
                if f == u.fid and v.start >= u.start:
                    break
                if _fixable(files, u, v):
                    return v
                if first is None:
                    first = v
        return first

    def _exact_partners(self) -> dict[int, _Unit]:
        """`_exact_partner` of every unit that has one, group by group: a unit's partner is the first unit of the
        first earlier co-loading file whose copy it may delete, else of its own file (when it is not the first
        copy there and not nested), else of the first earlier co-loading file (the deletion is never safe)."""
        files, coload = self.files, self.coload
        pos = [f.pos for f in files]
        out: dict[int, _Unit] = {}
        for by_file in self.groups.values():
            if len(by_file) == 1:
                us, = by_file.values()
                if len(us) > 1:
                    for u in us[1:]:
                        out[u.uid] = us[0]
                continue
            order = sorted(by_file, key=pos.__getitem__)
            for idx, fu in enumerate(order):
                co, fl = coload[fu], files[fu]
                first = fix = None
                for f in order[:idx]:
                    if f in co:
                        if first is None:
                            first = f
                        if _file_may_rely_on(fl, files[f]):
                            fix = f  # (`_fixable` for a unit without nested items)
                            break
                us = by_file[fu]
                for k, u in enumerate(us):
                    if fix is not None and not u.nested:
                        out[u.uid] = by_file[fix][0]
                    elif k and (not u.nested or first is None):
                        out[u.uid] = us[0]
                    elif first is not None:
                        out[u.uid] = by_file[first][0]
        return out

    def _near_partner(self, u: _Unit) -> tuple[_Unit, float] | None:
        """The most similar earlier neighbour (ties: the one that loads first)."""
        nb = self.similar.get(u.uid)
        if not nb:
            return None
        files, by_uid = self.files, self.by_uid
        upos, ustart = files[u.fid].pos, u.start
        best = None
        bsim = bpos = bstart = 0
        for vid, sim in nb.items():
            v = by_uid[vid]
            p = files[v.fid].pos
            if p > upos or (p == upos and v.start >= ustart):
                continue  # v loads later: the pair is v's match, not u's
            # the least (-sim, p, v.start)
            if best is None or sim > bsim or (sim == bsim and (p < bpos or (p == bpos and v.start < bstart))):
                best, bsim, bpos, bstart = v, sim, p, v.start
        return (best, bsim) if best is not None else None

    def _forget(self, uid: int) -> None:
        """The finding of ``uid`` (if any) no longer holds."""
        self.found.pop(uid, None)
        self._stale[True].add(uid)
        self._stale[False].add(uid)

    def findings(self, ws: Workspace, exact: bool) -> list[Finding]:
        """The findings of one rule (exact: CTX201, else CTX202) in report order. Each is built once and kept;
        after an update only those whose match or files changed are built again and put in place."""
        history = None if exact else self._date_against_head(ws)
        entries = self._listed.get(exact)
        stale = self._stale[exact]
        if entries is None:
            todo = [uid for uid, m in self.matches.items() if m.exact == exact]
            entries = []
        elif stale:
            todo = [uid for uid in stale if (m := self.matches.get(uid)) is not None and m.exact == exact]
            entries = [e for e in entries if e[1] not in stale]
        else:
            return self._out[exact]
        if exact:
            missing = [self.matches[uid].later for uid in todo if uid not in self.found]
            if missing:  # (copies repeat: each text once)
                ws.counter.prefetch(dict.fromkeys(_text(self.files[u.fid], u) for u in missing))
        build = _duplicate_finding if exact else _diverged_finding
        memo: dict = {}  # what findings of one pair of files, or of one unit, share (see the builders)
        if history is not None:
            new = [self.matches[uid] for uid in todo if uid not in self.found]
            if new:
                memo[_HISTORY] = _line_changes(history, self.files, new)
        found, matches, files = self.found, self.matches, self.files
        for uid in todo:
            f = found.get(uid)
            if f is None:
                f = found[uid] = build(ws, files, matches[uid], memo)
            entries.append((order_key(f), uid, f))
        entries.sort(key=itemgetter(0))
        stale.clear()
        self._listed[exact] = entries
        out = self._out[exact] = [e[2] for e in entries]
        return out

    def _date_against_head(self, ws: Workspace) -> History | None:
        """The git history CTX202 dates versions from (None: none). When `HEAD` moved since its findings were
        built, they all go stale: which version is newer may have changed without any file changing."""
        listed = self._out.get(False)
        if (not listed and not self._stale[False]) if listed is not None else \
                all(m.exact for m in self.matches.values()):
            return None  # no near duplicates (none since the last list, when there is one)
        history = ws.git()
        head = history.head if history is not None else None
        if head != self._head:
            self._head = head
            if self._listed.get(False) is not None:
                near = [uid for uid, m in self.matches.items() if not m.exact]
                for uid in near:
                    self.found.pop(uid, None)
                self._stale[False].update(near)
        return history

    def _resolve(self, u: _Unit) -> None:
        """(Re)compute the match of ``u``: an exact duplicate first, else its best near duplicate. A finding
        already built stays when the match is the same."""
        v = self._exact_partner(u)
        m = None
        if v is not None:
            m = _Match(u, v, True, 1.0)
        elif u.uid in self.similar:
            got = self._near_partner(u)
            if got is not None:
                m = _Match(u, got[0], False, got[1])
        old = self.matches.get(u.uid)
        if m is None:
            if old is not None:
                del self.matches[u.uid]
                self._forget(u.uid)
        elif old is None or old.earlier is not m.earlier or old.exact != m.exact or old.similarity != m.similarity:
            self.matches[u.uid] = m
            self._forget(u.uid)

    # ------------------------------------------------------------------------------------------- update
    def update(self, layout: tuple, sources: list[_Source]) -> bool:
        """Bring the analysis up to date with ``sources``; False when only a full build can (the files loaded,
        their order or their sessions changed)."""
        if layout != self.layout:
            return False
        changed = [(f, s) for f, s in zip(self.files, sources)
                   if (f.text is not s.text and f.text != s.text) or f.span != s.span or f.mtime_ns != s.mtime_ns]
        if not changed:
            return True
        if self._index is None:
            self._index = {}
            for reps in self.reps_of:
                for u in reps.values():
                    for w in u.words:
                        self._index.setdefault(w, set()).add(u.uid)
        touched: set[int] = set()
        for f, src in changed:
            self._update_file(f, src, touched)
        for uid in touched:
            u = self.by_uid.get(uid)
            if u is not None:
                self._resolve(u)
        return True

    def _update_file(self, old: _File, src: _Source, touched: set[int]) -> None:
        fid = old.fid
        new = _File(fid, old.path, old.real, old.mask, src.text.split("\n"), src.mtime_ns, old.private,
                    old.agents, old.pos, old.rel, src.text, src.span)
        self.files[fid] = new
        index = self._index
        assert index is not None
        # Units whose text did not change keep their identity, also when lines inserted or deleted above them
        # moved them (in order): their matches stay, as no comparison a match rests on changes (only findings
        # that quote their lines are redone, below). The others are removed and added.
        olds = self.units_of[fid]
        for u in olds:
            self._tk.pop(u.uid, None)  # (their lists may have changed)
        at: dict[tuple, list[int]] = {}
        for i, u in enumerate(olds):
            at.setdefault(_signature(old.lines, u.start, u.end, u.col, u.key, u.nested), []).append(i)
        used: set[int] = set()
        last = -1
        units: list[_Unit] = []
        added: list[_Unit] = []
        moved: list[_Unit] = []
        for row in src.rows:
            start, end, col, key, _, nested = row
            cands = at.get(_signature(new.lines, start, end, col, key, nested))
            while cands and cands[0] <= last:
                cands.pop(0)
            if cands:
                last = cands.pop(0)
                used.add(last)
                u = olds[last]
                if u.start != start:
                    u.start, u.end = start, end
                    moved.append(u)
            else:
                u = _Unit(self._next_uid, fid, *row)
                self._next_uid += 1
                self.by_uid[u.uid] = u
                added.append(u)
            units.append(u)
        removed = [u for i, u in enumerate(olds) if i not in used]
        keys = {u.key for u in removed} | {u.key for u in added}
        touched.update(u.uid for u in added)
        for u in removed:
            del self.by_uid[u.uid]
            self.matches.pop(u.uid, None)
            self._forget(u.uid)
        self.units_of[fid] = units
        # Groups: this file's lists of the keys that gained or lost a unit.
        mine: dict[str, list[_Unit]] = {}
        for u in units:
            if u.key in keys:
                mine.setdefault(u.key, []).append(u)
        for k in keys:
            by_file = self.groups.setdefault(k, {})
            if k in mine:
                if fid not in by_file:
                    self._order.pop(k, None)
                by_file[fid] = mine[k]
            else:
                by_file.pop(fid, None)
                self._order.pop(k, None)
                if not by_file:
                    del self.groups[k]
        # Near-duplicate graph: every representative of the file is linked again (whether two units are parallel
        # items depends on the lists around them, which an edit anywhere in the file may change); those gone or
        # no longer first leave the word index, the new ones join it.
        old_reps, new_reps = self.reps_of[fid], _reps(units)
        self.reps_of[fid] = new_reps
        for k, r in old_reps.items():
            self._unlink(r, touched)
            if new_reps.get(k) is not r:
                for w in r.words:
                    got = index.get(w)
                    if got is not None:
                        got.discard(r.uid)
                        if not got:
                            del index[w]
        for k, r in new_reps.items():
            for v, sim in self._probe(r):
                self._link(r, v, sim)
                touched.add(v.uid)
            if old_reps.get(k) is not r:
                for w in r.words:
                    index.setdefault(w, set()).add(r.uid)
            touched.add(r.uid)
        for k in keys:
            for us in self.groups.get(k, {}).values():
                touched.update(u.uid for u in us)
        # Findings read the lines around this file's units, their line numbers and the file's modification
        # time: redo the findings on its units, and those quoting a unit that moved (or, when the time changed,
        # any near duplicate it has).
        for u in units:
            self._forget(u.uid)
        for u in moved:
            for us in self.groups.get(u.key, {}).values():
                for x in us:
                    m = self.matches.get(x.uid)
                    if m is not None and m.earlier is u:
                        self._forget(x.uid)
        quoted = new_reps.values() if new.mtime_ns != old.mtime_ns else [u for u in moved if u.uid in self.similar]
        for r in quoted:
            for vid in self.similar.get(r.uid, ()):
                m = self.matches.get(vid)
                if m is not None and m.earlier is r:
                    self._forget(vid)

    def _probe(self, u: _Unit):
        """Representatives similar to ``u`` at or above the threshold, from the word index: a pair at the
        threshold shares at least t·|u| words, so one of any |u| - ⌈t·|u|⌉ + 1 of u's words (the rarest are
        probed; one more for rounding)."""
        index = self._index
        assert index is not None
        t = self.threshold
        ratio = t / (1 + t)
        n = len(u.words)
        toks = sorted(u.words, key=lambda w: len(index.get(w, ())))
        prefix = max(1, min(n, n - math.ceil(t * n - 1e-9) + 2))
        co = self.coload[u.fid]
        seen: set[int] = set()
        for w in toks[:prefix]:
            for vid in index.get(w, ()):
                if vid in seen:
                    continue
                seen.add(vid)
                v = self.by_uid[vid]
                if v.fid not in co or v.key == u.key or self._parallel(u, v):
                    continue
                m = len(v.words)
                if min(n, m) < t * max(n, m) - 1e-9:
                    continue
                inter = len(u.words & v.words)
                if inter < math.ceil(ratio * (n + m) - 1e-9):
                    continue
                yield v, inter / (n + m - inter)


def _signature(lines: list[str], start: int, end: int, col: int, key: str, nested: bool) -> tuple:
    """What a unit is, wherever it sits: its text and what was made of it."""
    return (key, col, nested, tuple(lines[start:end + 1]))


def _reps(units: list[_Unit]) -> dict[str, _Unit]:
    """One representative per key (the first), for units with at least two content words."""
    out: dict[str, _Unit] = {}
    for u in units:
        if len(u.words) >= 2:
            out.setdefault(u.key, u)
    return out


def _load_order(n: int, sequences: list[list[int]]) -> list[int]:
    """Position of each file in one order consistent with every session's block order (a topological sort of
    "loads right before" edges; ties and, should sessions ever disagree, cycles are broken by first appearance)."""
    import heapq

    first: dict[int, int] = {}
    succ: list[set[int]] = [set() for _ in range(n)]
    for seq in sequences:
        for f in seq:
            first.setdefault(f, len(first))
        for a, b in zip(seq, seq[1:]):
            succ[a].add(b)
    for f in range(n):
        first.setdefault(f, len(first))
    indeg = [0] * n
    for a in range(n):
        for b in succ[a]:
            indeg[b] += 1
    heap = [(first[f], f) for f in range(n) if indeg[f] == 0]
    heapq.heapify(heap)
    pos = [-1] * n
    k = 0
    while k < n:
        if not heap:  # a cycle: take the earliest-seen file still waiting
            f = min((f for f in range(n) if pos[f] < 0), key=first.__getitem__)
            indeg[f] = 0
            heap.append((first[f], f))
        _, f = heapq.heappop(heap)
        if pos[f] >= 0:
            continue
        pos[f] = k
        k += 1
        for b in succ[f]:
            indeg[b] -= 1
            if indeg[b] == 0 and pos[b] < 0:
                heapq.heappush(heap, (first[b], b))
    return pos


def _fixable(files: list[_File], later: _Unit, earlier: _Unit) -> bool:
    """Deleting ``later`` loses nothing: every session loading it loads ``earlier`` too, a shared file never
    relies on a private one (a teammate does not have your CLAUDE.local.md or ~/.claude), and AGENTS.md never
    relies on a Claude-only file (other agents read AGENTS.md alone)."""
    if later.nested:
        return False
    return later.fid == earlier.fid or _file_may_rely_on(files[later.fid], files[earlier.fid])


def _file_may_rely_on(fl: _File, fe: _File) -> bool:
    """`_fixable`'s condition on the two files: ``fe`` loads wherever ``fl`` does, for the same readers."""
    if fl.mask & ~fe.mask or (fl.agents and not fe.agents):
        return False
    return fl.private or not fe.private


# ----------------------------------------------------------------------------------------------- helpers

def _where(ws: Workspace, files: list[_File], later: _Unit, earlier: _Unit) -> str:
    if later.fid == earlier.fid:
        return f"line {earlier.start + 1}"
    return f"{_rel(ws, files[earlier.fid])}:{earlier.start + 1}"


def _rel(ws: Workspace, f: _File) -> str:
    """Workspace-relative path; ~/... for the user's files."""
    if f.rel is None:
        f.rel = rel_path(f.path, ws.root, ws.settings.home)
    return f.rel


def _span(f: _File, u: _Unit) -> Span:
    return Span(u.start, u.col, u.end, len(f.lines[u.end]))


def _text(f: _File, u: _Unit) -> str:
    return f.lines[u.start] if u.start == u.end else "\n".join(f.lines[u.start:u.end + 1])


def _deletion(f: _File, u: _Unit) -> Span:
    """Whole lines of ``u``; when it stands alone between blank lines, the blank line after it too."""
    end = u.end + 1
    lines = f.lines
    before_blank = u.start == 0 or not lines[u.start - 1].strip()
    if before_blank and end < len(lines) - 1 and not lines[end].strip():
        end += 1
    return Span(u.start, 0, end, 0)


def _short(f: _File, u: _Unit, limit: int = 60) -> str:
    text = " ".join(line.strip() for line in f.lines[u.start:u.end + 1])
    m = _ITEM_RE.match(text)
    if m:
        text = text[m.end():]
    text = text.strip("| ").replace('"', "'")
    text = re.sub(r"\s+", " ", text)
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


# ----------------------------------------------------------------------------------------------- rules

@rule("CTX201", "duplicate-instruction", "duplication", "warning",
      summary="The same instruction loads twice in one session (within a file or across co-loading files).",
      why="Instruction files are concatenated, never merged: a bullet copied from the root CLAUDE.md into "
          "`services/api/CLAUDE.md` (or into an import, an unconditional rule, CLAUDE.local.md, AGENTS.md or "
          "auto memory) is sent twice in every session where both load. That wastes tokens on every call, and "
          "the copies drift apart the day one is edited. Units are list items, paragraphs, table rows and "
          "sentence-per-line paragraph lines of at least `duplicate_min_words` (default 4) words; headings, "
          "code blocks, HTML comments, frontmatter and `@import` lines are skipped. Two units are duplicates "
          "when their words are equal after normalisation: list markers and numbering, emphasis, backticks, "
          "link brackets, punctuation between words, case and whitespace are ignored. Only files that load "
          "together in at least one startup session are compared.",
      example="```markdown\n<!-- CLAUDE.md -->\n- Run `pnpm test` before pushing.\n\n"
              "<!-- services/api/CLAUDE.md -->\n- run `pnpm test` before pushing\n```",
      fix="Keep one copy, in the file every session that needs it loads (usually the parent). The finding sits "
          "on the copy that loads later, with the earlier copy as related location, and says how many tokens "
          "it wastes in how many sessions. The safe quick fix deletes the later copy, offered only when that "
          "loses nothing: every session loading it also loads the earlier copy, the later copy has no nested "
          "items, a checked-in file is never made to rely on a private one (CLAUDE.local.md, ~/.claude, "
          "auto memory), and AGENTS.md never relies on a Claude-only file (other agents read it alone). "
          "Otherwise the message says where the copy should go.")
def duplicate_instruction(ws: Workspace):
    return _analyse(ws).findings(ws, exact=True)


def _duplicate_finding(ws: Workspace, files: list[_File], m: _Match, memo: dict | None = None) -> Finding:
    """The CTX201 finding of ``m``. ``memo`` (one per batch of findings built together) keeps what findings
    share: a text's token count, a pair of files' message parts, an earlier copy's related location."""
    if memo is None:
        memo = {}
    u, v = m.later, m.earlier
    f, g = files[u.fid], files[v.fid]
    text = _text(f, u)
    tokens = memo.get(text)
    if tokens is None:
        tokens = memo[text] = ws.counter.count(text)
    pair = memo.get((u.fid, v.fid))
    if pair is None:
        pair = memo[(u.fid, v.fid)] = _duplicate_pair(ws, files, f, g)
    n, where, each, fixable, tail = pair
    head = f"Duplicate of {where}{v.start + 1}: wastes ~{plural(tokens, 'token')} {each}"
    if f is not g and ws.config.in_template_dir(_rel(ws, f)):
        related = Related(g.path, _span(g, v), "the copy that loads first")
        return Finding("CTX201", "info", f.path, Span(u.start, u.col, u.end, len(f.lines[u.end])),
                       f"{head}; this file is in a template directory ([check] template_dirs): it ships into other "
                       f"projects, so the copy is on purpose", [related], [], {"tokens": tokens, "sessions": n})
    if fixable and not u.nested:  # `_fixable`
        msg = f"{head}; delete this copy"
        fixes = [Fix("Delete this duplicate", (Edit(f.path, _deletion(f, u), ""),))]
    else:
        fixes = []
        msg = f"{head}; delete this copy (its nested items need a new parent first)" if u.nested else head + tail
    related = memo.get(v.uid)
    if related is None:
        related = memo[v.uid] = Related(g.path, _span(g, v), "the copy that loads first")  # (immutable: shared)
    return Finding("CTX201", "warning", f.path, Span(u.start, u.col, u.end, len(f.lines[u.end])), msg, [related],
                   fixes, {"tokens": tokens, "sessions": n})


def _duplicate_pair(ws: Workspace, files: list[_File], f: _File, g: _File) -> tuple:
    """What the CTX201 findings of copies in ``f`` of units in ``g`` share: the number of sessions, the start of
    the place of the earlier copy, the sessions wording, whether deleting a copy without nested items is safe,
    and the end of the message when it is not."""
    if f is g:
        n = ws.sessions_in(f.mask)
        where = "line "
    else:
        n = ws.sessions_in(f.mask & g.mask)
        where = f"{_rel(ws, g)}:"
    each = "in 1 session" if n == 1 else f"in each of {n} sessions"
    fixable = f is g or _file_may_rely_on(f, g)
    if f.agents and not g.agents:
        tail = (f"; other agents read AGENTS.md without {g.path.name}: delete the copy there instead "
                f"(or import @AGENTS.md from it)")
    elif f.mask & ~g.mask:
        extra = ws.sessions_in(f.mask & ~g.mask)
        tail = (f"; this file also loads in {plural(extra, 'session')} without the other copy: keep "
                f"one copy in a file that loads wherever both are needed")
    else:
        tail = "; that copy is in a private file: delete it there, not from this shared file"
    return n, where, each, fixable, tail


@rule("CTX202", "diverged-instruction", "duplication", "warning",
      summary="Two versions of one instruction load in the same session and they differ: one is stale.",
      why="A rule copied into two files gets updated in one place and goes stale in the other; the model then "
          "sees both versions (\"MUST\" here, \"should\" there; 30 s here, 60 s there) and may follow either. "
          "Two units are near-duplicates when the Jaccard index of their content-word sets is at least "
          "`duplicate_threshold` (default 0.8) without being exact duplicates (CTX201). Content words are the "
          "normalised words (see CTX201) minus function words, modal and negation words (must, should, never, "
          "always, not, please...) and numbers, so a changed strength, negation or number keeps two versions "
          "together while a changed tool, path or subject sets them apart: at 0.8, one content word swapped "
          "for another counts only in instructions of 9 or more content words, one added word from 4 on. "
          "Only files that load together in at least one startup session are compared. A near-duplicate is "
          "reported only when the two versions disagree: a changed number (both name one), negation, modal "
          "strength (both have one), or a content word the other copy lacks outside the names of its code spans; "
          "a consistent paraphrase, a table row restating a list item, and the parallel items of one list or table "
          "(`Rule 3 for area 12` / `Rule 4 for area 12`) are not versions of one instruction. `✅`/`❌` example lines "
          "and table rows linking an anchor of their own file are not instructions (CTX201 too). A copy in a "
          "template directory (`[check] template_dirs`: templates/, examples/, fixtures/, testdata/, ...) ships "
          "into other projects on purpose: CTX201 and CTX202 say info there, without a delete fix.",
      example="```markdown\n<!-- CLAUDE.md -->\n- Database migrations MUST be reversible.\n\n"
              "<!-- services/api/CLAUDE.md -->\n- Database migrations should be reversible.\n```",
      fix="Decide which version is right, update it, and delete the other copy (or keep it only where it "
          "applies). The finding sits on the copy that loads later, quotes the other version, points at it, "
          "and says which version is newer: by git history when both files are tracked (`git blame` of the two "
          "versions' own lines, so an unrelated edit elsewhere in a file does not count; uncommitted and unsaved "
          "changes are the newest), else by file modification time. `[check] git_history = false` uses "
          "modification times only. There is no automatic fix; a manual quick fix can replace the older "
          "version with the newer one.")
def diverged_instruction(ws: Workspace):
    a = _analyse(ws)
    out = a.findings(ws, exact=False)
    keep = a.__dict__.setdefault("_disagree", {})  # id(finding) -> (finding, verdict): findings are kept and reused
    entries = a._listed.get(False) or []
    got = []
    for _, uid, f in entries:
        v = keep.get(id(f))
        if v is None or v[0] is not f:
            m = a.matches.get(uid)
            v = keep[id(f)] = (f, m is None or _disagree(a.files, m))
        if v[1]:
            got.append(f)
    if len(keep) > 4 * len(entries) + 1000:
        live = {id(f) for _, _, f in entries}
        for k in [k for k in keep if k not in live]:
            del keep[k]
    return got if entries else out


# Words whose change turns a version into another instruction: negations and modal strength.
_NEGATIONS = frozenset("not no never don't doesn't didn't isn't aren't won't can't cannot shouldn't mustn't "
                       "without avoid".split())
_MODALS = frozenset("must should shall may might can could will would always optional required".split())


def _disagree(files: list[_File], m: _Match) -> bool:
    """Whether two near-duplicate units are two versions that disagree (CTX202 reports only those): a changed
    number (both name one), negation, modal strength (both have one), or content words that the other copy does
    not have outside the names in its code spans. A consistent paraphrase (the same content words in other
    function words, a table row restating a list item, the same package written `@scope/x` in one and `x` in the
    other) and the parallel items of one list or table (`Rule 3 for area 12` / `Rule 4 for area 12`, `Lint` /
    `Lint fix`) are not versions of one instruction."""
    u, v = m.later, m.earlier
    f, g = files[u.fid], files[v.fid]
    wa, wb = u.key.split(), v.key.split()
    nums_a = {w for w in wa if any(c.isdigit() for c in w)}
    nums_b = {w for w in wb if any(c.isdigit() for c in w)}
    if nums_a and nums_b and nums_a != nums_b:
        return True
    if _NEGATIONS.intersection(wa) != _NEGATIONS.intersection(wb):
        return True
    mod_a, mod_b = _MODALS.intersection(wa), _MODALS.intersection(wb)
    if mod_a and mod_b and mod_a != mod_b:
        return True
    extra = u.words ^ v.words
    if not extra:
        return False  # the same content words: a paraphrase
    if len(extra) == 1 and (u.words <= v.words or v.words <= u.words):
        names = set()
        for fl, un in ((f, u), (g, v)):
            for line in fl.lines[un.start:un.end + 1]:
                for sp in (m.group(2) for m in code_spans(line)):
                    names.update(normalise(sp))
        if extra <= names:
            return False  # one copy spells a name of the other's code spans differently
    return True


def _diverged_finding(ws: Workspace, files: list[_File], m: _Match, memo: dict | None = None) -> Finding:
    """The CTX202 finding of ``m`` (``memo``: as for `_duplicate_finding`, the other version's quote and related
    location)."""
    u, v = m.later, m.earlier
    f, g = files[u.fid], files[v.fid]
    n = ws.sessions_in(f.mask if u.fid == v.fid else f.mask & g.mask)
    fixes = []
    age, newer_here = _age(f, u, g, v, memo.get(_HISTORY) if memo is not None else None)
    if newer_here is not None:
        (old_f, old_u), (new_f, new_u) = ((g, v), (f, u)) if newer_here else ((f, u), (g, v))
        fixes.append(Fix(f"Replace the older version in {_rel(ws, old_f)} with the newer one",
                         (Edit(old_f.path, Span(old_u.start, 0, old_u.end, len(old_f.lines[old_u.end])),
                               _rewrite(old_f, old_u, new_f, new_u)),), safe=False))
    other = memo.get(v.uid) if memo is not None else None
    if other is None:
        other = (_short(g, v), Related(g.path, _span(g, v), "the other version"))
        if memo is not None:
            memo[v.uid] = other
    msg = (f"Diverged from \"{other[0]}\" ({_where(ws, files, u, v)}), both load in "
           f"{plural(n, 'session')}; {age}: keep one up-to-date version")
    severity = "warning"
    if f is not g and ws.config.in_template_dir(_rel(ws, f)):
        severity, fixes = "info", []
        msg = (f"Differs from \"{other[0]}\" ({_where(ws, files, u, v)}); this file is in a template directory "
               f"([check] template_dirs) and ships into other projects: check the template is meant to differ")
    return Finding("CTX202", severity, f.path, _span(f, u), msg, related=[other[1]], fixes=fixes,
                   data={"similarity": round(m.similarity, 3), "sessions": n})


_HISTORY = ("git-history",)  # the batch memo's entry for the line changes git reported (see `_line_changes`)


def _line_changes(history: History, files: list[_File], matches: list[_Match]
                  ) -> dict[str, dict[int, Change | None]]:
    """What git says of the lines of both versions of each diverged pair, by the file's real path."""
    requests: dict[Path, tuple[str, list[tuple[int, int]]]] = {}
    for m in matches:
        for u in (m.later, m.earlier):
            f = files[u.fid]
            got = requests.get(Path(f.real))
            if got is None:
                got = requests[Path(f.real)] = (f.text, [])
            got[1].append((u.start, u.end))
    return {str(p): c for p, c in history.changes(requests).items()}


def _age(f: _File, u: _Unit, g: _File, v: _Unit, changes: dict[str, dict[int, Change | None]] | None
         ) -> tuple[str, bool | None]:
    """Which version of a diverged pair is newer: the message part, and True (``u``'s), False (``v``'s) or
    None (neither). Git history of the two versions' own lines when both files are tracked (a fresh clone
    gives every file the same modification time), else the files' modification times."""
    if changes:
        from ..history import latest

        a, b = changes.get(f.real), changes.get(g.real)
        cu = latest(a, u.start, u.end) if a is not None else None
        cv = latest(b, v.start, v.end) if b is not None else None
        if cu is not None and cv is not None:
            if cu.commit is None and cv.commit is None:
                return "both versions have uncommitted changes", None
            if cu.commit is not None and cv.commit is not None and (cu.commit == cv.commit or cu.time == cv.time):
                return (f"both versions were last changed in the same commit ({cu.commit[:7]})"
                        if cu.commit == cv.commit else "both versions were last committed at the same time"), None
            newer_here = cu.commit is None or (cv.commit is not None and cu.time > cv.time)
            return (f"{'this' if newer_here else 'the other'} version is newer by git history (this one: "
                    f"{cu.label}; the other: {cv.label})"), newer_here
    if u.fid == v.fid:
        return "both versions are in this file", None
    if abs(f.mtime_ns - g.mtime_ns) < 1_000_000_000:
        return "which is newer is unknown (same file modification time, no git history to tell)", None
    newer_here = f.mtime_ns > g.mtime_ns
    return ("this version is newer by file modification time" if newer_here
            else "the other version is newer by file modification time"), newer_here


def _rewrite(old_f: _File, old_u: _Unit, new_f: _File, new_u: _Unit) -> str:
    """The newer unit's text, with the older unit's indentation and list marker."""
    old_first, new_first = old_f.lines[old_u.start], new_f.lines[new_u.start]
    mo, mn = _ITEM_RE.match(old_first), _ITEM_RE.match(new_first)
    prefix_old = old_first[:mo.end()] if mo else old_first[:_indent(old_first)]
    prefix_new = new_first[:mn.end()] if mn else new_first[:_indent(new_first)]
    shift = len(prefix_old) - len(prefix_new)
    out = [prefix_old + new_first[len(prefix_new):]]
    for line in new_f.lines[new_u.start + 1:new_u.end + 1]:
        ind = _indent(line)
        out.append(" " * max(0, ind + shift) + line[ind:])
    return "\n".join(out)
