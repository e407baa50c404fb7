"""Whether two versions of one instruction disagree (CTX202 reports only those): a changed number, negation or
modal strength, or a content word the other lacks outside the names of its code spans."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from .. import lazyre
from ..markdown import code_spans
from .dup_units import File, Match, normalise

# Words whose change turns a version into another instruction: negations and modal strength.
_NEGATIONS = frozenset("not no never don't doesn't didn't isn't aren't won't can't cannot shouldn't mustn't "
                       "without avoid instead rather".split())
"""(`instead` as in "x instead of y", which says "x, not y"; `rather` as in "x rather than y")"""
_MODALS = frozenset("must should shall may might can could will would always optional required".split())
_STRENGTH = {"must": "required", "shall": "required", "always": "required", "required": "required",
             "will": "required", "should": "recommended", "would": "recommended", "may": "optional",
             "might": "optional", "can": "optional", "could": "optional", "optional": "optional"}


# Words that only join a sentence: one copy may drop them ("If x returns none, fall back" / "x returns none |
# Fall back"). Not the particles that carry meaning (on, off, in, out, up, down).
_GRAMMAR = frozenset("a an the if when that which this these those for of to and or but then so as is are be it "
                     "its with using via by also".split())


# Verbs that carry no instruction of their own: a copy may add one ("Don't use f-strings" / "No f-strings").
_LIGHT_VERBS = frozenset("use uses using used make makes do does have has".split())


ELABORATION_MAX = 2
"""Content words a copy may add and still only elaborate the other ("stateless agent loop" for "stateless loop");
three or more (a list with "penetration, exploit, engagement" added) are new content: the copies disagree."""


def _elaborates(short_all: set[str], long_all: set[str], short: frozenset, long: frozenset) -> bool:
    """Whether the longer copy only adds a word or two to the shorter: every content word of the shorter is in it,
    and every other word of the shorter too, grammar words aside ("default to off" / "default to on" is no
    elaboration)."""
    return short <= long and len(long - short) <= ELABORATION_MAX and short_all - long_all <= _GRAMMAR


def _strengths(words: list[str]) -> set[str]:
    """The modal strengths a version states (must and always are one: required)."""
    return {_STRENGTH[w] for w in words if w in _STRENGTH}


class Spans:
    """The code spans of two versions of one instruction (each given as its lines), normalised when
    `disagreement` first asks."""

    def __init__(self, a: list[str], b: list[str]) -> None:
        self._lines = (a, b)
        self._spans: tuple[list[frozenset], list[frozenset]] | None = None

    def _of(self) -> tuple[list[frozenset], list[frozenset]]:
        if self._spans is None:
            a, b = ([frozenset(normalise(c.group(2))) for line in ls for c in code_spans(line)] for ls in self._lines)
            self._spans = (a, b)
        return self._spans

    def names(self) -> set[str]:
        """The words of both versions' code spans."""
        a, b = self._of()
        return set().union(*a, *b)

    def grew(self) -> bool:
        """Whether a code span of one version extends one of the other (`iex -S mix phx.server` / `iex -S mix`):
        a command given more arguments, rather than a name written otherwise."""
        a, b = self._of()
        return any(t and t < s for s in a for t in b) or any(t and t < s for s in b for t in a)


def disagree(files: list[File], m: Match) -> str | None:
    """How two near-duplicate units differ as versions (see `disagreement`). The parallel items of one list or
    table (`Rule 3 for area 12` / `Rule 4 for area 12`) are never paired (dup_parallel)."""
    u, v = m.later, m.earlier
    f, g = files[u.fid], files[v.fid]
    lines_u, lines_v = f.lines[u.start:u.end + 1], g.lines[v.start:v.end + 1]
    key_u, words_u, key_v, words_v = u.key, u.words, v.key, v.words
    # "- **`web/`** — Next.js 16 ..." in the root beside web/CLAUDE.md's "Next.js 16 ...": the label names where
    # the other version lives, the item's subject, not a difference between the two
    if (cut := _place_label(lines_u[0], g, words_u - words_v)) is not None:
        key_u, words_u, lines_u = _without(key_u, cut), words_u - cut, [_LABEL.sub("", lines_u[0], 1)] + lines_u[1:]
    elif (cut := _place_label(lines_v[0], f, words_v - words_u)) is not None:
        key_v, words_v, lines_v = _without(key_v, cut), words_v - cut, [_LABEL.sub("", lines_v[0], 1)] + lines_v[1:]
    return disagreement(key_u, words_u, key_v, words_v, Spans(lines_u, lines_v))


