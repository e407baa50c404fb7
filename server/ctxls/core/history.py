"""What git history says of a workspace's files: which of two versions of an instruction is newer (CTX202), and
which commit removed a file a memory still names (CTX402).

A fresh clone gives every file the same modification time, so the rules ask git first:

- line changes: `git blame --porcelain` of `HEAD`, just the lines wanted (one blame per file, `-L` per range).
  The text being checked (the file on disk or an unsaved editor buffer) is matched line by line against the
  file at `HEAD` (read with `git cat-file`): lines that are not there are uncommitted, newer than any commit.
  Blaming a commit rather than the working tree runs none of the repository's clean filters or textconv
  drivers, which an untrusted repository's configuration could point at any program.
- removals: one `git log` limited to the missing paths, newest first, killed once each has its answer or its
  time is up, then one `git show` of the commits found to tell renames from deletions (following a renamed
  file through later renames).

Local only and never fatal: no git binary, a workspace outside a repository, a repository without commits, an
untracked file, a timeout or any other failure gives no answer, and the rules fall back to what they said
without git. Lazy fetching of missing objects (partial clones) is off, so git never reaches the network; the
file-system monitor hook, signature checks and `log.follow` a configuration may set are overridden. In a
shallow clone, lines attributed to the cut-off commit have no known date. Needs git 2.31 or later
(`rev-parse --path-format`); an older git gives no answers.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .fs import decode
from .git_run import TIMEOUT_S, git as _git, kill as _kill, run as _run, run_bytes as _run_bytes, spawn as _spawn

log = logging.getLogger("ctxls.history")

MAX_FILES = 32
"""Files blamed per batch at most (the first in the order asked); later ones get no answer. Diverged
instructions are few in a real repository; a generated one with thousands must not wait on git."""
REMOVALS_TIMEOUT_S = 3.0
"""Time for the `git log` of one batch of missing paths. A path git never had makes it walk the whole
history, which in a very large repository takes longer: the paths not answered by then keep the message
they have without git."""
SCAN_OVER = 3
"""Past this many paths, the removals log is read without pathspecs and matched by name here."""
MAX_RENAME_HOPS = 3

def _is_sha(s: str) -> bool:
    return len(s) in (40, 64) and all(c in "0123456789abcdef" for c in s)


def _stat_key(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def _dot_git(path: Path) -> tuple[str, tuple[int, int, int] | None] | None:
    """The nearest `.git` at or above ``path``, with its stat (a `git init` or a new clone changes it)."""
    for d in (path, *path.parents):
        p = os.path.join(d, ".git")
        try:
            st = os.lstat(p)
        except OSError:
            continue
        return p, (st.st_mtime_ns, st.st_size, st.st_ino)
    return None


def _when(seconds: int, commit: str) -> str:
    return f"{time.strftime('%Y-%m-%d', time.gmtime(seconds))} in {commit[:7]}"


@dataclass(frozen=True)
class Change:
    """The latest change to a range of lines: when (seconds since the epoch) and in which commit (None: not
    committed yet)."""

    time: int
    commit: str | None

    @property
    def label(self) -> str:
        if self.commit is None:
            return "uncommitted changes"
        return _when(self.time, self.commit)


@dataclass(frozen=True)
class Removal:
    """The latest commit that deleted or renamed a file (paths relative to the workspace root). A renamed file
    is followed through later renames: ``renamed_to`` is where it is at `HEAD`, ``deleted_later`` that a later
    commit deleted it."""

    path: str
    commit: str
    time: int
    subject: str
    renamed_to: str | None = None
    deleted_later: bool = False

    def describe(self) -> str:
        when = f"on {_when(self.time, self.commit)}"
        subject = self.subject if len(self.subject) <= 72 else self.subject[:71].rstrip() + "…"
        if self.renamed_to is None:
            what = "deleted"
        else:
            what = f"renamed to `{self.renamed_to}`" + (", which was deleted later," if self.deleted_later else "")
        return f"`{self.path}` was {what} {when} (\"{subject}\")"


def parse_blame(out: str, shallow: bool = False) -> dict[int, Change | None]:
    """`git blame --porcelain` output -> 0-based line of the blamed revision -> its last change (None: the
    cut-off commit of a shallow clone, whose date says nothing)."""
    times: dict[str, int] = {}
    boundary: set[str] = set()
    line_commit: dict[int, str] = {}
    header = True
    sha = ""
    for raw in out.split("\n"):
        if raw.startswith("\t"):
            header = True  # the line's content ends its entry; a header follows
            continue
        if header:
            parts = raw.split(" ")
            if len(parts) >= 3 and _is_sha(parts[0]):
                sha = parts[0]
                try:
                    line_commit[int(parts[2]) - 1] = sha
                except ValueError:
                    pass
                header = False
            continue
        if raw.startswith("committer-time "):
            try:
                times[sha] = int(raw.split(" ", 1)[1])
            except ValueError:
                pass
        elif raw == "boundary":
            boundary.add(sha)
    return {line: (None if shallow and sha in boundary else Change(times.get(sha, 0), sha))
            for line, sha in line_commit.items()}


def map_lines(head: str, current: str) -> dict[int, int]:
    """0-based line of ``current`` -> a line of ``head`` with the same text (line endings aside); lines left
    out are not committed. Lines in the same order are matched first (the common start and end, then a diff of
    what is between when that is small), then any line left with a line of the same text left in ``head``,
    so that moving a line does not make it look new."""
    a = [s.rstrip("\r") for s in head.split("\n")]
    b = [s.rstrip("\r") for s in current.split("\n")]
    if a == b:
        return {i: i for i in range(len(b))}
    out: dict[int, int] = {}
    lo, n, m = 0, len(a), len(b)
    while lo < min(n, m) and a[lo] == b[lo]:
        out[lo] = lo
        lo += 1
    hi = 0
    while hi < min(n, m) - lo and a[n - 1 - hi] == b[m - 1 - hi]:
        out[m - 1 - hi] = n - 1 - hi
        hi += 1
    used = set(out.values())
    if (n - lo - hi) * (m - lo - hi) <= 4_000_000:  # the diff costs up to the product of the two sizes
        import difflib  # (imported here: most runs never need it)

        matcher = difflib.SequenceMatcher(None, a[lo:n - hi], b[lo:m - hi], autojunk=False)
        for tag, i1, i2, j1, _ in matcher.get_opcodes():
            if tag == "equal":
                for k in range(i2 - i1):
                    out[lo + j1 + k] = lo + i1 + k
                    used.add(lo + i1 + k)
    left: dict[str, list[int]] = {}
    for i in range(n - 1, -1, -1):
        if i not in used:
            left.setdefault(a[i], []).append(i)
    for j in range(m):
        if j not in out:
            spare = left.get(b[j])
            if spare:
                out[j] = spare.pop()
    return out


def _ranges(lines: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted 0-based lines as inclusive runs."""
    out: list[tuple[int, int]] = []
    for n in sorted(set(lines)):
        if out and out[-1][1] == n - 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


