"""Unit tests of the placement rules (CTX601, CTX602) and their markdown-sections helper."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ctxls.core.check import CheckConfig, Workspace, run_checks
from ctxls.core.fixes import plan_fixes
from ctxls.core.rules.placement import _is_critical, _parse, _slug, _task_of
from ctxls.core.settings import Settings


def _ws(tmp_path: Path, files: dict[str, str], **check) -> Workspace:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    (tmp_path / "home").mkdir(exist_ok=True)
    settings = Settings(home=tmp_path / "home", managed_dir=tmp_path / "managed", ceiling=tmp_path)
    # CTX601 measures depth in tokens (2,000 by default); these texts are a few hundred tokens of filler, so the
    # depth is scaled down with them
    check.setdefault("critical_after_tokens", 200)
    return Workspace(tmp_path / "repo", settings, CheckConfig(**check))


def test_sections_tree_ignores_fenced_headings() -> None:
    text = "---\ntitle: x\n---\n# A\n## B\ntext\n```\n## not a heading\n```\n### C\n## D\n# E\n"
    doc = _parse(text)
    assert [(s.level, s.title, s.line, s.end) for s in doc.sections] == [
        (1, "A", 3, 11), (2, "B", 4, 10), (3, "C", 9, 10), (2, "D", 10, 11), (1, "E", 11, 13)]
    assert [s.title for s in doc.roots] == ["A", "E"]
    assert [c.title for c in doc.roots[0].children] == ["B", "D"]
    assert doc.body_start == 3


@pytest.mark.parametrize("line,critical", [
    ("- NEVER commit secrets.", True),
    ("You MUST run the tests.", True),
    ("IMPORTANT: rotate keys.", True),
    ("**Do not** edit gen/.", True),
    ("__never__ push to main", True),
    ("- never commit secrets", False),
    ("- Use the `NEVER` constant", False),
    ("- The NEVER_EXPIRE flag", False),
    ("- MUSTANG is staging", False),
    ("- **Note**: never mind", False),
])
def test_is_critical(line: str, critical: bool) -> None:
    assert _is_critical(line) is critical


@pytest.mark.parametrize("title,task", [
    ("Release", "release"), ("Testing", "testing"), ("Running the tests", "testing"), ("Deployment", "deployment"),
    ("Database migrations", "migrations"), ("CI", "ci"), ("Benchmarks", "benchmarking"),
    ("Build and test", None), ("Code style", None), ("Contest rules", None), ("Latest changes", None),
    ("Architecture", None), ("Test conventions", "testing"),
])
def test_task_of(title: str, task) -> None:
    got = _task_of(title)
    assert (got.name if got else None) == task


def test_slug() -> None:
    used: set[str] = set()
    assert _slug("Release process", "release", used) == "release-process"
    assert _slug("Claude's `testing` notes!", "testing", used) == "s-testing-notes"
    assert _slug("***", "release", used) == "release"
    used.add("release")
    assert _slug("Release", "release", used) == "release-2"
    long = _slug("word " * 40, "x", set())
    assert len(long) <= 64 and not long.endswith("-")


def _long(n: int) -> str:
    return "".join(f"- Keep helper {i} small.\n" for i in range(n))


def test_buried_line_at_eof_without_newline_moves(tmp_path: Path) -> None:
    text = "# T\n\nIntro.\n\n" + _long(70) + "- NEVER force-push."
    ws = _ws(tmp_path, {"repo/CLAUDE.md": text}, select=frozenset({"CTX601"}))
    [f] = run_checks(ws).findings
    plan = plan_fixes([f], lambda p: p.read_text() if p.exists() else None)
    new = plan.files[tmp_path / "repo" / "CLAUDE.md"]
    assert new.startswith("# T\n\n**Critical:**\n- NEVER force-push.\n\nIntro.\n")
    assert new.count("NEVER force-push") == 1


def test_fix_keeps_blank_lines_and_appends_to_its_critical_block(tmp_path: Path) -> None:
    """The buried line went directly under the H1 with no blank line, out of its section (issue 16): it goes into
    a Critical block with blank lines around it, and a second run appends to that block instead of a new one."""
    text = ("# T\n\nIntro.\n\n## Conventions\n\n" + _long(70) + "\n## Testing\n\n- IMPORTANT: run pytest -x.\n"
            "- Use fixtures.\n")
    ws = _ws(tmp_path, {"repo/CLAUDE.md": text}, select=frozenset({"CTX601"}))
    [f] = run_checks(ws).findings
    read = lambda p: p.read_text() if p.exists() else None  # noqa: E731
    path = tmp_path / "repo" / "CLAUDE.md"
    path.write_text(plan_fixes([f], read).files[path])
    first = path.read_text()
    assert first.startswith("# T\n\n**Critical:**\n- IMPORTANT: run pytest -x.\n\nIntro.\n\n## Conventions\n")
    assert first.endswith("## Testing\n\n- Use fixtures.\n")
    path.write_text(first + "\n## Release\n\n" + _long(5) + "- NEVER tag by hand.\n")
    [g] = run_checks(_ws(tmp_path, {}, select=frozenset({"CTX601"}))).findings
    path.write_text(plan_fixes([g], read).files[path])
    assert path.read_text().startswith("# T\n\n**Critical:**\n- IMPORTANT: run pytest -x.\n- NEVER tag by hand.\n\n"
                                       "Intro.\n")
    assert path.read_text().count("**Critical:**") == 1


def test_line_of_a_paragraph_is_reported_without_fix(tmp_path: Path) -> None:
    text = "# T\n\n" + _long(70) + "\nDeploys are on Tuesdays and\nyou MUST announce them.\n"
    ws = _ws(tmp_path, {"repo/CLAUDE.md": text}, select=frozenset({"CTX601"}))
    [f] = run_checks(ws).findings
    assert f.fixes == []


def test_severity_is_info_even_past_max_lines(tmp_path: Path) -> None:
    """CTX601 never warns (issue 15: no buried line on 48 real repositories was worth a warning); a
    `[check] severity` override still raises it."""
    text = "# T\n\n" + _long(250) + "- NEVER force-push.\n"
    ws = _ws(tmp_path, {"repo/CLAUDE.md": text}, select=frozenset({"CTX601"}))
    [f] = run_checks(ws).findings
    assert f.severity == "info" and "buried at line" in f.message
    raised = _ws(tmp_path / "raised", {"repo/CLAUDE.md": text}, select=frozenset({"CTX601"}))
    raised.config = dataclasses.replace(raised.config, severity={"CTX601": "warning"})
    [g] = run_checks(raised).findings
    assert g.severity == "warning"


def test_section_with_imports_has_no_fix(tmp_path: Path) -> None:
    body = "".join(f"- Step {i}: tag the release and publish the packages, then announce it widely.\n"
                   for i in range(15))
    text = "# T\n\n## Release\n" + body + "See @docs/release.md for more.\n"
    ws = _ws(tmp_path, {"repo/CLAUDE.md": text, "repo/docs/release.md": "x\n"}, select=frozenset({"CTX602"}))
    [f] = run_checks(ws).findings
    assert f.fixes == []


def test_personal_skill_of_that_name_blocks_the_safe_fix(tmp_path: Path) -> None:
    body = "".join(f"- Step {i}: tag the release and publish the packages, then announce it widely.\n"
                   for i in range(15))
    ws = _ws(tmp_path, {"repo/CLAUDE.md": "# T\n\n## Release\n" + body,
                        "home/.claude/skills/release/SKILL.md": "---\nname: release\n---\nx\n"},
             select=frozenset({"CTX602"}))
    [f] = run_checks(ws).findings
    assert not any(x.safe for x in f.fixes)


def test_links_to_documents_do_not_choose_the_subdirectory(tmp_path: Path) -> None:
    """A release section that points at three guides under web/docs/ is read there, not worked on there: no
    "move into web/docs/CLAUDE.md" alternative. The same section naming code under web/src/ gets one."""
    body = "".join(f"- Step {i}: tag the release and publish the packages, then announce it widely.\n"
                   for i in range(15))
    files = {"repo/web/docs/a.md": "x\n", "repo/web/docs/b.md": "x\n", "repo/web/docs/c.md": "x\n",
             "repo/web/src/app.ts": "x\n", "repo/web/src/api.ts": "x\n", "repo/web/src/db.ts": "x\n"}

    def moves(names: str) -> list[str]:
        ws = _ws(tmp_path, {**files, "repo/CLAUDE.md": "# T\n\n## Release\n" + body + names},
                 select=frozenset({"CTX602"}))
        [f] = run_checks(ws).findings
        return [x.title for x in f.fixes if x.title.startswith("Move into")]

    assert moves("Read web/docs/a.md, web/docs/b.md and web/docs/c.md.\n") == []
    assert moves("Touch web/src/app.ts, web/src/api.ts and web/src/db.ts.\n") != []


@pytest.mark.parametrize("text", [
    "", "#", "##", "## \n", "## Release", "## Release\n" * 300, "```\n## Release\n" + "x\n" * 300,
    "---\n---\n" + "- NEVER\n" * 200, "- NEVER\n" * 200, "  - NEVER x\n      y\n" * 100, "> IMPORTANT\n" * 100,
    "\r\n".join(["- MUST do"] * 100), "# T\n" + "\n" * 100 + "**do not**", "1. NEVER\n" * 100,
])
def test_bad_input_never_raises(tmp_path: Path, text: str) -> None:
    ws = _ws(tmp_path, {"repo/CLAUDE.md": text, "repo/.claude/rules/r.md": text},
             select=frozenset({"CTX6"}))
    res = run_checks(ws)
    assert res.errors == []
    plan_fixes(res.findings, lambda p: p.read_text() if p.exists() else None)


def test_findings_kept_in_the_snapshot_until_a_file_appears(tmp_path: Path) -> None:
    """A re-check over the same snapshot returns the very same finding (the language server compares by
    identity); creating the skill the fix would write (a structural change) rebuilds it without that fix."""
    body = "".join(f"- Step {i}: tag the release and publish the packages, then announce it widely.\n"
                   for i in range(15))
    ws = _ws(tmp_path, {"repo/CLAUDE.md": "# T\n\n## Release\n" + body}, select=frozenset({"CTX602"}))
    [f] = run_checks(ws).findings
    assert any(x.safe for x in f.fixes)
    again = Workspace(ws.root, ws.settings, ws.config, fs=ws.fs)
    [g] = run_checks(again).findings
    assert g is f
    skill = ws.root / ".claude" / "skills" / "release" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: release\ndescription: x\n---\nx\n")
    for created in (skill.parent.parent.parent, skill.parent.parent, skill.parent, skill):  # as a watcher reports
        ws.fs.changed(created, structural=True)
    [h] = run_checks(Workspace(ws.root, ws.settings, ws.config, fs=ws.fs)).findings
    assert h is not f and not any(x.safe for x in h.fixes)
    # another severity is another finding, never the kept one rewritten
    import dataclasses

    other = dataclasses.replace(ws.config, severity={"CTX602": "warning"})
    [w] = run_checks(Workspace(ws.root, ws.settings, other, fs=ws.fs)).findings
    [i] = run_checks(Workspace(ws.root, ws.settings, ws.config, fs=ws.fs)).findings
    assert w.severity == "warning" and i.severity == "info" and w is not i


def test_kept_finding_follows_an_edit_of_the_destination(tmp_path: Path) -> None:
    """The "move into" fix appends to the subdirectory's CLAUDE.md as it is: after that file is edited (a
    content change, which keeps the snapshot's memo), the fix must append after its new last line."""
    import shutil

    src = Path(__file__).resolve().parent.parent / "fixtures" / "check" / "place_task_section" / "tree" / "repo"
    shutil.copytree(src, tmp_path / "repo")
    dest = tmp_path / "repo" / "services" / "billing" / "tests" / "CLAUDE.md"
    dest.write_text("# Tests\n- Fixtures live in conftest.py.\n")
    ws = _ws(tmp_path, {}, select=frozenset({"CTX602"}))

    def move_edit(w: Workspace):
        for f in run_checks(w).findings:
            for x in f.fixes:
                if x.title.startswith("Move into"):
                    return next(e for e in x.edits if e.path == dest)
        raise AssertionError("no move fix")

    assert move_edit(ws).span.start_line == 2
    dest.write_text("# Tests\n- Fixtures live in conftest.py.\n- One.\n- Two.\n- Three.\n")
    ws.fs.changed(dest)
    assert move_edit(Workspace(ws.root, ws.settings, ws.config, fs=ws.fs)).span.start_line == 5


