"""Near-duplicate pairs of the duplication analysis (CTX202): every pair of representatives of co-loading files
whose content words have a Jaccard index at or above the threshold, except parallel items (`dup_parallel`), by
prefix filtering (ppjoin) over a word index, for a whole build (`link_all`) or one representative after an edit
(`probe`). Functions of the analysis (`dup_analysis.Analysis`), whose graph they fill."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .dup_parallel import block_of, line_runs, list_templates, masked, one_template
from .dup_units import Unit

if TYPE_CHECKING:
    from .dup_analysis import Analysis


def link_all(an: Analysis) -> None:
    """Near duplicates by prefix filtering (ppjoin: representatives in size order, each probing with the
    prefix of its rarest words a pair at the threshold must share, indexing the prefix a shorter one must
    share, positional filter), restricted to co-loading files and leaving parallel items apart
    (`dup_parallel`): every other pair at or above the threshold.

    Representatives with the same content words (copies of an instruction in several files, and the items
    of a templated list, which differ only in their numbers) probe as one class: once, in the files any of
    them loads with, each other word set met is compared once, and a pair found is linked to the members
    that load with its file (co-loading is symmetric). Members of one class are linked to each other
    directly (similarity 1, when their keys differ), a list's items never (each index entry carries its list),
    so a templated list of k items forms no k² pairs."""
    classes: dict[frozenset, dict[int, list[tuple[Unit, int | None]]]] = {}  # words -> file -> reps
    mixed: set[frozenset] = set()  # the classes whose members have more than one key
    for fid, reps in enumerate(an.reps_of):
        if not reps:
            continue
        f = an.files[fid]
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
    firsts = sorted(((next(iter(m.values()))[0][0].uid, words, m) for words, m in classes.items()),
                    key=lambda x: (len(x[1]), x[0]))
    # word -> file -> (representative, position of the word in its order, its size, its list or table or
    # None), in size order
    index: dict[str, dict[int, list[tuple[Unit, int, int, int | None]]]] = {}
    t = an.threshold
    ratio = t / (1 + t)
    index_fraction = 2 * t / (1 + t)
    ceil = math.ceil
    coload = an.coload
    similar = an.similar
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
            link_class(an, members)
        owners: dict[int, list[tuple[Unit, int | None]]] = {}  # file -> the members that load with it
        verdict: dict[frozenset, float] = {}  # other word set -> similarity, 0.0 below the threshold
        for i in probe:
            bucket = index.get(toks[i])
            if bucket is None:
                continue
            left = n - i
            # (`keys() & near` would copy every key: a word of a template is in every file)
            for g in ([g for g in near if g in bucket] if len(near) < len(bucket) else bucket.keys() & near):
                mg = members.get(g)  # the members in file g, and their lists
                mgb = {b for _, b in mg} if mg is not None else ()
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
                            co = coload[g]  # (whichever is smaller: a template's class has members in every file)
                            fs = [f for f in co if f in members] if len(co) < len(members) else members.keys() & co
                            us = owners[g] = [x for f in fs for x in members[f]]
                    if blk is not None and blk in mgb:
                        us = [x for x in us if x[1] != blk or x[0].fid != g]  # not the items of v's list
                    vid = v.uid
                    nb = similar.get(vid)
                    nv = -1 if blk is None else v.key.count(" ")
                    for u, bu in us:  # (met again under a later prefix word: linked again)
                        # (only items of two lists, with as many words, can be instances of one template)
                        if u.fid == g or bu is None or nv != u.key.count(" ") or not templated_pair(an, u, v):
                            if nb is None:
                                nb = similar[vid] = {}
                            nb[u.uid] = sim
                            mine = similar.get(u.uid)
                            if mine is None:
                                similar[u.uid] = {vid: sim}
                            else:
                                mine[vid] = sim
        # Indexed after probing: a class never meets itself (`link_class` linked its members).
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


def link_class(an: Analysis, members: dict[int, list[tuple[Unit, int | None]]]) -> None:
    """Link the representatives of one class (the same content words: similarity 1, and more than one key)
    that are near duplicates: different keys, co-loading files, not parallel items. Pairs of files that
    load together, or, when the class has few keys (copies of an instruction and of its other version),
    pairs of keys: either way no pair of copies of one key is looked at more than once."""
    by_key: dict[str, dict[int, list[tuple[Unit, int | None]]]] = {}
    for f, us in members.items():
        for x in us:
            got = by_key.get(x[0].key)
            if got is None:
                by_key[x[0].key] = {f: [x]}
            else:
                got.setdefault(f, []).append(x)
    coload, link = an.coload, an.link
    if len(by_key) <= 3:
        groups = list(by_key.values())
        pairs = [(a, b) for i, a in enumerate(groups) for b in groups[i + 1:]]
    else:
        pairs = [(members, members)]
    for m1, m2 in pairs:
        for f, us in m1.items():
            co = coload[f]
            for g in ([g for g in m2 if g in co] if len(m2) < len(co) else [g for g in co if g in m2]):
                if m1 is m2 and g <= f:
                    if g == f and len(us) > 1:
                        link_within(an, us)
                    continue  # (each pair of files once)
                for u, bu in us:
                    for v, bv in m2[g]:
                        if u.key == v.key:
                            continue
                        if f == g:
                            if bu is not None and bu == bv:
                                continue  # items of one list
                        elif bu is not None and bv is not None and templated_pair(an, u, v):
                            continue
                        link(u, v, 1.0)


def link_within(an: Analysis, us: list[tuple[Unit, int | None]]) -> None:
    """`link_class` in one file: its members in different lists (or outside any list) with different keys,
    never two items of one list (so not k² per list)."""
    lists: dict[int | None, list[Unit]] = {}
    for u, bu in us:
        lists.setdefault(bu, []).append(u)
    if len(lists) == 1 and None not in lists:
        return
    link = an.link
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


def block(an: Analysis, u: Unit) -> int | None:
    """The list or table of its file ``u`` is in (None: neither)."""
    f = an.files[u.fid]
    runs = f.runs
    if runs is None:
        runs = f.runs = line_runs(f.lines)
    return block_of(runs, u.start, u.end)


def template(an: Analysis, u: Unit) -> tuple | None:
    """``u`` as an instance of a template in its list (`dup_parallel.list_templates`): its masked words and
    the list's enumerating positions, or None. Worked out for the units of its list with as many words (the
    others have no bearing on it) the first time one is asked for."""
    got = an.templates.get(u.uid, False)
    if got is not False:
        return got
    f = an.files[u.fid]
    lists = f.lists
    if lists is None:
        lists = f.lists = {}  # (list or table, number of words) -> its units
        for x in an.units_of[u.fid]:
            b = block(an, x)
            if b is not None:
                lists.setdefault((b, x.key.count(" ")), []).append(x)
    us = lists.get((block(an, u), u.key.count(" ")))
    if us is None or len(us) < 2:
        an.templates[u.uid] = None  # (alone with its length in its list: no template)
        return None
    interned = an.interned_templates
    for x, pos in zip(us, list_templates([x.key for x in us])):
        if pos is None:
            an.templates[x.uid] = None
        else:  # (one object for equal templates: the items of a numbered list all have the same)
            t = (masked(x.key), pos)
            an.templates[x.uid] = interned.setdefault(t, t)
    return an.templates[u.uid]


def templated_pair(an: Analysis, u: Unit, v: Unit) -> bool:
    """Units of two files that are instances of one template in their own lists (`dup_parallel`)."""
    a = template(an, u)
    if a is None:
        return False
    b = template(an, v)
    if b is None:
        return False
    if a is b:
        return True  # (the same words where the numbers are, the same positions vary)
    key = (id(a), id(b))  # (interned, and kept: ids stay theirs)
    got = an.template_pairs.get(key)
    if got is None:
        got = an.template_pairs[key] = one_template(a[0], a[1], b[0], b[1])
    return got


def parallel(an: Analysis, u: Unit, v: Unit) -> bool:
    """Whether ``u`` and ``v`` are parallel items, never near duplicates: of one list, or of two instances
    of one template."""
    if u.fid == v.fid:
        b = block(an, u)
        return b is not None and b == block(an, v)
    return templated_pair(an, u, v)


def probe(an: Analysis, u: Unit):
    """Representatives similar to ``u`` at or above the threshold, from the word index: a pair at the
    threshold shares at least t·|u| words, so one of any |u| - ⌈t·|u|⌉ + 1 of u's words (the rarest are
    probed; one more for rounding)."""
    index = an.word_index
    assert index is not None
    t = an.threshold
    ratio = t / (1 + t)
    n = len(u.words)
    toks = sorted(u.words, key=lambda w: len(index.get(w, ())))
    prefix = max(1, min(n, n - math.ceil(t * n - 1e-9) + 2))
    co = an.coload[u.fid]
    seen: set[int] = set()
    for w in toks[:prefix]:
        for vid in index.get(w, ()):
            if vid in seen:
                continue
            seen.add(vid)
            v = an.by_uid[vid]
            if v.fid not in co or v.key == u.key or parallel(an, u, v):
                continue
            m = len(v.words)
            if min(n, m) < t * max(n, m) - 1e-9:
                continue
            inter = len(u.words & v.words)
            if inter < math.ceil(ratio * (n + m) - 1e-9):
                continue
            yield v, inter / (n + m - inter)
