"""`ctxls check` end to end: a subprocess on a tmp copy of fixtures/check_cli/.

The fixture tree (see fixtures/check_cli/README.md) holds three workspaces next to a fake home:

- `clean/`: no findings with every rule;
- `mixed/`: CTX301 (error) on CLAUDE.md:4 and api/CLAUDE.md:3, CTX304 (info) on CLAUDE.md:5, CTX305 (info,
  safe fix) on web/CLAUDE.md:5, CTX105 (warning, safe fix) on ../home/mem/MEMORY.md:201 (230 lines);
- `info/`: only info findings (CTX304 on CLAUDE.md:4, CTX305 on CLAUDE.md:5).

Each `.ctxls.toml` sets `home = "../home"` and `ceiling = ".."`, and every run gets HOME pointed at an empty
directory of the copy, so nothing reads the real home. Most tests select the stable rule families CTX1/CTX3 so
rules that other people are still writing cannot change their outcome; the "clean" and schema tests run every rule.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "fixtures" / "check_cli"
SEVERITIES = ("error", "warning", "info", "hint")
STABLE = ("--select", "CTX1,CTX3")

#: (code, path, line) of every CTX1/CTX3 finding of `mixed/` (MEMORY.md lives outside the workspace root)
MIXED = {
    ("CTX105", "MEMORY", 201),
    ("CTX301", "CLAUDE.md", 4),
    ("CTX304", "CLAUDE.md", 5),
    ("CTX301", "api/CLAUDE.md", 3),
    ("CTX305", "web/CLAUDE.md", 5),
}


@dataclass
class Run:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def json(self) -> dict:
        try:
            return json.loads(self.stdout)
        except json.JSONDecodeError as exc:  # pragma: no cover - failure message only
            raise AssertionError(f"not JSON ({exc}): {self}") from None

    def __repr__(self) -> str:
        return f"ctxls check {' '.join(self.args)} -> {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    dst = tmp_path / "t"
    shutil.copytree(FIXTURE, dst)
    (dst / "fakehome").mkdir()
    return dst


def check(cwd: Path, *args: str) -> Run:
    tree = next(p for p in (cwd, *cwd.parents) if (p / "fakehome").is_dir())
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "ANTHROPIC_API_KEY")}
    env["HOME"] = str(tree / "fakehome")  # a config that fails to load must not fall back to the real home
    p = subprocess.run([sys.executable, "-m", "ctxls", "check", *args], cwd=cwd, env=env,
                       capture_output=True, text=True, timeout=300)
    return Run(list(args), p.returncode, p.stdout, p.stderr)


def keys(run: Run) -> set[tuple[str, str, int]]:
    out = set()
    for f in run.json["findings"]:
        path = "MEMORY" if f["path"].endswith("home/mem/MEMORY.md") else f["path"]
        out.add((f["code"], path, f["line"]))
    return out


def codes(run: Run) -> set[str]:
    return {f["code"] for f in run.json["findings"]}


def with_check_config(ws: Path, body: str) -> None:
    cfg = ws / ".ctxls.toml"
    cfg.write_text(cfg.read_text() + "\n[check]\n" + body + "\n")


def insert_line(path: Path, index: int, text: str) -> None:
    """Insert ``text`` as 0-based line ``index``."""
    lines = path.read_text().split("\n")
    lines.insert(index, text)
    path.write_text("\n".join(lines))


# ------------------------------------------------------------------------------------------------ exit codes


def test_clean_workspace_exits_0_with_every_rule(tree: Path) -> None:
    r = check(tree / "clean")
    assert r.returncode == 0, r
    assert r.stdout == "", r
    assert "no findings" in r.stderr, r
    j = check(tree / "clean", "--format", "json")
    assert j.returncode == 0, j
    assert j.json["findings"] == [] and j.json["errors"] == [], j


def test_errors_exit_1(tree: Path) -> None:
    r = check(tree / "mixed")
    assert r.returncode == 1, r
    r = check(tree / "mixed", "--select", "CTX301")
    assert r.returncode == 1, r


def test_a_warning_alone_exits_1(tree: Path) -> None:
    r = check(tree / "mixed", "--select", "CTX105", "--format", "json")
    assert r.returncode == 1, r
    assert [f["severity"] for f in r.json["findings"]] == ["warning"], r


@pytest.mark.parametrize("ws, args, want", [
    ("info", [], 0),                                 # info is below the default fail level (warning)
    ("info", ["--fail-level", "warning"], 0),
    ("info", ["--fail-level", "info"], 1),
    ("info", ["--fail-level", "hint"], 1),
    ("info", ["--fail-level", "error"], 0),
    ("mixed", ["--select", "CTX105"], 1),            # warning at the default level
    ("mixed", ["--select", "CTX105", "--fail-level", "error"], 0),
    ("mixed", ["--select", "CTX301", "--fail-level", "error"], 1),
    ("mixed", ["--select", "CTX304,CTX305"], 0),
    ("mixed", ["--select", "CTX304,CTX305", "--fail-level", "info"], 1),
])
def test_fail_level(tree: Path, ws: str, args: list[str], want: int) -> None:
    r = check(tree / ws, *STABLE, *args) if "--select" not in args else check(tree / ws, *args)
    assert r.returncode == want, r


@pytest.mark.parametrize("args, needle", [
    (["--select", "CTX999"], "CTX999"),
    (["--ignore", "CTX999"], "CTX999"),
    (["--select", "CTX301,NOPE"], "NOPE"),
    (["--select", "CTX301", "--ignore", "XYZ1"], "XYZ1"),
    (["no/such/dir"], "no/such/dir"),
    (["CLAUDE.md", "missing.md"], "missing.md"),
    (["--format", "xml"], "xml"),
    (["--fail-level", "fatal"], "fatal"),
    (["--no-such-flag"], "--no-such-flag"),
])
def test_usage_errors_exit_2(tree: Path, args: list[str], needle: str) -> None:
    r = check(tree / "mixed", *args)
    assert r.returncode == 2, r
    assert needle in r.stderr, r
    assert r.stdout == "", r


# ------------------------------------------------------------------------------------------ select / ignore


def test_stable_selection_reports_exactly_the_fixture_findings(tree: Path) -> None:
    r = check(tree / "mixed", *STABLE, "--format", "json")
    assert keys(r) == MIXED, r
    assert r.returncode == 1


@pytest.mark.parametrize("args, want", [
    (["--select", "CTX301"], {"CTX301"}),
    (["--select", "ctx301"], {"CTX301"}),                          # codes are case-insensitive
    (["--select", "CTX30"], {"CTX301", "CTX304", "CTX305"}),       # prefix
    (["--select", "CTX1"], {"CTX105"}),
    (["--select", "CTX304, CTX105"], {"CTX304", "CTX105"}),
    (["--select", "CTX1,CTX3", "--ignore", "CTX301"], {"CTX105", "CTX304", "CTX305"}),
    (["--select", "CTX1,CTX3", "--ignore", "CTX30"], {"CTX105"}),   # prefix
    (["--select", "CTX3", "--ignore", "CTX304,CTX305"], {"CTX301"}),
    (["--select", "CTX3", "--ignore", "CTX3"], set()),
])
def test_select_and_ignore(tree: Path, args: list[str], want: set[str]) -> None:
    r = check(tree / "mixed", *args, "--format", "json")
    assert codes(r) == want, r
    sev = {f["severity"] for f in r.json["findings"]}
    assert r.returncode == (1 if sev & {"error", "warning"} else 0), r


def test_ignore_without_select_drops_only_the_ignored(tree: Path) -> None:
    r = check(tree / "mixed", "--ignore", "CTX3", "--format", "json")
    assert not any(c.startswith("CTX3") for c in codes(r)), r
    assert "CTX105" in codes(r), r
    r = check(tree / "mixed", "--ignore", "CTX301,CTX105", "--format", "json")
    assert not codes(r) & {"CTX301", "CTX105"}, r
    assert {"CTX304", "CTX305"} <= codes(r), r


# ---------------------------------------------------------------------------------------------- config


@pytest.mark.parametrize("body, want_codes, want_rc", [
    ('select = ["CTX301"]', {"CTX301"}, 1),
    ('select = ["CTX3"]\nignore = ["CTX301"]', {"CTX304", "CTX305"}, 0),
    ('select = ["CTX3"]\nignore = ["ctx30"]', set(), 0),
    ('select = ["CTX304", "CTX305"]\nfail_level = "info"', {"CTX304", "CTX305"}, 1),
    ('select = ["CTX105"]\nfail_level = "error"', {"CTX105"}, 0),
    ('select = ["CTX304", "CTX305"]\n[check.severity]\nCTX304 = "error"', {"CTX304", "CTX305"}, 1),
    ('select = ["CTX1", "CTX3"]\nfail_level = "error"\nseverity = { CTX301 = "hint" }',
     {"CTX105", "CTX301", "CTX304", "CTX305"}, 0),
    ('fail-level = "error"\nselect = ["CTX105"]', {"CTX105"}, 0),   # dashes work like underscores
])
def test_check_table_in_ctxls_toml(tree: Path, body: str, want_codes: set[str], want_rc: int) -> None:
    ws = tree / "mixed"
    with_check_config(ws, body)
    r = check(ws, "--format", "json")
    assert r.stderr == "", r
    assert codes(r) == want_codes, r
    assert r.returncode == want_rc, r
    if "CTX304 = " in body:
        assert {f["severity"] for f in r.json["findings"] if f["code"] == "CTX304"} == {"error"}, r
    if "CTX301 = " in body:
        assert {f["severity"] for f in r.json["findings"] if f["code"] == "CTX301"} == {"hint"}, r


def test_cli_options_override_the_config(tree: Path) -> None:
    ws = tree / "mixed"
    with_check_config(ws, 'select = ["CTX301"]\nfail_level = "info"')
    r = check(ws, "--select", "CTX304", "--format", "json")
    assert codes(r) == {"CTX304"}, r
    assert r.returncode == 1, r                       # config fail_level info still applies
    r = check(ws, "--select", "CTX304", "--fail-level", "warning")
    assert r.returncode == 0, r


def _pyproject(ws: Path, check_body: str) -> None:
    (ws / ".ctxls.toml").unlink()
    (ws / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nversion = "0"\n\n'
        '[tool.ctxls]\nhome = "../home"\nceiling = ".."\nmanaged_dir = "../managed"\n'
        'auto_memory_dir = "../home/mem"\n\n'
        f"[tool.ctxls.check]\n{check_body}\n")


@pytest.mark.parametrize("body, want_codes, want_rc", [
    ('select = ["CTX301", "CTX105"]', {"CTX301", "CTX105"}, 1),
    ('select = ["CTX3"]\nignore = ["CTX301"]', {"CTX304", "CTX305"}, 0),
    ('select = ["CTX304"]\nfail_level = "info"', {"CTX304"}, 1),
    ('select = ["CTX105"]\nseverity = { CTX105 = "info" }', {"CTX105"}, 0),
])
def test_check_table_in_pyproject(tree: Path, body: str, want_codes: set[str], want_rc: int) -> None:
    ws = tree / "mixed"
    _pyproject(ws, body)
    r = check(ws, "--format", "json")
    assert r.stderr == "", r
    assert codes(r) == want_codes, r
    assert r.returncode == want_rc, r
    assert r.json["root"] == str(ws), r


def test_pyproject_config_applies_when_paths_name_a_subdirectory(tree: Path) -> None:
    """A workspace configured only by [tool.ctxls] in pyproject.toml (no .ctxls.toml, no .git): `ctxls check api`
    must still treat the pyproject directory as the workspace root (its config, root-relative paths)."""
    ws = tree / "mixed"
    _pyproject(ws, 'select = ["CTX3"]\nignore = ["CTX304"]')
    r = check(ws, "api", "--format", "json")
    assert r.json["root"] == str(ws), r
    assert keys(r) == {("CTX301", "api/CLAUDE.md", 3)}, r


@pytest.mark.parametrize("body, needle", [
    ('fail_level = "fatal"', "fail_level"),
    ('select = "CTX301"', "select"),
    ('severity = { CTX301 = "critical" }', "severity"),
    ("no_such_option = 1", "no_such_option"),
    ("max_lines = -5", "max_lines"),
    ('fail_level = "error"\nfail_level = "info"', ".ctxls.toml"),   # TOML error: the whole file is dropped
])
def test_invalid_config_warns_and_falls_back(tree: Path, body: str, needle: str) -> None:
    mixed, info = tree / "mixed", tree / "info"
    with_check_config(mixed, body)
    with_check_config(info, body)
    r = check(mixed)
    assert needle in r.stderr and ".ctxls.toml" in r.stderr, r
    assert r.returncode == 1, r                       # the defaults still fail on CTX301 errors
    r = check(info, *STABLE)
    assert needle in r.stderr, r
    assert r.returncode == 0, r                       # fallback fail level: warning; info-only passes


def test_invalid_fail_level_keeps_the_other_settings(tree: Path) -> None:
    ws = tree / "mixed"
    with_check_config(ws, 'select = ["CTX304"]\nfail_level = "fatal"')
    r = check(ws, "--format", "json")
    assert "fail_level" in r.stderr, r
    assert codes(r) == {"CTX304"}, r
    assert r.returncode == 0, r


@pytest.mark.parametrize("body, needle", [
    ('select = ["CTX301", "CTX9"]', "CTX9"),
    ('ignore = ["CTX999"]\nselect = ["CTX301"]', "CTX999"),
    ('select = ["CTX301"]\nseverity = { CTX998 = "error" }', "CTX998"),
])
def test_unknown_codes_in_config_are_reported(tree: Path, body: str, needle: str) -> None:
    """`--select CTX9` is a usage error (exit 2); the same typo in the config must not pass silently (a select list
    of only typos would turn every rule off and CI green)."""
    ws = tree / "mixed"
    with_check_config(ws, body)
    r = check(ws, "--format", "json")
    assert needle in r.stderr, r
    assert "CTX301" in codes(r), r
    assert r.returncode == 1, r


# ------------------------------------------------------------------------------------------ suppressions


def _claude(tree: Path) -> Path:
    return tree / "mixed" / "CLAUDE.md"


def _suppress_run(tree: Path) -> set[tuple[str, str, int]]:
    r = check(tree / "mixed", "--select", "CTX301,CTX304", "--format", "json")
    assert r.stderr == "", r
    return keys(r)


@pytest.mark.parametrize("comment", [
    "<!-- ctxls-ignore CTX301 -->",
    "<!-- ctxls-ignore -->",
    "<!--ctxls-ignore CTX3-->",
    "<!-- ctxls-ignore CTX304, CTX301 -->",
])
def test_suppression_on_the_line_above(tree: Path, comment: str) -> None:
    insert_line(_claude(tree), 3, comment)      # above "Architecture notes: @docs/gone.md" (now line 5)
    got = _suppress_run(tree)
    assert got == {("CTX304", "CLAUDE.md", 6), ("CTX301", "api/CLAUDE.md", 3)}, got


def _append_to_line(path: Path, index: int, expect: str, comment: str) -> None:
    lines = path.read_text().split("\n")
    assert lines[index] == expect
    lines[index] += " " + comment
    path.write_text("\n".join(lines))


@pytest.mark.parametrize("comment", ["<!-- ctxls-ignore CTX301 -->", "<!--ctxls-ignore ctx301-->"])
def test_suppression_on_the_same_line(tree: Path, comment: str) -> None:
    _append_to_line(_claude(tree), 3, "Architecture notes: @docs/gone.md", comment)
    got = _suppress_run(tree)
    assert got == {("CTX304", "CLAUDE.md", 5), ("CTX301", "api/CLAUDE.md", 3)}, got


def test_suppression_without_codes_on_the_same_line(tree: Path) -> None:
    _append_to_line(tree / "mixed" / "api" / "CLAUDE.md", 2, "Endpoints are described in @docs/gone.md",
                    "<!-- ctxls-ignore -->")
    got = _suppress_run(tree)
    assert got == {("CTX301", "CLAUDE.md", 4), ("CTX304", "CLAUDE.md", 5)}, got


def test_trailing_suppression_does_not_leak_to_the_next_line(tree: Path) -> None:
    """A comment after the text of line 4 silences line 4 (its line); it must not also silence line 5 as if it
    were a comment on "the line above" (the docs promise to "silence one finding")."""
    _append_to_line(_claude(tree), 3, "Architecture notes: @docs/gone.md", "<!-- ctxls-ignore -->")
    got = _suppress_run(tree)
    assert got == {("CTX304", "CLAUDE.md", 5), ("CTX301", "api/CLAUDE.md", 3)}, got


@pytest.mark.parametrize("index, comment", [
    (3, "<!-- ctxls-ignore CTX304 -->"),        # another code
    (3, "<!-- ctxls-ignore CTX2 -->"),          # another prefix
    (2, "<!-- ctxls-ignore CTX301 -->"),        # two lines above
])
def test_suppression_that_does_not_apply(tree: Path, index: int, comment: str) -> None:
    insert_line(_claude(tree), index, comment)
    got = _suppress_run(tree)
    assert got == {("CTX301", "CLAUDE.md", 5), ("CTX304", "CLAUDE.md", 6), ("CTX301", "api/CLAUDE.md", 3)}, got


def test_ignore_file_without_codes(tree: Path) -> None:
    insert_line(_claude(tree), 0, "<!-- ctxls-ignore-file -->")
    got = _suppress_run(tree)
    assert got == {("CTX301", "api/CLAUDE.md", 3)}, got


def test_ignore_file_with_codes(tree: Path) -> None:
    p = _claude(tree)
    p.write_text(p.read_text() + "\n<!-- ctxls-ignore-file CTX301 -->\n")
    got = _suppress_run(tree)
    assert got == {("CTX304", "CLAUDE.md", 5), ("CTX301", "api/CLAUDE.md", 3)}, got


def test_ignore_file_in_memory(tree: Path) -> None:
    mem = tree / "home" / "mem" / "MEMORY.md"
    insert_line(mem, 1, "<!-- ctxls-ignore-file CTX105 -->")
    r = check(tree / "mixed", "--select", "CTX105", "--format", "json")
    assert r.json["findings"] == [], r
    assert r.returncode == 0, r


# ------------------------------------------------------------------------------------------------ PATHS


@pytest.mark.parametrize("paths, want, rc", [
    (["api"], {("CTX301", "api/CLAUDE.md", 3)}, 1),
    (["api/"], {("CTX301", "api/CLAUDE.md", 3)}, 1),
    (["CLAUDE.md"], {("CTX301", "CLAUDE.md", 4), ("CTX304", "CLAUDE.md", 5)}, 1),
    (["web"], {("CTX305", "web/CLAUDE.md", 5)}, 0),      # only the reported paths decide the exit code
    (["api/CLAUDE.md", "web/CLAUDE.md"], {("CTX301", "api/CLAUDE.md", 3), ("CTX305", "web/CLAUDE.md", 5)}, 1),
    (["docs"], set(), 0),
    (["."], MIXED, 1),
])
def test_paths_limit_reporting(tree: Path, paths: list[str], want: set, rc: int) -> None:
    r = check(tree / "mixed", *STABLE, "--format", "json", *paths)
    assert keys(r) == want, r
    assert r.returncode == rc, r


def test_paths_are_relative_to_the_workspace_root_not_the_cwd(tree: Path) -> None:
    r = check(tree, *STABLE, "--format", "json", "mixed/api")
    assert r.json["root"] == str(tree / "mixed"), r
    assert keys(r) == {("CTX301", "api/CLAUDE.md", 3)}, r
    r = check(tree / "mixed" / "web", *STABLE, "--format", "json", str(tree / "mixed" / "api" / "CLAUDE.md"))
    assert keys(r) == {("CTX301", "api/CLAUDE.md", 3)}, r


# --------------------------------------------------------------------------------------------------- --fix


def _memory_entries(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.startswith("- entry")]


def test_fix_applies_safe_fixes_and_loses_nothing(tree: Path) -> None:
    ws, mem = tree / "mixed", tree / "home" / "mem"
    before_entries = _memory_entries((mem / "MEMORY.md").read_text())
    assert len(before_entries) == 229
    assert (ws / "web" / "CLAUDE.md").read_text().count("@../docs/style.md") == 2
    claude_before = (ws / "CLAUDE.md").read_text()

    r = check(ws, "--fix", "--select", "CTX105,CTX301,CTX305", "--format", "json")
    assert r.json["fixed"] == 2, r
    assert keys(r) == {("CTX301", "CLAUDE.md", 4), ("CTX301", "api/CLAUDE.md", 3)}, r   # no fix: still there
    assert r.returncode == 1, r
    assert (ws / "CLAUDE.md").read_text() == claude_before

    # CTX305: the duplicate import line is gone, everything else is intact
    web = (ws / "web" / "CLAUDE.md").read_text()
    assert web.count("@../docs/style.md") == 1, web
    assert web.split("\n") == ["# Web frontend", "", "@../docs/style.md",
                               "Run the dev server before changing components.", ""], web

    # CTX105: the hidden tail moved to archive.md, linked from the index; every entry exists exactly once
    index = (mem / "MEMORY.md").read_text()
    archive = (mem / "archive.md").read_text()
    assert len(index.split("\n")) <= 201 and len(index.encode()) <= 25_000, index
    assert "(archive.md)" in index
    assert index.startswith("# Memory index\n")
    after = _memory_entries(index) + _memory_entries(archive)
    assert sorted(after) == sorted(before_entries)
    assert len(set(after)) == len(after) == 229
    assert _memory_entries(index) == before_entries[:len(_memory_entries(index))]   # order kept
    assert _memory_entries(archive) == before_entries[len(_memory_entries(index)):]
    assert ".ctxls-tmp" not in " ".join(p.name for p in ws.rglob("*")) + " ".join(p.name for p in mem.iterdir())

    # a second run reports none of the fixed findings, and a second --fix changes nothing
    r2 = check(ws, "--select", "CTX105,CTX305", "--format", "json")
    assert r2.json["findings"] == [], r2
    assert r2.returncode == 0, r2
    snapshot = {p: p.read_bytes() for p in [*ws.rglob("*.md"), *mem.iterdir()]}
    r3 = check(ws, "--fix", "--select", "CTX105,CTX305", "--format", "json")
    assert r3.json["fixed"] == 0 and r3.json["findings"] == [], r3
    assert {p: p.read_bytes() for p in [*ws.rglob("*.md"), *mem.iterdir()]} == snapshot


def test_fix_text_format_reports_the_count(tree: Path) -> None:
    r = check(tree / "info", *STABLE, "--fix")
    assert "fixed 1" in r.stderr, r
    assert "CTX305" not in r.stdout and "CTX304" in r.stdout, r
    assert r.returncode == 0, r
    assert (tree / "info" / "CLAUDE.md").read_text().count("@docs/style.md") == 2   # one import + the code span


def test_fix_respects_paths(tree: Path) -> None:
    mem = tree / "home" / "mem"
    before = (mem / "MEMORY.md").read_text()
    r = check(tree / "mixed", *STABLE, "--fix", "--format", "json", "web")
    assert r.json["fixed"] == 1, r
    assert r.json["findings"] == [], r
    assert (mem / "MEMORY.md").read_text() == before
    assert not (mem / "archive.md").exists()


def _ours(p: Path) -> bool:
    """A file ctxls keeps for itself: `.ctxls/` in a workspace, and the user's cache of the decoded token ranks
    (`~/.cache/ctxls/`, see core/bpe.py)."""
    return ".ctxls" in p.parts or p.parent.name == "ctxls" and p.parent.parent.name == ".cache"


def test_without_fix_nothing_is_written(tree: Path) -> None:
    snap = {p: p.read_bytes() for p in tree.rglob("*") if p.is_file() and not _ours(p)}
    r = check(tree / "mixed", *STABLE, "--format", "json")
    assert r.json["fixed"] == 0, r
    assert {p: p.read_bytes() for p in tree.rglob("*") if p.is_file() and not _ours(p)} == snap


# ---------------------------------------------------------------------------------------------------- JSON


def _validate_schema(data: dict, root: Path) -> None:
    assert isinstance(data, dict) and isinstance(data.get("findings"), list), data
    for f in data["findings"]:
        assert isinstance(f, dict)
        assert {"code", "severity", "path", "line", "message"} <= set(f), f
        assert isinstance(f["code"], str) and re.fullmatch(r"CTX\d{3}", f["code"]), f
        assert f["severity"] in SEVERITIES, f
        assert isinstance(f["line"], int) and not isinstance(f["line"], bool) and f["line"] >= 1, f
        assert isinstance(f["message"], str) and f["message"].strip() and "\n" not in f["message"], f
        path = f["path"]
        assert isinstance(path, str) and path, f
        if Path(path).is_absolute():
            # only files outside the workspace (auto memory in the home) may be absolute
            p = Path(path)
            assert not p.is_relative_to(root), f
        else:
            assert "\\" not in path and not path.startswith(("./", "../")) and ".." not in Path(path).parts, f
            p = root / path
        assert p.is_file(), f
        n_lines = len(p.read_text(encoding="utf-8").split("\n"))
        assert f["line"] <= n_lines, (f, n_lines)
        if "column" in f:
            assert isinstance(f["column"], int) and f["column"] >= 1, f


def _order_key(f: dict) -> tuple:
    return (f["path"], f["line"], f.get("column", 0), f["code"])


def test_json_schema_with_every_rule(tree: Path) -> None:
    ws = tree / "mixed"
    r = check(ws, "--format", "json")
    data = r.json
    _validate_schema(data, ws)
    assert data["errors"] == [], r
    assert MIXED <= keys(r), r
    assert r.returncode == 1


def test_json_lines_and_columns_point_at_the_text(tree: Path) -> None:
    ws = tree / "mixed"
    r = check(ws, *STABLE, "--format", "json")
    _validate_schema(r.json, ws)
    for f in r.json["findings"]:
        if f["code"] in ("CTX301", "CTX304", "CTX305"):
            line = (ws / f["path"]).read_text().split("\n")[f["line"] - 1]
            target = f["message"].split(" ")[0]            # "@docs/gone.md"
            assert line[f["column"] - 1:].startswith(target), (f, line)
        if f["code"] == "CTX105":
            line = Path(f["path"]).read_text().split("\n")[f["line"] - 1]
            assert line.startswith("- entry200 "), (f, line)   # line 201 is the first one that never loads


def test_json_is_sorted_and_deterministic(tree: Path) -> None:
    ws = tree / "mixed"
    for name in ("b", "a", "Z", "a b", "a-b"):
        (ws / name).mkdir()
        (ws / name / "CLAUDE.md").write_text("x @gone1.md\n@gone2.md and @gone3.md\n")
    first = check(ws, *STABLE, "--format", "json")
    second = check(ws, *STABLE, "--format", "json")
    assert first.stdout == second.stdout
    inside = [f for f in first.json["findings"] if not Path(f["path"]).is_absolute()]
    assert len(inside) == 4 + 5 * 3, first
    assert inside == sorted(inside, key=_order_key), [_order_key(f) for f in inside]


# -------------------------------------------------------------------------------------------------- github

GH_LINE = re.compile(r"^::(error|warning|notice) ((?:[A-Za-z]+=[^,:]*)(?:,[A-Za-z]+=[^,:]*)*)::(CTX\d{3}) (.+)$")
GH_LEVEL = {"error": "error", "warning": "warning", "info": "notice", "hint": "notice"}


def _gh_unescape(s: str) -> str:
    return re.sub(r"%(25|0D|0A|3A|2C)", lambda m: bytes.fromhex(m.group(1)).decode(), s)


def test_github_format(tree: Path) -> None:
    ws = tree / "mixed"
    odd = "a,b%c:d" if os.name == "posix" else "a,b%c"
    (ws / odd).mkdir()
    (ws / odd / "CLAUDE.md").write_text("# Odd\n\nSee @docs/100%gone.md\n")
    j = check(ws, *STABLE, "--format", "json")
    g = check(ws, *STABLE, "--format", "github")
    assert g.returncode == j.returncode == 1, g
    lines = g.stdout.splitlines()
    assert g.stdout.endswith("\n")
    assert len(lines) == len(j.json["findings"]), g
    seen_odd = False
    for line, f in zip(lines, j.json["findings"]):
        m = GH_LINE.match(line)
        assert m, line
        level, props, code, message = m.groups()
        assert level == GH_LEVEL[f["severity"]], (line, f)
        prop = dict(kv.split("=", 1) for kv in props.split(","))
        assert _gh_unescape(prop["file"]) == f["path"], (line, f)
        assert int(prop["line"]) == f["line"], (line, f)
        assert code == f["code"]
        assert "%" not in message.replace("%25", "").replace("%0A", "").replace("%0D", ""), line
        assert _gh_unescape(message) == f["message"], (line, f)
        if f["path"].startswith(odd):
            seen_odd = True
            assert prop["file"] == odd.replace("%", "%25").replace(",", "%2C").replace(":", "%3A") + "/CLAUDE.md"
            assert "100%25gone.md" in message, line
    assert seen_odd, g


# ---------------------------------------------------------------------------------------------------- text

TEXT_LINE = re.compile(r"^(\S.*?):(\d+):(\d+): (CTX\d{3}) \[(error|warning|info|hint)\] (.+)$")


def test_text_format(tree: Path) -> None:
    ws = tree / "mixed"
    j = check(ws, *STABLE, "--format", "json")
    t = check(ws, *STABLE)
    assert t.returncode == j.returncode == 1
    heads = [TEXT_LINE.match(line) for line in t.stdout.splitlines() if not line.startswith(" ")]
    assert all(heads), t
    got = [(m.group(1), int(m.group(2)), int(m.group(3)), m.group(4), m.group(5), m.group(6)) for m in heads]
    want = [(f["path"], f["line"], f["column"], f["code"], f["severity"], f["message"]) for f in j.json["findings"]]
    assert got == want, t
    assert "CLAUDE.md:4:21: CTX301 " in t.stdout, t
    assert "fix: Delete the duplicate import" in t.stdout, t
    assert "2 error" in t.stderr and "1 warning" in t.stderr and "2 info" in t.stderr, t


def test_text_format_is_the_default(tree: Path) -> None:
    assert check(tree / "mixed", *STABLE).stdout == check(tree / "mixed", *STABLE, "--format", "text").stdout


# ------------------------------------------------------------------------------------------------ result cache

@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_second_run_prints_the_cached_report_unchanged(tree: Path, fmt: str) -> None:
    ws = tree / "mixed"
    first = check(ws, "--format", fmt)
    side = ws / ".ctxls" / "cache" / f"check.out-{fmt}"
    assert first.returncode == 1 and side.is_file(), first
    again = check(ws, "--format", fmt)
    assert (again.returncode, again.stdout, again.stderr) == (first.returncode, first.stdout, first.stderr)
    # the cached report is what was printed: tamper with it and the tampered text comes back
    with side.open("a", encoding="utf-8", newline="") as fh:
        fh.write("MARK\n")
    assert check(ws, "--format", fmt).stdout.endswith("MARK\n")
    # an edit invalidates it: the report is rebuilt and stored again
    time.sleep(0.01)
    (ws / "CLAUDE.md").write_text((ws / "CLAUDE.md").read_text() + "\n- A brand new instruction line here.\n")
    fresh = check(ws, "--format", fmt)
    assert "MARK" not in fresh.stdout and fresh.returncode == 1
    head, _, body = side.read_text(encoding="utf-8").partition("\n")
    assert body == fresh.stdout and json.loads(head)["status"] == 1


def test_report_of_another_run_is_not_reused(tree: Path) -> None:
    """Reports are tagged with the run that produced them: options that change the key never see them."""
    ws = tree / "mixed"
    all_rules = check(ws, "--format", "json")
    only = check(ws, "--format", "json", "--select", "CTX3")
    assert codes(only) == {"CTX301", "CTX304", "CTX305"} and codes(all_rules) > codes(only)
    assert check(ws, "--format", "json").stdout == all_rules.stdout


def test_fix_never_prints_a_cached_report(tree: Path) -> None:
    ws = tree / "mixed"
    check(ws, "--format", "json")
    fixed = check(ws, "--format", "json", "--fix")
    assert fixed.json["fixed"] > 0


def test_reports_of_several_formats_share_one_run(tree: Path) -> None:
    """json, then text (analysed again: no text report yet), then json again: the json report of the first
    run is still the run's, so the third run prints it (tampered, to tell)."""
    ws = tree / "mixed"
    first = check(ws, "--format", "json")
    side = ws / ".ctxls" / "cache" / "check.out-json"
    with side.open("a", encoding="utf-8", newline="") as fh:
        fh.write("MARK\n")
    text = check(ws, "--format", "text")
    assert text.returncode == first.returncode == 1 and "CTX301" in text.stdout
    heads = [json.loads((ws / ".ctxls" / "cache" / f"check.out-{f}").read_text().partition("\n")[0])
             for f in ("json", "text")]
    assert heads[0]["run"] == heads[1]["run"]
    assert check(ws, "--format", "json").stdout == first.stdout + "MARK\n"


