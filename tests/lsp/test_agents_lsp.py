"""The other agents in the language server (pytest-lsp over stdio): the hover line per targeted agent, the
compare report command and the `ctxls/context` request with an agent."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities


def _multi_agent(ws: Path) -> None:
    """The LSP workspace plus an AGENTS.md cut by a 40-byte Codex budget and an Always Cursor rule."""
    (ws / "AGENTS.md").write_text("# Agents\n- Run the whole test suite before you push any branch.\n")
    (ws / ".cursor" / "rules").mkdir(parents=True)
    (ws / ".cursor" / "rules" / "style.mdc").write_text("---\nalwaysApply: true\n---\nPrefer small functions.\n")
    (ws / ".codex-root").write_text("")
    with (ws / ".ctxls.toml").open("a") as fh:
        fh.write('codex_project_doc_max_bytes = 40\ncodex_project_root_markers = [".codex-root"]\n')


@pytest_lsp.fixture(params=["visual-studio-code", "neovim"],
                    config=ClientServerConfig(server_command=[sys.executable, "-m", "ctxls", "serve"]))
async def client(request, lsp_client: LanguageClient, workspace: Path):
    _multi_agent(workspace)

    @lsp_client.feature(T.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: T.RegistrationParams):
        return None

    await lsp_client.initialize_session(T.InitializeParams(
        capabilities=client_capabilities(request.param), root_uri=workspace.as_uri(),
        workspace_folders=[T.WorkspaceFolder(uri=workspace.as_uri(), name="ws")]))
    lsp_client.root = workspace
    yield
    await lsp_client.shutdown_session()


def _plain(o):
    """The test client hands custom responses back as pygls `Object`s (named tuples): make them JSON again."""
    if hasattr(o, "_asdict"):
        return {k: _plain(v) for k, v in o._asdict().items()}
    if isinstance(o, (list, tuple)):
        return [_plain(v) for v in o]
    return o


async def test_hover_has_a_line_per_targeted_agent(client: LanguageClient) -> None:
    root = client.root
    res = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=(root / "services" / "billing" / "CLAUDE.md").as_uri()),
        position=T.Position(0, 0)))
    md = res.contents.value
    line = md.splitlines()[0]
    assert line.startswith("**Agents** (instruction tokens at startup here): Claude "), line
    assert " · Codex " in line and "(AGENTS.md truncated)" in line and " · Cursor " in line
    assert "Copilot" not in line and "Gemini" not in line  # no files of theirs: not targeted
    assert "services/billing/CLAUDE.md" in md  # the Claude Code session table is still there


async def test_compare_report_command(client: LanguageClient) -> None:
    root = client.root
    actions = await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=(root / "CLAUDE.md").as_uri()),
        range=T.Range(T.Position(0, 0), T.Position(0, 0)),
        context=T.CodeActionContext(diagnostics=[], only=[T.CodeActionKind.Source])))
    assert "ctxls: Compare what each agent loads here" in {a.title for a in actions}
    res = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="ctxls.compareReport", arguments=[(root / "CLAUDE.md").as_uri()]))
    report = root / ".ctxls" / "reports" / "compare.md"
    assert res["uri"] == report.as_uri()
    text = report.read_text()
    assert "| file | Claude Code | Codex | Cursor | Copilot | Gemini CLI |" in text
    assert "| `AGENTS.md` | never | startup 1-" in text and "(cut)" in text
    assert "| `.cursor/rules/style.mdc` | never | never | startup 4-4 · " in text


async def test_context_request_with_an_agent(client: LanguageClient) -> None:
    """`ctxls/context` (lsp/context.py) with `agent`: that agent's session; the default stays Claude Code's."""
    root = client.root
    got = _plain(await client.protocol.send_request_async("ctxls/context", {"uri": root.as_uri(), "agent": "codex"}))
    ctx = got["context"]
    assert ctx["schema"] == "ctxls.context/1" and ctx["agent"] == "codex"
    docs = [b for b in ctx["blocks"] if b["kind"] == "agents_md"]
    assert len(docs) == 1 and docs[0]["source"] == "AGENTS.md" and "40-byte" in docs[0]["cut"]
    assert got["instruction_tokens"] == sum(b["tokens"] for b in ctx["blocks"] if b["startup"])
    default = _plain(await client.protocol.send_request_async("ctxls/context", {"uri": root.as_uri()}))
    assert default["context"]["agent"] == "claude-code"
    assert await client.protocol.send_request_async("ctxls/context", {"uri": root.as_uri(), "agent": "windsurf"}) \
        is None


async def test_context_request_says_which_agents_the_workspace_targets(client: LanguageClient) -> None:
    """The agent picker's marks: every profile, and the targeted ones (files exist: CLAUDE.md, AGENTS.md and
    `.cursor/` here; `[check] agents` when set)."""
    root = client.root
    got = _plain(await client.protocol.send_request_async("ctxls/context", {"uri": root.as_uri(), "agent": "cursor"}))
    assert got["agent"] == "cursor" == got["context"]["agent"]
    agents = got["agents"]
    assert [a["id"] for a in agents["all"]] == ["claude-code", "codex", "cursor", "copilot", "gemini"]
    assert {a["id"]: a["name"] for a in agents["all"]}["gemini"] == "Gemini CLI"
    assert agents["targeted"] == ["claude-code", "codex", "cursor"] and agents["targeted_by"] == "files"
    # `[check] agents` decides once it is set (the server re-reads .ctxls.toml when it changes)
    toml = root / ".ctxls.toml"
    text = toml.read_text()
    toml.write_text(text + '\n[check]\nagents = ["claude-code", "gemini"]\n')
    client.workspace_did_change_watched_files(T.DidChangeWatchedFilesParams(changes=[
        T.FileEvent(uri=toml.as_uri(), type=T.FileChangeType.Changed)]))
    for _ in range(100):
        got = _plain(await client.protocol.send_request_async("ctxls/context", {"uri": root.as_uri()}))
        if got["agents"]["targeted_by"] == "check.agents":
            break
        await asyncio.sleep(0.1)
    assert got["agents"]["targeted"] == ["claude-code", "gemini"] and got["agents"]["targeted_by"] == "check.agents"


async def test_context_report_for_an_agent(client: LanguageClient) -> None:
    """`ctxls.contextReport(uri, agent)`: the picked agent's session table, in its own report file; an unknown
    agent opens nothing."""
    root = client.root
    src = root / "services" / "billing" / "src" / "refunds.py"
    res = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="ctxls.contextReport", arguments=[src.as_uri(), "codex"]))
    report = root / ".ctxls" / "reports" / "context-codex.md"
    assert res["uri"] == report.as_uri()
    text = report.read_text()
    ctx = _plain(await client.protocol.send_request_async("ctxls/context", {"uri": src.as_uri(), "agent": "codex"}))
    startup = ctx["context"]["startup_tokens"]
    assert text.startswith("# Context of a Codex session in ")
    assert f"Codex started in `services/billing/src` loads **{startup:,} tokens**" in text \
        or f"Codex started in `services/billing/src` loads **~{startup:,} tokens**" in text, text[:400]
    assert "does not count Codex's own system prompt" in text and "`AGENTS.md:1-" in text and "✂" in text
    assert "services/billing/CLAUDE.md" not in text  # Codex reads no CLAUDE.md
    claude = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="ctxls.contextReport", arguments=[src.as_uri()]))
    assert claude["uri"].endswith("/.ctxls/reports/context.md")
    assert "services/billing/CLAUDE.md" in (root / ".ctxls" / "reports" / "context.md").read_text()
    assert await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="ctxls.contextReport", arguments=[src.as_uri(), "windsurf"])) is None


async def test_cursor_context_starts_at_the_workspace_folder(client: LanguageClient) -> None:
    """Cursor runs in the editor: its session starts at the workspace folder whichever file is active, and the
    file is a touch (the other agents start in the file's directory). The same as the CLI's for that start."""
    root = client.root
    src = root / "services" / "billing" / "src" / "refunds.py"
    got = _plain(await client.protocol.send_request_async("ctxls/context", {"uri": src.as_uri(), "agent": "cursor"}))
    ctx = got["context"]
    assert ctx["start_dir"] == "." and ctx["touched"] == ["services/billing/src/refunds.py"]
    rule = [b for b in ctx["blocks"] if b["source"] == ".cursor/rules/style.mdc"]
    assert len(rule) == 1 and rule[0]["startup"], ctx["blocks"]
    cli = subprocess.run([sys.executable, "-m", "ctxls", "context", str(root), "--agent", "cursor", "--touch",
                          str(src), "--format", "json"], cwd=root, capture_output=True, text=True, timeout=60, check=True)
    assert ctx == json.loads(cli.stdout)
    codex = _plain(await client.protocol.send_request_async("ctxls/context", {"uri": src.as_uri(), "agent": "codex"}))
    assert codex["context"]["start_dir"] == "services/billing/src"  # a CLI: started in the file's directory
    # the hover's Cursor figure is that session's too
    res = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=(root / "services" / "billing" / "CLAUDE.md").as_uri()),
        position=T.Position(0, 0)))
    tokens = sum(b["tokens"] for b in ctx["blocks"] if b["startup"])
    assert f" · Cursor {tokens}" in res.contents.value.splitlines()[0] or \
        f" · Cursor {tokens / 1000:.1f}K" in res.contents.value.splitlines()[0], res.contents.value.splitlines()[0]
