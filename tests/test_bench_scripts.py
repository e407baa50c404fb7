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