class History:
    """Git's answers for one workspace, kept against `HEAD`: per-line changes by file content (a long-lived
    snapshot asks again only about files that changed), removals by path."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._top: str | None = None
        self._git_dir: str | None = None
        self._common: str | None = None
        self._head: str | None = None
        self._shallow = False
        self._searched = False
        self._mark: tuple | None = None
        """The nearest `.git` and its stat when no repository was found (see `refresh`)."""
        self._state: tuple | None = None
        self._head_file: tuple[tuple[int, int, int] | None | bool, str | None] = (False, None)
        """The stat of the HEAD file when last read, and the ref file it names."""
        self._lines: dict[tuple[str, str, int], dict[int, Change | None] | None] = {}
        self._removals: dict[tuple[str, str], Removal | None] = {}
        self._unread: set[tuple[str, str]] = set()
        """Keys of `_removals` settled as None though the log was not read to its end in time (see `never_removed`)."""
        self._deleted: tuple[str, list[tuple[str, str, int, str]]] | None = None
        """Every path the whole log of `HEAD` shows deleted or renamed away (newest first), once read to its end."""
        self._added: dict[tuple[str, tuple[str, ...]], dict[str, int]] = {}
        self._first: dict[tuple[str, str], int | None] = {}
        self._sparse: dict[str, list[str]] = {}

    # ------------------------------------------------------------------ repository and HEAD
    def state_files(self) -> list[str]:
        """The files whose change means `HEAD` may have moved: the git directory's HEAD, the branch's ref file
        (present or not) and packed-refs. A stored report built from git's answers depends on them."""
        if self._git_dir is None or self._common is None:
            return []
        out = [os.path.join(self._git_dir, "HEAD"), os.path.join(self._common, "packed-refs"),
               os.path.join(self._common, "reftable", "tables.list")]
        # HEAD is read again only when its stat changed: this runs at each check of the language server.
        st = _stat_key(out[0])
        if st != self._head_file[0]:
            try:
                with open(out[0], encoding="utf-8", errors="replace") as f:
                    head = f.read(512).strip()
            except OSError:
                head = ""
            ref = os.path.join(self._common, *head[5:].strip().split("/")) if head.startswith("ref: ") else None
            self._head_file = (st, ref)
        if self._head_file[1] is not None:
            out.append(self._head_file[1])
        return out

    def _current_state(self) -> tuple:
        return tuple((p, _stat_key(p)) for p in self.state_files())

    @property
    def head(self) -> str | None:
        """The commit `HEAD` was at when last looked up (None: no answers from git)."""
        return self._head

    def moved(self) -> bool:
        """Whether git's answers may have changed since `refresh` last looked (stats only, no git): `HEAD` or
        a branch moved, or, with no repository found, a `.git` appeared or changed."""
        if self._git_dir is None:
            return self._searched and _dot_git(self.root) != self._mark
        return self._current_state() != self._state

    def refresh(self) -> bool:
        """Whether git can answer: the workspace is in a repository whose `HEAD` is a commit. Git is asked
        again only when that may have changed: the `HEAD`, ref or packed-refs files changed, or, with no
        repository found, a `.git` appeared or changed above the workspace (a long-lived snapshot outlives
        commits, `git init` and clones)."""
        if self._git_dir is None:
            mark = _dot_git(self.root)
            if self._searched and mark == self._mark:
                return False
            self._searched, self._mark = True, mark
            if mark is None:
                return False
        elif self._current_state() == self._state:
            return self._head is not None
        cwd = self._top or str(self.root)
        got = _run(["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir", "--git-common-dir",
                    "--is-shallow-repository", "HEAD"], cwd)
        lines = got[1].split("\n") if got is not None else []
        if len(lines) < 4 or not lines[0]:
            self._git_dir = self._top = self._head = None  # not a work tree (or git is missing or failed)
            self._mark = _dot_git(self.root)
            return False
        self._top, self._git_dir, self._common = lines[0], lines[1], lines[2]
        self._shallow = lines[3] == "true"
        head = lines[4] if len(lines) > 4 else ""
        self._head = head if got is not None and got[0] == 0 and _is_sha(head) else None
        self._state = self._current_state()
        return self._head is not None

    # ------------------------------------------------------------------ line changes
    def changes(self, requests: dict[Path, tuple[str, Iterable[tuple[int, int]]]]
                ) -> dict[Path, dict[int, Change | None]]:
        """For each file (its current text and the 0-based inclusive line ranges wanted), the last change of
        those lines (None: no known date); files git cannot answer for are left out. At most `MAX_FILES`
        files, blamed two at a time (git does the work; these threads only wait), within `TIMEOUT_S`."""
        if self._head is None and not self.refresh():
            return {}
        top, head = self._top, self._head
        assert top is not None and head is not None
        out: dict[Path, dict[int, Change | None]] = {}
        todo = []
        for path, (text, ranges) in list(requests.items())[:MAX_FILES]:
            rel = os.path.relpath(path, top).replace(os.sep, "/")
            if rel == ".." or rel.startswith("../") or os.path.isabs(rel) or "\n" in rel:
                continue  # not in this repository (the user's ~/.claude, auto memory)
            key = (str(path), head, hash(text))
            wanted = {n for a, b in ranges for n in range(a, b + 1)}
            if key in self._lines:
                got = self._lines[key]
                if got is None or wanted <= got.keys():
                    if got is not None:
                        out[path] = got
                    continue
            todo.append((key, path, rel, text, wanted))
        if not todo:
            return out
        if len(self._lines) > 4 * MAX_FILES:  # a long editing session: one entry per version blamed
            self._lines.clear()
        blobs = self._blobs(top, [rel for _, _, rel, _, _ in todo])
        deadline = time.monotonic() + TIMEOUT_S

        def blame(item):
            key, path, rel, text, wanted = item
            committed = blobs.get(rel)
            if committed is None:
                return key, path, None, rel in blobs  # untracked: kept; a failure: asked again next time
            mapping = map_lines(committed, text)
            lines = {n: mapping[n] for n in wanted if n in mapping}
            now = Change(int(time.time()), None)
            changes: dict[int, Change | None] = {n: now for n in wanted if n not in mapping}  # uncommitted
            if lines:
                left = deadline - time.monotonic()
                args = ["blame", "--porcelain", "--no-textconv", "-w"]
                for a, b in _ranges(lines.values()):
                    args += ["-L", f"{a + 1},{b + 1}"]
                raw = _git([*args, head, "--", rel], top, timeout=left) if left > 0 else None
                if raw is None:
                    return key, path, None, False
                blamed = parse_blame(raw, self._shallow)
                for n, m in lines.items():
                    if m in blamed:
                        changes[n] = blamed[m]
            return key, path, changes, True

        if len(todo) == 1:
            done = [blame(todo[0])]
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=2) as pool:
                done = list(pool.map(blame, todo))
        for key, path, got, keep in done:
            if got is not None:
                old = self._lines.get(key)
                if old:
                    got = {**old, **got}
                out[path] = got
            if keep:
                self._lines[key] = got
        return out

    def _blobs(self, top: str, rels: list[str]) -> dict[str, str | None]:
        """Each path's text at `HEAD` (None: `HEAD` has no such file); paths git could not be asked about are
        left out. One `git cat-file --batch` for all of them."""
        got = _run_bytes(["cat-file", "--batch"], top,
                         "".join(f"{self._head}:{r}\n" for r in rels).encode("utf-8", "surrogateescape"))
        if got is None or got[0] != 0:
            return {}
        data, pos = got[1], 0
        out: dict[str, str | None] = {}
        for rel in rels:  # "<sha> <type> <size>\n<content>\n" or "<name> missing\n", in the order asked
            nl = data.find(b"\n", pos)
            if nl < 0:
                break
            header = data[pos:nl].split(b" ")
            pos = nl + 1
            if len(header) == 3 and header[1] in (b"blob", b"tree", b"commit", b"tag") and header[2].isdigit():
                size = int(header[2])
                blob = data[pos:pos + size]
                if header[1] == b"blob" and b"\0" not in blob[:8192]:
                    out[rel] = decode(blob)[0]  # as the analysis reads the file
                else:
                    out[rel] = None  # a directory, a submodule, a binary file: no text to blame
                pos += size + 1
            else:
                out[rel] = None  # missing (or ambiguous): not in HEAD
        return out

    # ------------------------------------------------------------------ additions
    def added(self, paths: Iterable[Path]) -> dict[Path, int]:
        """When each file was first committed (commit time), for the files of this repository git has added;
        one `git log --diff-filter=A` over them, within `REMOVALS_TIMEOUT_S`."""
        if self._head is None and not self.refresh():
            return {}
        top, head = self._top, self._head
        assert top is not None and head is not None
        rels = {}
        for path in paths:
            rel = os.path.relpath(path, top).replace(os.sep, "/")
            if not (rel == ".." or rel.startswith("../") or os.path.isabs(rel) or "\n" in rel):
                rels[rel] = path
        key = (head, tuple(sorted(rels)))
        got = self._added.get(key)
        if got is None and rels:
            res = _run(["log", "--diff-filter=A", "--no-renames", "--name-only", "-z", "--format=%x01%ct", head,
                        "--", *(f":(literal){r}" for r in rels)], top, timeout=REMOVALS_TIMEOUT_S)
            when, first = 0, {}
            for item in (res[1].split("\0") if res is not None and res[0] == 0 else []):
                item = item.lstrip("\n")
                if item.startswith("\x01"):
                    when = int(item[1:]) if item[1:].isdigit() else 0
                elif item in rels and when:
                    first[item] = when  # (newest first: the last seen is the first commit)
            got = self._added[key] = first
        return {rels[r]: t for r, t in (got or {}).items()}

    def first_added(self, path: Path) -> int | None:
        """When ``path``'s content was first committed, following renames (`git log --follow`): a CLAUDE.md moved
        from `packages/mcp-server/` to `packages/mcp-core/` was written when its first version was, not when it
        moved. One file per call, within `REMOVALS_TIMEOUT_S`; None when git cannot say."""
        if self._head is None and not self.refresh():
            return None
        top, head = self._top, self._head
        assert top is not None and head is not None
        rel = os.path.relpath(path, top).replace(os.sep, "/")
        if rel == ".." or rel.startswith("../") or os.path.isabs(rel) or "\n" in rel:
            return None
        key = (head, rel)
        if key not in self._first:
            res = _run(["log", "--follow", "--diff-filter=A", "--format=%ct", head, "--", f":(literal){rel}"], top,
                       timeout=REMOVALS_TIMEOUT_S)
            stamps = [int(x) for x in (res[1].split() if res is not None and res[0] == 0 else []) if x.isdigit()]
            self._first[key] = min(stamps) if stamps else None
        return self._first[key]

    # ------------------------------------------------------------------ removals
    def not_checked_out(self) -> list[str]:
        """Workspace-relative files that git tracks but a sparse checkout leaves off the disk (`git ls-files -t`
        marks them S): they exist in the repository, and text naming them is right. Empty unless the repository
        has a sparse-checkout file."""
        if self._head is None and not self.refresh():
            return []
        if self._git_dir is None or not os.path.exists(os.path.join(self._common or self._git_dir, "info",
                                                                   "sparse-checkout")):
            return []
        got = self._sparse.get(self._head or "")
        if got is None:
            out = _run_bytes(["ls-files", "-t", "-z"], str(self.root))
            got = [] if out is None or out[0] != 0 else [
                e[2:].decode("utf-8", "surrogateescape") for e in out[1].split(b"\0") if e.startswith(b"S ")]
            self._sparse[self._head or ""] = got
        return got

    def removals(self, paths: Iterable[str], budget: float = REMOVALS_TIMEOUT_S, settle: bool = False
                 ) -> dict[str, Removal]:
        """For workspace-relative file paths that no longer exist, the latest commit that deleted or renamed a
        file at that path (a path without a directory, or under one, matches it in any directory: `web.py` is
        `services/stats/web.py` deleted). ``budget``: seconds the log may be read for; a path it did not answer
        is asked again next time, unless ``settle`` (then it counts as never removed until `HEAD` moves: a
        language server re-checking on every edit must not read the log each time)."""
        if self._head is None and not self.refresh():
            return {}
        head = self._head
        assert head is not None
        # (a path ending in `/` asks for a directory: any file below it deleted or renamed away)
        wanted = sorted({p.lstrip("/") for p in paths if p.strip("/") and "\n" not in p and "\0" not in p})
        out = {}
        todo = []
        for p in wanted:
            key = (head, p)
            if key in self._removals:
                got = self._removals[key]
                if got is not None:
                    out[p] = got
            else:
                todo.append(p)
        if not todo:
            return out
        cwd = str(self.root)
        if self._deleted is not None and self._deleted[0] == head:
            # (the whole log was read once for this HEAD: every later question is answered from it, so a
            # language server re-checking as a path is typed asks git nothing)
            found, complete = _match_removals(self._deleted[1], todo), True
        elif len(todo) > SCAN_OVER:
            deleted: list[tuple[str, str, int, str]] = []
            found, complete = _log_removals(cwd, head, todo, budget=budget, collect=deleted)
            if complete:
                self._deleted = (head, deleted)
        else:
            found, complete = _log_removals(cwd, head, todo, budget=budget)
        renames = _renames(cwd, sorted({r[1] for r in found.values()}))
        targets = {renames[(r[1], r[0])] for r in found.values() if (r[1], r[0]) in renames}
        present = _at_head(cwd, head, sorted(targets))
        for p in todo:
            got = found.get(p)
            removal = None
            if got is not None:
                old, sha, when, subject = got
                removal = Removal(old, sha, when, subject, renames.get((sha, old)))
                if removal.renamed_to is not None and removal.renamed_to not in present:
                    removal = _follow(cwd, head, removal)  # renamed again, or deleted since
                out[p] = removal
            if got is not None or complete or settle:
                self._removals[(head, p)] = removal  # a path the time ran out for is asked again next time
                if got is None and not complete:
                    self._unread.add((head, p))
        return out

    def unanswered(self, paths: Iterable[str]) -> set[str]:
        """Of paths `removals` was asked about with ``settle``, those the log could not be read far enough for
        (out of time, or git failed): nothing is known of them for this `HEAD`."""
        if self._head is None:
            return set()
        return {p for p in paths if (self._head, p.lstrip("/")) in self._unread}

    def never_removed(self, paths: Iterable[str]) -> set[str]:
        """Of paths `removals` was asked about, those the whole history of `HEAD` shows no file deleted or
        renamed away at: the log was read to its start in time, in a clone that is not shallow (a shallow one
        knows nothing before its cut)."""
        if self._head is None or self._shallow:
            return set()
        keys = {p: (self._head, p.lstrip("/")) for p in paths}
        return {p for p, k in keys.items() if k in self._removals and self._removals[k] is None and k not in self._unread}


