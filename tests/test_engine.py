"""The long-lived engine behind the language server: incremental re-checks equal full ones."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ctxls.core.engine import Engine
from ctxls.core.settings import Settings

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _settings(tmp: Path, root: Path) -> Settings:
    return Settings(home=tmp / "home", ceiling=root, managed_dir=tmp / "managed", today="2026-11-29",
                    auto_memory_dir=tmp / "home" / "mem")


def _keys(findings: dict) -> list[tuple]:
    return sorted((str(f.path), f.span, f.code, f.message) for fs in findings.values() for f in fs)


EDITS = [
    ("CLAUDE.md", lambda t: t + "\n- Use Python 3.11 and type hints everywhere.\n"),  # duplicate of a child's bullet
    ("services/billing/CLAUDE.md", lambda t: t.replace("Money is always integer cents", "Money is integer cents")),
    ("CLAUDE.md", lambda t: t + "\n@docs/nowhere.md\nNEVER push on Fridays.\n"),
    ("docs/arch.md", lambda t: "api key: sk-ant-api03-" + "x7Yq2" * 12 + "\n" + t),
    ("services/api/CLAUDE.md", lambda t: ""),
]


@pytest.mark.parametrize("edits", [EDITS[:1], EDITS[:2], EDITS[:3], EDITS])
def test_incremental_check_equals_full_check(tmp_path: Path, edits) -> None:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES / "lsp" / "workspace", root)
    engine = Engine(root, _settings(tmp_path, root))
    engine.check()
    assert engine.last_check_mode == "full"
    for rel, change in edits:
        path = root / rel
        text = change(path.read_text())
        engine.set_buffer(path, text)
        got = engine.check()
        assert engine.last_check_mode.startswith("incremental")
        fresh = Engine(root, _settings(tmp_path, root))
        for r, c in edits[: edits.index((rel, change)) + 1]:
            p = root / r
            fresh.set_buffer(p, engine.fs.overlays[p])
        assert _keys(got) == _keys(fresh.check())


def test_structural_change_runs_everything(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES / "lsp" / "workspace", root)
    engine = Engine(root, _settings(tmp_path, root))
    before = _keys(engine.check())
    new = root / "web" / "CLAUDE.md"
    new.write_text("# Web\n@missing.md\n")
    engine.file_changed(new, structural=True)
    after = engine.check()
    assert engine.last_check_mode == "full"
    assert any(f.code == "CTX301" for f in after.get(new, [])) and _keys(after) != before
