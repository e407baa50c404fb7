"""Skills, commands and rules reached through symlinks (spec A5: rules "symlinks followed, cycles handled";
B1: "Symlinked skill dirs followed, same target loaded once").

Two layouts are common on real repositories: (a) `.claude/skills` (or `rules`, `commands`) is itself a
directory symlink, typically to `../.agents/skills`; (b) `.claude/skills/<name>` is a symlink to a skill
directory elsewhere. Both must be linted (`ctxls check`) and listed (`ctxls context`) like a copy, named by the
link path under `.claude/`, each real file once, and no symlink loop may hang or crash anything. The fixture
cases `fixtures/check/skill_symlinked` and `fixtures/sessions/skills_symlinked` cover the layouts with
committed (relative, benign) links; the loops here are made at run time so no fixture tree holds one.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ctxls.core import discovery as D
from ctxls.core import model as M
from ctxls.core import resultcache as RC
from ctxls.core.budget import compute_budget
from ctxls.core.check import CheckConfig, Workspace, run_checks
from ctxls.core.loader import load_session
from ctxls.core.settings import Settings

SKILL = "---\ndescription: {desc}\n{extra}---\nDo the thing.\n"


def _write(p: Path, text: str) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def _link(link: Path, target: str) -> Path:
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, link)
    return link


def _settings(tmp: Path) -> Settings:
    return Settings(home=tmp / "home", ceiling=tmp, managed_dir=tmp / "managed", today="2026-11-29")


def _rel(paths, root: Path) -> list[str]:
    return sorted(Path(p).relative_to(root).as_posix() for p in paths)


def _sources(idx: D.WorkspaceIndex, kind: str | None = None) -> list[str]:
    return _rel((s.path for s in idx.sources if kind is None or s.kind == kind), idx.root)


def _check(root: Path, tmp: Path, *codes: str):
    config, errors = CheckConfig.from_mapping({"select": list(codes)} if codes else {})
    assert errors == []
    ws = Workspace(root, _settings(tmp), config)
    res = run_checks(ws)
    assert res.errors == []
    return ws, res


def _findings(res, root: Path) -> list[tuple[str, str, int]]:
    return sorted((f.code, f.path.relative_to(root).as_posix(), f.line) for f in res.findings)




# ------------------------------------------------------------------------------------------ layout (a)
def test_symlinked_skills_dir_is_scanned_linted_and_listed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _write(root / "CLAUDE.md", "# Repo\n")
    _write(root / ".agents" / "skills" / "deploy" / "SKILL.md", SKILL.format(desc="Deploy it.", extra="bogus: 1\n"))
    _link(root / ".claude" / "skills", "../.agents/skills")
    idx = D.scan_workspace(root, _settings(tmp_path))
    assert _sources(idx, D.SKILL) == [".claude/skills/deploy/SKILL.md"]
    # the directories behind the link are places like any other (a copy would be scanned the same way)
    assert {root / ".claude" / "skills", root / ".claude" / "skills" / "deploy"} <= set(idx.dirs)
    _, res = _check(root, tmp_path, "CTX502")
    assert _findings(res, root) == [("CTX502", ".claude/skills/deploy/SKILL.md", 3)]
    session = load_session(root, (), _settings(tmp_path))
    [sk] = [s for s in session.skills.skills if s.listed]
    assert (sk.name, sk.source) == ("deploy", root / ".claude" / "skills" / "deploy" / "SKILL.md")


def test_symlinked_commands_and_claude_dir_are_followed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    cfg = root / "config" / "claude"
    _write(cfg / "CLAUDE.md", "Project instructions kept in config/.\n")
    _write(cfg / "rules" / "style.md", "---\nalwaysApply: true\n---\nUse tabs.\n")
    _write(root / "shared" / "commands" / "ship.md", "---\nname: ship\n---\nShip it.\n")
    _link(root / ".claude", "config/claude")
    _link(cfg / "commands", "../../shared/commands")
    idx = D.scan_workspace(root, _settings(tmp_path))
    kinds = sorted((s.path.relative_to(root).as_posix(), s.kind) for s in idx.sources)
    # config/claude/CLAUDE.md is a source at its own place (any CLAUDE.md is): listed there, not twice
    assert kinds == [(".claude/commands/ship.md", D.COMMAND), (".claude/rules/style.md", D.RULE),
                     ("config/claude/CLAUDE.md", D.CLAUDE_MD)]
    _, res = _check(root, tmp_path, "CTX502")
    assert _findings(res, root) == [("CTX502", ".claude/commands/ship.md", 2), ("CTX502", ".claude/rules/style.md", 2)]
    session = load_session(root, (), _settings(tmp_path))
    assert [(b.kind, b.source) for b in session.blocks if b.source is not None] == [
        (M.CLAUDE_MD, root / ".claude" / "CLAUDE.md"), (M.RULE, root / ".claude" / "rules" / "style.md")]
    assert [s.name for s in session.skills.skills if s.listed] == ["ship"]


# ------------------------------------------------------------------------------------------ layout (b)
def test_per_skill_symlink_to_a_directory_outside_the_workspace(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    outside = tmp_path / "outside" / "skills" / "lint"
    _write(outside / "SKILL.md", SKILL.format(desc="Lint.", extra="triggers: lint\n"))
    _write(outside / "references" / "rules.md", "- no tabs\n")
    _write(root / ".claude" / "skills" / "lint.md", "not a skill: a file directly under skills/\n")
    _link(root / ".claude" / "skills" / "lint", str(outside))  # absolute link
    idx = D.scan_workspace(root, _settings(tmp_path))
    assert _sources(idx, D.SKILL) == [".claude/skills/lint/SKILL.md"]  # the link path, inside the workspace
    _, res = _check(root, tmp_path, "CTX502")
    assert _findings(res, root) == [("CTX502", ".claude/skills/lint/SKILL.md", 3)]
    session = load_session(root, (), _settings(tmp_path))
    assert [(s.name, s.source) for s in session.skills.skills if s.listed] == [
        ("lint", root / ".claude" / "skills" / "lint" / "SKILL.md")]


def test_bundled_files_of_a_symlinked_skill_are_found(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    skill = root / ".agents" / "skills" / "pdf"
    _write(skill / "SKILL.md", SKILL.format(desc="PDFs.", extra="") + "See [forms](references/forms.md).\n")
    _write(skill / "references" / "forms.md", "forms\n")
    _link(root / ".claude" / "skills" / "pdf", "../../.agents/skills/pdf")
    _, res = _check(root, tmp_path, "CTX506")
    assert _findings(res, root) == []


# ------------------------------------------------------------------------------------------ rules
def test_symlinked_rules_dir_scan_and_session_name_the_same_files(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shared = root / "shared" / "rules"
    _write(shared / "general.md", "Always run the tests.\n")
    _write(shared / "py" / "typing.md", "---\npaths: src/**/*.py\n---\nAnnotate public functions.\n")
    _write(root / "src" / "app.py", "x = 1\n")
    _link(root / ".claude" / "rules", "../shared/rules")
    idx = D.scan_workspace(root, _settings(tmp_path))
    assert _sources(idx, D.RULE) == [".claude/rules/general.md", ".claude/rules/py/typing.md"]
    session = load_session(root, [root / "src" / "app.py"], _settings(tmp_path))
    rules = [(b.kind, b.source.relative_to(root).as_posix()) for b in session.blocks
             if b.kind in (M.RULE, M.PATH_RULE)]
    assert rules == [(M.RULE, ".claude/rules/general.md"), (M.PATH_RULE, ".claude/rules/py/typing.md")]


def test_rule_reached_through_two_links_is_named_alike_by_scan_and_session(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _write(root / "shared" / "x.md", "Shared rule.\n")
    _link(root / ".claude" / "rules" / "b", "../../shared")
    _link(root / ".claude" / "rules" / "a", "../../shared")
    idx = D.scan_workspace(root, _settings(tmp_path))
    assert _sources(idx, D.RULE) == [".claude/rules/a/x.md"]
    session = load_session(root, (), _settings(tmp_path))
    assert [b.source for b in session.blocks if b.kind == M.RULE] == [root / ".claude" / "rules" / "a" / "x.md"]


# ------------------------------------------------------------------------------------------ no double listing
def test_one_skill_reached_several_ways_is_listed_and_linted_once(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _write(root / ".agents" / "skills" / "x" / "SKILL.md", SKILL.format(desc="X.", extra="bogus: 1\n"))
    _link(root / ".claude" / "skills" / "a", "../../.agents/skills/x")
    _link(root / ".claude" / "skills" / "b", "../../.agents/skills/x")
    # a skill that is a source at its own place too, linked from the root
    _write(root / "pkg" / ".claude" / "skills" / "web" / "SKILL.md", SKILL.format(desc="Web.", extra="colour: 1\n"))
    _link(root / ".claude" / "skills" / "web", "../../pkg/.claude/skills/web")
    _write(root / "pkg" / "index.ts", "export {}\n")
    idx = D.scan_workspace(root, _settings(tmp_path))
    # each real file once: its own path when it is a source there, else the shortest / first link path
    assert _sources(idx, D.SKILL) == [".claude/skills/a/SKILL.md", "pkg/.claude/skills/web/SKILL.md"]
    reals = [os.path.realpath(s.path) for s in idx.sources]
    assert len(reals) == len(set(reals))
    _, res = _check(root, tmp_path, "CTX502")
    assert _findings(res, root) == [("CTX502", ".claude/skills/a/SKILL.md", 3),
                                    ("CTX502", "pkg/.claude/skills/web/SKILL.md", 3)]
    session = load_session(root, [root / "pkg" / "index.ts"], _settings(tmp_path))
    entries = [(s.name, s.source.relative_to(root).as_posix()) for s in session.skills.skills]
    # `b` is the same directory as `a`; pkg's `web` (read on touch) is the file the root's `web` reaches
    assert entries == [("a", ".claude/skills/a/SKILL.md"), ("web", ".claude/skills/web/SKILL.md")]
    listing = "".join(b.text for b in session.blocks if b.kind == M.SKILL_LISTING)
    assert listing.count("- a: X.") == 1 and "- b" not in listing and listing.count("- web: Web.") == 1


def test_plain_scan_has_no_symlink_cost(tmp_path: Path, monkeypatch) -> None:
    """Without any symlink no source needs a realpath (the dedupe is free)."""
    root = tmp_path / "repo"
    for i in range(5):
        _write(root / f"d{i}" / "CLAUDE.md", "x\n")
        _write(root / f"d{i}" / ".claude" / "rules" / "r.md", "r\n")
    calls: list[str] = []
    real = os.path.realpath
    monkeypatch.setattr(D.os.path, "realpath", lambda p, *a, **k: calls.append(str(p)) or real(p, *a, **k))
    idx = D.scan_workspace(root, _settings(tmp_path))
    assert len(idx.sources) == 10 and calls == []


# ------------------------------------------------------------------------------------------ loops and bad links
def _loopy_tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    ext = tmp_path / "ext"
    _write(root / "CLAUDE.md", "# Repo\n")
    _write(root / ".claude" / "skills" / "ok" / "SKILL.md", SKILL.format(desc="Fine.", extra=""))
    _write(root / ".claude" / "rules" / "a.md", "Rule A.\n")
    _write(root / ".claude" / "rules" / "sub" / "b.md", "Rule B.\n")
    _write(ext / "a" / "c.md", "Rule C.\n")
    _link(root / ".claude" / "skills" / "loop", "..")  # -> .claude
    _link(root / ".claude" / "skills" / "self", ".")  # -> skills
    _link(root / ".claude" / "skills" / "gone", "../../nowhere")  # dangling
    _link(root / ".claude" / "skills" / "eloop", "eloop")  # ELOOP on every stat
    _link(root / ".claude" / "rules" / "up", "../..")  # -> the workspace root
    _link(root / ".claude" / "rules" / "sub" / "here", ".")
    _link(root / ".claude" / "rules" / "ext", str(ext / "a"))  # outside, and back in again:
    _link(ext / "a" / "back", str(root / ".claude" / "rules"))
    _link(ext / "a" / "twice", str(ext))  # an ancestor of a directory on the way down
    _link(root / ".claude" / "commands", "commands")  # a link to itself
    _link(root / "pkg" / ".claude", "../.claude")  # a second way in, through a symlinked .claude
    return root


def test_symlink_loops_terminate_without_errors_or_duplicates(tmp_path: Path, with_timeout) -> None:
    root = _loopy_tree(tmp_path)
    idx = with_timeout(lambda: D.scan_workspace(root, _settings(tmp_path)))
    assert _sources(idx, D.RULE) == [".claude/rules/a.md", ".claude/rules/ext/c.md", ".claude/rules/sub/b.md"]
    assert _sources(idx, D.SKILL) == [".claude/skills/ok/SKILL.md"]
    reals = [os.path.realpath(s.path) for s in idx.sources]
    assert len(reals) == len(set(reals))
    cycles = {p.relative_to(root).as_posix() for p, why in idx.skipped if "symlink cycle" in why}
    assert {".claude/skills/loop", ".claude/skills/self", ".claude/rules/up", ".claude/rules/sub/here",
            ".claude/rules/ext/back", ".claude/rules/ext/twice"} <= cycles
    assert len(idx.dirs) == len(set(idx.dirs)) < 50

    session = with_timeout(lambda: load_session(root / "pkg", [root / "CLAUDE.md"], _settings(tmp_path)))
    rules = sorted(b.source.relative_to(root).as_posix() for b in session.blocks if b.kind == M.RULE)
    assert rules == [".claude/rules/a.md", ".claude/rules/ext/c.md", ".claude/rules/sub/b.md"]
    assert [s.name for s in session.skills.skills if s.listed] == ["ok"]

    _, res = with_timeout(lambda: _check(root, tmp_path))
    seen = [(f.code, f.path, f.line, f.message) for f in res.findings]
    assert len(seen) == len(set(seen))
    rep = with_timeout(lambda: compute_budget(root, _settings(tmp_path)))
    assert rep.root_session is not None


def test_rule_files_never_raises(tmp_path: Path) -> None:
    assert D.rule_files(tmp_path / "missing")[0] == []
    f = _write(tmp_path / "file.md", "x\n")
    assert D.rule_files(f)[0] == []
    rules = tmp_path / "r"
    _link(rules / "self", "self")
    assert D.rule_files(rules) == ([], [])


def test_following_links_is_bounded(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "repo"
    for i in range(6):
        _write(tmp_path / "ext" / f"d{i}" / "r.md", f"rule {i}\n")
        _link(root / ".claude" / "rules" / f"l{i}", str(tmp_path / "ext" / f"d{i}"))
    monkeypatch.setattr(D, "MAX_LINKED_DIRS", 3)
    idx = D.scan_workspace(root, _settings(tmp_path))
    assert len(idx.by_kind(D.RULE)) == 3
    assert any("stopped following" in why for _, why in idx.skipped)


def test_a_link_to_a_deep_tree_is_bounded_too(tmp_path: Path, monkeypatch) -> None:
    """The bound counts every directory entered below a followed link, not only the links: one link to a big
    plain tree stops at it, in the scan and in the loader's rules walk alike."""
    root = tmp_path / "repo"
    for a in range(4):
        for b in range(4):
            _write(tmp_path / "ext" / f"a{a}" / f"b{b}" / "r.md", "rule\n")
    _link(root / ".claude" / "rules" / "ext", str(tmp_path / "ext"))
    monkeypatch.setattr(D, "MAX_LINKED_DIRS", 5)
    idx = D.scan_workspace(root, _settings(tmp_path))
    assert len([d for d in idx.dirs if "ext" in d.parts]) <= 5
    assert any("stopped following after 5" in why for _, why in idx.skipped)
    found, unlisted = D.rule_files(root / ".claude" / "rules")
    assert len(found) < 16 and any("stopped following" in why for _, why in unlisted)


