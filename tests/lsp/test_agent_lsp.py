"""The agent behind code actions, end to end: the real server over stdio (pytest-lsp), the real SDK inside it,
the Messages API stand-in, and a client that answers applyEdit / showMessageRequest like VS Code or Neovim."""

from __future__ import annotations

import re
import sys

import pytest
import pytest_asyncio
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, client_capabilities

from agent_helpers import agent_env, audit, make_workspace, result_text, tool_results
from fakeapi import FakeMessagesAPI, Reply, text, tool_use


@pytest.fixture
def api():
    with FakeMessagesAPI() as a:
        yield a


def bodies(api) -> list[dict]:
    return [r.body for r in api.messages_requests() if r.status == 200 and not r.fault]


async def start_client(api, ws, profile: str, settings: dict | None = None, name: str | None = None):
    cfg = ClientServerConfig(server_command=[sys.executable, "-m", "ctxls", "serve"], server_env=agent_env(api))
    client = await cfg.start()
    client.events = []  # (kind, payload) in arrival order
    client.apply_answer = True
    client.message_answer = "Apply"

    @client.feature(T.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: T.ApplyWorkspaceEditParams):
        client.events.append(("applyEdit", params))
        return T.ApplyWorkspaceEditResult(applied=client.apply_answer)

    @client.feature(T.WINDOW_SHOW_MESSAGE_REQUEST)
    def show_message_request(params: T.ShowMessageRequestParams):
        client.events.append(("showMessageRequest", params))
        return next((a for a in params.actions or [] if a.title == client.message_answer), None)

    @client.feature(T.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: T.RegistrationParams):
        return None

    client.set_configuration({"agent": settings or {}}, section="ctxls")

    name = name or {"visual-studio-code": "Visual Studio Code", "neovim": "Neovim"}[profile]
    await client.initialize_session(T.InitializeParams(
        capabilities=client_capabilities(profile), client_info=T.ClientInfo(name=name), root_uri=ws.as_uri(),
        workspace_folders=[T.WorkspaceFolder(uri=ws.as_uri(), name="ws")]))
    return client


async def editor(api, tmp_path, profile: str):
    ws = make_workspace(tmp_path)
    client = await start_client(api, ws, profile)
    client.root = ws
    yield client
    await client.shutdown_session()


@pytest_asyncio.fixture
async def vscode(api, tmp_path):
    async for client in editor(api, tmp_path, "visual-studio-code"):
        yield client


@pytest_asyncio.fixture
async def neovim(api, tmp_path):
    async for client in editor(api, tmp_path, "neovim"):
        yield client


async def ask(client, path, prompt, rng=None):
    arg = {"prompt": prompt, "uri": path.as_uri()}
    if rng is not None:
        arg["range"] = rng
    return await client.workspace_execute_command_async(T.ExecuteCommandParams(command="ctxls.agent.ask",
                                                                               arguments=[arg]))


def kinds(client) -> list[str]:
    return [k for k, _ in client.events]





EDIT = tool_use("edit_file", path="src/app.py", old_string='"Hello " + name', new_string='f"Hello {name}"')


async def test_vscode_edit_arrives_as_an_annotated_apply_edit_and_nothing_is_written(vscode, api):
    ws = vscode.root
    app = ws / "src" / "app.py"
    before = app.read_text()
    api.script([Reply(EDIT), Reply(text("Proposed the f-string."))])
    res = await ask(vscode, app, "use an f-string")
    assert res["status"] == "finished" and res["answer"] == "Proposed the f-string.", res
    (edit_params,) = [p for k, p in vscode.events if k == "applyEdit"]
    edit = edit_params.edit
    ann = edit.change_annotations["ctxls-agent"]
    assert ann.needs_confirmation is True and ann.description == "not allow-listed"
    (change,) = edit.document_changes
    assert change.text_document.uri == app.as_uri()
    (te,) = change.edits
    assert te.annotation_id == "ctxls-agent" and te.new_text == 'f"Hello {name}"'
    assert (te.range.start.line, te.range.start.character) == (1, 11)
    assert app.read_text() == before  # the server never writes behind the editor: the client applies
    assert "showMessageRequest" not in kinds(vscode)  # the refactor preview is the approval
    assert result_text(tool_results(bodies(api)[1])[0]) == "edited src/app.py"
    assert audit(ws)[0]["decision"] == "approved"
    shown = vscode.shown_documents
    assert shown and shown[-1].uri.endswith(f"agent-{res['session']}.md")
    report = (ws / ".ctxls" / "reports" / f"agent-{res['session']}.md").read_text()
    assert "Proposed the f-string." in report and "| turn | input |" in report
    (token,) = [t for t, vs in vscode.progress_reports.items() if str(t).startswith("ctxls-agent-")]
    progress = vscode.progress_reports[token]
    assert progress[0].kind == "begin" and progress[0].cancellable and progress[-1].kind == "end"


