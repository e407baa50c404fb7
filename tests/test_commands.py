"""Legacy commands in subdirectories of `.claude/commands/`: namespaced (`gsd/plan.md` is `/gsd:plan`), listed
like the others, checked like the others, and a link loop among them ends."""

from __future__ import annotations

import os
from pathlib import Path

from ctxls.core import discovery as D
from ctxls.core.check import CheckConfig, Workspace, run_checks
from ctxls.core.loader import load_session
from ctxls.core.skills import command_name


def _write(p: Path, text: str) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def test_namespaced_commands_are_listed_and_checked(tmp_path: Path, hermetic_settings) -> None:
    ws = tmp_path / "ws"
    _write(ws / "CLAUDE.md", "# Root\n")
    _write(ws / ".claude" / "commands" / "review.md", "---\ndescription: Review the diff\n---\nReview.\n")
    plan = _write(ws / ".claude" / "commands" / "gsd" / "plan-phase.md",
                  "---\ndescription: Plan the next phase\nalowed-tools: Bash\n---\nPlan it.\n")
    _write(ws / ".claude" / "commands" / "gsd" / "deep" / "x.md", "---\ndescription: Deep one\n---\nX.\n")
    os.symlink("..", ws / ".claude" / "commands" / "gsd" / "loop")  # back up: must not loop
    session = load_session(ws, (), hermetic_settings(ws))
    names = [k.name for k in session.skills.skills if k.scope == "command"]
    assert names == ["gsd:deep:x", "gsd:plan-phase", "review"]
    idx = D.scan_workspace(ws, hermetic_settings(ws))
    assert plan in [s.path for s in idx.by_kind(D.COMMAND)]
    found = run_checks(Workspace(ws, hermetic_settings(ws), CheckConfig(select=frozenset({"CTX502"})))).findings
    assert [(f.path, f.code) for f in found] == [(plan, "CTX502")]  # the misspelt allowed-tools


def test_command_name() -> None:
    assert command_name(Path("/r/.claude/commands/a/b/c.md")) == "a:b:c"
    assert command_name(Path("/r/.claude/commands/c.md")) == "c"
    assert command_name(Path("/cfg/commands/ns/c.md"), Path("/cfg")) == "ns:c"  # CLAUDE_CONFIG_DIR, any name
