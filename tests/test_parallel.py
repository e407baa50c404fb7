"""`run_checks(jobs=2)` (what `ctxls check` does on two cores) must give exactly the serial result: same
findings in the same order, same errors, and a record of every file the analysis read (the result cache's
fingerprint depends on it). Checked on a small generated monorepo that triggers most rule families."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxls.core import parallel as C  # the runner behind run_checks(jobs=2)
from ctxls.core.check import Workspace, run_checks
from ctxls.core.settings import Settings

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forking needs a POSIX system")


@pytest.fixture(scope="module")
def monorepo(tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("mono")
    repo, home = base / "repo", base / "home"
    subprocess.run([sys.executable, str(ROOT / "bench" / "gen_monorepo.py"), str(repo), "--home", str(home),
                    "--files", "400", "--dirs", "40", "--claude", "40", "--skills", "20"],
                   check=True, stdout=subprocess.DEVNULL)
    return repo, home


def _ws(repo: Path, home: Path) -> Workspace:
    return Workspace(repo, Settings(home=home, ceiling=repo.parent, managed_dir=repo.parent / "managed"))


def _summary(findings) -> list[tuple]:
    return [(str(f.path), f.span, f.code, f.severity, f.message, [(str(r.path), r.span, r.message) for r in f.related],
             [(x.title, x.safe, x.edits) for x in f.fixes]) for f in findings]


@pytest.fixture
def forks(monkeypatch) -> list[int]:
    """Counts the forks run_checks makes (the child's own count is lost with it)."""
    calls: list[int] = []
    real = os.fork

    def counting_fork():
        calls.append(1)
        return real()

    monkeypatch.setattr(os, "fork", counting_fork)
    monkeypatch.setattr(C, "usable_cpus", lambda: 2)  # the split also runs (and is tested) on one CPU
    return calls


def test_split_run_equals_serial_run(monorepo, forks) -> None:
    repo, home = monorepo
    serial = run_checks(_ws(repo, home), jobs=1)
    assert forks == []
    ws = _ws(repo, home)
    split = run_checks(ws, jobs=2)
    assert forks == [1]
    assert split.errors == serial.errors == []
    codes = {f.code[:4] for f in serial.findings}
    assert {"CTX2", "CTX4"} <= codes  # both sides of the split found something
    assert _summary(split.findings) == _summary(serial.findings)


def test_split_run_records_what_the_child_read(monorepo, forks) -> None:
    repo, home = monorepo
    ws1 = _ws(repo, home)
    run_checks(ws1, jobs=1)
    ws2 = _ws(repo, home)
    run_checks(ws2, jobs=2)
    assert forks == [1]
    files1, dirs1 = ws1.fs.read_stats()
    files2, dirs2 = ws2.fs.read_stats()
    assert set(files1) <= set(files2)
    assert set(dirs1) <= set(dirs2)
    # the parent itself never read some of them: they came from the child
    own = {str(p) for p in ws2.fs._cache}
    assert set(files1) - own, "expected files only the forked rules read"
    assert set(ws1.walked_dirs) <= set(ws2.walked_dirs)


def test_child_failure_falls_back_to_running_its_rules_here(monorepo, forks, monkeypatch) -> None:
    """A finding the child cannot send (unpicklable data) makes it fail; the parent runs those rules itself."""
    from ctxls.core import rules

    registry = rules.load_all()
    code = "CTX401"
    info = registry[code]

    def with_unpicklable_data(ws):
        for f in info.func(ws):
            f.data["callback"] = lambda: None
            yield f

    monkeypatch.setitem(rules.REGISTRY, code, info.__class__(**{**info.__dict__, "func": with_unpicklable_data}))
    repo, home = monorepo
    serial = run_checks(_ws(repo, home), jobs=1)
    split = run_checks(_ws(repo, home), jobs=2)
    assert forks == [1]
    assert any(f.code == code for f in serial.findings)
    assert _summary(split.findings) == _summary(serial.findings)


def test_crash_in_the_child_is_reported_like_a_serial_crash(monorepo, forks, monkeypatch) -> None:
    from ctxls.core import rules

    registry = rules.load_all()
    code = "CTX701"
    info = registry[code]

    def boom(ws):
        raise RuntimeError("kaput")

    monkeypatch.setitem(rules.REGISTRY, code, info.__class__(**{**info.__dict__, "func": boom}))
    repo, home = monorepo
    split = run_checks(_ws(repo, home), jobs=2)
    assert forks == [1]
    assert len(split.errors) == 1 and code in split.errors[0] and "kaput" in split.errors[0]


def test_no_fork_when_one_side_has_nothing_to_run(monorepo, forks) -> None:
    import dataclasses

    repo, home = monorepo
    ws = _ws(repo, home)
    ws.config = dataclasses.replace(ws.config, select=frozenset({"CTX4"}))
    res = run_checks(ws, jobs=2)
    assert forks == []
    assert res.findings and {f.code[:4] for f in res.findings} == {"CTX4"}


def test_cli_jobs_option(monorepo) -> None:
    repo, home = monorepo
    env = dict(os.environ)
    base = [sys.executable, "-m", "ctxls", "check", str(repo), "--home", str(home), "--format", "json", "--no-cache"]
    one = subprocess.run(base + ["--jobs", "1"], capture_output=True, text=True, env=env)
    two = subprocess.run(base + ["--jobs", "2"], capture_output=True, text=True, env=env)
    assert one.returncode == two.returncode == 1
    assert one.stdout == two.stdout and '"CTX4' in one.stdout
    bad = subprocess.run(base + ["--jobs", "0"], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and "--jobs" in bad.stderr


def test_the_forked_side_needs_no_sessions(monorepo) -> None:
    """The split pays off only if the child's rules never build sessions (the parent builds them meanwhile):
    every rule outside `_SESSION_RULES` runs on a workspace that loads no session."""
    from ctxls.core.rules import load_all

    repo, home = monorepo
    for code, info in load_all().items():
        if code.startswith(C._SESSION_RULES):
            continue
        ws = _ws(repo, home)
        list(info.func(ws))
        assert not ws._sessions and ws._session_list is None, code


def _startup_keys(repo: Path, home: Path) -> set[str]:
    from ctxls.core.budget import startup_texts
    from ctxls.core.tokens import content_key

    ws = _ws(repo, home)
    return {content_key(t) for t in startup_texts(ws.index, ws.settings, ws.fs) if t}


def test_startup_renderings_are_counted_half_here_half_in_the_child(monorepo, forks, monkeypatch) -> None:
    from ctxls.core.tokens import TokenCounter

    monkeypatch.setattr(C, "_SPLIT_TOKENIZE_CHARS", 0)  # the small monorepo is under the real threshold
    here: list[str] = []  # what this process encoded (the child's appends die with it)
    real = TokenCounter.encode_missing

    def spy(self, todo):
        here.extend(todo)
        return real(self, todo)

    monkeypatch.setattr(TokenCounter, "encode_missing", spy)
    repo, home = monorepo
    serial = run_checks(_ws(repo, home), jobs=1)
    keys = _startup_keys(repo, home)
    here.clear()
    ws = _ws(repo, home)
    split = run_checks(ws, jobs=2)
    assert forks == [1]
    assert _summary(split.findings) == _summary(serial.findings)
    assert keys <= set(ws.counter.cache)  # every startup rendering counted ...
    mine = keys & set(here)
    assert mine and len(mine) < len(keys)  # ... some here, the rest by the child


def test_counts_the_child_does_not_send_are_made_here(monorepo, forks, monkeypatch) -> None:
    from ctxls.core.tokens import TokenCounter

    monkeypatch.setattr(C, "_SPLIT_TOKENIZE_CHARS", 0)
    parent = os.getpid()
    real = TokenCounter.encode_missing

    def fails_in_the_child(self, todo):
        if os.getpid() != parent and todo:
            raise RuntimeError("no tokenizer in the child")
        return real(self, todo)

    monkeypatch.setattr(TokenCounter, "encode_missing", fails_in_the_child)
    repo, home = monorepo
    serial = run_checks(_ws(repo, home), jobs=1)
    ws = _ws(repo, home)
    split = run_checks(ws, jobs=2)
    assert forks == [1]
    assert _summary(split.findings) == _summary(serial.findings)
    assert _startup_keys(repo, home) <= set(ws.counter.cache)


def test_halves_are_balanced_and_complete() -> None:
    todo = {f"k{i}": "x" * n for i, n in enumerate([900, 500, 400, 300, 200, 100, 100, 50])}
    a, b = C._halves(todo)
    assert a.keys() | b.keys() == todo.keys() and not a.keys() & b.keys()
    sa, sb = sum(map(len, a.values())), sum(map(len, b.values()))
    assert abs(sa - sb) <= 100


def test_no_tokenizer_gives_the_serial_result_and_counts_nothing_before_the_fork(monorepo, forks,
                                                                                 monkeypatch) -> None:
    """Without a tokenizer the split must not try to count before the fork (the child would log a failure a
    serial run never shows): the rules report it, as in a serial run."""
    from ctxls.core import tokens

    monkeypatch.setattr(C, "_SPLIT_TOKENIZE_CHARS", 0)  # any pre-count would be split, through _halves

    def no_encoder():
        raise RuntimeError("no tokenizer here")

    monkeypatch.setattr(tokens, "_encoder", no_encoder)
    calls: list[int] = []
    real = C._halves
    monkeypatch.setattr(C, "_halves", lambda todo: calls.append(1) or real(todo))
    repo, home = monorepo
    serial = run_checks(_ws(repo, home), jobs=1)
    calls.clear()
    split = run_checks(_ws(repo, home), jobs=2)
    assert forks == [1] and calls == []
    assert serial.errors and split.errors == serial.errors
    assert _summary(split.findings) == _summary(serial.findings)


def test_no_precount_for_rules_that_need_no_directory_sessions(monorepo, forks, monkeypatch) -> None:
    import dataclasses

    from ctxls.core import budget

    calls: list[int] = []
    real = budget.startup_texts
    monkeypatch.setattr(budget, "startup_texts", lambda *a, **k: calls.append(1) or real(*a, **k))
    repo, home = monorepo
    ws = _ws(repo, home)
    ws.config = dataclasses.replace(ws.config, select=frozenset({"CTX103", "CTX301"}))
    run_checks(ws, jobs=2)
    assert forks == [1] and calls == [] and ws.counter.misses == 0


def test_a_kept_token_cache_is_not_counted_or_listed_twice(monorepo, forks, monkeypatch) -> None:
    from ctxls.core import budget, tokens

    repo, home = monorepo
    first = _ws(repo, home)
    run_checks(first, jobs=1)
    calls: list[int] = []
    real = budget.startup_texts
    monkeypatch.setattr(budget, "startup_texts", lambda *a, **k: calls.append(1) or real(*a, **k))
    loads: list[int] = []  # asked for the tokenizer in this process (never needed: every count is kept)
    real_encoder = tokens._encoder
    monkeypatch.setattr(tokens, "_encoder", lambda: loads.append(1) or real_encoder())
    ws = _ws(repo, home)
    ws.counter.cache = dict(first.counter.cache)
    run_checks(ws, jobs=2)
    assert forks == [1] and calls == [1] and ws._prefetched and ws.counter.misses == 0
    assert loads == []
