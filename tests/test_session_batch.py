"""A batch of sessions (`Workspace.sessions()`, every directory of a workspace) continues each walk from the
state an ancestor's walk reached (`load_session(prefixes=...)`). That must give exactly what loading each
session on its own gives: every block with its text, tokens, cumulative total and notes, and every skipped
entry. Checked on every session fixture, on a generated monorepo, and on the one start-dependent case: a
project import outside the start directory."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ctxls.core.check import Workspace
from ctxls.core.loader import ClaudeCodeLoader, load_session
from ctxls.core.report import session_to_json
from ctxls.core.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "sessions"
CASES = sorted(p.parent.name for p in FIXTURES.glob("*/case.json"))
PATH_SETTINGS = {"home", "config_dir", "managed_dir", "auto_memory_dir", "ceiling"}


def _assert_batch_equals_single(root: Path, settings: Settings) -> int:
    """Returns how many sessions of the batch continued another's walk."""
    restored = []
    real = ClaudeCodeLoader._restore

    def counting(self, state):
        ok = real(self, state)
        restored.append(ok)
        return ok

    ClaudeCodeLoader._restore = counting
    try:
        ws = Workspace(root, settings)
        batch = ws.sessions()
    finally:
        ClaudeCodeLoader._restore = real
    assert len(batch) == len(ws.index.dirs)
    for s in batch:
        alone = load_session(s.start_dir, (), settings, root=root)
        got, want = session_to_json(s, include_text=True), session_to_json(alone, include_text=True)
        got["blocks"] = [{**b, "notes": b.get("notes", [])} for b in got["blocks"]]
        want["blocks"] = [{**b, "notes": b.get("notes", [])} for b in want["blocks"]]
        assert got == want, s.start_dir
    return sum(restored)


@pytest.mark.parametrize("name", CASES)
def test_batch_equals_single_sessions_on_fixtures(name: str, tmp_path: Path) -> None:
    case = json.loads((FIXTURES / name / "case.json").read_text())
    work = tmp_path / "w"
    shutil.copytree(FIXTURES / name / "tree", work, symlinks=True)
    if case.get("git_root"):
        (work / case["git_root"] / ".git").mkdir(parents=True, exist_ok=True)
    base = Settings(home=work / "home", managed_dir=work / "managed", ceiling=work, today="2026-11-29")
    raw = {k: (str(work / v) if k in PATH_SETTINGS else v) for k, v in case.get("settings", {}).items()}
    settings, errors = Settings.from_mapping(raw, base)
    assert errors == []
    root = work / "repo" if (work / "repo").is_dir() else work
    _assert_batch_equals_single(root, settings)


def test_batch_equals_single_sessions_on_a_monorepo(tmp_path: Path) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    subprocess.run([sys.executable, str(ROOT / "bench" / "gen_monorepo.py"), str(repo), "--home", str(home),
                    "--files", "300", "--dirs", "30", "--claude", "30", "--skills", "12"],
                   check=True, stdout=subprocess.DEVNULL)
    settings = Settings(home=home, ceiling=tmp_path, managed_dir=tmp_path / "managed", today="2026-11-29")
    assert _assert_batch_equals_single(repo, settings) > 10


@pytest.mark.parametrize("approved", [True, False])
@pytest.mark.parametrize("mode", ["claude-md-only", "claude-md-or-agents-md", "claude-md-and-agents-md"])
def test_imports_outside_the_start_directory(tmp_path: Path, approved: bool, mode: str) -> None:
    """The root imports docs/a.md: inside the root's session, outside services/api's. Approved, the deeper
    session marks it external; not approved, it must not load there at all."""
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "services" / "api" / "deep").mkdir(parents=True)
    (root / "CLAUDE.md").write_text("# Root\n@docs/a.md\n- Root rule.\n")
    (root / "docs" / "a.md").write_text("Shared doc @b.md\n")
    (root / "docs" / "b.md").write_text("Nested import.\n")
    (root / "services" / "CLAUDE.md").write_text("# Services\n@api/notes.md\n")
    (root / "services" / "api" / "notes.md").write_text("API notes.\n")
    (root / "services" / "api" / "AGENTS.md").write_text("Agents here.\n")
    (root / "services" / "api" / "deep" / "CLAUDE.md").write_text("# Deep\n")
    settings = Settings(home=tmp_path / "home", ceiling=tmp_path, managed_dir=tmp_path / "managed",
                        external_imports_approved=approved, agents_md_mode=mode, today="2026-11-29")
    _assert_batch_equals_single(root, settings)
    deep = [s for s in Workspace(root, settings).sessions() if s.start_dir == root / "services" / "api" / "deep"]
    sources = {b.source for b in deep[0].blocks if b.source is not None}
    assert (root / "docs" / "a.md" in sources) == approved


@pytest.mark.parametrize("approved", [True, False])
def test_a_walk_recorded_by_a_sibling_is_not_reused_wrongly(tmp_path: Path, approved: bool) -> None:
    """lib/ has no instruction files, so the first walk through it is lib/a's, which (imports not approved)
    skips the root's import of lib/b/x.md as external. lib/b must not continue from that state: for it the
    import is inside the start directory and loads."""
    root = tmp_path / "repo"
    for d in ("lib/a", "lib/b", "docs", "z"):
        (root / d).mkdir(parents=True)
    (root / "CLAUDE.md").write_text("# Root\n@lib/b/x.md\n")
    (root / "lib" / "b" / "x.md").write_text("B notes.\n")
    (root / "lib" / "a" / "CLAUDE.md").write_text("# A\n")
    (root / "lib" / "b" / "CLAUDE.md").write_text("# B\n```\n@code.md\n```\n")
    (root / "docs" / "CLAUDE.md").write_text("# Docs\n")
    (root / "z" / "CLAUDE.md").write_text("# Z\n")
    settings = Settings(home=tmp_path / "home", ceiling=tmp_path, managed_dir=tmp_path / "managed",
                        external_imports_approved=approved, today="2026-11-29")
    _assert_batch_equals_single(root, settings)
    by_dir = {s.start_dir: s for s in Workspace(root, settings).sessions()}
    b_sources = {b.source for b in by_dir[root / "lib" / "b"].blocks}
    a_sources = {b.source for b in by_dir[root / "lib" / "a"].blocks}
    assert root / "lib" / "b" / "x.md" in b_sources
    assert (root / "lib" / "b" / "x.md" in a_sources) == approved