# ------------------------------------------------------------------------------------------ only source dirs
def test_other_directory_symlinks_are_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _write(tmp_path / "elsewhere" / "CLAUDE.md", "decoy\n")
    _write(tmp_path / "elsewhere" / ".claude" / "rules" / "r.md", "decoy rule\n")
    _link(root / "lib", str(tmp_path / "elsewhere"))
    _link(root / "node_modules" / "pkg", str(tmp_path / "elsewhere"))
    _write(root / "node_modules" / "real" / ".claude" / "skills" / "s" / "SKILL.md", "decoy\n")
    _write(root / ".claude" / "skills" / "s" / "SKILL.md", SKILL.format(desc="S.", extra=""))
    _link(root / ".claude" / "skills" / "s" / "vendored", str(tmp_path / "elsewhere"))  # inside a skill: no
    idx = D.scan_workspace(root, _settings(tmp_path))
    assert _sources(idx) == [".claude/skills/s/SKILL.md"]
    assert root / "lib" not in idx.dirs and root / ".claude" / "skills" / "s" / "vendored" not in idx.dirs


def test_follows_link_only_in_source_directories() -> None:
    f = D.follows_link
    assert f((), ".claude") and f(("pkg",), ".claude")
    assert f((".claude",), "skills") and f((".claude",), "rules") and f((".claude",), "commands")
    assert f((".claude", "skills"), "x") and f((".claude", "rules"), "x") and f((".claude", "rules", "a", "b"), "c")
    assert not f((".claude",), "agents") and not f((".claude", "skills", "x"), "references")
    assert not f((".claude", "commands"), "sub") and not f(("src",), "lib") and not f((), "node_modules")


