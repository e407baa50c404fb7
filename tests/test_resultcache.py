"""The persistent check-result cache: reused only while nothing the analysis looked at changed."""

from __future__ import annotations

import os
import time
from pathlib import Path

from ctxls.core import resultcache as RC
from ctxls.core.check import Workspace, run_checks
from ctxls.core.settings import Settings


def _ws(root: Path, tmp: Path) -> Workspace:
    return Workspace(root, Settings(home=tmp / "home", ceiling=tmp, managed_dir=tmp / "m", today="2026-11-29"))


def _setup(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "CLAUDE.md").write_text("# Root\n@docs/missing.md\n")
    (root / "docs" / "a.md").write_text("a\n")
    return root


def _run_and_store(root: Path, tmp: Path, cache: RC.ResultCache, key: str, report: str = "report"):
    ws = _ws(root, tmp)
    res = run_checks(ws)
    assert cache.put(key, RC.fingerprint(ws.fs, ws.index.dirs, ws.walked_dirs))
    assert cache.put_output("json", {"stdout": report, "stderr": "", "status": 1 if res.findings else 0})
    return res


def _report(cache: RC.ResultCache, key: str = "k", name: str = "json") -> str | None:
    got = RC.ResultCache(cache.path).output(key, name)
    return None if got is None else got["stdout"]


def test_round_trip_and_invalidation(tmp_path: Path) -> None:
    root = _setup(tmp_path)
    (tmp_path / "cache").mkdir()  # before the run: creating it later changes a listed directory's mtime
    cache = RC.ResultCache(tmp_path / "cache" / "check.json")
    res = _run_and_store(root, tmp_path, cache, "k", "first")
    assert res.findings and _report(cache) == "first"
    assert _report(cache, "other-key") is None and _report(cache, name="text") is None
    # editing a file that was read invalidates
    time.sleep(0.01)
    (root / "CLAUDE.md").write_text("# Root\n@docs/a.md\n")
    assert _report(cache) is None
    res = _run_and_store(root, tmp_path, cache, "k", "second")
    assert res.findings == [] and _report(cache) == "second"
    # a new file anywhere in a scanned directory invalidates (directory mtime)
    (root / "docs" / "CLAUDE.md").write_text("new\n")
    os.utime(root / "docs", ns=(time.time_ns(), time.time_ns() + 1_000_000))
    assert _report(cache) is None


def test_corrupt_cache_is_ignored(tmp_path: Path) -> None:
    p = tmp_path / "check.json"
    (tmp_path / "check.out-json").write_text('{"run": "r", "stderr": "", "status": 0}\nx')
    for junk in ("not json", "[]", '{"version": 3, "key": "k", "fingerprint": 5, "run": "r"}',
                 '{"version": 3, "key": "k", "fingerprint": {"files": {}, "dirs": {}}, "run": 5}',
                 '{"version": 2, "key": "k", "fingerprint": {"files": {}, "dirs": {}}, "run": "r"}'):
        p.write_text(junk)
        assert RC.ResultCache(p).output("k", "json") is None
    p.write_text('{"version": 3, "key": "k", "fingerprint": {"files": {}, "dirs": {}}, "run": "r"}')
    assert RC.ResultCache(p).output("k", "json")["stdout"] == "x"  # the control: this one is valid
    (tmp_path / "check.out-json").write_text("{not json\nx")
    assert RC.ResultCache(p).output("k", "json") is None
    assert RC.ResultCache(None).output("k", "json") is None


def test_reports_belong_to_their_run(tmp_path: Path) -> None:
    root = _setup(tmp_path)
    (tmp_path / "cache").mkdir()
    cache = RC.ResultCache(tmp_path / "cache" / "check.json")
    assert cache.output("k", "json") is None and not cache.put_output("json", {"stdout": "x"})
    _run_and_store(root, tmp_path, cache, "k", "one")
    assert _report(cache) == "one"
    # a new run (same key) makes the old report unreachable: it names another run
    ws = _ws(root, tmp_path)
    run_checks(ws)
    cache.put("k", RC.fingerprint(ws.fs, ws.index.dirs, ws.walked_dirs))
    assert _report(cache) is None


def test_report_text_round_trips_exactly(tmp_path: Path) -> None:
    """Stored as printed: newlines (\\n, \\r\\n), quotes, backslashes and non-ASCII come back unchanged."""
    root = _setup(tmp_path)
    (tmp_path / "cache").mkdir()
    cache = RC.ResultCache(tmp_path / "cache" / "check.json")
    ws = _ws(root, tmp_path)
    run_checks(ws)
    assert cache.put("k", RC.fingerprint(ws.fs, ws.index.dirs, ws.walked_dirs))
    for out in ("", "one line", 'a "q" \\\\ b\r\nc\nünï 🎉\n\n', "\n" * 3):
        assert cache.put_output("text", {"stdout": out, "stderr": "s\n", "status": 1})
        got = RC.ResultCache(cache.path).output("k", "text")
        assert got == {"stdout": out, "stderr": "s\n", "status": 1, "run": cache.last_run}
