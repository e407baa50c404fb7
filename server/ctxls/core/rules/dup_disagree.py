"""Whether two versions of one instruction disagree (CTX202 reports only those): a changed number, negation or
modal strength, or a content word the other lacks outside the names of its code spans."""

from __future__ import annotations

from typing import Callable

from ..markdown import code_spans
from .dup_units import File, Match, normalise

# Words whose change turns a version into another instruction: negations and modal strength.
_NEGATIONS = frozenset("not no never don't doesn't didn't isn't aren't won't can't cannot shouldn't mustn't "
                       "without avoid".split())
_MODALS = frozenset("must should shall may might can could will would always optional required".split())
_STRENGTH = {"must": "required", "shall": "required", "always": "required", "required": "required",
             "will": "required", "should": "recommended", "would": "recommended", "may": "optional",
             "might": "optional", "can": "optional", "could": "optional", "optional": "optional"}


# Words that only join a sentence: one copy may drop them ("If x returns none, fall back" / "x returns none |
# Fall back"). Not the particles that carry meaning (on, off, in, out, up, down).
_GRAMMAR = frozenset("a an the if when that which this these those for of to and or but then so as is are be it "
                     "its with using via by".split())


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


def disagree(files: list[File], m: Match) -> str | None:
    """Whether two near-duplicate units are two versions that disagree (CTX202 reports only those): see
    `versions_disagree`. The parallel items of one list or table (`Rule 3 for area 12` / `Rule 4 for area 12`)
    are never paired (dup_parallel)."""
    u, v = m.later, m.earlier
    f, g = files[u.fid], files[v.fid]

    def names() -> set[str]:
        out: set[str] = set()
        for fl, un in ((f, u), (g, v)):
            for line in fl.lines[un.start:un.end + 1]:
                for sp in (c.group(2) for c in code_spans(line)):
                    out.update(normalise(sp))
        return out

    return disagreement(u.key, u.words, v.key, v.words, names)


HARD = ("number", "negation", "strength", "value", "command", "grown", "unknown")
"""The disagreements that make two versions contradict each other (CTX202 and CTX806 warn on these): a number,
a negation, a modal strength, a setting's value (on / off), a name in a code span (a command, tool or path), or
one copy that gained three words or more the other lacks (a list that grew in one place).
A prose word that differs is, on real repositories, two wordings of one rule or two rules for two subjects: info."""
_VALUES = frozenset("on off true false yes no enabled disabled enable disable allow deny allowed denied "
                    "required optional sync async before after".split())


def versions_disagree(key_a: str, words_a: frozenset, key_b: str, words_b: frozenset,
                      names: Callable[[], set[str]] = set) -> bool:
    """Whether two versions disagree at all (see `disagreement`)."""
    return disagreement(key_a, words_a, key_b, words_b, names) is not None


def disagreement(key_a: str, words_a: frozenset, key_b: str, words_b: frozenset,
                 names: Callable[[], set[str]] = set) -> str | None:
    """Whether two versions of one instruction (normalised text ``key``, content ``words``) disagree: a changed
    number (both name one), negation (how many: which word says it does not matter), modal strength (both have one: must and always are one strength), or
    content the other lacks. Not: a consistent paraphrase (the same content words in other function words, a
    table row restating a list item), an elaboration (one copy adds a word or two, `_elaborates`), or the same
    name spelt differently, one copy's code-span name (``names``: the normalised words of both copies' code
    spans) written otherwise in the other (`@scope/x` / `x`). CTX202 and CTX806 (across agents) ask this."""
    wa, wb = key_a.split(), key_b.split()
    nums_a = {w for w in wa if any(c.isdigit() for c in w)}
    nums_b = {w for w in wb if any(c.isdigit() for c in w)}
    if nums_a and nums_b and nums_a != nums_b:
        return "number"
    if sum(w in _NEGATIONS for w in wa) != sum(w in _NEGATIONS for w in wb):
        return "negation"  # one copy negates what the other does not ("No f-strings" and "Don't use f-strings" agree)
    mod_a, mod_b = _strengths(wa), _strengths(wb)
    if mod_a and mod_b and mod_a != mod_b:
        return "strength"  # MUST here, should there
    extra = words_a ^ words_b
    if not extra:
        return None  # the same content words: a paraphrase
    if _elaborates(set(wa), set(wb), words_a, words_b) or _elaborates(set(wb), set(wa), words_b, words_a):
        return None  # one copy says a little more, nothing else: an elaboration, not a contradiction
    if len(extra) == 1 and (words_a <= words_b or words_b <= words_a) and extra <= names():
        return None  # one copy spells a name of the other's code spans differently
    if extra & _VALUES:
        return "value"  # default to on / default to off
    if (words_a <= words_b or words_b <= words_a) and len(extra) > ELABORATION_MAX:
        return "grown"  # one copy gained three items or more: it was updated, the other was not
    if extra & names():
        return "command"  # `make check` here, `make test` there: a command, tool or path of a code span
    return "content"
