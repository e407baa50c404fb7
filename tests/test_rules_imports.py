"""CTX301 beyond the fixtures: what the quick fixes write."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxls.core.check import CheckConfig, Workspace, run_checks
from ctxls.core.fixes import plan_fixes
from ctxls.core.settings import Settings


def _findings(tmp_path: Path, text: str):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "CLAUDE.md").write_text(text, encoding="utf-8")
    (tmp_path / "home").mkdir()
    settings = Settings(home=tmp_path / "home", managed_dir=tmp_path / "managed", ceiling=tmp_path)
    return run_checks(Workspace(repo, settings, CheckConfig(select=frozenset({"CTX301"})))).findings, repo


@pytest.mark.parametrize("line, fixed", [
    ("When using @tresjs/core, keep Vue reactive.", "When using `@tresjs/core`, keep Vue reactive."),
    ("Ask @alice.", "Ask `@alice`."),
    ("State lives in @tanstack/query (see docs).", "State lives in `@tanstack/query` (see docs)."),
])
def test_a_package_or_person_named_with_at_becomes_a_code_span(tmp_path: Path, line: str, fixed: str) -> None:
    findings, repo = _findings(tmp_path, f"# Root\n{line}\n")
    [f] = findings
    assert f.severity == "info" and not f.fixes[0].safe
    plan = plan_fixes([f], lambda p: p.read_text() if p.exists() else None, safe_only=False)
    assert plan.files[repo / "CLAUDE.md"] == f"# Root\n{fixed}\n"


def test_a_missing_file_import_stays_an_error(tmp_path: Path) -> None:
    findings, _ = _findings(tmp_path, "# Root\nSee @docs/guide.md and @./notes\n")
    assert [f.severity for f in findings] == ["error", "error"]


def test_no_move_fix_to_a_generic_name_or_to_the_importing_file(tmp_path: Path) -> None:
    """`@api/CLAUDE.md` with no api/ directory: the only other CLAUDE.md is the importing file itself, and
    README.md files live everywhere; neither is evidence of a move."""
    repo = tmp_path / "repo"
    (repo / "docs" / "guides").mkdir(parents=True)
    (repo / "docs" / "guides" / "README.md").write_text("x\n")
    (repo / "CLAUDE.md").write_text("# Root\n@api/CLAUDE.md\n@docs/style/README.md\n")
    (tmp_path / "home").mkdir()
    settings = Settings(home=tmp_path / "home", managed_dir=tmp_path / "managed", ceiling=tmp_path)
    got = run_checks(Workspace(repo, settings, CheckConfig(select=frozenset({"CTX301"})))).findings
    assert len(got) == 2 and all(not f.fixes and "did it move" not in f.message for f in got)


def test_an_import_without_its_extension_stays_an_error_with_a_fix(tmp_path: Path) -> None:
    """`@docs/architecture` and `@AGENTS` when docs/architecture.md and AGENTS.md exist: the agent adds no
    extension, nothing loads; the fix adds it."""
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "architecture.md").write_text("x\n")
    (repo / "AGENTS.md").write_text("y\n")
    (repo / "CLAUDE.md").write_text("# Root\nArchitecture: @docs/architecture, also @AGENTS\n")
    (tmp_path / "home").mkdir()
    settings = Settings(home=tmp_path / "home", managed_dir=tmp_path / "managed", ceiling=tmp_path)
    got = run_checks(Workspace(repo, settings, CheckConfig(select=frozenset({"CTX301"})))).findings
    assert [f.severity for f in got] == ["error", "error"]
    plan = plan_fixes(got, lambda p: p.read_text() if p.exists() else None)
    assert plan.files[repo / "CLAUDE.md"] == "# Root\nArchitecture: @docs/architecture.md, also @AGENTS.md\n"
