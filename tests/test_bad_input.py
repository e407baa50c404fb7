"""Core never raises on bad input: every odd file becomes a `Skipped` entry or a block note.

Each test builds its own tree under tmp_path and runs with a tmp home and managed dir (see conftest).
"""

from __future__ import annotations

import builtins
import os
from pathlib import Path


import ctxls.core.discovery as discovery_mod
import ctxls.core.fs as fs_mod
import ctxls.core.loader as loader_mod
from ctxls.core import model as M
from ctxls.core.budget import compute_budget
from ctxls.core.discovery import scan_workspace
from ctxls.core.fs import FileSystem
from ctxls.core.loader import load_session

TEN_MB = 10 * 1024 * 1024


# ---------------------------------------------------------------------------------------------- helpers
def _write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


def _blocks_from(session, path: Path):
    return [b for b in session.blocks if b.source == path]


def _skips_for(session, path: Path):
    return [s for s in session.skipped if s.source == path]


def _real_sources(session) -> list[str]:
    return [os.path.realpath(b.source) for b in session.blocks if b.source is not None]


class _OsProxy:
    """Stands in for the `os` module inside one core module, so a patched scandir stays local to it."""

    def __init__(self, fail_for: set[Path], exc: type[OSError] = PermissionError) -> None:
        self._fail_for = {os.path.abspath(p) for p in fail_for}
        self._exc = exc

    def scandir(self, path="."):
        if os.path.abspath(path) in self._fail_for:
            raise self._exc(13, "Permission denied", str(path))
        return os.scandir(path)

    def __getattr__(self, name):
        return getattr(os, name)


def _patch_fs_open(monkeypatch, hook):
    """Route `open` inside ctxls.core.fs through ``hook(path)`` before the real open."""
    real_open = builtins.open

    def fake_open(file, *args, **kwargs):
        hook(Path(os.fspath(file)))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(fs_mod, "open", fake_open, raising=False)




# ---------------------------------------------------------------------------------------------- binary / encoding / size
def test_binary_claude_md_is_skipped_as_binary(tmp_path, hermetic_settings):
    ws = tmp_path / "ws"
    md = _write(ws / "CLAUDE.md", b"# Title\n\x00\x01\x02 binary junk\n")
    session = load_session(ws, (), hermetic_settings(ws))
    assert _blocks_from(session, md) == []
    skips = _skips_for(session, md)
    assert len(skips) == 1
    assert "binary" in skips[0].reason
    assert skips[0].kind == M.CLAUDE_MD and skips[0].trigger == M.STARTUP


def test_invalid_utf8_claude_md_loads_with_a_note(tmp_path, hermetic_settings):
    ws = tmp_path / "ws"
    md = _write(ws / "CLAUDE.md", b"# Title\nbad \xff\xfe bytes here\n")
    session = load_session(ws, (), hermetic_settings(ws))
    assert _skips_for(session, md) == []
    [blk] = _blocks_from(session, md)
    assert "\ufffd" in blk.text
    assert "bad" in blk.text and "bytes here" in blk.text
    assert any("invalid UTF-8" in n for n in blk.notes), blk.notes


def test_ten_megabyte_claude_md_is_skipped_without_being_read(tmp_path, hermetic_settings, monkeypatch):
    ws = tmp_path / "ws"
    md = ws / "CLAUDE.md"
    md.parent.mkdir(parents=True)
    with open(md, "w", encoding="utf-8") as fh:
        line = "Always write tests first. " * 40 + "\n"
        while fh.tell() < TEN_MB:
            fh.write(line)
    opened: list[Path] = []
    _patch_fs_open(monkeypatch, opened.append)
    fs = FileSystem()
    session = load_session(ws, (), hermetic_settings(ws), fs=fs)
    assert md not in opened
    assert fs.reads == 0  # no file in this tree was opened at all
    assert _blocks_from(session, md) == []
    [skip] = _skips_for(session, md)
    assert "larger than 4.0 MiB" in skip.reason