def _at_head(cwd: str, head: str, paths: list[str]) -> set[str]:
    """Which of the paths (relative to ``cwd``) hold a file at ``head``: one `git cat-file --batch-check`."""
    if not paths:
        return set()
    got = _run(["cat-file", "--batch-check"], cwd, "".join(f"{head}:./{p}\n" for p in paths))
    if got is None or got[0] != 0:
        return set()
    out = set()
    for p, answer in zip(paths, got[1].split("\n")):  # "<sha> blob <size>", or "<name> missing"
        parts = answer.split(" ")
        if len(parts) == 3 and _is_sha(parts[0]) and parts[1] == "blob":
            out.add(p)
    return out


def _follow(cwd: str, head: str, removal: Removal) -> Removal:
    """A renamed file that is not at `HEAD` under its new name, through its later renames (up to
    `MAX_RENAME_HOPS`), to where it is at `HEAD`, or to the commit that deleted it."""
    at = removal.renamed_to
    for _ in range(MAX_RENAME_HOPS):
        assert at is not None
        found, _ = _log_removals(cwd, head, [at], exact=True)
        got = found.get(at)
        if got is None or got[2] < removal.time:
            break  # no later removal: where it went is as far as git can say
        sha = got[1]
        nxt = _renames(cwd, [sha]).get((sha, at))
        if nxt is None:
            return Removal(removal.path, removal.commit, removal.time, removal.subject, at, True)
        at = nxt
        removal = Removal(removal.path, removal.commit, removal.time, removal.subject, at)
        if at in _at_head(cwd, head, [at]):
            break
    return removal