def test_explain_prints_why_each_finding_fired(tmp_path: Path) -> None:
    """`--explain CODE` lists every finding of CODE with the heuristic that made it a claim, the confidence and
    where the path was looked for; an unknown code is a usage error."""
    import shutil

    src = Path(__file__).resolve().parent.parent / "fixtures" / "check" / "ref_stale_recall" / "tree"
    shutil.copytree(src, tmp_path / "t", symlinks=True)
    (tmp_path / "t" / "home").mkdir()
    run = lambda *a: subprocess.run([sys.executable, "-m", "ctxls", "check", str(tmp_path / "t" / "repo"), "--home",
                                     str(tmp_path / "t" / "home"), "--no-cache", *a], capture_output=True, text=True,
                                    timeout=300)
    p = run("--explain", "ctx401")
    assert p.returncode == 0, p
    assert "32 findings of CTX401" in p.stdout, p.stdout
    block = p.stdout.split("CLAUDE.md:6:")[1].split("\n.")[0]
    assert "[warning] `scripts/create_user.py` does not exist" in block
    assert "why it counts as a claim: named as a file of this workspace" in block
    assert "confidence:" in block and "looked for it from: `./`" in block
    bad = run("--explain", "CTX999")
    assert bad.returncode == 2 and "unknown rule code" in bad.stderr
