"""One walk of the workspace (issue 15): a check lists each directory of the workspace once, in discovery's scan,
and every rule reads that walk (the stale-path index, the skill bundle lookups, `paths:` matches, the agents'
files). Counted by wrapping `os.scandir`, `os.listdir` and `os.walk`, which are all a walk can use."""

from __future__ import annotations

import collections
import os
import shutil
from pathlib import Path

import pytest

from ctxls.core.check import run_checks
from ctxls.core.engine import Engine
from ctxls.core.settings import Settings
from ctxls.core.workspace import CheckConfig, Workspace

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "compare" / "five_agents" / "tree" / "repo"


def _tree(tmp_path: Path) -> tuple[Path, Settings]:
    """Every agent's files, plus what makes each tree-reading rule look: a skill with a missing bundle file
    (CTX506 looks for candidates), a rule whose `paths:` must match (CTX507), stale paths (CTX401), a skills
    directory behind a symlink and a symlink to a directory the agent does not follow."""
    root = tmp_path / "repo"
    shutil.copytree(FIXTURE, root, symlinks=True)
    skill = root / ".agents/skills/deploy/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: deploy\ndescription: Deploy the app\n---\nRun [the script](scripts/go.sh).\n")
    (root / ".agents/skills/deploy/tools").mkdir()
    (root / ".agents/skills/deploy/tools/go.sh").write_text("echo go\n")
    (root / ".claude/skills").symlink_to("../.agents/skills")
    (root / ".claude/rules/web.md").write_text("---\npaths: web/**/*.tsx\n---\n# Web\nUse hooks.\n")
    (root / "CLAUDE.md").write_text((root / "CLAUDE.md").read_text() + "\nSee `src/gone/handler.py` for the handler.\n")
    (root / "vendored").mkdir()
    (root / "vendored/lib.py").write_text("x = 1\n")
    (root / "svc/linked").symlink_to("../vendored")
    for d in ("a/b/c", "pkg/one", "pkg/two"):
        (root / d).mkdir(parents=True)
        (root / d / "mod.py").write_text("pass\n")
    home = tmp_path / "home"
    home.mkdir()
    return root, Settings(home=home, ceiling=tmp_path, managed_dir=tmp_path / "managed")


@pytest.fixture
def listings(monkeypatch):
    """Directory -> how many times it was listed (scandir, listdir) or walked (os.walk, each directory it yields)."""
    counts: collections.Counter[str] = collections.Counter()
    scandir, listdir, walk = os.scandir, os.listdir, os.walk

    def counting_scandir(path="."):
        counts[os.path.abspath(os.fspath(path))] += 1
        return scandir(path)

    def counting_listdir(path="."):
        counts[os.path.abspath(os.fspath(path))] += 1
        return listdir(path)

    def counting_walk(top, *args, **kwargs):
        for item in walk(top, *args, **kwargs):
            counts["walk:" + os.path.abspath(item[0])] += 1
            yield item

    monkeypatch.setattr(os, "scandir", counting_scandir)
    monkeypatch.setattr(os, "listdir", counting_listdir)
    monkeypatch.setattr(os, "walk", counting_walk)
    return counts


def _inside(counts: collections.Counter, root: Path) -> dict[str, int]:
    real = os.path.realpath(root)
    return {d: n for d, n in counts.items()
            if d.removeprefix("walk:") == str(root) or d.removeprefix("walk:").startswith(str(root) + os.sep)
            or d.removeprefix("walk:").startswith(real + os.sep)}


def _assert_one_walk(counts: collections.Counter, root: Path) -> None:
    inside = _inside(counts, root)
    assert not [d for d in inside if d.startswith("walk:")], "a rule walked the tree on its own"
    twice = {d: n for d, n in inside.items() if n > 1}
    assert not twice, f"listed more than once: {twice}"
    for d in ("", "a/b/c", "pkg/two", ".agents/skills/deploy/tools", "vendored"):
        assert str(root / d).rstrip("/") in inside, d  # (and the walk did reach every directory)


def test_a_check_lists_each_directory_once(tmp_path: Path, listings) -> None:
    root, settings = _tree(tmp_path)
    ws = Workspace(root, settings, CheckConfig(git_history=False))
    res = run_checks(ws, jobs=1)
    codes = {f.code for f in res.findings}
    assert {"CTX401", "CTX506", "CTX507"} <= codes, codes  # the tree-reading rules did look
    hint = [f for f in res.findings if f.code == "CTX506"][0]
    assert "tools/go.sh" in hint.message  # its candidate came from the walk, through the linked skills folder
    _assert_one_walk(listings, root)


def test_the_language_server_engine_lists_each_directory_once(tmp_path: Path, listings) -> None:
    root, settings = _tree(tmp_path)
    eng = Engine(root, settings, CheckConfig(git_history=False))
    found = eng.check()
    assert any(f.code == "CTX401" for fs in found.values() for f in fs)
    _assert_one_walk(listings, root)
    listings.clear()
    eng.check()  # nothing changed: nothing is listed again
    assert not _inside(listings, root)
