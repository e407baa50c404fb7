"""The bench scripts that take no network (agnix is installed on first use of bench_check.py) still run: a
script that rots would report a floor for code that no longer exists."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from ctxls.core.budget import startup_texts
from ctxls.core.check import Workspace
from ctxls.core.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "fixtures" / "demo"


def test_count_floor_counts_what_a_cold_check_counts_before_its_first_rule(tmp_path):
    home = DEMO / "home"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "count_floor.py"), str(DEMO / "repo"),
                           "--home", str(home)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    got = re.search(r"(\d+) texts, ([\d,]+) chars", proc.stderr)
    assert got, proc.stderr
    ws = Workspace(DEMO / "repo", Settings(home=home))
    texts = {t for t in startup_texts(ws.index, ws.settings, ws.fs, contents=True) if t}
    assert int(got[1]) == len(texts) > 0
    assert int(got[2].replace(",", "")) == sum(map(len, texts))


def test_bench_compare_prints_both_timings_and_the_ratio(tmp_path):
    """bench_compare.py on a small generated monorepo with every agent's files: it runs both commands and
    reports the ratio (its value is the bench's business, not this test's)."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from bench_compare import add_agent_files
        from gen_monorepo import generate
    finally:
        sys.path.pop(0)
    repo, home = tmp_path / "repo", tmp_path / "home"
    generate(repo, files=120, dirs=12, claude=12, skills=3, home=home)
    added = add_agent_files(repo)
    assert added["agents_md"] >= 1 and added["gemini_md"] >= 1
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_compare.py"), "--repo", str(repo),
                           "--home", str(home), "--runs", "1", "--json"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    import json

    rep = json.loads(proc.stdout)
    assert set(rep["cases"]) == {"baseline", "context", "compare"}
    assert rep["agents"] == ["claude-code", "codex", "cursor", "copilot", "gemini"] and rep["compare_rows"] > 12
    assert rep["ratio_compare_to_context"] == round(
        rep["cases"]["compare"]["median_s"] / rep["cases"]["context"]["median_s"], 3)
    assert rep["ok"] == (proc.returncode == 0)


def test_agent_economics_runs_and_the_policy_beats_both_naive_loops(tmp_path):
    """A short replay (16 steps, no chart): the script still runs, and its ratios are computed from the ledgers."""
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "agent_economics.py"), "--steps", "16", "--png", ""],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = {m[0]: int(m[1].replace(",", "")) for m in
            re.findall(r"^(naive\+cache|naive|ctxls)\s+finished\s+\d+\s+([\d,]+)", proc.stdout, re.M)}
    assert set(rows) == {"naive", "naive+cache", "ctxls"}, proc.stdout
    assert rows["ctxls"] < rows["naive+cache"] < rows["naive"]
    assert "rejected requests: 0" in proc.stdout
