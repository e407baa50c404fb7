"""A newcomer's bad input (issue 16): every command with each bad input ends in one clear line on stderr and a
documented exit code (README, "Exit codes"), never a traceback. Run as subprocesses on a tmp copy of
fixtures/demo, with the real anthropic SDK pointed at a port nobody listens on."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from test_cli import ctxls, demo  # noqa: F401  (the fixture)


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again: nothing listens there


def run(cwd: Path, *args, env: dict | None = None) -> subprocess.CompletedProcess:
    if env is None:
        return ctxls(*args, cwd=cwd)
    base = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "PYTHONPATH", "ANTHROPIC_API_KEY")}
    base.update(HOME=str(cwd / "no-such-home"), COLUMNS="200", **env)
    return subprocess.run([sys.executable, "-m", "ctxls", *map(str, args)], cwd=cwd, env=base,
                          capture_output=True, text=True, timeout=180)


def one_line(proc) -> str:
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert lines, proc
    return lines[-1]


UNREACHABLE = {"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": "http://127.0.0.1:{port}"}


@pytest.mark.parametrize("args, code, says", [
    (("serve", "--tcp", "nonsense"), 2, "--tcp nonsense: expected HOST:PORT"),
    (("serve", "--tcp", "127.0.0.1"), 2, "--tcp 127.0.0.1: expected HOST:PORT"),
    (("serve", "--tcp", "127.0.0.1:99999"), 2, "port from 1 to 65535"),
    (("serve", "--home", "repo/CLAUDE.md"), 2, "--home repo/CLAUDE.md: not a directory"),
    (("budget", "repo", "--top", "-3"), 2, "--top: must be 1 or more, not -3"),
    (("budget", "repo", "--top", "0"), 2, "--top: must be 1 or more, not 0"),
    (("budget", "repo", "--top", "many"), 2, "--top: not a whole number: 'many'"),
    (("check", "repo", "--home", "repo/CLAUDE.md"), 2, "--home repo/CLAUDE.md: not a directory"),
    (("check", "repo", "--jobs", "0"), 2, "--jobs: must be 1 or more, not 0"),
    (("context", "repo", "--root", "repo/services"), 2, "is not inside it"),
    (("context", "no/such/dir"), 2, "no/such/dir: no such file or directory"),
    (("rules", "--format", "html"), 2, "argument --format: invalid choice"),
    (("frobnicate",), 2, "invalid choice: 'frobnicate'"),
    (("agent",), 2, "say what to do"),
    (("agent", "fix it", "--dir", "/nonexistent"), 2, "/nonexistent: not a directory"),
    (("agent", "fix it", "--dir", "repo"), 2, "no Anthropic API key"),
    (("agent", "fix it", "--max-turns", "-1"), 2, "--max-turns must be positive"),
    (("agent", "--resume", "nope", "--dir", "repo"), 2, "no session 'nope'"),
    (("agent", "--ledger", "nope", "--dir", "repo"), 2, "no session 'nope'"),
])
def test_bad_input_gets_one_line_and_its_exit_code(demo, args, code, says):
    proc = run(demo, *args)
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    line = one_line(proc)
    assert says in line
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_bare_ctxls_shows_the_commands(demo):
    proc = run(demo)
    assert proc.returncode == 2
    assert "the following arguments are required" not in proc.stderr
    for cmd in ("context", "budget", "check", "rules", "agent", "serve"):
        assert cmd in proc.stderr
    assert "Traceback" not in proc.stderr


def test_budget_help_describes_every_option(demo):
    proc = run(demo, "budget", "--help")
    assert proc.returncode == 0
    text = proc.stdout
    assert "the workspace to size" in text  # root
    assert "the documented schema" in text  # --format


def test_unknown_model_is_said_and_the_run_goes_on(demo):
    proc = run(demo, "context", "repo", "--model", "gpt-9", "--no-cache")
    assert proc.returncode == 0, proc.stderr
    assert one_line(proc) == "ctxls: --model gpt-9: not a Claude model ctxls knows; counting without a calibration factor"


@pytest.mark.parametrize("flag, says", [
    ("--home", "--home /nonexistent: no such directory; nothing from a user home loads"),
    ("--ceiling", "--ceiling /nonexistent: no such directory; the upward walk goes to the filesystem root"),
])
@pytest.mark.parametrize("cmd", ["context", "budget", "check"])
def test_a_missing_home_or_ceiling_is_said_and_the_run_goes_on(demo, cmd, flag, says):
    proc = run(demo, cmd, "repo", flag, "/nonexistent", "--no-cache", "--format", "json")
    assert proc.returncode in (0, 1) and proc.stdout.startswith("{"), proc.stderr
    assert proc.stderr.splitlines()[0] == f"ctxls: {says}"
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("cmd", ["context", "check", "budget"])
def test_exact_without_a_reachable_api_is_one_line_and_exit_3(demo, cmd):
    env = {k: v.format(port=_dead_port()) for k, v in UNREACHABLE.items()}
    proc = run(demo, cmd, "repo", "--exact", "--no-cache", env=env)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    line = one_line(proc)
    assert line.startswith("ctxls: the Anthropic API failed (APIConnectionError")
    assert "run without --exact" in line
    assert len(proc.stderr.strip().splitlines()) == 1


def test_agent_without_a_reachable_api_is_exit_3_without_a_traceback(demo):
    env = {k: v.format(port=_dead_port()) for k, v in UNREACHABLE.items()}
    proc = run(demo, "agent", "say hi", "--dir", "repo", env=env)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert "cannot reach the API" in one_line(proc)


def test_serve_on_a_port_in_use_is_one_line_and_exit_3(demo):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        proc = run(demo, "serve", "--tcp", f"127.0.0.1:{port}")
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert f"cannot listen on 127.0.0.1:{port}" in one_line(proc)


def test_unreadable_directory_is_a_message_not_a_traceback(demo, monkeypatch, capsys):
    """`find_root` raised PermissionError from Path.is_file on an unreadable directory (the tests run as
    root, where nothing is unreadable: the denial is simulated where it happened)."""
    from ctxls import cli

    locked = demo / "repo" / "services" / "api"
    real_is_file, real_access = Path.is_file, os.access

    def is_file(self):
        if locked in (self, *self.parents):
            raise PermissionError(13, "Permission denied", str(self))
        return real_is_file(self)

    monkeypatch.setattr(Path, "is_file", is_file)
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: Path(p) != locked and real_access(p, mode, **kw))
    for cmd in ("context", "check"):
        assert cli.main([cmd, str(locked), "--no-cache"]) == 2
        err = capsys.readouterr().err
        assert err == f"ctxls: {locked}: permission denied (ctxls needs to list {locked})\n"
    from ctxls.core.config import choose_root

    assert choose_root(locked / "x").root == demo / "repo"  # the walk goes on past what it cannot read


# ---------------------------------------------------------------------------------------------- the root
def test_markerless_start_says_which_root_and_why(tmp_path):
    scratch = tmp_path / "scratch"
    (scratch / "a").mkdir(parents=True)
    (scratch / "CLAUDE.md").write_text("# Notes\n- keep it short\n")
    proc = run(scratch, "check", "--no-cache", "--ceiling", ".", "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.stderr.splitlines()[0] == (f"ctxls: workspace root {scratch} (no .git, .ctxls.toml or [tool.ctxls] "
                                           f"in it or above it; pass --root DIR to choose another)")


def test_huge_markerless_tree_is_refused_unless_root_is_given(tmp_path):
    from ctxls.cli import MARKERLESS_MAX_DIRS

    scratch = tmp_path / "scratch"
    for i in range(MARKERLESS_MAX_DIRS + 1):
        (scratch / f"t{i // 50}" / f"d{i}").mkdir(parents=True)
    proc = run(scratch, "check", "--no-cache", "--ceiling", ".")
    assert proc.returncode == 2, proc.stderr
    assert "over 2,000 directories: not taken as one workspace; pass --root DIR" in one_line(proc)
    assert not (scratch / ".ctxls").exists()  # nothing written
    sub = scratch / "t0"
    proc = run(sub, "context", ".", "--no-cache", "--root", ".", "--ceiling", ".")
    assert proc.returncode == 0, proc.stderr
    assert "workspace root" not in proc.stderr


def test_ctxls_dir_ignores_itself(demo):
    proc = run(demo, "check", "repo")  # with the caches
    assert proc.returncode == 1, proc.stderr
    gi = demo / "repo" / ".ctxls" / ".gitignore"
    assert gi.read_text().splitlines()[-1] == "*"
    assert (demo / "repo" / ".ctxls" / "cache" / "check.json").is_file()


# ---------------------------------------------------------------------------------------------- wording
def test_plural():
    from ctxls.core.words import plural

    assert [plural(1, "error"), plural(2, "warning"), plural(1, "directory"), plural(3, "directory"),
            plural(0, "path"), plural(2, "day")] == ["1 error", "2 warnings", "1 directory", "3 directories",
                                                      "0 paths", "2 days"]


def test_check_summary_and_budget_wording(demo):
    proc = run(demo, "check", "repo", "--no-cache")
    assert proc.stderr.splitlines()[-1] == "1 error, 2 warnings"
    out = run(demo, "budget", "repo", "--no-cache").stdout
    assert "so it fits the 8,000-char listing" in out and "so all 1 fit" not in out
    assert "(15 directories, 17 files, 9 instruction sources;" in out
    assert "path(s)" not in out and "1 descriptions" not in out


def test_progress_shows_a_count_while_scanning_and_a_real_total_after():
    from ctxls.render import progress_text

    assert progress_text("scan", 638, 0) == ("scanning", "638 directories")
    assert progress_text("sessions", 638, 1204) == ("sizing sessions", "638/1,204 directories")
    assert "None" not in "".join(progress_text("scan", 1, 0))


def test_rules_render_for_a_terminal_and_stay_markdown_in_a_pipe(demo):
    piped = run(demo, "rules")
    assert piped.returncode == 0 and piped.stdout.startswith("#")
    assert piped.stdout == (Path(__file__).resolve().parent.parent / "docs" / "rules.md").read_text()
    shown = run(demo, "rules", "--format", "text")
    assert shown.returncode == 0
    assert "CTX601" in shown.stdout
    assert not any(line.startswith(("#", "```")) for line in shown.stdout.splitlines())  # rendered, not source