async def test_vscode_rejected_preview_is_a_denial_the_model_sees(vscode, api):
    app = vscode.root / "src" / "app.py"
    before = app.read_text()
    vscode.apply_answer = False
    api.script([Reply(EDIT), Reply(text("ok, leaving it"))])
    res = await ask(vscode, app, "use an f-string")
    assert res["status"] == "finished"
    r = tool_results(bodies(api)[1])[0]
    assert r["is_error"] and result_text(r).startswith("denied: the user rejected this change")
    assert app.read_text() == before and audit(vscode.root)[0]["decision"] == "denied"


async def test_neovim_asks_first_and_sends_the_edit_only_after_apply(neovim, api):
    app = neovim.root / "src" / "app.py"
    neovim.message_answer = "Reject"
    api.script([Reply(EDIT), Reply(text("rejected")), Reply(EDIT), Reply(text("applied"))])
    await ask(neovim, app, "use an f-string")
    assert kinds(neovim)[:1] == ["showMessageRequest"] and "applyEdit" not in kinds(neovim)
    neovim.message_answer = "Apply"
    neovim.events.clear()
    await ask(neovim, app, "use an f-string")
    assert kinds(neovim)[:2] == ["showMessageRequest", "applyEdit"]
    edit = next(p for k, p in neovim.events if k == "applyEdit").edit
    assert edit.change_annotations is None  # this client has no annotation support
    assert [a["decision"] for a in audit(neovim.root)] == ["denied", "approved"]


@pytest.mark.parametrize("settings, preview", [({}, False), ({"previewConfirms": True}, True)])
async def test_declared_annotations_alone_do_not_make_the_preview_the_approval(api, tmp_path, settings, preview):
    """Neovim declares change annotations and applies edits without asking: unless the client is known to
    confirm (or says so in settings), the user is asked first."""
    ws = make_workspace(tmp_path)
    client = await start_client(api, ws, "visual-studio-code", settings=settings, name="Neovim")
    try:
        api.script([Reply(EDIT), Reply(text("done"))])
        await ask(client, ws / "src" / "app.py", "f-string")
        assert kinds(client) == (["applyEdit"] if preview else ["showMessageRequest", "applyEdit"])
        edit = next(p for k, p in client.events if k == "applyEdit").edit
        assert (edit.change_annotations is not None) is preview
    finally:
        await client.shutdown_session()


async def test_the_agent_reads_the_open_buffer_not_the_disk(vscode, api):
    app = vscode.root / "src" / "app.py"
    vscode.text_document_did_open(T.DidOpenTextDocumentParams(text_document=T.TextDocumentItem(
        uri=app.as_uri(), language_id="python", version=7, text="def greet(name):\n    return 'UNSAVED'\n")))
    api.script([Reply(tool_use("read_file", path="src/app.py")),
                Reply(tool_use("edit_file", path="src/app.py", old_string="'UNSAVED'", new_string="'SAVED'")),
                Reply(text("done"))])
    await ask(vscode, app, "look")
    assert "UNSAVED" in result_text(tool_results(bodies(api)[1])[0])
    edit = next(p for k, p in vscode.events if k == "applyEdit").edit
    assert edit.document_changes[0].text_document.version == 7  # versioned: stale if the buffer moved on


