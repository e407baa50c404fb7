"""Whether two versions of one instruction disagree (CTX202 reports only those): a changed number, negation or
modal strength, or a content word the other lacks outside the names of its code spans."""

from __future__ import annotations

from ..markdown import code_spans
from .dup_units import File, Match, normalise

# Words whose change turns a version into another instruction: negations and modal strength.
_NEGATIONS = frozenset("not no never don't doesn't didn't isn't aren't won't can't cannot shouldn't mustn't "
                       "without avoid".split())
_MODALS = frozenset("must should shall may might can could will would always optional required".split())


def disagree(files: list[File], m: Match) -> bool:
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
