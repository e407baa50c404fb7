"""Which version of a diverged instruction (CTX202) is newer, from git history: `core/history.py` against a
real git binary on repositories built here with fixed commit dates, and its fallbacks to modification times."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctxls.core import history as H
from ctxls.core.check import CheckConfig, Workspace, run_checks
from ctxls.core.fs import FileSystem
from ctxls.core.settings import Settings

ROOT_RULE = "- Database migrations MUST be reversible and reviewed by the data team."
API_RULE = "- Database migrations should be reversible and reviewed by the data team."
OLD, NEW = 1_000_000_000, 2_000_000_000  # mtimes that contradict the history (2001 and 2033)


def git(root: Path, *args: str, date: str | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True).stdout


def write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")


def new_repo(tmp_path: Path, files: dict[str, str], date: str | None = "2025-01-01T12:00:00Z") -> Path:
    """A git repository holding ``files``, committed on ``date`` (None: not committed)."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    for rel, text in files.items():
        write(root, rel, text)
    if date is not None:
        git(root, "add", "-A")
        git(root, "commit", "-qm", "first", date=date)
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The root rule committed 2025-01-01, the API's version 2025-06-01, then an unrelated line of the root
    file changed 2025-09-01: the root file is newer, the API's version of the rule is."""
    root = new_repo(tmp_path, {"CLAUDE.md": f"# Project\n\n{ROOT_RULE}\n- Format the code with black before "
                                            f"every commit.\n"})
    write(root, "api/CLAUDE.md", f"# API\n\n{API_RULE}\n")
    git(root, "add", "api")
    git(root, "commit", "-qm", "api", date="2025-06-01T12:00:00Z")
    write(root, "CLAUDE.md", f"# Project\n\n{ROOT_RULE}\n- Format the code with ruff before every commit.\n")
    git(root, "commit", "-qam", "ruff", date="2025-09-01T12:00:00Z")
    # The modification times say the opposite of the history.
    os.utime(root / "CLAUDE.md", (NEW, NEW))
    os.utime(root / "api/CLAUDE.md", (OLD, OLD))
    return root


def diverged(root: Path, fs: FileSystem | None = None, **config):
    settings = Settings(home=root.parent / "home", ceiling=root.parent, managed_dir=root.parent / "managed")
    ws = Workspace(root, settings, CheckConfig(select=frozenset({"CTX202"}), **config), fs=fs)
    res = run_checks(ws)
    assert res.errors == []
    return res.findings


def test_the_versions_own_lines_decide_not_the_files(repo: Path) -> None:
    [f] = diverged(repo)
    assert f.path == repo / "api/CLAUDE.md"
    assert "this version is newer by git history (this one: 2025-06-01 in " in f.message
    assert "the other: 2025-01-01 in " in f.message
    [fix] = f.fixes
    assert fix.title == "Replace the older version in CLAUDE.md with the newer one"
    assert fix.edits[0].path == repo / "CLAUDE.md" and "should be reversible" in fix.edits[0].new_text


def test_uncommitted_changes_are_the_newest(repo: Path) -> None:
    write(repo, "CLAUDE.md", (repo / "CLAUDE.md").read_text().replace("MUST be", "MUST always be"))
    [f] = diverged(repo)
    assert "the other version is newer by git history (this one: 2025-06-01 in " in f.message
    assert "the other: uncommitted changes)" in f.message
    [fix] = f.fixes
    assert fix.edits[0].path == repo / "api/CLAUDE.md" and "MUST always be" in fix.edits[0].new_text


def test_an_unsaved_editor_buffer_counts_as_uncommitted(repo: Path) -> None:
    fs = FileSystem()
    fs.set_overlay(repo / "CLAUDE.md", (repo / "CLAUDE.md").read_text().replace("MUST be", "MUST always be"))
    [f] = diverged(repo, fs)
    assert "the other: uncommitted changes)" in f.message


