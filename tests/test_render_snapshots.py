"""Text output of `context`, `budget` and `check` on the demo at 80 and 100 columns (issue 16), as snapshots in
tests/snapshots/ (regenerate with CTXLS_UPDATE_SNAPSHOTS=1 and read the diff), plus what must hold at any width:
no line past the width, paths shortened from the left at a `/`, never broken mid-word."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from test_cli import TOUCHED, demo  # noqa: F401  (the fixture)

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
RUNS = {
    "context": ("context", "repo/services/billing", "--touch", f"repo/{TOUCHED}"),
    "budget": ("budget", "repo"),
    "check": ("check", "repo"),
}


def _run(demo: Path, args, width: int):
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "PYTHONPATH", "ANTHROPIC_API_KEY")}
    env.update(HOME=str(demo / "no-such-home"), COLUMNS=str(width))
    return subprocess.run([sys.executable, "-m", "ctxls", *args, "--no-cache", "--ceiling", "repo"], cwd=demo,
                          env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("width", [80, 100])
@pytest.mark.parametrize("name", sorted(RUNS))
def test_text_output_matches_its_snapshot(demo, name, width):
    proc = _run(demo, RUNS[name], width)
    assert proc.returncode in (0, 1), proc.stderr
    out = proc.stdout.replace(str(demo), "<demo>")
    if name != "check":  # (check prints one `path:line:col: CODE [severity] message` per line, for editors and grep)
        for line in out.splitlines():
            assert len(line.rstrip()) <= width, line
    snap = SNAPSHOTS / f"{name}-{width}.txt"
    if os.environ.get("CTXLS_UPDATE_SNAPSHOTS"):
        snap.write_text(out, encoding="utf-8")
    assert out == snap.read_text(encoding="utf-8")


@pytest.mark.parametrize("width", [80, 100])
def test_table_paths_are_whole_or_cut_at_a_slash(demo, width):
    known = {p.relative_to(demo / "repo").as_posix() for p in (demo / "repo").rglob("*")}
    for name in ("context", "budget"):
        out = _run(demo, RUNS[name], width).stdout
        for cell in re.findall(r"(?:…/|~/)?[\w.\-/]+\.(?:md|py)\b", out):
            if cell.startswith("…/"):
                assert any(k.endswith(cell[1:]) for k in known) or "MEMORY.md" in cell, cell
            elif "/" in cell and not cell.startswith("~/"):
                assert cell in known or cell.endswith("bus.md"), cell
        assert "\n" not in "".join(re.findall(r"\S+/\n\S", out))
