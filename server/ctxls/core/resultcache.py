"""A persistent cache of `ctxls check` reports, valid while nothing the analysis looked at has changed.

The fingerprint is every file the analysis read (path, mtime, size) and every directory it listed or
scanned (path, mtime: adding or removing a file changes it), plus the settings, the check configuration, the
rule registry and the ctxls version.  Checking it costs one `stat` per entry; any difference means a full run.
Stored as JSON (never pickle: the cache lives in the workspace, and a workspace may be untrusted).  Reading or
writing never raises.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable

from .fs import FileSystem
from .statedir import make_parent

VERSION = 3


def _stat_key(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size]


# In directories outside the workspace (the walk up to /, the home) only these names matter; their mtimes
# change with every temp file, so those directories are fingerprinted by which of the names exist.
_WATCHED_NAMES = ("CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", ".claude", ".git")


def _present(d: str) -> list[str]:
    return [n for n in _WATCHED_NAMES if os.path.lexists(os.path.join(d, n))]


def fingerprint(fs: FileSystem, dirs: Iterable[Path], extra: Iterable[Path] = (),
                root: Path | None = None) -> dict[str, Any]:
    files, listings = fs.read_stats()
    listed: dict[str, Any] = {}
    names: dict[str, list[str]] = {}
    base = str(root) + os.sep if root is not None else None
    for d in listings + list(dirs) + list(extra):
        sd = str(d)
        if base is not None and not (sd + os.sep).startswith(base) and ".claude" not in d.parts:
            names[sd] = _present(sd)
        else:
            listed[sd] = _mtime(d)
    return {"files": files, "dirs": listed, "names": names}


def _mtime(d: Path | str) -> int | None:
    try:
        return os.stat(d).st_mtime_ns
    except OSError:
        return None


def still_valid(fp: dict[str, Any]) -> bool:
    try:
        for path, want in fp["files"].items():
            if _stat_key(path) != want:
                return False
        for d, want in fp["dirs"].items():
            if _mtime(d) != want:
                return False
        for d, want in fp.get("names", {}).items():
            if _present(d) != want:
                return False
    except (KeyError, TypeError, AttributeError):
        return False
    return True


def key_of(*parts: Any) -> str:
    return hashlib.blake2b(repr(parts).encode(), digest_size=16).hexdigest()


class ResultCache:
    """``path`` (check.json) holds the key, the fingerprint and a run id; each report printed from that run
    lives next to it in ``check.out-<format>``, tagged with the run id. Validating a hit reads only the
    small file and stats the fingerprint; printing a cached report rebuilds nothing. The findings themselves
    are not stored: a run with other options (another format, ``--fix``) analyses again."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.last_run: str | None = None
        """The run id last validated or stored (what `put_output` tags a report with)."""

    def _side(self, name: str) -> Path:
        assert self.path is not None
        return self.path.with_name(f"{self.path.stem}.{name}")

    def run_id(self, key: str) -> str | None:
        """The id of the stored run when it is still valid for ``key``, else None."""
        if self.path is None:
            return None
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("version") != VERSION or data.get("key") != key or not still_valid(data["fingerprint"]):
                return None
            run = data["run"]
            if not isinstance(run, str):
                return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        self.last_run = run
        return run

    def output(self, key: str, name: str) -> dict[str, Any] | None:
        """A report rendered from the stored run (see `put_output`), when the run is still valid."""
        run = self.run_id(key)
        if run is None:
            return None
        try:
            with open(self._side("out-" + name), encoding="utf-8", newline="") as fh:
                head = json.loads(fh.readline())
                if not isinstance(head, dict) or head.get("run") != run:
                    return None
                head["stdout"] = fh.read()
        except (OSError, ValueError):
            return None
        return head

    def put_output(self, name: str, report: dict[str, Any]) -> bool:
        """Store a report (``stdout``, plus small JSON values) rendered from the findings of the run last
        validated or stored: a line of JSON, then the output as it was printed (megabytes for tens of
        thousands of findings: no escaping on the way in or out)."""
        run = self.last_run
        if run is None or self.path is None:
            return False
        head = {k: v for k, v in report.items() if k != "stdout"}
        head["run"] = run
        return self._write(self._side("out-" + name), head, str(report.get("stdout", "")))

    def put(self, key: str, fp: dict[str, Any]) -> bool:
        """Record a run: what it depended on. Reports of earlier runs become unreachable."""
        self.last_run = None
        if self.path is None:
            return False
        run = os.urandom(8).hex()
        try:
            make_parent(self.path)
        except OSError:
            return False
        if not self._write(self.path, {"version": VERSION, "key": key, "fingerprint": fp, "run": run}):
            return False
        self.last_run = run
        return True

    def _write(self, path: Path, payload: dict[str, Any], tail: str = "") -> bool:
        try:
            # dumps, not dump: json.dump always takes the pure-Python encoder, several times slower
            text = json.dumps(payload, separators=(",", ":"), default=str)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".check.")
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
                if tail:
                    fh.write("\n")
                    fh.write(tail)
            os.replace(tmp, path)
            return True
        except (OSError, TypeError, ValueError):
            return False