def test_same_commit_names_it_and_offers_no_fix(tmp_path: Path) -> None:
    root = new_repo(tmp_path, {"CLAUDE.md": f"{ROOT_RULE}\n", "api/CLAUDE.md": f"{API_RULE}\n"})
    sha = git(root, "rev-parse", "--short=7", "HEAD").strip()
    os.utime(root / "CLAUDE.md", (NEW, NEW))
    [f] = diverged(root)
    assert f"both versions were last changed in the same commit ({sha})" in f.message
    assert f.fixes == []


def test_two_versions_in_one_file_are_dated_too(tmp_path: Path) -> None:
    root = new_repo(tmp_path, {"CLAUDE.md": f"{ROOT_RULE}\n"})
    write(root, "CLAUDE.md", f"{ROOT_RULE}\n\nMore.\n\n{API_RULE}\n")
    git(root, "commit", "-qam", "two", date="2025-03-01T12:00:00Z")
    [f] = diverged(root)
    assert f.span.start_line == 4
    assert "this version is newer by git history (this one: 2025-03-01 in" in f.message
    assert f.fixes and f.fixes[0].edits[0].span.start_line == 0


def test_without_git_history_modification_times_decide(repo: Path) -> None:
    [f] = diverged(repo, git_history=False)
    assert "the other version is newer by file modification time" in f.message


def test_an_untracked_file_falls_back_to_modification_times(repo: Path) -> None:
    write(repo, "web/CLAUDE.md", f"# Web\n\n{API_RULE}\n")
    os.utime(repo / "web/CLAUDE.md", (OLD, OLD))
    by_path = {f.path: f for f in diverged(repo)}
    assert "newer by git history" in by_path[repo / "api/CLAUDE.md"].message
    assert "the other version is newer by file modification time" in by_path[repo / "web/CLAUDE.md"].message


