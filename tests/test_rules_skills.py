"""Unit tests of the skills-and-rules family (CTX501-CTX507) beyond the fixtures: half-typed input never crashes
a rule, and the reference scanner of CTX506 reads what it should."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxls.core.check import CheckConfig, Workspace, run_checks
from ctxls.core.rules.skills import _refs_in_line
from ctxls.core.settings import Settings

HALF_TYPED = [
    "",
    "---",
    "---\n",
    "---\nname",
    "---\nname:\n",
    "---\nname: [\n---\n",
    "---\n- a\n- b\n---\nbody\n",
    "---\n'unterminated\n---\n",
    "---\npaths:\n  - [\n---\n",
    "---\npaths: {a: 1}\n---\n",
    "---\npaths:\n  - 3\n  - null\n  - ''\n---\n",
    "---\ndescription: !!binary aGVsbG8=\n---\n",
    "---\n? complex\n: key\n---\n",
    "---\n1: one\ntrue: yes\n---\n",
    "---\nname: x\n---\n[link](\n`scripts/\n```\nscripts/a.py\n",
    "---\r\nname: crlf\r\ndescription: windows\r\n---\r\n[x](scripts/y.py)\r\n",
    "\ufeff---\nname: bom\n---\n",
    "---\nname: x\ndescription: " + "y" * 5000 + "\n---\n" + "line\n" * 50,
    "\x00\x01binary-ish\x02",
    "<!--\nunclosed comment ignore previous instructions",
    "[a](<>) [b](#) [c]( ) ![d](%zz) `${CLAUDE_SKILL_DIR}/` ${CLAUDE_SKILL_DIR}/scripts/<x>.py",
]


@pytest.mark.parametrize("i", range(len(HALF_TYPED)))
def test_half_typed_files_give_findings_not_crashes(tmp_path: Path, i: int) -> None:
    text = HALF_TYPED[i]
    root = tmp_path / "repo"
    targets = [root / ".claude/rules/r.md", root / ".claude/skills/s/SKILL.md", root / ".claude/commands/c.md",
               root / "CLAUDE.md", tmp_path / "home/mem/MEMORY.md", tmp_path / "home/mem/topic.md"]
    for p in targets:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    settings = Settings(home=tmp_path / "home", ceiling=tmp_path, managed_dir=tmp_path / "managed",
                        auto_memory_dir=tmp_path / "home/mem")
    ws = Workspace(root, settings, CheckConfig(select=frozenset({"CTX5", "CTX7"})))
    res = run_checks(ws)
    assert res.errors == []
    for f in res.findings:
        assert f.message and "\n" not in f.message


def refs(line: str, in_code: bool = False) -> list[tuple[str, str]]:
    return [(text, target) for _, text, target, _ in _refs_in_line(line, in_code)]


def test_reference_scanner() -> None:
    assert refs("Run `python scripts/fill.py in.pdf` then see [ref](references/a.md#top).") == [
        ("scripts/fill.py", "scripts/fill.py"), ("references/a.md", "references/a.md")]
    assert refs("See [spaced](<references/my file.md>) and [enc](references/my%20file.md).") == [
        ("references/my file.md", "references/my file.md"), ("references/my%20file.md", "references/my file.md")]
    assert refs("Use `scripts/<name>.py` or `scripts/*.py`; keep helpers in scripts/.") == []
    assert refs("Links [a](https://x.y/z.md) [b](#sec) [c](mailto:a@b.c) [d](/abs/p.md) [e](~/x.md)") == []
    assert refs("bash ${CLAUDE_SKILL_DIR}/scripts/run.sh && cat docs/arch.md", in_code=True) == [
        ("${CLAUDE_SKILL_DIR}/scripts/run.sh", "scripts/run.sh")]
    assert refs("python tools/scripts/x.py", in_code=True) == []  # not relative to the skill dir
    assert refs("Finally run scripts/check.py.") == [("scripts/check.py", "scripts/check.py")]


def test_paths_glob_file_list_is_cached_per_snapshot(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".claude/rules").mkdir(parents=True)
    (root / ".claude/rules/r.md").write_text("---\npaths: src/**/*.py\n---\n# R\n")
    settings = Settings(home=tmp_path / "home", ceiling=tmp_path, managed_dir=tmp_path / "managed")
    ws = Workspace(root, settings, CheckConfig(select=frozenset({"CTX507"})))
    assert [f.line for f in run_checks(ws).findings] == [2]
    (root / "src").mkdir()
    (root / "src/app.py").write_text("x = 1\n")
    ws.fs.invalidate()
    assert run_checks(ws).findings == []


def test_files_the_skill_creates_are_not_missing(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    skill = root / ".claude/skills/report/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: report\ndescription: Reports. Use when asked.\n---\n# Report\n\n"
                     "1. Write the summary to `references/summary.md`.\n"
                     "2. Save the chart as `assets/chart.png`.\n\n"
                     "```bash\npython ${CLAUDE_SKILL_DIR}/scripts/run.py > scripts/out.txt\n```\n"
                     "3. Read `references/missing.md`.\n")
    (skill.parent / "scripts").mkdir()
    (skill.parent / "scripts/run.py").write_text("print(1)\n")
    ws = Workspace(root, Settings(home=tmp_path / "home", ceiling=tmp_path, managed_dir=tmp_path / "m"),
                   CheckConfig(select=frozenset({"CTX506"})))
    got = run_checks(ws).findings
    assert [(f.line, "references/missing.md" in f.message) for f in got] == [(13, True)]


# ------------------------------------------------------------------------------- shortcuts vs the plain way
import random

from ctxls.core.rules import paths_glob as PG, skills as SK

_PIECES = ("scripts/", "references/", "reference/", "assets/", "templates/", "${CLAUDE_SKILL_DIR}/",
           "$CLAUDE_SKILL_DIR/", "CLAUDE_SKILL_DIR", "./", "x.py", "api.md", "a/b.sh", "[", "]", "(", ")", "](", "`",
           "``", "<", ">", "#", "?", "*", "{", "}", " ", "\t", "\r", ".", "/", "script/", "Scripts/", "ref", "é",
           "日本/", "docs/x.md", "http://x/y.md", "~/a.md", "../up.md", "\\", "!", '"', "'", "-", "_", "%20",
           "[see](", "](x.md)", "[t](docs/api.md)")


def test_lines_without_needles_hold_no_reference() -> None:
    """CTX506 skips lines (and files) that `_may_hold_refs` rejects: `_refs_in_line` finds nothing in them."""
    rng = random.Random(17)
    found = 0
    for _ in range(20000):
        line = "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 14)))
        for in_code in (False, True):
            got = list(_refs_in_line(line.rstrip("\r"), in_code))
            if not SK._may_hold_refs(line, in_code):
                assert got == [], (line, in_code)
            found += bool(got)
    assert found > 500
    # a whole file is tested with the prose needles: they include the code block ones
    assert set(SK._CODE_REF_NEEDLES) <= set(SK._REF_NEEDLES)


def test_files_under_a_directory_come_from_the_one_walk(tmp_path: Path) -> None:
    """CTX507 and CTX506 read the files under a directory from the workspace's walk (a sorted slice): the same
    files as walking that directory, a sibling sharing its prefix (`svc/ab` beside `svc/a`) left out."""
    from ctxls.core.globs import parse_paths

    root = tmp_path / "repo"
    for rel in ("svc/a/src/x.py", "svc/a/src/deep/y.ts", "svc/ab/z.md", "svc/a/.claude/rules/r.md", "top.py",
                "svc/b/docs/readme.md", "svc/a-b/w.py", "svc/a0/v.py", "svc/a/node_modules/m.js"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    ws = Workspace(root, Settings(home=tmp_path / "home", ceiling=tmp_path, managed_dir=tmp_path / "m"),
                   CheckConfig())

    def walked(base: Path) -> list[str]:
        out = []
        for d, dirs, files in os.walk(base):
            dirs[:] = [x for x in dirs if x != "node_modules"]
            out += [os.path.relpath(os.path.join(d, f), base).replace(os.sep, "/") for f in files]
        return sorted(out)

    for base in (root, root / "svc/a", root / "svc", root / "svc/b", root / "svc/a/src", root / "svc/ab"):
        assert ws.files_under(base) == walked(base), base
    assert ws.files_under(tmp_path) is None  # not in the workspace
    assert ws.files_under(root / "svc/nothing") == []
    assert PG._any_match(ws, root / "svc/a", parse_paths(["src/**/*.py"], False), False)
    assert not PG._any_match(ws, root / "svc/a", parse_paths(["z.md"], False), False)  # svc/ab/z.md is no match
    assert PG._any_match(ws, root / "svc/ab", parse_paths(["z.md"], False), False)
    assert PG._any_match(ws, root / "svc", parse_paths(["ab/*.md"], False), False)
