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
    """What git knows of one workspace's files: per-line change times (cached by file content and `HEAD`, so
    a long-lived snapshot asks git again only about files that changed) and the commits that removed paths."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._top: str | None | bool = False  # False: not looked up yet; None: no repository with commits
        self._head: str = ""
        self.git_dir: str | None = None
        """The repository's git directory once found: a commit or checkout changes its listing, which is how
        a cached report built from blame answers knows it is out of date."""
        self._lines: dict[tuple[str, str, int], dict[int, Change] | None] = {}
        self._removals: dict[tuple[str, str], Removal | None] = {}

    def refresh(self) -> bool:
        """Find the repository and its current `HEAD` (again: a long-lived snapshot outlives commits). False
        when there is none with commits; that answer is kept."""
        if self._top is None:
            return False
        if self._top is False and not _in_repository(self.root):
            self._top = None
            return False
        cwd = self._top if isinstance(self._top, str) else str(self.root)
        out = _git(["rev-parse", "--show-toplevel", "--absolute-git-dir", "HEAD"], cwd)
        got = out.split("\n") if out else []
        if len(got) >= 3 and got[0] and len(got[2]) == 40:
            self._top, self.git_dir, self._head = got[0], got[1], got[2]
            return True
        self._top = None
        return False

    def toplevel(self) -> str | None:
        """The repository's work tree (looked up on first use; see `refresh`)."""
        if self._top is False:
            self.refresh()
        return self._top if isinstance(self._top, str) else None

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


    def removals(self, paths: Iterable[str]) -> dict[str, "Removal"]:
        """For workspace-relative file paths that no longer exist, the latest commit that deleted or renamed a
        file at that path (a path without a directory, or under one, matches it in any directory: `web.py` is
        `services/stats/web.py` deleted). One `git log` limited to those paths, newest first, stopped once each
        has its answer, then one `git show` of the commits found to see which of them were renames."""
        if self.toplevel() is None:
            return {}
        wanted = sorted({p.strip("/") for p in paths if p.strip("/")})
        out = {}
        todo = []
        for p in wanted:
            key = (self._head, p)
            if key in self._removals:
                got = self._removals[key]
                if got is not None:
                    out[p] = got
            else:
                todo.append(p)
        if not todo:
            return out
        found = _log_removals(str(self.root), todo)
        renames = _renames(str(self.root), sorted({r[1] for r in found.values()}))
        for p in todo:
            got = found.get(p)
            removal = None
            if got is not None:
                old, sha, when, subject = got
                removal = Removal(old, sha, when, subject, renames.get((sha, old)))
                out[p] = removal
            self._removals[(self._head, p)] = removal
        return out


@dataclass(frozen=True)
class Removal:
    """The latest commit that deleted or renamed a file (paths relative to the workspace root)."""

    path: str
    commit: str
    time: int
    subject: str
    renamed_to: str | None

    def describe(self) -> str:
        when = f"on {time.strftime('%Y-%m-%d', time.gmtime(self.time))} in {self.commit[:7]}"
        subject = self.subject if len(self.subject) <= 72 else self.subject[:71].rstrip() + "…"
        what = f"renamed to `{self.renamed_to}`" if self.renamed_to else "deleted"
        return f"`{self.path}` was {what} {when} (\"{subject}\")"


def _log_removals(cwd: str, paths: list[str]) -> dict[str, tuple[str, str, int, str]]:
    """Requested path -> (removed path, commit, commit time, subject) of the newest commit that deleted or
    renamed it, from a `git log` read as it streams and stopped once every path has its answer."""
    specs = [f":(glob)**/{_glob_escape(p)}" for p in paths]
    args = ["git", *_SAFE, "log", "--no-renames", "--diff-filter=D", "--name-only", "-z", "--relative",
            "--format=%x01%H%x02%ct%x02%s", "--", *specs]
    out: dict[str, tuple[str, str, int, str]] = {}
    try:
        proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL, env={**os.environ, **_ENV})
    except OSError as exc:
        log.debug("git log failed: %s", exc)
        return out
    deadline = time.monotonic() + TIMEOUT_S
    try:
        assert proc.stdout is not None
        buf = b""
        sha, when, subject = "", 0, ""
        while len(out) < len(paths) and time.monotonic() < deadline:
            chunk = proc.stdout.read1(65536) if hasattr(proc.stdout, "read1") else proc.stdout.read(65536)
            if not chunk:
                break
            buf += chunk
            *parts, buf = buf.split(b"\0")
            for raw in parts:
                item = raw.decode("utf-8", "surrogateescape").lstrip("\n")
                if item.startswith("\x01"):
                    head = item[1:].split("\x02")
                    if len(head) == 3:
                        sha, subject = head[0], head[2]
                        try:
                            when = int(head[1])
                        except ValueError:
                            when = 0
                    continue
                if not item or not sha:
                    continue
                for p in paths:
                    if p not in out and (item == p or item.endswith("/" + p)):
                        out[p] = (item, sha, when, subject)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    return out


def _glob_escape(p: str) -> str:
    return "".join(f"[{c}]" if c in "*?[]\\" else c for c in p)


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