def test_touching_a_ten_megabyte_file_skips_the_read_block(tmp_path, hermetic_settings, monkeypatch):
    ws = tmp_path / "ws"
    big = ws / "data.txt"
    big.parent.mkdir(parents=True)
    big.write_text("x" * (TEN_MB + 1), encoding="utf-8")
    opened: list[Path] = []
    _patch_fs_open(monkeypatch, opened.append)
    session = load_session(ws, [big], hermetic_settings(ws))
    assert big not in opened
    assert [b for b in session.blocks if b.kind == M.READ] == []
    [skip] = _skips_for(session, big)
    assert skip.kind == M.READ and "larger than 4.0 MiB" in skip.reason


# ---------------------------------------------------------------------------------------------- permissions
def test_scan_workspace_records_unlistable_directory_and_scans_the_rest(tmp_path, hermetic_settings, monkeypatch):
    ws = tmp_path / "ws"
    ok_a = _write(ws / "a" / "CLAUDE.md", "a\n")
    _write(ws / "locked" / "CLAUDE.md", "locked\n")
    _write(ws / "locked" / "deep" / "CLAUDE.md", "deep\n")
    ok_z = _write(ws / "z" / "CLAUDE.md", "z\n")
    monkeypatch.setattr(discovery_mod, "os", _OsProxy({ws / "locked"}))
    idx = scan_workspace(ws, hermetic_settings(ws))
    assert idx.skipped == [(ws / "locked", "permission denied")]
    assert {s.path for s in idx.sources} == {ok_a, ok_z}
    assert ws / "locked" not in idx.dirs
    assert {ws, ws / "a", ws / "z"} <= set(idx.dirs)


def test_compute_budget_answers_when_the_root_cannot_be_listed(tmp_path, hermetic_settings, monkeypatch):
    ws = tmp_path / "ws"
    _write(ws / "CLAUDE.md", "root instructions\n")
    monkeypatch.setattr(discovery_mod, "os", _OsProxy({ws}))
    rep = compute_budget(ws, hermetic_settings(ws))
    assert rep.index.skipped == [(ws, "permission denied")]
    assert rep.root_cost.dir == ws
    assert rep.root_session is not None
    assert len(rep.policy) == 3


def test_unlistable_rules_directory_becomes_a_skipped_entry(tmp_path, hermetic_settings, monkeypatch):
    ws = tmp_path / "ws"
    rules = ws / ".claude" / "rules"
    _write(rules / "style.md", "Use tabs.\n")
    monkeypatch.setattr(fs_mod, "os", _OsProxy({rules}))  # (the loader lists rules through the snapshot)
    session = load_session(ws, (), hermetic_settings(ws))
    assert _blocks_from(session, rules / "style.md") == []
    [skip] = _skips_for(session, rules)
    assert skip.kind == M.RULE and "cannot list rules directory" in skip.reason


def test_permission_denied_on_open_is_skipped(tmp_path, hermetic_settings, monkeypatch):
    ws = tmp_path / "ws"
    md = _write(ws / "CLAUDE.md", "secret\n")
    other = _write(ws / "CLAUDE.local.md", "still loads\n")

    def deny(path: Path) -> None:
        if path == md:
            raise PermissionError(13, "Permission denied", str(path))

    _patch_fs_open(monkeypatch, deny)
    session = load_session(ws, (), hermetic_settings(ws))
    assert _blocks_from(session, md) == []
    [skip] = _skips_for(session, md)
    assert skip.reason == "permission denied"
    assert len(_blocks_from(session, other)) == 1


# ---------------------------------------------------------------------------------------------- symlinks
def _rules_with_loops(ws: Path) -> tuple[Path, Path]:
    rules = ws / ".claude" / "rules"
    a = _write(rules / "a.md", "Rule A.\n")
    b = _write(rules / "sub" / "b.md", "Rule B.\n")
    os.symlink("..", rules / "loop")  # -> .claude, which contains rules/ again
    os.symlink(".", rules / "sub" / "up")  # -> rules/sub itself
    return a, b


