"""`ctxls compare` on fixtures/compare/: the five-agent fixture against its hand-written expected table."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from ctxls.cli import main
from ctxls.core import model as M
from ctxls.core.compare import compare, compare_markdown, compare_to_json
from ctxls.core.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "compare"
SCHEMA = json.loads((ROOT / "docs" / "ctxls.compare-1.schema.json").read_text())


def _work(name: str, tmp_path: Path) -> tuple[dict, Path]:
    case = json.loads((FIXTURES / name / "case.json").read_text())
    work = tmp_path / "w"
    shutil.copytree(FIXTURES / name / "tree", work)
    (work / case["git_root"] / ".git").mkdir()
    return case, work


def _run(name: str, tmp_path: Path):
    case, work = _work(name, tmp_path)
    base = Settings(home=work / "home", managed_dir=work / "managed", ceiling=work, today="2026-11-29")
    settings, errors = Settings.from_mapping(case.get("settings", {}), base)
    assert errors == []
    start = work / case["start"]
    return case, compare(start, [work / t for t in case["touch"]], settings, root=start)


def _table(out: dict) -> list[list[str]]:
    rows = [["file", *out["agents"]]]
    for f in out["files"]:
        cells = []
        for a in out["agents"]:
            c = f["agents"][a]
            text = c["status"]
            if c["loaded"] and c["lines"]:
                text += f" {c['lines'][0]}-{c['lines'][1]}"
            if "cut" in c:
                text += " cut"
            cells.append(text)
        rows.append([f["source"], *cells])
    return rows


def test_five_agents_match_the_hand_written_table(tmp_path: Path) -> None:
    case, cmp = _run("five_agents", tmp_path)
    out = compare_to_json(cmp)
    jsonschema.validate(out, SCHEMA)
    want = [[c.strip() for c in line.split("|")] for line in case["expected"]["table"]]
    assert _table(out) == want
    assert {a: t["files"] for a, t in out["totals"].items()} == case["expected"]["files_loaded"]
    by = {(f["source"], a): c for f in out["files"] for a, c in f["agents"].items()}
    for key, reason in case["expected"]["reasons"].items():
        source, agent = key.rsplit(" ", 1)
        assert reason in by[(source, agent)].get("reason", ""), (key, by[(source, agent)])


def test_totals_are_the_sessions_instruction_tokens(tmp_path: Path) -> None:
    """Per agent: the loaded cells' tokens plus the blocks that are no file (wrappers, listings) make the totals."""
    _, cmp = _run("five_agents", tmp_path)
    for a, s in cmp.sessions.items():
        t = cmp.totals[a]
        cells = sum(r.cells[a].tokens for r in cmp.rows)
        no_file = sum(b.tokens for b in s.blocks if b.source is None and b.kind not in (M.SYSTEM_PROMPT, M.TOOL_SCHEMAS))
        assert cells + no_file == t.startup_tokens + t.touch_tokens, a
        assert t.fixed_tokens == (16_500 if a == "claude-code" else 0)
    # Codex's cut AGENTS.md holds exactly the 120-byte budget
    codex = [b for b in cmp.sessions["codex"].blocks if b.kind == M.AGENTS_MD]
    assert len(codex) == 1 and len(codex[0].text.encode()) == 120


def test_markdown_report(tmp_path: Path) -> None:
    _, cmp = _run("five_agents", tmp_path)
    md = compare_markdown(cmp)
    assert "| file | Claude Code | Codex | Cursor | Copilot | Gemini CLI |" in md
    assert "| `AGENTS.md` | never | startup 1-4 · " in md and "(cut)" in md
    assert "- `AGENTS.md`, Codex: truncated: the 120-byte project-doc budget ends on line 4" in md


def test_cli_json_and_agents_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case, work = _work("five_agents", tmp_path)
    (work / "repo" / ".ctxls.toml").write_text("codex_project_doc_max_bytes = 120\n")
    repo = work / "repo"
    code = main(["compare", str(repo), "--touch", str(repo / "svc" / "app.py"), "--agents", "codex,gemini",
                 "--home", str(work / "home"), "--ceiling", str(work), "--no-cache", "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    jsonschema.validate(out, SCHEMA)
    assert out["agents"] == ["codex", "gemini"] and out["touched"] == ["svc/app.py"]
    agents_md = next(f for f in out["files"] if f["source"] == "AGENTS.md")["agents"]
    assert agents_md["codex"]["status"] == "startup" and "120-byte" in agents_md["codex"]["cut"]
    assert main(["compare", str(repo), "--home", str(work / "home"), "--no-cache", "--format", "markdown"]) == 0
    assert "| file | Claude Code | Codex | Cursor | Copilot | Gemini CLI |" in capsys.readouterr().out


def test_cli_text_and_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, work = _work("five_agents", tmp_path)
    assert main(["compare", str(work / "repo"), "--home", str(work / "home"), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "Which agent loads what" in out and "startup tokens" in out and "Gemini CLI" in out
    assert main(["compare", str(work / "repo"), "--agents", "codex,windsurf"]) == 2
    assert "unknown agent(s) windsurf" in capsys.readouterr().err
    assert main(["compare", str(work / "nope")]) == 2


@pytest.mark.parametrize("width", [80, 100])
def test_text_table_fits_the_width_and_keeps_paths_whole(tmp_path: Path, width: int) -> None:
    """The text table at 80 and 100 columns (a subprocess, as a terminal user runs it): no line past the width, every
    path whole or cut from the left at a `/` (never broken mid-word), every agent column present, the notes under
    the table as a list whose reasons wrap under their own text."""
    import os
    import re
    import subprocess
    import sys

    _, work = _work("five_agents", tmp_path)
    repo = work / "repo"
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "PYTHONPATH", "ANTHROPIC_API_KEY")}
    env.update(COLUMNS=str(width), HOME=str(work / "home"))
    proc = subprocess.run([sys.executable, "-m", "ctxls", "compare", ".", "--touch", "svc/app.py", "--no-cache",
                           "--home", str(work / "home"), "--ceiling", str(work)], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert all(len(line.rstrip()) <= width for line in lines), "\n".join(lines)
    head_end = next(i for i, line in enumerate(lines) if "───" in line)
    header = " ".join(lines[2:head_end])  # (a header may wrap at its spaces: "Claude" over "Code")
    for word in ("Claude", "Code", "Codex", "Cursor", "Copilot", "Gemini", "CLI"):
        assert word in header.split(), header
    known = {p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file()}
    start = next(i for i, line in enumerate(lines) if "───" in line) + 1
    table = lines[start:next(i for i, line in enumerate(lines) if "startup tokens" in line)]
    firsts = [line.split()[0] for line in table if line.strip() and not line.startswith(" " * 8)]
    for cell in firsts:
        if cell.startswith("…"):
            assert cell.startswith("…/") and any(k.endswith(cell[1:]) for k in known), cell
        else:
            assert cell in known, cell
    assert {"AGENTS.md", "svc/GEMINI.md", ".claude/rules/api.md"} <= set(firsts) | {k for k in known if any(
        c.startswith("…") and k.endswith(c[1:]) for c in firsts)}
    notes = [line for line in lines if line.startswith(" • ")]
    assert any("svc/AGENTS.md (Codex): never: below the start directory" in n for n in notes), notes
    assert not re.search(r"\(~ estimate\)", proc.stdout)
