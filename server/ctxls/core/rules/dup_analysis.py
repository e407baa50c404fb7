"""The analysis both duplication rules read: which unit repeats which (exact duplicates grouped by key), the
graph of near duplicates (`dup_pairs`), each later unit's match, and the findings built from the matches (kept
until a match or a file it reads changes).

Which copy is reported: the one that loads later in the session (files in one load order consistent with every
startup session's block order; lines in file order), with the earlier copy as related location.

Incremental: a long-lived file-system snapshot (the language server's) keeps the analysis, and after edits that
leave the load order alone it is updated rather than rebuilt: only the edited files' units are redone (units
whose text is unchanged keep their identity, also when lines above them moved), their representatives are
linked again from a word index, and only the units whose copies or near duplicates changed are matched again.
Findings are kept per match and rebuilt only when the match or a line they quote changes.  Updates give exactly
what a full build gives (tests/test_engine.py checks this on random edits).
"""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING

from ..findings import Finding, order_key
from ..workspace import Workspace
from . import dup_pairs as P
from .dup_findings import (HISTORY, diverged_finding, duplicate_finding, file_may_rely_on, line_changes, may_delete,
                           unit_text)
from .dup_units import File, Match, Source, Unit

if TYPE_CHECKING:
    from ..history import History


class Analysis:
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
        self.files: list[File] = []
        self.units_of: list[list[Unit]] = []
        self.reps_of: list[dict[str, Unit]] = []
        """Per file: key -> the first unit with that key and at least two content words."""
        self.by_uid: dict[int, Unit] = {}
        self.coload: list[set[int]] = []
        """Per file: the files that load with it in at least one session (itself included)."""
        self.groups: dict[str, dict[int, list[Unit]]] = {}
        """Key -> file -> its units with that key, in line order."""
        self.similar: dict[int, dict[int, float]] = {}
        """Near-duplicate graph: representative uid -> neighbour uid -> similarity."""
        self.matches: dict[int, Match] = {}
        """Later unit's uid -> its match."""
        self.found: dict[int, Finding] = {}
        """Later unit's uid -> the finding of its match, once built."""
        self.verdicts: dict[int, tuple[Finding, bool]] = {}
        """CTX202's: id(finding) -> (the finding, whether its two versions disagree), kept with the findings."""
        self._listed: dict[bool, list[tuple[tuple, int, Finding]]] = {}
        """Per rule (exact: CTX201), its findings in report order, with their order keys."""
        self._out: dict[bool, list[Finding]] = {}
        self._stale: dict[bool, set[int]] = {True: set(), False: set()}
        """Per rule, the units whose finding changed since its list was made."""
        self._next_uid = 0
        self._order: dict[str, list[int]] = {}
        self.word_index: dict[str, set[int]] | None = None
        """Word -> the representatives that have it (`dup_pairs.probe`), made at the first update."""
        self.templates: dict[int, tuple | None] = {}
        """Unit uid -> `dup_pairs.template` (None: no instance of a template), once asked for (forgotten for the
        units of a file that changes)."""
        self.interned_templates: dict[tuple, tuple] = {}
        """Each template `dup_pairs.template` made, once: equal ones are one object."""
        self.template_pairs: dict[tuple[int, int], bool] = {}
        """(id, id) of two interned templates -> `dup_parallel.one_template` of them."""
        self._head: str | None = None
        """The commit git history was read at for the CTX202 findings built (see `findings`)."""

    @classmethod
    def build(cls, layout: tuple, sequences: list[tuple[str, ...]], sources: list[Source], threshold: float,
              min_words: int) -> "Analysis":
        an = cls(layout, threshold, min_words)
        fid_of: dict[str, int] = {}
        for src in sources:
            fid = len(an.files)
            an.files.append(File(fid, src.path, src.real, src.mask, src.text.split("\n"), src.mtime_ns,
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
        pos = load_order(len(an.files), fseqs)
        for f in an.files:
            f.pos = pos[f.fid]
        P.link_all(an)
        # Each unit's match, as `_resolve` makes it (nothing to forget yet): an exact duplicate, else a near one.
        matches, by_uid = an.matches, an.by_uid
        for uid, v in an._exact_partners().items():
            matches[uid] = Match(by_uid[uid], v, True, 1.0)
        for uid in an.similar:
            if uid not in matches:
                u = by_uid[uid]
                got = an._near_partner(u)
                if got is not None:
                    matches[uid] = Match(u, got[0], False, got[1])
        return an

    def _new_units(self, fid: int, rows) -> list[Unit]:
        first = self._next_uid
        out = [Unit(first + i, fid, *row) for i, row in enumerate(rows)]
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

    def link(self, u: Unit, v: Unit, sim: float) -> None:
        self.similar.setdefault(u.uid, {})[v.uid] = sim
        self.similar.setdefault(v.uid, {})[u.uid] = sim

    def _unlink(self, u: Unit, touched: set[int]) -> None:
        for vid in self.similar.pop(u.uid, {}):
            nb = self.similar.get(vid)
            if nb is not None:
                nb.pop(u.uid, None)
                if not nb:
                    del self.similar[vid]
            touched.add(vid)

    def _exact_partner(self, u: Unit) -> Unit | None:
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
                if may_delete(files, u, v):
                    return v
                if first is None:
                    first = v
        return first

    def _exact_partners(self) -> dict[int, Unit]:
        """`_exact_partner` of every unit that has one, group by group: a unit's partner is the first unit of the
        first earlier co-loading file whose copy it may delete, else of its own file (when it is not the first
        copy there and not nested), else of the first earlier co-loading file (the deletion is never safe)."""
        files, coload = self.files, self.coload
        pos = [f.pos for f in files]
        out: dict[int, Unit] = {}
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
                        if file_may_rely_on(fl, files[f]):
                            fix = f  # (`may_delete` for a unit without nested items)
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

    def _near_partner(self, u: Unit) -> tuple[Unit, float] | None:
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
                ws.counter.prefetch(dict.fromkeys(unit_text(self.files[u.fid], u) for u in missing))
        build = duplicate_finding if exact else diverged_finding
        memo: dict = {}  # what findings of one pair of files, or of one unit, share (see the builders)
        if history is not None:
            new = [self.matches[uid] for uid in todo if uid not in self.found]
            if new:
                memo[HISTORY] = line_changes(history, self.files, new)
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

    def listed(self, exact: bool) -> list[tuple[tuple, int, Finding]]:
        """One rule's findings as `findings` last listed them: (order key, the later unit's uid, finding)."""
        return self._listed.get(exact) or []

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

    def _resolve(self, u: Unit) -> None:
        """(Re)compute the match of ``u``: an exact duplicate first, else its best near duplicate. A finding
        already built stays when the match is the same."""
        v = self._exact_partner(u)
        m = None
        if v is not None:
            m = Match(u, v, True, 1.0)
        elif u.uid in self.similar:
            got = self._near_partner(u)
            if got is not None:
                m = Match(u, got[0], False, got[1])
        old = self.matches.get(u.uid)
        if m is None:
            if old is not None:
                del self.matches[u.uid]
                self._forget(u.uid)
        elif old is None or old.earlier is not m.earlier or old.exact != m.exact or old.similarity != m.similarity:
            self.matches[u.uid] = m
            self._forget(u.uid)

    def update(self, layout: tuple, sources: list[Source]) -> bool:
        """Bring the analysis up to date with ``sources``; False when only a full build can (the files loaded,
        their order or their sessions changed)."""
        if layout != self.layout:
            return False
        changed = [(f, s) for f, s in zip(self.files, sources)
                   if (f.text is not s.text and f.text != s.text) or f.span != s.span or f.mtime_ns != s.mtime_ns]
        if not changed:
            return True
        if self.word_index is None:
            self.word_index = {}
            for reps in self.reps_of:
                for u in reps.values():
                    for w in u.words:
                        self.word_index.setdefault(w, set()).add(u.uid)
        touched: set[int] = set()
        for f, src in changed:
            self._update_file(f, src, touched)
        for uid in touched:
            u = self.by_uid.get(uid)
            if u is not None:
                self._resolve(u)
        return True

    def _update_file(self, old: File, src: Source, touched: set[int]) -> None:
        fid = old.fid
        new = File(fid, old.path, old.real, old.mask, src.text.split("\n"), src.mtime_ns, old.private,
                    old.agents, old.pos, old.rel, src.text, src.span)
        self.files[fid] = new
        index = self.word_index
        assert index is not None
        # Units whose text did not change keep their identity, also when lines inserted or deleted above them
        # moved them (in order): their matches stay, as no comparison a match rests on changes (only findings
        # that quote their lines are redone, below). The others are removed and added.
        olds = self.units_of[fid]
        for u in olds:
            self.templates.pop(u.uid, None)  # (their lists may have changed)
        at: dict[tuple, list[int]] = {}
        for i, u in enumerate(olds):
            at.setdefault(_signature(old.lines, u.start, u.end, u.col, u.key, u.nested), []).append(i)
        used: set[int] = set()
        last = -1
        units: list[Unit] = []
        added: list[Unit] = []
        moved: list[Unit] = []
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
                u = Unit(self._next_uid, fid, *row)
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
        mine: dict[str, list[Unit]] = {}
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
            for v, sim in P.probe(self, r):
                self.link(r, v, sim)
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


def _signature(lines: list[str], start: int, end: int, col: int, key: str, nested: bool) -> tuple:
    """What a unit is, wherever it sits: its text and what was made of it."""
    return (key, col, nested, tuple(lines[start:end + 1]))


def _reps(units: list[Unit]) -> dict[str, Unit]:
    """One representative per key (the first), for units with at least two content words."""
    out: dict[str, Unit] = {}
    for u in units:
        if len(u.words) >= 2:
            out.setdefault(u.key, u)
    return out


def load_order(n: int, sequences: list[list[int]]) -> list[int]:
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
