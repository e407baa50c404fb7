"""The budget calculator over the demo monorepo (copied, so the cache never lands in the repo)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ctxls.core.budget import READ_TOKENS, compute_budget
from ctxls.core.config import settings_for
from ctxls.core.loader import load_session

DEMO = Path(__file__).resolve().parent.parent / "fixtures" / "demo"


@pytest.fixture()
def demo(tmp_path: Path):
    shutil.copytree(DEMO, tmp_path / "demo", symlinks=True, ignore=shutil.ignore_patterns(".ctxls"))
    root = tmp_path / "demo" / "repo"
    settings, problems = settings_for(root)
    assert problems == []
    return root, settings.replace(ceiling=root, managed_dir=tmp_path / "managed")


def test_shortcut_for_inert_directories_is_exact(demo) -> None:
    root, settings = demo
    fast = compute_budget(root, settings)
    slow = compute_budget(root, settings, reuse=False)
    assert [(d.dir, d.startup_tokens, d.instruction_tokens, d.files) for d in fast.dirs] == \
        [(d.dir, d.startup_tokens, d.instruction_tokens, d.files) for d in slow.dirs]


def test_every_directory_costs_what_its_session_loads(demo) -> None:
    root, settings = demo
    rep = compute_budget(root, settings, all_dirs=True)
    assert len(rep.dirs) == len(rep.index.dirs) and not rep.other_dirs
    for d in rep.dirs:
        assert d.startup_tokens == load_session(d.dir, (), settings, root=root).startup_tokens
    costs = [d.startup_tokens for d in rep.dirs]
    assert costs == sorted(costs, reverse=True)
    # the tests directory loads its own CLAUDE.md on top of billing's: it is the most expensive place
    assert rep.worst.dir == root / "services" / "billing" / "tests"


def test_scenarios_and_policy(demo) -> None:
    root, settings = demo
    rep = compute_budget(root, settings)
    rc = rep.root_cost
    assert rep.reads_until_half(rc) == (settings.window // 2 - rc.startup_tokens) // READ_TOKENS
    assert rep.tokens_until_compact(rc) == settings.autocompact_threshold - rc.startup_tokens
    assert len(rep.policy) == 3
    assert rep.memory_cut and "201-214" in rep.memory_cut
    assert rep.files[0].tokens >= rep.files[-1].tokens
    small = compute_budget(root, settings.replace(window=20_000))
    assert small.reads_until_half(small.root_cost) == 0  # the fixed overhead alone is past half


def test_budget_reports_unscannable_directories(demo, monkeypatch) -> None:
    root, settings = demo
    import ctxls.core.discovery as D

    real = D.os.scandir
    bad = root / "web"

    def scandir(p):
        if Path(p) == bad:
            raise PermissionError(13, "Permission denied")
        return real(p)

    monkeypatch.setattr(D.os, "scandir", scandir)
    rep = compute_budget(root, settings)
    assert (bad, "permission denied") in rep.index.skipped
    assert all(d.dir != bad for d in rep.dirs)


def test_ranking_leaves_out_agent_config_and_docs_folders(demo) -> None:
    """Nobody starts a session in `.claude/rules` or `docs/`: those are reported apart (issue 16)."""
    root, settings = demo
    rep = compute_budget(root, settings)
    everything = compute_budget(root, settings, all_dirs=True)
    ranked = {d.dir.relative_to(root).as_posix() for d in rep.dirs}
    others = {d.dir.relative_to(root).as_posix() for d in rep.other_dirs}
    assert ranked | others == {d.dir.relative_to(root).as_posix() for d in everything.dirs}
    assert not ranked & others
    assert {".claude", ".claude/rules", ".claude/skills/release", "docs"} <= others
    assert {".", "services/billing", "services/billing/tests"} <= ranked
    assert all(not part.startswith(".") and part != "docs" for d in ranked - {"."} for part in d.split("/"))