# ------------------------------------------------------------------------------------------ the result cache
def test_new_skill_behind_a_symlink_invalidates_the_result_cache(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    target = tmp_path / "outside" / "skills"
    _write(target / "a" / "SKILL.md", SKILL.format(desc="A.", extra=""))
    _link(root / ".claude" / "skills", str(target))
    (tmp_path / "cache").mkdir()
    cache = RC.ResultCache(tmp_path / "cache" / "check.json")
    ws, _ = _check(root, tmp_path, "CTX502")
    assert cache.put("k", RC.fingerprint(ws.fs, ws.index.dirs, ws.walked_dirs, root))
    assert cache.run_id("k") is not None
    _write(target / "b" / "SKILL.md", SKILL.format(desc="B.", extra="bogus: 1\n"))
    os.utime(target, ns=(time.time_ns(), time.time_ns() + 1_000_000))
    assert cache.run_id("k") is None


@pytest.mark.parametrize("layout", ["dir", "entry"])
def test_budget_counts_a_symlinked_skill(tmp_path: Path, layout: str) -> None:
    root = tmp_path / "repo"
    _write(root / "CLAUDE.md", "# Repo\n")
    _write(root / ".agents" / "skills" / "deploy" / "SKILL.md", SKILL.format(desc="Deploy it.", extra=""))
    if layout == "dir":
        _link(root / ".claude" / "skills", "../.agents/skills")
    else:
        _link(root / ".claude" / "skills" / "deploy", "../../.agents/skills/deploy")
    rep = compute_budget(root, _settings(tmp_path))
    assert [s.name for s in rep.root_session.skills.skills if s.listed] == ["deploy"]
