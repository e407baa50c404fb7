"""Parallel items (CTX202): which near-duplicate units are not two versions of one instruction.

Two kinds of pairs are *parallel* and never become near duplicates (the pairing skips them, so a monorepo of
templated files forms no quadratic set of pairs only to drop it):

* units of one list or one table of a file (their lines, and every line between, are list items, their
  continuation lines or table rows: no blank line, heading or paragraph between): the items of a list that
  differ in their enumerating names or numbers ("Rule 3 for area 12: the handler 33 validates ...",
  "Rule 4 for area 12: the handler 40 validates ...");
* units of two files that are each an instance of a template in their own list, and differ only where both
  lists vary. The items of a list with as many words are instances of a template when at most half of their
  positions vary among them (words holding a digit count as one word, ``#``); the positions that do are the
  template's *enumerating positions*. So "Rule 3 for area 12: the handler 33 validates ..." in one file and
  "Rule 5 for area 40: the handler 21 validates ..." in a file that loads with it, each in a list of such rules,
  are parallel; so are "The billing worker of area 12 reads the billing queue ..." and "The invoice worker of
  area 40 reads the invoice queue ..." in two lists of workers, and "Rule 1: keep the beta module small and test
  delta paths" beside "Rule 20: keep the beta module small and test beta paths". A rule that stands alone in its
  list ("Requests time out after 30 s") is no instance of a template: its copy that says 60 s is a version.
"""

from __future__ import annotations

import re

from .. import lazyre
from .dup_units import ITEM_RE



def line_runs(lines: list[str]) -> list[int]:
    """Per line, the number of the run of list-like lines (list items, their indented continuation lines, table
    rows) it belongs to, -1 for any other line (blank, heading, paragraph)."""
    out = [-1] * len(lines)
    run = -1
    prev = False
    match = ITEM_RE.match
    for i, line in enumerate(lines):
        t = line.strip()
        ok = bool(t) and (t[0] in "-*+|" or line[:1].isspace() or match(line) is not None)
        if ok:
            if not prev:
                run += 1
            out[i] = run
        prev = ok
    return out


def block_of(runs: list[int], start: int, end: int) -> int | None:
    """The list or table lines ``start..end`` (0-based, inclusive) are all in, or None."""
    if start < 0 or end >= len(runs):
        return None
    r = runs[start]
    return r if r >= 0 and runs[end] == r else None


_NUMBER_WORD_RE = lazyre.compile(r"(?<!\S)[^\s\d]*\d\S*")  # a word holding a digit (tried at word starts only)


def masked(key: str) -> tuple[str, ...]:
    """A unit's words (its normalised key) with every word holding a digit as ``#`` (no word is ``#``: a word
    starts with a letter or a digit)."""
    return tuple(_NUMBER_WORD_RE.sub("#", key).split())


def list_templates(keys: list[str]) -> list[frozenset | None]:
    """For the units of one list (their keys, in order), each one's enumerating positions when it is an instance
    of a template (see the module docstring: another unit of the list has as many words and another key, and at
    most half the positions of the list's units with that many words vary), else None."""
    toks = [masked(k) for k in keys]
    by_len: dict[int, list[int]] = {}
    for i, t in enumerate(toks):
        by_len.setdefault(len(t), []).append(i)
    out: list[frozenset | None] = [None] * len(keys)
    for n, idx in by_len.items():
        if len(idx) < 2 or len({keys[i] for i in idx}) < 2:
            continue
        varying = frozenset(p for p in range(n) if len({toks[i][p] for i in idx}) > 1)
        if 2 * len(varying) <= n:
            for i in idx:
                out[i] = varying
    return out


def one_template(a: tuple[str, ...], va: frozenset, b: tuple[str, ...], vb: frozenset) -> bool:
    """Whether two template instances (masked words and enumerating positions, from two lists) differ only at
    positions that enumerate in both lists."""
    if len(a) != len(b):
        return False
    both = va & vb
    return all(x == y or p in both for p, (x, y) in enumerate(zip(a, b)))
