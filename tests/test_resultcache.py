"""The persistent check-result cache: reused only while nothing the analysis looked at changed."""

from __future__ import annotations

import os
import time
from pathlib import Path

from ctxls.core import resultcache as RC
from ctxls.core.check import Workspace, run_checks
from ctxls.core.findings import Edit, Finding, Fix, Related, Span
from ctxls.core.settings import Settings


def _ws(root: Path, tmp: Path) -> Workspace:
    return Workspace(root, Settings(home=tmp / "home", ceiling=tmp, managed_dir=tmp / "m", today="2026-11-29"))


def _setup(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "CLAUDE.md").write_text("# Root\n@docs/missing.md\n")
    (root / "docs" / "a.md").write_text("a\n")
    return root


def _run_and_store(root: Path, tmp: Path, cache: RC.ResultCache, key: str):
    ws = _ws(root, tmp)
    res = run_checks(ws)
    cache.put(key, RC.fingerprint(ws.fs, ws.index.dirs, ws.walked_dirs), res.findings)
    return res


def test_round_trip_and_invalidation(tmp_path: Path) -> None:
    root = _setup(tmp_path)
    (tmp_path / "cache").mkdir()  # before the run: creating it later changes a listed directory's mtime
    cache = RC.ResultCache(tmp_path / "cache" / "check.json")
    res = _run_and_store(root, tmp_path, cache, "k")
    assert res.findings and cache.get("k") == res.findings
    assert cache.get("other-key") is None
    # editing a file that was read invalidates
    time.sleep(0.01)
    (root / "CLAUDE.md").write_text("# Root\n@docs/a.md\n")
    assert cache.get("k") is None
    _run_and_store(root, tmp_path, cache, "k")
    assert cache.get("k") == []
    # a new file anywhere in a scanned directory invalidates (directory mtime)
    (root / "docs" / "CLAUDE.md").write_text("new\n")
    os.utime(root / "docs", ns=(time.time_ns(), time.time_ns() + 1_000_000))
    assert cache.get("k") is None


def test_corrupt_cache_is_ignored(tmp_path: Path) -> None:
    p = tmp_path / "check.json"
    for junk in ("not json", "[]", '{"version": 1, "key": "k", "fingerprint": 5, "findings": []}',
                 '{"version": 1, "key": "k", "fingerprint": {"files": {}, "dirs": {}}, "findings": [{"x": 1}]}'):
        p.write_text(junk)
        assert RC.ResultCache(p).get("k") is None
    assert RC.ResultCache(None).get("k") is None


def test_finding_serialisation_keeps_fixes() -> None:
    f = Finding("CTX305", "info", Path("/r/CLAUDE.md"), Span(3, 0, 3, 5), "msg",
                [Related(Path("/r/a.md"), Span(0, 0, 0, 0), "first")],
                [Fix("Delete", (Edit(Path("/r/CLAUDE.md"), Span(3, 0, 4, 0), ""),
                                Edit(Path("/r/new.md"), None, "x", create=True)), safe=False)], {"n": 1})
    assert RC.load_finding(RC.dump_finding(f)) == f


def test_reports_belong_to_their_run(tmp_path: Path) -> None:
    root = _setup(tmp_path)
    (tmp_path / "cache").mkdir()
    cache = RC.ResultCache(tmp_path / "cache" / "check.json")
    assert cache.output("k", "json") is None and not cache.put_output("json", {"stdout": "x"})
    _run_and_store(root, tmp_path, cache, "k")
    assert cache.put_output("json", {"stdout": "report", "stderr": "", "status": 1})
    fresh = RC.ResultCache(tmp_path / "cache" / "check.json")
    assert fresh.output("k", "json")["stdout"] == "report"
    assert fresh.output("k", "text") is None and fresh.output("other", "json") is None
    # a new run (same key) makes the old report unreachable: it names another run
    _run_and_store(root, tmp_path, cache, "k")
    assert RC.ResultCache(tmp_path / "cache" / "check.json").output("k", "json") is None
    # a corrupt report is ignored
    cache.put_output("json", {"stdout": "again", "stderr": "", "status": 0})
    (tmp_path / "cache" / "check.out-json.json").write_text("{not json")
    assert RC.ResultCache(tmp_path / "cache" / "check.json").output("k", "json") is None
    # findings stored apart from the fingerprint; losing them is a miss, never an error
    (tmp_path / "cache" / "check.findings.json").unlink()
    assert RC.ResultCache(tmp_path / "cache" / "check.json").get("k") is None
