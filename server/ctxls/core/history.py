"""When lines of a file last changed, from git history: which of two versions of an instruction is newer.

A fresh clone gives every file the same modification time, so CTX202 asks git first: `git blame --porcelain`
of just the lines of each version (one `git blame` per file, with one `-L` per range, and the editor's unsaved
text through `--contents -`). A line with uncommitted changes is newer than any commit.

Local only and never fatal: no git binary, a workspace outside a repository, a repository without commits, an
untracked file, a timeout or any other failure gives None, and the caller falls back to modification times.
Lazy fetching of missing blobs (partial clones) is switched off, so blame never reaches the network, and the
file-system monitor hook a repository may configure is never run.
"""

from __future__ import annotations

import logging
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

log = logging.getLogger("ctxls.history")

UNCOMMITTED = "0" * 40
"""The commit `git blame` reports for lines changed in the working tree (or the given contents)."""
MAX_FILES = 32
"""Files blamed per batch at most (the first in the order asked); later ones fall back to modification times.
Diverged instructions are few in a real repository; a generated one with thousands must not wait on git."""
TIMEOUT_S = 10.0

_ENV = {
    "GIT_NO_LAZY_FETCH": "1",  # a partial clone must not fetch blobs (no network at run time)
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "LC_ALL": "C",
}
_SAFE = ("-c", "core.fsmonitor=false", "-c", "blame.ignoreRevsFile=")


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
        return f"{time.strftime('%Y-%m-%d', time.gmtime(self.time))} in {self.commit[:7]}"


def _git(args: list[str], cwd: str, stdin: str | None = None) -> str | None:
    try:
        proc = subprocess.run(["git", *_SAFE, *args], cwd=cwd, input=stdin, capture_output=True, text=True,
                              encoding="utf-8", errors="surrogateescape", timeout=TIMEOUT_S,
                              env={**os.environ, **_ENV})
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        log.debug("git %s failed: %s", args[0], exc)
        return None
    if proc.returncode != 0:
        log.debug("git %s: %s", args[0], proc.stderr.strip()[:200])
        return None
    return proc.stdout


def _in_repository(path: Path) -> bool:
    """A `.git` in ``path`` or above: worth asking git (spawning it costs a few milliseconds)."""
    for d in (path, *path.parents):
        if os.path.lexists(os.path.join(d, ".git")):
            return True
    return False


def parse_blame(out: str) -> dict[int, Change]:
    """`git blame --porcelain` output -> 0-based final line -> its last change."""
    times: dict[str, int] = {}
    line_commit: dict[int, str] = {}
    header = True
    sha = ""
    for raw in out.split("\n"):
        if raw.startswith("\t"):
            header = True  # the line's content ends its entry; a header follows
            continue
        if header:
            parts = raw.split(" ")
            if len(parts) >= 3 and len(parts[0]) == 40:
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
    return {line: Change(times.get(sha, 0), None if sha == UNCOMMITTED else sha)
            for line, sha in line_commit.items()}


class History:
    """Per-line change times of the files of one repository, cached by file content (so a long-lived snapshot
    asks git again only about files that changed, and a new commit is seen through the `HEAD` it moves)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._top: str | None | bool = False  # False: not looked up yet; None: no repository with commits
        self._head: str = ""
        self.git_dir: str | None = None
        """The repository's git directory once found: a commit or checkout changes its listing, which is how
        a cached report built from blame answers knows it is out of date."""
        self._lines: dict[tuple[str, str, int], dict[int, Change] | None] = {}

    def toplevel(self) -> str | None:
        """The repository's work tree, with `HEAD` looked up again (a long-lived snapshot outlives commits)."""
        if self._top is None:
            return None
        cwd = self._top if isinstance(self._top, str) else str(self.root)
        if self._top is False and not _in_repository(self.root):
            self._top = None
            return None
        out = _git(["rev-parse", "--show-toplevel", "--absolute-git-dir", "HEAD"], cwd)
        got = out.split("\n") if out else []
        if len(got) >= 3 and got[0] and len(got[2]) == 40:
            self._top, self.git_dir, self._head = got[0], got[1], got[2]
        else:
            self._top = None
        return self._top

    def changes(self, requests: dict[Path, tuple[str, Iterable[tuple[int, int]]]]) -> dict[Path, dict[int, Change]]:
        """For each file (its current text and the 0-based inclusive line ranges wanted), the last change of
        each of those lines; files git cannot answer for are left out. Files are blamed in parallel (git does
        the work; these threads only wait), at most `MAX_FILES` of them."""
        top = self.toplevel()
        if top is None or not requests:
            return {}
        out: dict[Path, dict[int, Change]] = {}
        todo = []
        for path, (text, ranges) in list(requests.items())[:MAX_FILES]:
            rel = os.path.relpath(path, top)
            if rel.startswith(".." + os.sep) or rel == ".." or os.path.isabs(rel):
                continue  # not in this repository (the user's ~/.claude, auto memory)
            key = (str(path), self._head, hash(text))
            if key in self._lines:
                got = self._lines[key]
                if got is not None and all(line in got for a, b in ranges for line in range(a, b + 1)):
                    out[path] = got
                    continue
                if got is None:
                    continue
            todo.append((key, path, rel, text, sorted(set(ranges))))
        if not todo:
            return out
        if len(self._lines) > 4 * MAX_FILES:  # a long editing session: one entry per version blamed
            self._lines.clear()

        def blame(item):
            key, path, rel, text, ranges = item
            args = ["blame", "--porcelain", "-w"]
            for a, b in ranges:
                args += ["-L", f"{a + 1},{b + 1}"]
            args += ["--contents", "-", "--", rel]
            raw = _git(args, top, stdin=text)
            return key, path, parse_blame(raw) if raw is not None else None

        workers = min(2, len(todo))
        if workers == 1:
            done = [blame(todo[0])]
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                done = list(pool.map(blame, todo))
        for key, path, got in done:
            if got is not None:
                old = self._lines.get(key)
                if old:
                    got = {**old, **got}
                out[path] = got
            self._lines[key] = got
        return out


def latest(lines: dict[int, Change], start: int, end: int) -> Change | None:
    """The latest change among 0-based lines ``start``..``end`` (uncommitted beats any commit)."""
    best: Change | None = None
    for line in range(start, end + 1):
        c = lines.get(line)
        if c is None:
            return None  # a line git did not report: no answer rather than half of one
        if best is None or (c.commit is None and best.commit is not None) or \
                ((c.commit is None) == (best.commit is None) and c.time > best.time):
            best = c
    return best