def test_load_session_loads_each_rule_once_through_symlink_loops(tmp_path, hermetic_settings, with_timeout):
    ws = tmp_path / "ws"
    a, b = _rules_with_loops(ws)
    session = with_timeout(lambda: load_session(ws, (), hermetic_settings(ws)))
    rule_sources = [os.path.realpath(x.source) for x in session.blocks if x.kind == M.RULE]
    assert sorted(rule_sources) == sorted([os.path.realpath(a), os.path.realpath(b)])


def test_scan_workspace_finishes_with_symlink_loops(tmp_path, hermetic_settings, with_timeout):
    ws = tmp_path / "ws"
    a, b = _rules_with_loops(ws)
    idx = with_timeout(lambda: scan_workspace(ws, hermetic_settings(ws)))
    reals = {os.path.realpath(s.path) for s in idx.by_kind(discovery_mod.RULE)}
    assert reals == {os.path.realpath(a), os.path.realpath(b)}


def test_scan_workspace_lists_each_rule_once_through_symlink_loops(tmp_path, hermetic_settings):
    ws = tmp_path / "ws"
    _rules_with_loops(ws)
    idx = scan_workspace(ws, hermetic_settings(ws))
    reals = [os.path.realpath(s.path) for s in idx.by_kind(discovery_mod.RULE)]
    assert len(reals) == len(set(reals)), [str(s.path.relative_to(ws)) for s in idx.sources]


def test_self_referencing_symlink_claude_md_does_not_break_loading(tmp_path, hermetic_settings):
    ws = tmp_path / "ws"
    md = ws / "CLAUDE.md"
    ws.mkdir()
    md.symlink_to(md)  # ELOOP on every stat
    other = _write(ws / "CLAUDE.local.md", "local\n")
    session = load_session(ws, (), hermetic_settings(ws))
    assert _blocks_from(session, md) == []
    assert len(_blocks_from(session, other)) == 1
    idx = scan_workspace(ws, hermetic_settings(ws))
    assert [p for p, _ in idx.skipped] == [md]
    assert "symbolic links" in idx.skipped[0][1] or "cannot stat" in idx.skipped[0][1]


def test_self_referencing_symlink_claude_md_is_reported_as_skipped(tmp_path, hermetic_settings):
    ws = tmp_path / "ws"
    md = ws / "CLAUDE.md"
    ws.mkdir()
    md.symlink_to(md)
    session = load_session(ws, (), hermetic_settings(ws))
    skips = _skips_for(session, md)
    assert len(skips) == 1, session.skipped
    assert "cannot stat" in skips[0].reason


# ---------------------------------------------------------------------------------------------- races
def test_file_deleted_between_stat_and_read_is_skipped_as_vanished(tmp_path, hermetic_settings, monkeypatch):
    ws = tmp_path / "ws"
    md = _write(ws / "CLAUDE.md", "here a moment ago\n")

    def delete_first(path: Path) -> None:
        if path == md and md.exists():
            md.unlink()

    _patch_fs_open(monkeypatch, delete_first)
    session = load_session(ws, (), hermetic_settings(ws))
    assert not md.exists()  # the patch really ran between the stat and the open
    assert _blocks_from(session, md) == []
    [skip] = _skips_for(session, md)
    assert "vanished" in skip.reason


# ---------------------------------------------------------------------------------------------- frontmatter
# Broken past Claude Code's second attempt too (it quotes only top-level `key: value` lines, not list items).
BROKEN_RULE = "---\npaths:\n  - [unclosed\n---\nOnly for src files.\n"


def test_rule_with_broken_yaml_frontmatter_loads_unconditionally(tmp_path, hermetic_settings):
    ws = tmp_path / "ws"
    rule = _write(ws / ".claude" / "rules" / "broken.md", BROKEN_RULE)
    session = load_session(ws, (), hermetic_settings(ws))
    [blk] = _blocks_from(session, rule)
    assert blk.kind == M.RULE and blk.trigger == M.STARTUP and blk.startup
    assert "Only for src files." in blk.text
    assert "paths:" not in blk.text  # the frontmatter block is still stripped


def test_rule_with_broken_yaml_frontmatter_gets_a_note(tmp_path, hermetic_settings):
    ws = tmp_path / "ws"
    rule = _write(ws / ".claude" / "rules" / "broken.md", BROKEN_RULE)
    session = load_session(ws, (), hermetic_settings(ws))
    [blk] = _blocks_from(session, rule)
    assert any("YAML" in n or "frontmatter" in n for n in blk.notes), blk.notes