def as_action(item) -> T.CodeAction:
    """The client's converter reads a CodeAction without an edit as a Command whose `command` is the repr of
    the action's command (the union is ambiguous for it); undo that, so the test sees what the server sent."""
    if isinstance(item, T.CodeAction):
        return item
    import ast

    cmd = ast.literal_eval(item.command)
    return T.CodeAction(title=item.title, command=T.Command(title=cmd["title"], command=cmd["command"],
                                                            arguments=cmd.get("arguments")))


async def test_code_actions_offer_ask_fix_and_redesign(vscode, api):
    claude = vscode.root / "CLAUDE.md"
    diag = T.Diagnostic(range=T.Range(T.Position(2, 0), T.Position(2, 5)), message="a test finding",
                        code="CTX201", source="ctxls")
    actions = await vscode.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=claude.as_uri()),
        range=T.Range(T.Position(2, 0), T.Position(2, 5)), context=T.CodeActionContext(diagnostics=[diag])))
    titles = {a.title: as_action(a) for a in actions}
    assert {"ctxls agent: Ask about this selection…", "ctxls agent: Fix this diagnostic (CTX201)",
            "ctxls agent: Redesign this CLAUDE.md"} <= set(titles)
    fix = titles["ctxls agent: Fix this diagnostic (CTX201)"]
    assert fix.command.command == "ctxls.agent.ask"
    (arg,) = fix.command.arguments
    assert "[CTX201] a test finding" in arg["prompt"] and arg["uri"] == claude.as_uri()
    assert "prompt" not in titles["ctxls agent: Ask about this selection…"].command.arguments[0]
    # running the fix action sends its prompt and the selection to the model
    api.script([Reply(text("nothing to fix"))])
    res = await vscode.workspace_execute_command_async(T.ExecuteCommandParams(
        command=fix.command.command, arguments=fix.command.arguments))
    assert res["status"] == "finished"
    task = bodies(api)[0]["messages"][0]["content"][1]["text"]
    assert "[CTX201] a test finding" in task and "The user selected CLAUDE.md, lines 3-3" in task
    assert re.search(r"\(ctxls: CLAUDE.md is \d+ tokens of instructions, loaded at startup in [1-9]\d* directories", task)


async def test_ask_without_a_prompt_is_a_clear_error(vscode, api):
    res = await vscode.workspace_execute_command_async(T.ExecuteCommandParams(
        command="ctxls.agent.ask", arguments=[{"uri": (vscode.root / "CLAUDE.md").as_uri()}]))
    assert res["status"] == "error" and "needs a prompt" in res["detail"]
    assert api.requests == []


async def test_allow_listed_edit_from_settings_needs_no_confirmation(api, tmp_path):
    ws = make_workspace(tmp_path)
    client = await start_client(api, ws, "visual-studio-code", settings={"yesTo": ["edit_file"]})
    try:
        api.script([Reply(EDIT), Reply(text("done"))])
        await ask(client, ws / "src" / "app.py", "f-string")
        edit = next(p for k, p in client.events if k == "applyEdit").edit
        assert edit.change_annotations is None
        assert audit(ws)[0]["decision"] == "allowed"
    finally:
        await client.shutdown_session()



async def wait_codes(client, path, want: bool, code="CTX900", timeout=10.0):
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        ds = client.diagnostics.get(path.as_uri(), [])
        if any(d.code == code for d in ds) == want:
            return ds
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {code} present={want}: {ds}")
        await asyncio.sleep(0.05)