def _glob_escape(p: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in p)


class _Matcher:
    """Matches deleted paths, newest first, against requested paths (see `_log_removals`): a path without a
    directory, or under one, matches in any directory (`web.py` is `services/stats/web.py`); one ending in `/`
    matches any file below such a directory."""

    def __init__(self, paths: list[str], exact: bool = False) -> None:
        self.exact = exact
        self.wanted = len(paths)
        self.by_name: dict[str, list[str]] = {}
        self.dirs = [p for p in paths if p.endswith("/")]  # matched by a component run: `.claude/rules/` in x/.claude/rules/a.md
        for p in paths:
            if not p.endswith("/"):
                self.by_name.setdefault(p.rsplit("/", 1)[-1], []).append(p)
        self.out: dict[str, tuple[str, str, int, str]] = {}

    def add(self, item: str, sha: str, when: int, subject: str) -> None:
        out = self.out
        for p in self.by_name.get(item.rsplit("/", 1)[-1], ()):
            if p not in out and (item == p or (not self.exact and item.endswith("/" + p))):
                out[p] = (item, sha, when, subject)
        for p in self.dirs:
            if p not in out and (item.startswith(p) or "/" + p in item):
                out[p] = (item, sha, when, subject)

    def done(self) -> bool:
        return len(self.out) >= self.wanted


