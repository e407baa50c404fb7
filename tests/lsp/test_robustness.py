"""The server survives garbage: malformed documents, odd URIs, closed documents, a vanishing workspace."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from .test_e2e import codes, diagnostics_for




@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "ctxls", "serve"]))
async def client(lsp_client: LanguageClient, workspace: Path):
    @lsp_client.feature(T.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params):
        return None

    lsp_client.profile = "visual-studio-code"
    await lsp_client.initialize_session(T.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=workspace.as_uri(),
        initialization_options={"window": "not a number", "check": {"select": 5}}))
    lsp_client.root = workspace
    yield
    await lsp_client.shutdown_session()


async def test_invalid_settings_warn_and_fall_back(client: LanguageClient) -> None:
    await diagnostics_for(client, client.root / "CLAUDE.md", until=lambda ds: "CTX301" in codes(ds))
    text = " ".join(m.message for m in client.messages)
    assert "window" in text and "select" in text


async def test_garbage_requests_get_answers_not_crashes(client: LanguageClient) -> None:
    root = client.root
    for uri in ("untitled:Untitled-1", "https://example.com/CLAUDE.md", "file:///does/not/exist/CLAUDE.md",
                "not a uri at all", (root / "services").as_uri()):
        hover = await client.text_document_hover_async(T.HoverParams(
            text_document=T.TextDocumentIdentifier(uri=uri), position=T.Position(3, 99)))
        assert hover is None or isinstance(hover, T.Hover)
        lenses = await client.text_document_code_lens_async(T.CodeLensParams(
            text_document=T.TextDocumentIdentifier(uri=uri)))
        assert not lenses  # no lens for what is not an instruction file
        actions = await client.text_document_code_action_async(T.CodeActionParams(
            text_document=T.TextDocumentIdentifier(uri=uri), range=T.Range(T.Position(0, 0), T.Position(0, 0)),
            context=T.CodeActionContext(diagnostics=[])))
        assert actions is None or isinstance(actions, (list, tuple))
    # a position far past the end of a real file, on a closed document
    hover = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=(root / "CLAUDE.md").as_uri()), position=T.Position(9999, 9999)))
    assert hover is None or isinstance(hover, T.Hover)
    # unknown command and bad arguments
    res = await client.workspace_execute_command_async(T.ExecuteCommandParams(command="ctxls.applyFix",
                                                                               arguments=[1, 2]))
    assert res["applied"] is False


async def test_malformed_documents(client: LanguageClient) -> None:
    root = client.root
    doc = root / "CLAUDE.md"
    garbage = "---\npaths: [unclosed\n---\n\x00\x01 @ @@ @/ @~ ```\n<!-- \n" + "\ud800".encode(
        "utf-8", "surrogatepass").decode("utf-8", "replace") + "😋" * 50 + "\n@docs/arch.md\n"
    client.text_document_did_open(T.DidOpenTextDocumentParams(T.TextDocumentItem(
        uri=doc.as_uri(), language_id="markdown", version=1, text=garbage)))
    for v in range(2, 6):  # edits that run past the end of the document
        client.text_document_did_change(T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=doc.as_uri(), version=v),
            content_changes=[T.TextDocumentContentChangePartial(
                range=T.Range(T.Position(v, 0), T.Position(v, 5)), text="😋@x.md\n")]))
    await diagnostics_for(client, doc, until=lambda ds: all(d.source == "ctxls" for d in ds))
    hover = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=doc.as_uri()), position=T.Position(3, 10)))
    assert hover is None or isinstance(hover, T.Hover)
    client.text_document_did_close(T.DidCloseTextDocumentParams(T.TextDocumentIdentifier(uri=doc.as_uri())))
    # requests for the closed document still work (from disk)
    lenses = await client.text_document_code_lens_async(T.CodeLensParams(
        text_document=T.TextDocumentIdentifier(uri=doc.as_uri())))
    assert lenses and "tokens" in lenses[0].command.title


async def test_workspace_disappears(client: LanguageClient) -> None:
    root = client.root
    await diagnostics_for(client, root / "CLAUDE.md", until=lambda ds: "CTX301" in codes(ds))
    shutil.rmtree(root)
    await diagnostics_for(client, root / "CLAUDE.md", until=lambda ds: ds == [], timeout=15)
    res = await client.workspace_execute_command_async(T.ExecuteCommandParams(command="ctxls.refresh"))
    assert res == {"findings": 0}
    hover = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=(root / "CLAUDE.md").as_uri()), position=T.Position(0, 0)))
    assert hover is None or isinstance(hover, T.Hover)