async def test_stale_session_diagnostic_appears_on_edit_and_clears_after_compaction(vscode, api):
    claude = vscode.root / "CLAUDE.md"
    api.add_handler(lambda b: b["messages"][-1]["content"][-1].get("text", "").startswith("Summarise this session"),
                    lambda b: Reply(text("SUMMARY: nothing done yet")))
    api.script([Reply(text("hello")), Reply(text("after compaction"))])
    await ask(vscode, claude, "hi")  # the session is open now, holding CLAUDE.md as it was
    await wait_codes(vscode, claude, False)
    new = claude.read_text().replace("Keep functions small.", "Keep functions under 20 lines.")
    claude.write_text(new)
    vscode.text_document_did_open(T.DidOpenTextDocumentParams(text_document=T.TextDocumentItem(
        uri=claude.as_uri(), language_id="markdown", version=1, text=new)))
    ds = await wait_codes(vscode, claude, True)
    d = next(d for d in ds if d.code == "CTX900")
    assert "holds this file as it was at turn 0" in d.message and "second, competing copy" in d.message
    actions = await vscode.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=claude.as_uri()), range=d.range,
        context=T.CodeActionContext(diagnostics=[d])))
    titles = [as_action(a).title for a in actions]
    assert "ctxls agent: Start a fresh session" in titles and "ctxls agent: Compact now" in titles
    res = await vscode.workspace_execute_command_async(T.ExecuteCommandParams(command="ctxls.agent.compact",
                                                                              arguments=[{}]))
    assert res["compacted"] is True
    await wait_codes(vscode, claude, False)
    await ask(vscode, claude, "continue")
    head = bodies(api)[-1]["messages"][0]["content"]
    assert "under 20 lines" in head[0]["text"] and "SUMMARY: nothing done yet" in head[-1]["text"]


async def test_a_fresh_session_clears_the_stale_warning(vscode, api):
    claude = vscode.root / "CLAUDE.md"
    api.script([Reply(text("hello"))])
    await ask(vscode, claude, "hi")
    vscode.text_document_did_open(T.DidOpenTextDocumentParams(text_document=T.TextDocumentItem(
        uri=claude.as_uri(), language_id="markdown", version=1, text=claude.read_text() + "- one more rule\n")))
    await wait_codes(vscode, claude, True)
    res = await vscode.workspace_execute_command_async(T.ExecuteCommandParams(command="ctxls.agent.newSession",
                                                                              arguments=[{}]))
    assert res["closed"]
    await wait_codes(vscode, claude, False)


async def test_session_actions_remember_this_and_the_ledger(vscode, api, tmp_path):
    claude = vscode.root / "CLAUDE.md"
    sel = T.Range(T.Position(2, 2), T.Position(2, len(claude.read_text().split("\n")[2])))
    actions = [as_action(a) for a in await vscode.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=claude.as_uri()), range=sel,
        context=T.CodeActionContext(diagnostics=[])))]
    titles = {a.title: a for a in actions}
    assert "ctxls agent: Compact session" not in titles  # no session open yet
    remember = titles["ctxls agent: Remember this…"]
    res = await vscode.workspace_execute_command_async(T.ExecuteCommandParams(
        command=remember.command.command, arguments=remember.command.arguments))
    assert res["remembered"] is True, res
    mem = (tmp_path / "home" / "mem" / "MEMORY.md").read_text()
    assert "Run `echo tests-pass` to check your work." in mem
    api.script([Reply(text("hello"))])
    await ask(vscode, claude, "hi")
    titles = {as_action(a).title for a in await vscode.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=claude.as_uri()), range=sel,
        context=T.CodeActionContext(diagnostics=[])))}
    assert {"ctxls agent: Compact session", "ctxls agent: Show session ledger"} <= titles
    shown = await vscode.workspace_execute_command_async(T.ExecuteCommandParams(command="ctxls.agent.ledger",
                                                                               arguments=[]))
    assert "| turn | kind | context |" in shown["markdown"] and "cache hit rate" in shown["markdown"]


async def test_work_done_progress_cancel_cancels_the_run(vscode, api):
    import asyncio

    from fakeapi import Fault

    api.script([Reply(text("too late"))])
    api.fail_next(Fault.slow(20))
    app = vscode.root / "src" / "app.py"
    task = asyncio.ensure_future(ask(vscode, app, "slow"))
    deadline = asyncio.get_running_loop().time() + 15
    token = None
    while token is None and asyncio.get_running_loop().time() < deadline:
        token = next((t for t in vscode.progress_reports if str(t).startswith("ctxls-agent-")), None)
        await asyncio.sleep(0.05)
    assert token is not None
    await asyncio.sleep(0.5)
    vscode.protocol.notify(T.WINDOW_WORK_DONE_PROGRESS_CANCEL, T.WorkDoneProgressCancelParams(token=token))
    res = await asyncio.wait_for(task, 15)
    assert res["status"] == "cancelled"