def test_no_git_binary_falls_back_quietly(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "nobin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    [f] = diverged(repo)
    assert "the other version is newer by file modification time" in f.message


def test_a_repository_without_commits_falls_back(tmp_path: Path) -> None:
    root = new_repo(tmp_path, {"CLAUDE.md": f"{ROOT_RULE}\n", "api/CLAUDE.md": f"{API_RULE}\n"}, date=None)
    os.utime(root / "CLAUDE.md", (NEW, NEW))
    os.utime(root / "api/CLAUDE.md", (OLD, OLD))
    [f] = diverged(root)
    assert "the other version is newer by file modification time" in f.message


def test_a_stored_report_goes_stale_with_a_commit(repo: Path) -> None:
    write(repo, "CLAUDE.md", (repo / "CLAUDE.md").read_text().replace("MUST be", "MUST always be"))
    (repo / ".git/info/exclude").write_text(".ctxls/\n")
    env = {**os.environ, "HOME": str(repo.parent / "home")}

    def check() -> str:
        p = subprocess.run([sys.executable, "-m", "ctxls", "check", ".", "--select", "CTX202"], cwd=repo, env=env,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 1, p.stderr
        return p.stdout

    assert "the other: uncommitted changes" in check()
    git(repo, "commit", "-qam", "always", date="2025-10-01T12:00:00Z")
    assert "the other: 2025-10-01 in " in check()  # not the stored report


def test_parse_blame_porcelain() -> None:
    a, b = "a" * 40, "b" * 40
    out = (f"{a} 1 1 2\nauthor x\nauthor-time 5\ncommitter-time 100\nfilename f\n\tone\n"
           f"{a} 2 2\n\ttwo\n"
           f"{b} 3 3 1\nauthor y\ncommitter-time 900\nboundary\nfilename f\n\tthree\n")
    got = H.parse_blame(out)
    assert got == {0: H.Change(100, a), 1: H.Change(100, a), 2: H.Change(900, b)}
    assert H.latest(got, 0, 1) == H.Change(100, a)
    assert H.latest(got, 0, 2) == H.Change(900, b)
    assert H.latest(got, 2, 3) is None  # a line git did not answer for: no answer
    assert H.parse_blame(out, shallow=True)[2] is None  # the cut-off commit of a shallow clone: no date
    assert H.latest(H.parse_blame(out, shallow=True), 0, 2) is None
    assert H.parse_blame("garbage\n\tx\n") == {}


def test_map_lines_marks_what_is_not_committed() -> None:
    assert H.map_lines("a\nb\nc", "a\nb\nc") == {0: 0, 1: 1, 2: 2}
    assert H.map_lines("a\nb\nc", "a\nX\nb\nc") == {0: 0, 2: 1, 3: 2}
    assert H.map_lines("a\r\nb", "a\nb") == {0: 0, 1: 1}  # line endings aside
    assert H.map_lines("a\nb", "") == {}


def test_git_history_setting_is_validated() -> None:
    cfg, errors = CheckConfig.from_mapping({"git-history": False})
    assert errors == [] and cfg.git_history is False
    _, errors = CheckConfig.from_mapping({"git_history": 1})
    assert errors == ["[check] git_history must be true or false"]


# ------------------------------------------------------------------------------------ what removed a path

@pytest.fixture
def moved(tmp_path: Path) -> Path:
    """web.py split into src/web/ and handlers.py moved, committed 2025-02-03; a memory still names both,
    and a file that never existed."""
    root = new_repo(tmp_path, {"services/stats/web.py": "def stats(): ...\n",
                               "services/handlers.py": "def handle(): ...\n" * 20})
    git(root, "rm", "-q", "services/stats/web.py")
    write(root, "src/web/stats.py", "from flask import Blueprint\n\nbp = Blueprint('stats', __name__)\n")
    (root / "services/api").mkdir()
    git(root, "mv", "services/handlers.py", "services/api/handlers.py")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Split web.py into src/web/", date="2025-02-03T12:00:00Z")
    write(tmp_path, "mem/MEMORY.md", "# Memory\n\n- The stats endpoints live in `web.py`.\n"
                                     "- Request handling is in `services/handlers.py`.\n"
                                     "- Nightly jobs are in `cronjobs.py`.\n")
    return root


def stale_memory(root: Path, **config):
    settings = Settings(home=root.parent / "home", ceiling=root.parent, managed_dir=root.parent / "managed",
                        auto_memory_dir=root.parent / "mem")
    ws = Workspace(root, settings, CheckConfig(select=frozenset({"CTX402"}), **config))
    res = run_checks(ws)
    assert res.errors == []
    return {f.span.start_line + 1: f for f in res.findings}


def test_a_stale_memory_names_the_commit_that_deleted_the_file(moved: Path) -> None:
    got = stale_memory(moved)
    sha = git(moved, "rev-parse", "--short=7", "HEAD").strip()
    assert got[3].message == ("This memory may be stale: `web.py` no longer exists: `services/stats/web.py` was "
                              f"deleted on 2025-02-03 in {sha} (\"Split web.py into src/web/\"); update or "
                              "delete the memory")
    assert got[3].fixes == []


def test_a_stale_memory_names_a_rename_and_offers_it_as_the_fix(moved: Path) -> None:
    f = stale_memory(moved)[4]
    assert "`services/handlers.py` was renamed to `services/api/handlers.py` on 2025-02-03 in " in f.message
    [fix] = f.fixes
    assert fix.title == "Replace with `services/api/handlers.py`"
    assert fix.edits[0].new_text == "services/api/handlers.py"


def test_a_path_git_never_had_keeps_its_plain_message(moved: Path) -> None:
    assert stale_memory(moved)[5].message == ("This memory may be stale: `cronjobs.py` no longer exists; update or "
                                              "delete the memory")


def test_without_git_history_the_names_left_are_the_guess(moved: Path) -> None:
    got = stale_memory(moved, git_history=False)
    assert "deleted on" not in got[3].message and "was renamed" not in got[4].message
    assert "did it move to `services/api/handlers.py`?" in got[4].message


def test_removals_match_a_path_in_any_directory_and_are_kept_per_head(moved: Path) -> None:
    h = H.History(moved)
    got = h.removals(["web.py", "services/handlers.py", "never.py", "a[b]*.py"])
    assert set(got) == {"web.py", "services/handlers.py"}
    assert got["services/handlers.py"].renamed_to == "services/api/handlers.py"
    assert got["web.py"].renamed_to is None and got["web.py"].path == "services/stats/web.py"
    assert h.removals(["web.py"]) == {"web.py": got["web.py"]}  # cached for this HEAD


# ------------------------------------------------------------------------------------ review follow-ups

def run_check(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(cwd.parent / "home")}
    return subprocess.run([sys.executable, "-m", "ctxls", "check", ".", "--select", "CTX202", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300)


def test_a_stored_report_of_a_subdirectory_workspace_goes_stale_with_a_commit(repo: Path) -> None:
    # The workspace is api/ (its own .ctxls.toml), so the git directory is outside it.
    write(repo, "api/.ctxls.toml", "[check]\n")
    write(repo, "CLAUDE.md", (repo / "CLAUDE.md").read_text().replace("MUST be", "MUST always be"))
    (repo / ".git/info/exclude").write_text(".ctxls/\n")
    first = run_check(repo / "api")
    assert "the other: uncommitted changes)" in first.stdout, first.stdout
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "always", date="2025-10-01T12:00:00Z")
    assert "the other: 2025-10-01 in " in run_check(repo / "api").stdout


def test_a_first_commit_invalidates_a_stored_report(tmp_path: Path) -> None:
    root = new_repo(tmp_path, {"CLAUDE.md": f"{ROOT_RULE}\n", "api/CLAUDE.md": f"{API_RULE}\n"}, date=None)
    (root / ".git/info/exclude").write_text(".ctxls/\n")
    assert "by git history" not in run_check(root).stdout and "same commit" not in run_check(root).stdout
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first", date="2025-01-01T12:00:00Z")
    assert "both versions were last changed in the same commit" in run_check(root).stdout


def test_git_status_keeps_a_stored_report(repo: Path) -> None:
    (repo / ".git/info/exclude").write_text(".ctxls/\n")
    run_check(repo)
    stored = (repo / ".ctxls/cache/check.json").read_text()
    git(repo, "status", "--short")  # rewrites the index, as a shell prompt does
    assert run_check(repo).returncode == 1
    assert (repo / ".ctxls/cache/check.json").read_text() == stored  # a hit: nothing analysed, nothing stored


def test_no_clean_filter_or_textconv_of_the_repository_runs(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    git(repo, "config", "filter.ev.clean", f"touch {marker}; cat")
    git(repo, "config", "diff.ev.textconv", f"sh -c 'touch {marker}; cat \"$1\"' -")
    write(repo, ".gitattributes", "*.md filter=ev diff=ev\n")
    write(repo, "CLAUDE.md", (repo / "CLAUDE.md").read_text().replace("MUST be", "MUST always be"))
    [f] = diverged(repo)
    assert "the other: uncommitted changes)" in f.message
    assert not marker.exists()


def test_a_shallow_clone_has_no_dates_for_the_cut_off_commit(repo: Path, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(clone))
    os.utime(clone / "CLAUDE.md", (NEW, NEW))
    os.utime(clone / "api/CLAUDE.md", (OLD, OLD))
    [f] = diverged(clone)
    assert "the other version is newer by file modification time" in f.message  # not "the same commit"


def test_the_language_server_sees_a_commit(repo: Path) -> None:
    from ctxls.core.engine import Engine

    write(repo, "CLAUDE.md", (repo / "CLAUDE.md").read_text().replace("MUST be", "MUST always be"))
    engine = Engine(repo, Settings(home=repo.parent / "home", ceiling=repo.parent,
                                   managed_dir=repo.parent / "managed"))

    def messages() -> list[str]:
        engine.check()
        return [f.message for fs in engine.findings.values() for f in fs if f.code == "CTX202"]

    assert any("the other: uncommitted changes)" in m for m in messages())
    git(repo, "commit", "-qam", "always", date="2025-10-01T12:00:00Z")
    assert any("the other: 2025-10-01 in " in m for m in messages())


def test_a_removal_on_a_merged_side_branch_is_found(moved: Path) -> None:
    git(moved, "checkout", "-qb", "side")
    write(moved, "tools/sync.py", "def sync(): ...\n" * 30)
    git(moved, "add", "-A")
    git(moved, "commit", "-qm", "add sync", date="2025-03-01T12:00:00Z")
    git(moved, "rm", "-q", "tools/sync.py")
    git(moved, "commit", "-qm", "drop sync", date="2025-03-02T12:00:00Z")
    git(moved, "checkout", "-q", "-")
    git(moved, "merge", "-q", "--no-ff", "-m", "merge side", "side", date="2025-03-03T12:00:00Z")
    got = H.History(moved).removals(["sync.py"])
    assert got["sync.py"].path == "tools/sync.py" and got["sync.py"].subject == "drop sync"


def test_a_rename_is_followed_to_where_the_file_is_now(moved: Path) -> None:
    git(moved, "mv", "services/api/handlers.py", "services/api/routes.py")
    git(moved, "commit", "-qm", "rename again", date="2025-04-01T12:00:00Z")
    got = H.History(moved).removals(["services/handlers.py"])["services/handlers.py"]
    assert got.renamed_to == "services/api/routes.py" and not got.deleted_later
    assert "`services/handlers.py` was renamed to `services/api/routes.py` on 2025-02-03 in" in got.describe()
    git(moved, "rm", "-q", "services/api/routes.py")
    git(moved, "commit", "-qm", "gone", date="2025-05-01T12:00:00Z")
    got = H.History(moved).removals(["services/handlers.py"])["services/handlers.py"]
    assert got.deleted_later and "which was deleted later" in got.describe()


def test_a_git_log_that_hangs_is_killed_in_time(moved: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    h = H.History(moved)
    assert h.refresh()  # the real git finds the repository
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "git").write_text("#!/bin/sh\nsleep 60\n")
    (fake / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(H, "REMOVALS_TIMEOUT_S", 0.5)
    started = time.monotonic()
    assert h.removals(["web.py"]) == {}
    assert time.monotonic() - started < 10
    monkeypatch.undo()
    assert "web.py" in h.removals(["web.py"])  # no answer was kept for the path the time ran out for


# ------------------------------------------------------------------------------------ second review

def test_a_moved_line_keeps_the_date_of_its_commit(repo: Path) -> None:
    text = (repo / "CLAUDE.md").read_text()
    write(repo, "CLAUDE.md", text.replace(ROOT_RULE + "\n", "") + ROOT_RULE + "\n")  # moved to the end, unchanged
    [f] = diverged(repo)
    assert "this version is newer by git history (this one: 2025-06-01 in " in f.message
    assert "the other: 2025-01-01 in " in f.message


def test_a_byte_order_mark_is_not_an_uncommitted_change(tmp_path: Path) -> None:
    root = new_repo(tmp_path, {"CLAUDE.md": f"\ufeff{ROOT_RULE}\n", "api/CLAUDE.md": f"\ufeff{API_RULE}\n"})
    [f] = diverged(root)
    assert "both versions were last changed in the same commit" in f.message


def test_map_lines_pairs_what_a_diff_cannot(tmp_path: Path) -> None:
    head = "\n".join(f"line {i % 50}" for i in range(3000))  # repeated lines, too large a middle to diff
    lines = head.split("\n")
    current = "\n".join(["new first"] + lines[1:-1][::-1] + ["new last"])
    got = H.map_lines(head, current)
    assert 0 not in got and 2999 not in got  # the new lines are not committed
    assert all(lines[got[j]] == line for j, line in enumerate(current.split("\n")) if j in got)
    assert len(set(got.values())) == len(got) == 2998  # each committed line used once


def test_an_untracked_file_is_not_asked_about_twice(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(repo, "new.md", "x\n")
    h = H.History(repo)
    calls = []
    real = H._run_bytes
    monkeypatch.setattr(H, "_run_bytes", lambda *a, **k: calls.append(a[0][0]) or real(*a, **k))
    assert h.changes({repo / "new.md": ("x\n", [(0, 0)])}) == {}
    assert h.changes({repo / "new.md": ("x\n", [(0, 0)])}) == {}
    assert calls.count("cat-file") == 1


def test_a_failed_lookup_is_asked_again(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    h = H.History(repo)
    real = H._run_bytes
    monkeypatch.setattr(H, "_run_bytes", lambda *a, **k: None if a[0][0] == "cat-file" else real(*a, **k))
    req = {repo / "CLAUDE.md": ((repo / "CLAUDE.md").read_text(), [(2, 2)])}
    assert h.changes(req) == {}
    monkeypatch.setattr(H, "_run_bytes", real)
    assert h.changes(req)[repo / "CLAUDE.md"][2].commit is not None


def test_git_init_after_the_first_look_is_noticed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root, "CLAUDE.md", f"{ROOT_RULE}\n")
    h = H.History(root)
    assert not h.refresh() and not h.moved()
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first", date="2025-01-01T12:00:00Z")
    assert h.moved() and h.refresh() and h.head is not None
    assert not h.moved()


def test_the_language_server_checks_in_full_once_per_commit(repo: Path) -> None:
    from ctxls.core.engine import Engine

    engine = Engine(repo, Settings(home=repo.parent / "home", ceiling=repo.parent,
                                   managed_dir=repo.parent / "managed"))
    engine.check()
    assert not engine.git_changed()  # nothing moved
    write(repo, "other.txt", "x\n")
    git(repo, "add", "other.txt")
    git(repo, "commit", "-qm", "other", date="2025-10-01T12:00:00Z")
    assert engine.git_changed()  # what the watcher calls on a change under .git
    engine.check()
    assert engine.last_check_mode == "full"
    engine.set_buffer(repo / "api/CLAUDE.md", (repo / "api/CLAUDE.md").read_text() + "\nMore.\n")
    engine.check()
    assert engine.last_check_mode != "full"


def test_the_watcher_knows_which_git_files_say_where_head_is() -> None:
    from ctxls.lsp.watcher import _says_where_head_is

    for p in ("/w/.git", "/w/.git/HEAD", "/w/.git/refs/heads/main", "/w/.git/packed-refs",
              "/w/.git/worktrees/x/HEAD", "/w/.git/reftable/tables.list"):
        assert _says_where_head_is(Path(p)), p
    for p in ("/w/.git/index", "/w/.git/objects/ab/cdef", "/w/.git/refs/remotes/origin/main", "/w/CLAUDE.md"):
        assert not _says_where_head_is(Path(p)), p


def test_a_rename_target_recreated_later_is_where_the_file_is(moved: Path) -> None:
    git(moved, "rm", "-q", "services/api/handlers.py")
    git(moved, "commit", "-qm", "drop", date="2025-04-01T12:00:00Z")
    write(moved, "services/api/handlers.py", "def handle(): return 1\n")
    git(moved, "add", "-A")
    git(moved, "commit", "-qm", "back", date="2025-05-01T12:00:00Z")
    got = H.History(moved).removals(["services/handlers.py"])["services/handlers.py"]
    assert got.renamed_to == "services/api/handlers.py" and not got.deleted_later


def test_kill_without_process_groups_kills_the_process(monkeypatch: pytest.MonkeyPatch) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    monkeypatch.delattr(os, "killpg")
    H._kill(proc)
    assert proc.wait(timeout=10) != 0