@pytest.mark.parametrize("title, line", [
    # a title that merely contains a stress word is no marker: the whole file is under it
    ("# Important notes for working in this repo", "- NEVER push directly to main."),
    ("# Notes\n\n## Required tools", "- NEVER push directly to main."),
    # an instruction after a pointer's link is still an instruction
    ("# Notes", "- IMPORTANT: see [the security policy](docs/security.md) — NEVER commit .env files."),
])
def test_buried_lines_still_reported(tmp_path: Path, title: str, line: str) -> None:
    text = f"{title}\n\n" + _long(230) + line + "\n"
    ws = _ws(tmp_path, {"repo/CLAUDE.md": text}, select=frozenset({"CTX601"}))
    [f] = run_checks(ws).findings
    assert "buried at line" in f.message


@pytest.mark.parametrize("title, stressed", [
    ("Caching (Critical)", True), ("Mobile layout — mandatory", True), ("Setup [REQUIRED]", True),
    ("NEVER do this", True), ("Required tools", False), ("Important notes", False), ("Always-on services", False),
])
def test_stressed(title: str, stressed: bool) -> None:
    from ctxls.core.rules.placement import _stressed

    assert _stressed(title) is stressed


def test_moved_sections_keep_their_relative_links(tmp_path: Path) -> None:
    """Extracting a section of frontend/CLAUDE.md into .claude/skills/<slug>/ rewrites its relative links to name
    the same files from there (a real repository's extracted section linked `../.claude/docs/x.md`, broken from
    the skill); URLs, anchors and links in code stay as written."""
    from ctxls.core.rules.placement import rebase_links

    src, dest = tmp_path / "frontend", tmp_path / ".claude" / "skills" / "t"
    text = ("See [grid](../.claude/docs/GRID.md#tests), ![logo](img/logo.png \"Logo\") and [dir](docs/).\n"
            "Also [web](https://x.dev/a), [top](#top), `[code](a.md)` and [abs](/etc/x).\n```\n[fenced](a.md)\n```\n")
    assert rebase_links(text, src, dest) == (
        "See [grid](../../docs/GRID.md#tests), ![logo](../../../frontend/img/logo.png \"Logo\") and "
        "[dir](../../../frontend/docs/).\n"
        "Also [web](https://x.dev/a), [top](#top), `[code](a.md)` and [abs](/etc/x).\n```\n[fenced](a.md)\n```\n")
    assert rebase_links(text, src, src) == text