def test_skill_with_broken_frontmatter_stays_in_the_listing(tmp_path, hermetic_settings):
    ws = tmp_path / "ws"
    skill = _write(ws / ".claude" / "skills" / "deploy" / "SKILL.md",
                   "---\ndescription:\n  - [oops\n---\nDeploys the service to staging.\n")
    session = load_session(ws, (), hermetic_settings(ws))
    [info] = [s for s in session.skills.skills if s.source == skill]
    assert info.listed
    assert info.frontmatter_error and "YAML" in info.frontmatter_error
    assert info.description == "Deploys the service to staging."
    [listing] = [b for b in session.blocks if b.kind == M.SKILL_LISTING]
    assert "- deploy: Deploys the service to staging." in listing.text


def test_skill_frontmatter_claude_code_reads_by_quoting_keeps_its_description(tmp_path, hermetic_settings):
    ws = tmp_path / "ws"
    skill = _write(ws / ".claude" / "skills" / "deploy" / "SKILL.md",
                   "---\ndescription: Deploy: ships the service to staging\n---\nFirst paragraph.\n")
    session = load_session(ws, (), hermetic_settings(ws))
    [info] = [s for s in session.skills.skills if s.source == skill]
    assert info.frontmatter_error is None and info.description == "Deploy: ships the service to staging"


# ---------------------------------------------------------------------------------------------- imports
def test_import_cycle_and_self_import_load_each_file_once(tmp_path, hermetic_settings, with_timeout):
    ws = tmp_path / "ws"
    root = _write(ws / "CLAUDE.md", "Root.\n@a.md\n@me.md\n@CLAUDE.md\n")
    a = _write(ws / "a.md", "A imports B.\n@b.md\n")
    b = _write(ws / "b.md", "B imports A.\n@a.md\n")
    me = _write(ws / "me.md", "Imports itself.\n@me.md\n")
    session = with_timeout(lambda: load_session(ws, (), hermetic_settings(ws)))
    loaded = [x.source for x in session.blocks if x.source is not None]
    assert loaded == [root, a, b, me]
    cycle_skips = [s for s in session.skipped if "cycle" in s.reason]
    assert sorted(str(s.source) for s in cycle_skips) == sorted(map(str, [a, me, root]))
    assert all(s.kind == M.IMPORT for s in cycle_skips)


# ---------------------------------------------------------------------------------------------- everything at once
def _hostile_tree(ws: Path) -> dict[str, Path]:
    p = {
        "binary": _write(ws / "bin" / "CLAUDE.md", b"\x00\x01binary"),
        "utf8": _write(ws / "utf8" / "CLAUDE.md", b"bad \xff byte\n"),
        "cycle": _write(ws / "cycle" / "CLAUDE.md", "@x.md\n"),
        "skill": _write(ws / ".claude" / "skills" / "broken" / "SKILL.md", "---\na:\n  - [\n---\nBroken skill.\n"),
        "rule": _write(ws / ".claude" / "rules" / "broken.md", BROKEN_RULE),
        "root": _write(ws / "CLAUDE.md", "Root instructions.\n"),
    }
    _write(ws / "cycle" / "x.md", "@CLAUDE.md\n")
    big = ws / "big" / "CLAUDE.md"
    big.parent.mkdir(parents=True)
    big.write_text("y" * TEN_MB, encoding="utf-8")
    p["big"] = big
    os.symlink(".", ws / ".claude" / "rules" / "self")
    (ws / "eloop").mkdir()
    (ws / "eloop" / "CLAUDE.md").symlink_to(ws / "eloop" / "CLAUDE.md")
    (ws / "dangling").mkdir()
    (ws / "dangling" / "CLAUDE.md").symlink_to(ws / "nowhere.md")
    (ws / "dirmd" / "CLAUDE.md").mkdir(parents=True)
    (ws / "fifo").mkdir()
    os.mkfifo(ws / "fifo" / "CLAUDE.md")
    return p


