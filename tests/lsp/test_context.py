"""`ctxls/context` over stdio (pytest-lsp): the JSON the VS Code status bar and context view show is the CLI's
`ctxls context --format json`, and `ctxls/contextChanged` follows every check."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "ctxls", "serve"]))
async def client(lsp_client: LanguageClient, workspace: Path):
    lsp_client.changed = []

    @lsp_client.feature("ctxls/contextChanged")
    def context_changed(params):
        lsp_client.changed.append(params)

    @lsp_client.feature(T.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: T.RegistrationParams):
        return None

    await lsp_client.initialize_session(T.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=workspace.as_uri(),
        workspace_folders=[T.WorkspaceFolder(uri=workspace.as_uri(), name="ws")]))
    lsp_client.root = workspace
    yield
    await lsp_client.shutdown_session()


def plain(value):
    """pygls hands untyped JSON over as namedtuples: back to dicts and lists."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


async def context(client: LanguageClient, path: Path):
    return plain(await client.protocol.send_request_async("ctxls/context", {"uri": path.as_uri()}))


def cli_context(root: Path, start: Path, *touch: Path) -> dict:
    args = [sys.executable, "-m", "ctxls", "context", str(start), "--format", "json"]
    for t in touch:
        args += ["--touch", str(t)]
    out = subprocess.run(args, cwd=root, capture_output=True, text=True, timeout=60, check=True).stdout
    return json.loads(out)


async def test_context_of_a_file_is_the_cli_json(client: LanguageClient) -> None:
    root = client.root
    src = root / "services" / "billing" / "src" / "refunds.py"
    got = await context(client, src)
    want = cli_context(root, src.parent, src)
    assert got["context"] == want
    assert want["touched"] == ["services/billing/src/refunds.py"]
    assert any(not b["startup"] for b in want["blocks"])  # reading the file appends blocks
    assert got["root"] == str(root)
    assert got["session_budget_tokens"] == 10_000
    fixed = sum(b["tokens"] for b in want["blocks"] if b["kind"] in ("system_prompt", "tool_schemas"))
    assert got["instruction_tokens"] == want["startup_tokens"] - fixed > 0


async def test_context_of_a_directory_and_outside(client: LanguageClient, tmp_path: Path) -> None:
    root = client.root
    got = await context(client, root / "services")
    assert got["context"] == cli_context(root, root / "services")
    assert got["context"]["touched"] == []
    outside = tmp_path / "elsewhere.py"
    outside.write_text("x = 1\n")
    assert await context(client, outside) is None


async def test_context_changed_follows_a_check(client: LanguageClient) -> None:
    root = client.root
    deadline = asyncio.get_running_loop().time() + 20
    while not client.changed:  # the initial scan's check
        assert asyncio.get_running_loop().time() < deadline, "no ctxls/contextChanged after the initial check"
        await asyncio.sleep(0.05)
    before = len(client.changed)
    billing = root / "services" / "billing" / "CLAUDE.md"
    old = await context(client, billing)
    billing.write_text(billing.read_text() + "- A new rule that costs a few more tokens than before.\n")
    await client.workspace_execute_command_async(T.ExecuteCommandParams(command="ctxls.refresh"))
    while len(client.changed) == before:
        assert asyncio.get_running_loop().time() < deadline, "no ctxls/contextChanged after a change"
        await asyncio.sleep(0.05)
    new = await context(client, billing)
    assert new["instruction_tokens"] > old["instruction_tokens"]