def _log_removals(cwd: str, head: str, paths: list[str], exact: bool = False, budget: float = REMOVALS_TIMEOUT_S,
                  collect: list | None = None) -> tuple[dict[str, tuple[str, str, int, str]], bool]:
    """Requested path -> (removed path, commit, commit time, subject) of the newest commit that deleted or
    renamed it (every side branch included), from a `git log` read as it streams and stopped once every path
    has its answer; and whether the log was read to its end (or every path answered) in time. With
    ``collect`` (a list), every deleted path of the whole log is read (no early stop) and appended to it as
    (path, commit, time, subject), newest first; then the second value says whether the log was read to its end."""
    if exact:
        specs = [f":(literal){p}" for p in paths]
    elif len(paths) > SCAN_OVER or collect is not None:
        specs = []  # (git matches each pathspec against every path of every commit: past a few, reading every
        # deleted path once and matching by name here is faster)
    else:
        specs = [f":(glob)**/{_glob_escape(p)}" + ("**" if p.endswith("/") else "") for p in paths]
    match = _Matcher(paths, exact)
    args = ["log", "--full-history", "--no-renames", "--diff-filter=D", "--name-only", "-z",
            "--relative", "--format=%x01%H%x02%ct%x02%s", head, *(["--", *specs] if specs else [])]
    try:
        proc = _spawn(args, cwd)
    except Exception as exc:
        log.debug("git log failed: %s", exc)
        return match.out, False
    timer = threading.Timer(budget, _kill, (proc,))  # a blocked read ends when git is killed
    ended = False
    try:
        timer.start()
        assert proc.stdout is not None
        buf = b""
        sha, when, subject = "", 0, ""
        while collect is not None or not match.done():
            chunk = proc.stdout.read1(65536)
            if not chunk:
                ended = True
                break
            buf += chunk
            *parts, buf = buf.split(b"\0")
            for raw in parts:
                item = raw.decode("utf-8", "surrogateescape").lstrip("\n")
                if item.startswith("\x01"):
                    fields = item[1:].split("\x02", 2)
                    sha = fields[0] if len(fields) == 3 and _is_sha(fields[0]) else ""
                    subject = fields[2].replace("\n", " ") if sha else ""
                    try:
                        when = int(fields[1]) if sha else 0
                    except ValueError:
                        sha = ""
                    continue
                if not item or not sha:
                    continue
                match.add(item, sha, when, subject)
                if collect is not None:
                    collect.append((item, sha, when, subject))
    except Exception as exc:
        log.debug("reading git log failed: %s", exc)
    finally:
        timer.cancel()
        if not ended:
            _kill(proc)  # every path answered (or out of time): the rest of the walk is not needed
        try:
            proc.wait(timeout=5)
        except Exception:
            pass
    whole = ended and proc.returncode == 0
    return match.out, whole or (collect is None and match.done())


