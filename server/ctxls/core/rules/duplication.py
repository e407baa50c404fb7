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
(`Workspace.loads_in`), so nothing is compared all-against-all.  Both rules share one analysis per workspace,
and units are cached per file content.
"""

from __future__ import annotations

import gc
import math
import os
import re
import weakref
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain
from pathlib import Path

from .. import model as M
from ..check import Workspace
from ..findings import Edit, Finding, Fix, Related, Span
from ..markdown import prepare, structure
from . import rule

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
_SENTENCE_END_RE = re.compile(r"[.!?:][*_`)\"']* *$")

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


@dataclass
class _Match:
    later: _Unit
    earlier: _Unit
    exact: bool
    similarity: float


@dataclass
class _Analysis:
    files: list[_File]
    units: list[_Unit]
    matches: list[_Match] = field(default_factory=list)


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


UnitRow = tuple  # (start, end, col, key, words, nested)
_NORM: dict[str, tuple[int, str, frozenset]] = {}
"""Unit text -> (word count, key, content words): instruction files repeat themselves a lot."""


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
            if c == "#" and _HEADING_RE.match(raw):
                if cur is not None:
                    blocks.append(tuple(cur))
                    cur = None
                continue
            if c in "-=" and _SETEXT_RE.match(raw):
                if cur is not None and cur[0] == "para":
                    cur = None  # the paragraph was a setext heading
                    continue
                if c == "=":
                    continue
            if c in "-*_" and _HR_RE.match(raw):
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
    for kind, start, end, texts, ind in blocks:
        if kind == "para" and len(texts) > 1 and all(_SENTENCE_END_RE.search(t) for t in texts):
            parts = [(start + k, start + k, t) for k, t in enumerate(texts)]
        else:
            parts = [(start, end, " ".join(texts))]
        for s, e, text in parts:
            if "@" in text and _IMPORT_RE.search(text):
                continue  # an @import line: the import rules own it
            got = _NORM.get(text)
            if got is None:
                if len(_NORM) > 100_000:
                    _NORM.clear()
                words = normalise(text)
                got = _NORM[text] = (len(words), " ".join(words), content_words(words))
            if got[0] < min_words:
                continue
            nested = False
            if kind == "item":
                j = e + 1
                while j < len(lines) and not lines[j].strip():
                    j += 1
                nested = j < len(lines) and _indent(lines[j].replace("\t", "    ")) > ind
            out.append((s, e, len(lines[s]) - len(lines[s].lstrip()), got[1], got[2], nested))
    return out


def extract_units(text: str, min_words: int = 4) -> list[_Unit]:
    """All units of a whole file (for tests and tools)."""
    rows = file_units(text, 0, text.count("\n"), min_words)
    return [_Unit(i, 0, *row) for i, row in enumerate(rows)]


# ----------------------------------------------------------------------------------------------- analysis

def _analyse(ws: Workspace) -> _Analysis:
    cfg = ws.config
    key = (cfg.duplicate_threshold, cfg.duplicate_min_words)
    got = _CACHE.get(ws)
    if got is not None and got[0] == key:
        return got[1]
    # The analysis allocates many small, short-lived objects; cyclic GC passes over the (large, long-lived)
    # session model would cost more than the analysis itself, so they wait until it is done.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        result = _compute(ws, cfg.duplicate_threshold, max(1, cfg.duplicate_min_words))
    finally:
        if was_enabled:
            gc.enable()
    _CACHE[ws] = (key, result)
    return result


def _compute(ws: Workspace, threshold: float, min_words: int) -> _Analysis:
    masks = ws.loads_in
    real_of: dict[Path, str] = {}
    seen: dict[str, tuple[Path, tuple[int, int] | None, str | None]] = {}
    per_session: dict[tuple[str, ...], None] = {}
    for s in ws.sessions():
        reals: list[str] = []
        for b in s.blocks:
            src = b.source
            if src is None or not b.startup or b.kind not in LOADED_KINDS:
                continue
            real = real_of.get(src)
            if real is None:
                real = real_of[src] = os.path.realpath(src)
            reals.append(real)
            if real not in seen:
                seen[real] = (src, b.lines, b.tier)
        per_session[tuple(reals)] = None
    files: list[_File] = []
    units: list[_Unit] = []
    fid_of: dict[str, int] = {}
    root = str(ws.root) + os.sep
    for real, (path, span, tier) in seen.items():
        if not span or path.suffix.lower() not in TEXT_SUFFIXES:
            continue
        mask = masks.get(real, 0)
        if not mask:
            continue
        fi = ws.file(path)
        if fi.text is None:
            continue
        rows = file_units(fi.text, span[0] - 1, span[1] - 1, min_words)
        if not rows:
            continue
        fid = len(files)
        lines = fi.lines
        private = tier != "Project" or not str(path).startswith(root) or path.name == "CLAUDE.local.md"
        files.append(_File(fid, path, real, mask, lines, fi.mtime_ns, private, path.name == "AGENTS.md"))
        fid_of[real] = fid
        for row in rows:
            units.append(_Unit(len(units), fid, *row))
    an = _Analysis(files, units)
    if len(units) < 2:
        return an

    # Which files load together (each with itself), and one load order for all of them.
    coload: list[set[int]] = [{f.fid} for f in files]
    sequences: list[list[int]] = []
    for reals in per_session:
        fids = [fid_of[r] for r in reals if r in fid_of]
        if len(fids) < 2:
            continue
        sequences.append(fids)
        for f in fids:
            coload[f].update(fids)
    pos = _load_order(len(files), sequences)
    for f in files:
        f.pos = pos[f.fid]

    def before(a: _Unit, b: _Unit) -> bool:
        return (files[a.fid].pos, a.start) < (files[b.fid].pos, b.start)

    # Exact duplicates: pair every unit with an earlier co-loading copy of the same key, preferring one whose
    # deletion is safe, then the one that loads first. Only co-loading files are visited.
    groups: dict[str, dict[int, list[_Unit]]] = {}
    for u in units:
        groups.setdefault(u.key, {}).setdefault(u.fid, []).append(u)
    exact_later: set[int] = set()
    for by_file in groups.values():
        if len(by_file) == 1 and len(next(iter(by_file.values()))) == 1:
            continue
        for fid, mine in by_file.items():
            co = coload[fid]
            near = [f for f in co if f in by_file] if len(co) < len(by_file) else [f for f in by_file if f in co]
            near.sort(key=lambda f: files[f].pos)
            upos = files[fid].pos
            for u in mine:
                first = chosen = None
                for f in near:
                    if files[f].pos > upos:
                        break
                    for v in by_file[f]:
                        if f == fid and v.start >= u.start:
                            break
                        if _fixable(files, u, v):
                            chosen = v
                            break
                        if first is None:
                            first = v
                    if chosen is not None:
                        break
                chosen = chosen or first
                if chosen is not None:
                    an.matches.append(_Match(u, chosen, True, 1.0))
                    exact_later.add(u.uid)

    # Near duplicates: prefix filtering (ppjoin: units in size order, probe with the prefix a pair at the
    # threshold must share, index a shorter one, positional filter) over content words, restricted to
    # co-loading files. One representative per file and key: the other copies are its exact duplicates.
    reps: dict[tuple[int, str], _Unit] = {}
    for u in units:
        if len(u.words) >= 2:
            reps.setdefault((u.fid, u.key), u)
    cand = sorted(reps.values(), key=lambda u: (len(u.words), u.uid))
    df = Counter(chain.from_iterable(u.words for u in cand))
    rank_of = {w: i for i, (w, _) in enumerate(sorted(df.items(), key=lambda kv: (kv[1], kv[0])))}
    index: dict[str, dict[int, list[tuple[_Unit, int, int]]]] = {}
    t = threshold
    ratio = t / (1 + t)
    index_fraction = 2 * t / (1 + t)
    best_similar: dict[int, tuple[tuple, _Unit, float]] = {}
    for u in cand:
        words = u.words
        toks = sorted(words, key=rank_of.__getitem__)
        n = len(toks)
        co = coload[u.fid]
        lo = t * n - 1e-9
        checked: set[int] = set()
        for i in range(n - math.ceil(t * n - 1e-9) + 1):
            bucket = index.get(toks[i])
            if bucket is None:
                continue
            fids = [f for f in co if f in bucket] if len(co) < len(bucket) else [f for f in bucket if f in co]
            for fid in fids:
                for v, j, m in bucket[fid]:
                    if m < lo or v.uid in checked:
                        continue
                    checked.add(v.uid)  # the first shared prefix word is the first shared word overall
                    need = math.ceil(ratio * (n + m) - 1e-9)  # |A ∩ B| >= t/(1+t) (|A| + |B|)  <=>  J >= t
                    if 1 + min(n - i - 1, m - j - 1) < need:
                        continue  # positional filter: too few words left to reach the threshold
                    inter = len(words & v.words)
                    if inter < need or v.key == u.key:
                        continue
                    sim = inter / (n + m - inter)
                    later, earlier = (u, v) if before(v, u) else (v, u)
                    r = (-sim, files[earlier.fid].pos, earlier.start)
                    prev = best_similar.get(later.uid)
                    if prev is None or r < prev[0]:
                        best_similar[later.uid] = (r, earlier, sim)
        for j in range(n - math.ceil(index_fraction * n - 1e-9) + 1):
            index.setdefault(toks[j], {}).setdefault(u.fid, []).append((u, j, n))
    for uid, (_, earlier, sim) in sorted(best_similar.items()):
        if uid not in exact_later:
            an.matches.append(_Match(units[uid], earlier, False, sim))
    return an


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
    if later.fid == earlier.fid:
        return True
    fl, fe = files[later.fid], files[earlier.fid]
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
        rel = ws.rel(f.path)
        if os.path.isabs(rel):
            home = str(ws.settings.home)
            if rel.startswith(home.rstrip(os.sep) + os.sep):
                rel = "~/" + rel[len(home.rstrip(os.sep)) + 1:]
        f.rel = rel
    return f.rel


def _span(f: _File, u: _Unit) -> Span:
    return Span(u.start, u.col, u.end, len(f.lines[u.end]))


def _text(f: _File, u: _Unit) -> str:
    return "\n".join(f.lines[u.start:u.end + 1])


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


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _sessions(files: list[_File], a: _Unit, b: _Unit) -> int:
    return bin(files[a.fid].mask & files[b.fid].mask).count("1")


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
    an = _analyse(ws)
    files = an.files
    todo = [m for m in an.matches if m.exact]
    if not todo:
        return
    ws.counter.prefetch(_text(files[m.later.fid], m.later) for m in todo)
    for m in todo:
        u, v = m.later, m.earlier
        f, g = files[u.fid], files[v.fid]
        tokens = ws.counter.count(_text(f, u))
        n = bin(f.mask).count("1") if u.fid == v.fid else _sessions(files, u, v)
        where = _where(ws, files, u, v)
        each = "in 1 session" if n == 1 else f"in each of {n} sessions"
        head = f"Duplicate of {where}: wastes ~{tokens} token{'s' if tokens != 1 else ''} {each}"
        fixes = []
        if _fixable(files, u, v):
            msg = f"{head}; delete this copy"
            fixes.append(Fix("Delete this duplicate", (Edit(f.path, _deletion(f, u), ""),)))
        elif u.nested:
            msg = f"{head}; delete this copy (its nested items need a new parent first)"
        elif f.agents and not g.agents:
            msg = (f"{head}; other agents read AGENTS.md without {g.path.name}: delete the copy there instead "
                   f"(or import @AGENTS.md from it)")
        elif f.mask & ~g.mask:
            extra = bin(f.mask & ~g.mask).count("1")
            msg = (f"{head}; this file also loads in {_plural(extra, 'session')} without the other copy: keep "
                   f"one copy in a file that loads wherever both are needed")
        else:
            msg = f"{head}; that copy is in a private file: delete it there, not from this shared file"
        yield Finding("CTX201", "warning", f.path, _span(f, u), msg,
                      related=[Related(g.path, _span(g, v), "the copy that loads first")], fixes=fixes,
                      data={"tokens": tokens, "sessions": n})


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
          "Only files that load together in at least one startup session are compared.",
      example="```markdown\n<!-- CLAUDE.md -->\n- Database migrations MUST be reversible.\n\n"
              "<!-- services/api/CLAUDE.md -->\n- Database migrations should be reversible.\n```",
      fix="Decide which version is right, update it, and delete the other copy (or keep it only where it "
          "applies). The finding sits on the copy that loads later, quotes the other version, points at it, "
          "and says which file is newer by file modification time. There is no automatic fix; a manual quick "
          "fix can replace the older version with the newer one.")
def diverged_instruction(ws: Workspace):
    an = _analyse(ws)
    files = an.files
    for m in an.matches:
        if m.exact:
            continue
        u, v = m.later, m.earlier
        f, g = files[u.fid], files[v.fid]
        n = bin(f.mask).count("1") if u.fid == v.fid else _sessions(files, u, v)
        fixes = []
        if u.fid == v.fid:
            age = "both versions are in this file"
        elif abs(f.mtime_ns - g.mtime_ns) < 1_000_000_000:
            age = "both files have the same modification time"
        else:
            newer_here = f.mtime_ns > g.mtime_ns
            age = ("this version is newer by file modification time" if newer_here
                   else "the other version is newer by file modification time")
            (old_f, old_u), (new_f, new_u) = ((g, v), (f, u)) if newer_here else ((f, u), (g, v))
            fixes.append(Fix(f"Replace the older version in {_rel(ws, old_f)} with the newer one",
                             (Edit(old_f.path, Span(old_u.start, 0, old_u.end, len(old_f.lines[old_u.end])),
                                   _rewrite(old_f, old_u, new_f, new_u)),), safe=False))
        msg = (f"Diverged from \"{_short(g, v)}\" ({_where(ws, files, u, v)}), both load in "
               f"{_plural(n, 'session')}; {age}: keep one up-to-date version")
        yield Finding("CTX202", "warning", f.path, _span(f, u), msg,
                      related=[Related(g.path, _span(g, v), "the other version")], fixes=fixes,
                      data={"similarity": round(m.similarity, 3), "sessions": n})


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
