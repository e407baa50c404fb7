"""A real headless Neovim runs one agent action: the code action "ctxls agent: Ask about this selection…",
through client-nvim/ctxls.lua (vim.ui.input for the prompt, vim.ui.select for Apply), against the server over
stdio and the Messages API stand-in."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from agent_helpers import agent_env, audit, make_workspace, tool_results
from fakeapi import FakeMessagesAPI, Reply, text, tool_use

from .test_neovim import HERE, SNIPPET, _env, nvim  # noqa: F401 (the session fixture)

HARNESS = HERE / "agent_harness.lua"


def test_neovim_ask_action_edits_the_buffer_after_apply(nvim, tmp_path: Path) -> None:
    binary, runtime = nvim
    ws = make_workspace(tmp_path)
    result_path = tmp_path / "result.json"
    with FakeMessagesAPI() as api:
        api.script([Reply(tool_use("edit_file", path="CLAUDE.md", old_string="# Agent fixture",
                                   new_string="# Agent fixture (edited)")),
                    Reply(text("Renamed the heading."))])
        env = _env(tmp_path, runtime, ws, result_path)
        env.update({k: v for k, v in agent_env(api).items() if k.startswith("ANTHROPIC_")})
        env["CTXLS_PROMPT"] = "rename the heading"
        env["CTXLS_TIMEOUT_MS"] = "45000"  # a model call and a server start per step: generous on a loaded machine
        proc = subprocess.run([str(binary), "--clean", "--headless", "-l", str(HARNESS)], cwd=ws, env=env,
                              capture_output=True, text=True, timeout=150)
        sent = [r.body for r in api.messages_requests() if r.status == 200]
    r = json.loads(result_path.read_text()) if result_path.exists() else {}
    assert proc.returncode == 0 and r.get("ok"), f"{r.get('error')}\n{proc.stderr[-3000:]}"
    assert r["inputs"] == ["ctxls agent: "]  # the prompt came from vim.ui.input
    (select,) = r["selects"]
    assert select["items"] == ["Apply", "Reject"] and "CLAUDE.md" in select["prompt"]
    assert r["after"][0] == "# Agent fixture (edited)" and r["modified"] is True
    assert (ws / "CLAUDE.md").read_text().startswith("# Agent fixture\n")  # the buffer changed, not the disk
    task = sent[0]["messages"][0]["content"][1]["text"]
    assert task.startswith("rename the heading") and "The user selected CLAUDE.md, lines 1-1" in task
    assert tool_results(sent[1])[0]["content"] == "edited CLAUDE.md"
    assert [a["decision"] for a in audit(ws)] == ["approved"]
    assert r["show_document"][0].endswith(".md") and "/.ctxls/reports/agent-" in r["show_document"][0]
    assert SNIPPET.read_text().count('vim.lsp.commands["ctxls.agent.ask"]') == 1