def _match_removals(deleted: list[tuple[str, str, int, str]], paths: list[str]
                    ) -> dict[str, tuple[str, str, int, str]]:
    """`_log_removals`'s answer for ``paths`` from a whole log's deleted paths read before (newest first)."""
    match = _Matcher(paths)
    for item in deleted:
        if match.done():
            break
        match.add(*item)
    return match.out


def _renames(cwd: str, shas: list[str]) -> dict[tuple[str, str], str]:
    """(commit, old path) -> new path of the renames among those commits' changes (paths relative to ``cwd``)."""
    if not shas:
        return {}
    raw = _git(["show", "-M", "--name-status", "-z", "--relative", "--format=%x01%H", *shas], cwd)
    out: dict[tuple[str, str], str] = {}
    if not raw:
        return out
    for record in raw.split("\x01")[1:]:
        sha, _, rest = record.partition("\0")
        items = rest.lstrip("\n").split("\0")
        i = 0
        while i < len(items):
            status = items[i].strip()
            if status.startswith(("R", "C")) and i + 2 < len(items):
                if status.startswith("R"):
                    out[(sha.strip(), items[i + 1])] = items[i + 2]
                i += 3
            elif status:
                i += 2
            else:
                i += 1
    return out


def latest(lines: dict[int, Change | None], start: int, end: int) -> Change | None:
    """The latest change among 0-based lines ``start``..``end`` (uncommitted beats any commit); None when a
    line has no known change."""
    best: Change | None = None
    for line in range(start, end + 1):
        c = lines.get(line)
        if c is None:
            return None  # a line git did not date: no answer rather than half of one
        if best is None or (c.commit is None and best.commit is not None) or \
                ((c.commit is None) == (best.commit is None) and c.time > best.time):
            best = c
    return best