# A list item labelled by a path in a code span: "- **`web/`** — ", "- `packages/api`: ".
_LABEL = lazyre.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\*\*|__)?`([^`\n]+)`(?:\*\*|__)?\s*(?:—|–|-|:)\s+")


def _place_label(line: str, other: File, only_here: frozenset) -> frozenset | None:
    """The words of ``line``'s label when it names the directory of the ``other`` version's file and only this
    version has them, else None."""
    m = _LABEL.match(line)
    if m is None:
        return None
    name = m.group(1).strip().strip("/").rpartition("/")[2].lower()
    if not name or name != other.path.parent.name.lower():
        return None
    words = frozenset(normalise(m.group(1)))
    return words if words and words <= only_here else None


def _without(key: str, words: frozenset) -> str:
    """``key`` without the first occurrence of each of ``words``."""
    left = set(words)
    out = []
    for w in key.split():
        if w in left:
            left.discard(w)
            continue
        out.append(w)
    return " ".join(out)


HARD = ("number", "negation", "strength", "value", "command", "grown", "unknown")
"""The disagreements that make two versions contradict each other (CTX202 and CTX806 warn on these): a number,
a negation, a modal strength, a setting's value (on / off), a name in a code span (a command, tool or path), or
one copy that gained three words or more the other lacks (a list that grew in one place).
A prose word that differs is, on real repositories, two wordings of one rule or two rules for two subjects: info."""
_VALUES = frozenset("on off true false yes no enabled disabled enable disable allow deny allowed denied "
                    "required optional sync async before after".split())


_NUMBER = lazyre.compile(r"\d+(?:[.,]\d+)*")
_SIGNS = "×~≈<>=+-$€£#"


def _numbers(words: list[str]) -> set[str]:
    """The numbers of a version: each word that starts with a digit (after a sign: `×2`, `~30`), as its quantity
    (`2台` is 2, `5.0%` is 5, `30s` is 30; `4.1.0` stays a version), and each other word holding a digit as it is
    (`p95`, `v2`, `ec2`)."""
    out = set()
    for w in words:
        if not any(c.isdigit() for c in w):
            continue
        m = _NUMBER.match(w.lstrip(_SIGNS))
        if m is None:
            out.add(w)
            continue
        n = m.group(0)
        out.add(n[:-2] if n.count(".") == 1 and n.endswith(".0") else n)
    return out


def _renamed(wa: list[str], wb: list[str], w: str, names: set[str]) -> bool:
    """Whether one version writes ``w`` where the other writes another name of a code span, word for word in place
    (`use gitnexus_rename which` / `use rename which`), the other name written fewer times in the version that has
    ``w`` (replaced, not moved: `Backlinks` elsewhere in a reordered list), and ``w`` is not that name with a scope
    or path before it (`acme/sdk` for `sdk`: one package; `mcp__github__create_issue` for `create_issue`: one MCP
    tool)."""
    for op, i1, i2, j1, j2 in SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes():
        if op == "replace" and i2 - i1 == 1 and j2 - j1 == 1 and w in (wa[i1], wb[j1]):
            x, mine, theirs = (wb[j1], wa, wb) if wa[i1] == w else (wa[i1], wb, wa)
            # (x written fewer times where w is: replaced, not moved to another place of a reordered list)
            if x in names and mine.count(x) < theirs.count(x) and \
                    not any(w.endswith(sep + x) or x.endswith(sep + w) for sep in ("/", ".", ":", "@", "__")):
                return True
    return False


def disagreement(key_a: str, words_a: frozenset, key_b: str, words_b: frozenset,
                 spans: Spans | None = None) -> str | None:
    """How two versions of one instruction (normalised text ``key``, content ``words``) differ, or None when they
    say the same thing. One of `HARD`: a changed number (both name one), negation (how many: which word says it
    does not matter), modal strength (both have one: must and always are one strength), or content the other
    lacks. "elaboration": one copy adds a word or two (`_elaborates`), or gives a command of a code span more
    (`iex -S mix phx.server` / `iex -S mix`): CTX202 says info, a fuller copy more often than a stale one.
    "content": a prose word differs. None: a consistent paraphrase (the same content words in other function
    words, a table row restating a list item), or one copy's code-span name (``spans``) written otherwise in the
    other (`@scope/x` / `x`). CTX202 and CTX806 (across agents) ask this."""
    wa, wb = key_a.split(), key_b.split()
    nums_a, nums_b = _numbers(wa), _numbers(wb)
    if nums_a and nums_b and nums_a != nums_b and not (nums_a < nums_b or nums_b < nums_a):
        return "number"  # (one copy giving a number more, "Vite 6" for "Vite", elaborates: see below)
    if sum(w in _NEGATIONS for w in wa) != sum(w in _NEGATIONS for w in wb):
        return "negation"  # one copy negates what the other does not ("No f-strings" and "Don't use f-strings" agree)
    mod_a, mod_b = _strengths(wa), _strengths(wb)
    if mod_a and mod_b and mod_a != mod_b:
        return "strength"  # MUST here, should there
    extra = words_a ^ words_b
    if not extra or extra <= _LIGHT_VERBS:
        # the same content words: a paraphrase ("Don't use f-strings" / "No f-strings"), or, with a number only
        # one copy gives ("Vite 6" / "Vite"), an elaboration (info: the other may be out of date)
        return "elaboration" if nums_a != nums_b else None
    names = spans.names if spans is not None else set
    if len(extra) == 1 and (words_a <= words_b or words_b <= words_a) and extra <= names():
        if spans is not None and spans.grew():
            return "elaboration"  # `iex -S mix phx.server` / `iex -S mix`: a command given more (info)
        if _renamed(wa, wb, next(iter(extra)), names()):
            return "command"  # `gitnexus_impact(...)` / `impact(...)`: one name of a code span put for another
        return None  # one copy spells a name of the other's code spans differently (`@acme/sdk` / `sdk`)
    if _elaborates(set(wa), set(wb), words_a, words_b) or _elaborates(set(wb), set(wa), words_b, words_a):
        return "elaboration"  # one copy says a little more, nothing else: not a contradiction (info)
    if extra & _VALUES:
        return "value"  # default to on / default to off
    if (words_a <= words_b or words_b <= words_a) and len(extra) > ELABORATION_MAX:
        return "grown"  # one copy gained three items or more: it was updated, the other was not
    if extra & names():
        return "command"  # `make check` here, `make test` there: a command, tool or path of a code span
    return "content"