def test_compute_budget_over_a_hostile_tree_returns_a_report(tmp_path, hermetic_settings, with_timeout):
    ws = tmp_path / "ws"
    p = _hostile_tree(ws)
    rep = with_timeout(lambda: compute_budget(ws, hermetic_settings(ws)))
    assert rep.root_cost.dir == ws
    assert len(rep.dirs) + len(rep.other_dirs) == len(rep.index.dirs)  # (.claude/ folders ranked apart)
    assert rep.dirs == sorted(rep.dirs, key=lambda c: (-c.startup_tokens, c.dir.as_posix()))
    file_paths = {f.path for f in rep.files}
    assert p["utf8"] in file_paths and p["root"] in file_paths
    assert p["binary"] not in file_paths and p["big"] not in file_paths
    assert any(path == ws / "eloop" / "CLAUDE.md" for path, _ in rep.index.skipped)
    assert len(rep.policy) == 3


def test_load_session_touching_every_hostile_file_does_not_raise(tmp_path, hermetic_settings, with_timeout):
    ws = tmp_path / "ws"
    _hostile_tree(ws)
    touched = [ws / d / "CLAUDE.md" for d in ("bin", "utf8", "big", "eloop", "dangling", "dirmd", "cycle")]
    touched.append(ws / "fifo" / "CLAUDE.md")
    session = with_timeout(lambda: load_session(ws, touched, hermetic_settings(ws)))
    read_skips = {s.source for s in session.skipped if s.kind == M.READ}
    # every touched file that cannot be shown as a Read result is accounted for
    for t in touched:
        assert t in read_skips or any(b.kind == M.READ and b.source == t for b in session.blocks), t
    assert session.total_tokens == sum(b.tokens for b in session.blocks)


def test_unlistable_user_rules_directory_is_reported_by_every_session(tmp_path, hermetic_settings, monkeypatch):
    """User rules are scanned once per snapshot and shared by sessions started anywhere: each of them still
    reports the directory it could not list."""
    from ctxls.core.fs import FileSystem

    ws = tmp_path / "ws"
    _write(ws / "CLAUDE.md", "root instructions\n")
    _write(ws / "a" / "b" / "x.py", "x = 1\n")
    rules = tmp_path / "home" / ".claude" / "rules"
    _write(rules / "style.md", "Use tabs.\n")
    monkeypatch.setattr(fs_mod, "os", _OsProxy({rules}))  # (the loader lists rules through the snapshot)
    fs = FileSystem()
    settings = hermetic_settings(ws)
    for start in (ws, ws / "a", ws / "a" / "b"):
        session = load_session(start, (), settings, root=ws, fs=fs)
        [skip] = _skips_for(session, rules)
        assert skip.kind == M.RULE and "cannot list rules directory" in skip.reason


def test_check_reports_what_it_could_not_read(tmp_path, hermetic_settings, monkeypatch):
    """CTX107 (issue 15): `check` said 'no findings' about an unreadable CLAUDE.local.md or an unlistable
    subdirectory, which budget and context report as skipped. Both are findings now."""
    from ctxls.core.check import CheckConfig, Workspace, run_checks

    ws = tmp_path / "ws"
    _write(ws / "CLAUDE.md", "# Root\n- Run the tests.\n")
    local = _write(ws / "CLAUDE.local.md", "private notes\n")
    _write(ws / "locked" / "CLAUDE.md", "locked\n")

    def deny(path: Path) -> None:
        if path == local:
            raise PermissionError(13, "Permission denied", str(path))

    _patch_fs_open(monkeypatch, deny)
    monkeypatch.setattr(discovery_mod, "os", _OsProxy({ws / "locked"}))
    result = run_checks(Workspace(ws, hermetic_settings(ws), CheckConfig(select=frozenset({"CTX107"}))))
    got = sorted((f.path, f.severity, f.message.split(":")[0]) for f in result.findings)
    assert got == [(local, "warning", "CLAUDE.local.md cannot be read (permission denied)"),
                   (ws / "locked", "warning", "locked cannot be read (permission denied)")], result.findings
