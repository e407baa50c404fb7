"""End to end: the real server over stdio (pytest-lsp), with VS Code (push) and Neovim (pull) capabilities."""

from __future__ import annotations

import json

import asyncio
import shutil
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities





def capabilities(profile: str) -> T.ClientCapabilities:
    """pytest-lsp's snapshots; "neovim-pull" adds workspace/diagnostic/refresh support (as current VS Code
    declares), the condition for the server to use the pull model."""
    if profile == "neovim-pull":
        caps = client_capabilities("neovim")
        caps.workspace.diagnostics = T.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
        return caps
    return client_capabilities(profile)


@pytest_lsp.fixture(params=["visual-studio-code", "neovim", "neovim-pull"],
                    config=ClientServerConfig(server_command=[sys.executable, "-m", "ctxls", "serve"]))
async def client(request, lsp_client: LanguageClient, workspace: Path):
    @lsp_client.feature(T.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: T.ApplyWorkspaceEditParams):
        lsp_client.applied_edits.append(params.edit)
        return T.ApplyWorkspaceEditResult(applied=True)

    @lsp_client.feature(T.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: T.RegistrationParams):
        lsp_client.registrations = params.registrations
        return None

    lsp_client.applied_edits = []
    lsp_client.profile = request.param
    result = await lsp_client.initialize_session(T.InitializeParams(
        capabilities=capabilities(request.param), root_uri=workspace.as_uri(),
        workspace_folders=[T.WorkspaceFolder(uri=workspace.as_uri(), name="ws")]))
    # pull is offered only to clients that can also be asked to pull again
    assert (result.capabilities.diagnostic_provider is not None) == (request.param == "neovim-pull")
    lsp_client.root = workspace
    enc = result.capabilities.position_encoding or "utf-16"
    lsp_client.encoding = getattr(enc, "value", enc)
    yield
    await lsp_client.shutdown_session()


async def diagnostics_for(client: LanguageClient, path: Path, timeout: float = 10.0,
                          until=lambda ds: True) -> list[T.Diagnostic]:
    """Diagnostics of ``path`` through whichever model the client uses (push or pull)."""
    uri = path.as_uri()
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        if client.profile == "neovim-pull":
            rep = await client.text_document_diagnostic_async(T.DocumentDiagnosticParams(
                text_document=T.TextDocumentIdentifier(uri=uri)))
            ds = list(rep.items) if getattr(rep, "kind", None) == "full" else []
        else:
            ds = list(client.diagnostics.get(uri, []))
        if until(ds):
            return ds
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out; last diagnostics for {path.name}: {ds}")
        await asyncio.sleep(0.05)


def codes(ds) -> list[str]:
    return sorted(str(d.code) for d in ds)


async def test_diagnostics_appear_and_clear(client: LanguageClient) -> None:
    root = client.root
    claude = root / "CLAUDE.md"
    ds = await diagnostics_for(client, claude, until=lambda ds: "CTX301" in codes(ds))
    d = next(d for d in ds if d.code == "CTX301")
    assert d.source == "ctxls" and d.range.start.line == 2
    text = claude.read_text()
    client.text_document_did_open(T.DidOpenTextDocumentParams(T.TextDocumentItem(
        uri=claude.as_uri(), language_id="markdown", version=1, text=text)))
    fixed = text.replace("@docs/missing.md", "@docs/arch.md")
    client.text_document_did_change(T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=claude.as_uri(), version=2),
        content_changes=[T.TextDocumentContentChangeWholeDocument(text=fixed)]))
    await diagnostics_for(client, claude, until=lambda ds: "CTX301" not in codes(ds))


async def test_ranges_follow_a_buffer_that_turns_ascii_again(client: LanguageClient) -> None:
    """The same findings over a different text are republished when the columns in the client's encoding moved:
    an emoji before a finding, then replaced by one ASCII letter (the code-point spans stay the same, the UTF-16
    and UTF-8 columns do not). Found by validating the server on real workspaces."""
    claude = client.root / "CLAUDE.md"
    text = claude.read_text()
    uri = claude.as_uri()

    def start(ds) -> int | None:
        d = next((d for d in ds if d.code == "CTX301"), None)
        return d.range.start.character if d is not None else None

    await diagnostics_for(client, claude, until=lambda ds: start(ds) == 4)  # "See @docs/missing.md"
    client.text_document_did_open(T.DidOpenTextDocumentParams(T.TextDocumentItem(
        uri=uri, language_id="markdown", version=1, text=text)))
    units = {"utf-8": 4, "utf-32": 1}.get(client.encoding, 2)  # 🎉 in the negotiated encoding
    for version, (prefix, col) in enumerate((("\U0001f389 ", 4 + units + 1), ("x ", 6)), start=2):
        client.text_document_did_change(T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[T.TextDocumentContentChangeWholeDocument(text=text.replace("See @", prefix + "See @"))]))
        await diagnostics_for(client, claude, until=lambda ds, col=col: start(ds) == col)


async def test_hover_on_a_deep_source_file(client: LanguageClient) -> None:
    root = client.root
    src = root / "services" / "billing" / "tests" / "test_refund.py"
    await diagnostics_for(client, root / "CLAUDE.md", until=lambda ds: True)
    res = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=src.as_uri()), position=T.Position(0, 0)))
    assert res is not None
    md = res.contents.value
    assert "services/billing/tests" in md
    for expected in ("`CLAUDE.md:", "`services/billing/CLAUDE.md:", "`services/billing/tests/CLAUDE.md:"):
        assert expected in md, md
    assert "tokens" in md and "Reading `services/billing/tests/test_refund.py`" in md
    assert "path rule `.claude/rules/tests.md`" in md


async def test_code_lens_counts(client: LanguageClient) -> None:
    root = client.root
    lenses = await client.text_document_code_lens_async(T.CodeLensParams(
        text_document=T.TextDocumentIdentifier(uri=(root / "CLAUDE.md").as_uri())))
    assert len(lenses) == 1
    title = lenses[0].command.title
    # the root CLAUDE.md loads at startup in every directory of the workspace
    import re

    pattern = r"([\d,]+) tokens · startup in (\d+) dirs? · on touch in (\d+) \(as sent; ([\d,]+) in the file alone\)"
    m = re.match(pattern, title)
    assert m, title
    n_dirs = sum(1 for p in root.rglob("*") if p.is_dir() and ".ctxls" not in p.parts) + 1
    assert int(m.group(2)) == n_dirs and int(m.group(3)) == 0
    # one number everywhere: the lens's is the block `ctxls context` shows (as sent, wrapper included)
    import subprocess
    import sys

    ctx = subprocess.run([sys.executable, "-m", "ctxls", "context", str(root), "--format", "json", "--no-cache"],
                         capture_output=True, text=True, timeout=120)
    block = next(b for b in json.loads(ctx.stdout)["blocks"] if b["source"] == "CLAUDE.md")
    assert int(m.group(1).replace(",", "")) == block["tokens"] > int(m.group(4).replace(",", "")), (title, block)
    billing = await client.text_document_code_lens_async(T.CodeLensParams(
        text_document=T.TextDocumentIdentifier(uri=(root / "services" / "billing" / "CLAUDE.md").as_uri())))
    m = re.match(pattern, billing[0].command.title)
    # billing/, billing/tests/, billing/src/ load it at startup; root and services/ load it on touch
    assert m and int(m.group(2)) == 3 and int(m.group(3)) == 2, billing[0].command.title


async def test_quick_fix_through_apply_edit(client: LanguageClient) -> None:
    root = client.root
    claude = root / "CLAUDE.md"
    ds = await diagnostics_for(client, claude, until=lambda ds: "CTX305" in codes(ds))
    dup = next(d for d in ds if d.code == "CTX305")
    actions = await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=claude.as_uri()), range=dup.range,
        context=T.CodeActionContext(diagnostics=[dup], only=[T.CodeActionKind.QuickFix])))
    fix = next(a for a in actions if "CTX305" in a.title)
    (change,) = fix.edit.document_changes
    (te,) = change.edits
    lines = claude.read_text().split("\n")
    assert lines[te.range.start.line] == "@docs/arch.md" and te.new_text == ""
    # the same fix through the server: ctxls.applyFix sends workspace/applyEdit to the client
    res = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="ctxls.applyFix", arguments=[claude.as_uri(), "CTX305", dup.range.start.line, 0]))
    assert res["applied"] is True
    (sent,) = client.applied_edits
    (change,) = sent.document_changes
    (te2,) = change.edits
    assert change.text_document.uri == claude.as_uri() and te2.range == te.range and te2.new_text == ""
    # apply it like an editor would, save, and the finding goes away
    new_lines = lines[:te.range.start.line] + lines[te.range.end.line:]
    claude.write_text("\n".join(new_lines))
    await diagnostics_for(client, claude, until=lambda ds: "CTX305" not in codes(ds))


async def test_file_created_and_deleted_on_disk(client: LanguageClient) -> None:
    root = client.root
    sub = root / "services" / "api"
    # after the initial scan, so the file reaches the server through the watcher
    await diagnostics_for(client, root / "CLAUDE.md", until=lambda ds: "CTX301" in codes(ds))
    new = sub / "CLAUDE.md"
    new.write_text("# API\n@nope.md\n")
    await diagnostics_for(client, new, until=lambda ds: "CTX301" in codes(ds))
    new.unlink()
    await diagnostics_for(client, new, until=lambda ds: ds == [])


async def test_report_commands_open_markdown(client: LanguageClient) -> None:
    root = client.root
    await diagnostics_for(client, root / "CLAUDE.md")
    actions = await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=(root / "CLAUDE.md").as_uri()),
        range=T.Range(T.Position(0, 0), T.Position(0, 0)),
        context=T.CodeActionContext(diagnostics=[], only=[T.CodeActionKind.Source])))
    assert {"ctxls: Show context for this directory", "ctxls: Show budget report"} <= {a.title for a in actions}
    res = await client.workspace_execute_command_async(T.ExecuteCommandParams(command="ctxls.budgetReport"))
    report = root / ".ctxls" / "reports" / "budget.md"
    assert res["uri"] == report.as_uri() and "Context budget" in report.read_text()
    assert any(d.uri == report.as_uri() for d in client.shown_documents)
    src = root / "services" / "billing" / "src" / "refunds.py"
    res = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="ctxls.contextReport", arguments=[src.as_uri()]))
    assert "services/billing/CLAUDE.md" in (root / ".ctxls" / "reports" / "context.md").read_text()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "ctxls", "serve"]))
async def configured(lsp_client: LanguageClient, workspace: Path):
    lsp_client.set_configuration({"window": 1000000, "check": {"ignore": ["CTX305"]}}, section="ctxls")

    @lsp_client.feature(T.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params):
        return None

    lsp_client.profile = "neovim-pull"
    await lsp_client.initialize_session(T.InitializeParams(
        capabilities=capabilities("neovim-pull"), root_uri=workspace.as_uri(),
        initialization_options={"window": 500000}))
    lsp_client.root = workspace
    yield
    await lsp_client.shutdown_session()


async def test_workspace_configuration_wins_over_init_options(configured: LanguageClient) -> None:
    root = configured.root
    ds = await diagnostics_for(configured, root / "CLAUDE.md", until=lambda ds: "CTX301" in codes(ds))
    assert "CTX305" not in codes(ds)
    res = await configured.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=(root / "web" / "components" / "Button.tsx").as_uri()),
        position=T.Position(0, 0)))
    assert "of 1,000,000" in res.contents.value


async def test_cross_file_duplicate_appears_in_the_child_when_the_parent_is_edited(client: LanguageClient) -> None:
    root = client.root
    parent, child = root / "CLAUDE.md", root / "services" / "billing" / "CLAUDE.md"
    await diagnostics_for(client, parent, until=lambda ds: "CTX301" in codes(ds))
    refunds = next(i for i, t in enumerate(child.read_text().split("\n")) if t.startswith("- Refunds go through"))

    def dup_on_refunds(ds):
        return any(d.code == "CTX201" and d.range.start.line == refunds for d in ds)

    before = await diagnostics_for(client, child, until=lambda ds: "CTX201" in codes(ds))  # an older duplicate
    assert not dup_on_refunds(before)
    text = parent.read_text()
    client.text_document_did_open(T.DidOpenTextDocumentParams(T.TextDocumentItem(
        uri=parent.as_uri(), language_id="markdown", version=1, text=text)))
    edited = text + "- Refunds go through `src/refunds.py`.\n"  # the child says the same thing
    client.text_document_did_change(T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=parent.as_uri(), version=2),
        content_changes=[T.TextDocumentContentChangeWholeDocument(text=edited)]))
    ds = await diagnostics_for(client, child, until=dup_on_refunds)
    dup = next(d for d in ds if d.code == "CTX201" and d.range.start.line == refunds)
    assert dup.related_information and dup.related_information[0].location.uri == parent.as_uri()


async def test_links_definition_and_import_hover(client: LanguageClient) -> None:
    root = client.root
    claude = root / "CLAUDE.md"
    await diagnostics_for(client, claude)
    links = await client.text_document_document_link_async(T.DocumentLinkParams(
        text_document=T.TextDocumentIdentifier(uri=claude.as_uri())))
    targets = {l.target for l in links}
    assert (root / "docs" / "arch.md").as_uri() in targets and (root / "services").as_uri() in targets
    assert not any("missing.md" in t for t in targets)
    loc = await client.text_document_definition_async(T.DefinitionParams(
        text_document=T.TextDocumentIdentifier(uri=claude.as_uri()), position=T.Position(3, 3)))
    assert loc.uri == (root / "docs" / "arch.md").as_uri()
    hover = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=claude.as_uri()), position=T.Position(3, 3)))
    assert "`docs/arch.md`" in hover.contents.value and "tokens" in hover.contents.value
    hover = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=claude.as_uri()), position=T.Position(2, 8)))
    assert "file not found" in hover.contents.value


async def test_skill_lens_and_frontmatter_hover(client: LanguageClient) -> None:
    skill = client.root / ".claude" / "skills" / "release" / "SKILL.md"
    await diagnostics_for(client, client.root / "CLAUDE.md")
    lenses = await client.text_document_code_lens_async(T.CodeLensParams(
        text_document=T.TextDocumentIdentifier(uri=skill.as_uri())))
    assert lenses[0].command.title.startswith("listing ") and "body" in lenses[0].command.title
    hover = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=skill.as_uri()), position=T.Position(1, 2)))
    assert "Skill `release`" in hover.contents.value and "listed with its description" in hover.contents.value


async def test_initial_scan_reports_progress(client: LanguageClient) -> None:
    await diagnostics_for(client, client.root / "CLAUDE.md", until=lambda ds: "CTX301" in codes(ds))
    if client.profile != "visual-studio-code":  # the neovim snapshot declares no workDoneProgress
        return
    for _ in range(200):  # the end report follows the first publish
        (reports,) = client.progress_reports.values()
        if isinstance(reports[-1], T.WorkDoneProgressEnd):
            break
        await asyncio.sleep(0.05)
    assert isinstance(reports[0], T.WorkDoneProgressBegin) and isinstance(reports[-1], T.WorkDoneProgressEnd)


async def test_a_burst_of_file_events_is_one_refresh(client: LanguageClient) -> None:
    root = client.root
    await diagnostics_for(client, root / "CLAUDE.md", until=lambda ds: "CTX301" in codes(ds))
    before = await client.workspace_execute_command_async(T.ExecuteCommandParams(command="ctxls.status"))
    gen = root / "generated"
    gen.mkdir()
    for i in range(500):  # like a checkout touching 500 files
        (gen / f"m{i}.py").write_text(f"x = {i}\n")
    (gen / "CLAUDE.md").write_text("# Generated\n@nowhere.md\n")
    await diagnostics_for(client, gen / "CLAUDE.md", until=lambda ds: "CTX301" in codes(ds))
    await asyncio.sleep(0.5)
    after = await client.workspace_execute_command_async(T.ExecuteCommandParams(command="ctxls.status"))
    assert after["watch_events"] - before["watch_events"] >= 500
    assert after["watch_batches"] - before["watch_batches"] <= 3, (before, after)
    assert after["checks"] - before["checks"] <= 3, (before, after)


async def test_client_file_events_do_not_repeat_watcher_work(client: LanguageClient) -> None:
    root = client.root
    api = root / "services" / "api" / "CLAUDE.md"
    await diagnostics_for(client, root / "CLAUDE.md", until=lambda ds: "CTX301" in codes(ds))
    api.write_text(api.read_text() + "@gone.md\n")  # the server's own watcher sees this
    await diagnostics_for(client, api, until=lambda ds: "CTX301" in codes(ds))
    # let the watcher settle: a write can arrive as several events (truncate, then write)
    before = None
    for _ in range(40):
        await asyncio.sleep(0.25)
        now = await client.workspace_execute_command_async(T.ExecuteCommandParams(command="ctxls.status"))
        if before is not None and now == before:
            break
        before = now
    # the editor reports the same change late: nothing new to do
    client.workspace_did_change_watched_files(T.DidChangeWatchedFilesParams(changes=[
        T.FileEvent(uri=api.as_uri(), type=T.FileChangeType.Changed)]))
    await asyncio.sleep(0.5)
    after = await client.workspace_execute_command_async(T.ExecuteCommandParams(command="ctxls.status"))
    assert after["checks"] == before["checks"] and after["generation"] == before["generation"]
    # a change only the client reports (say, a remote file system) is picked up
    api.write_text(api.read_text().replace("@gone.md\n", ""))
    client.workspace_did_change_watched_files(T.DidChangeWatchedFilesParams(changes=[
        T.FileEvent(uri=api.as_uri(), type=T.FileChangeType.Changed)]))
    await diagnostics_for(client, api, until=lambda ds: "CTX301" not in codes(ds))


async def test_editing_the_config_file_applies_it(client: LanguageClient) -> None:
    root = client.root
    await diagnostics_for(client, root / "CLAUDE.md", until=lambda ds: "CTX301" in codes(ds))
    cfg = root / ".ctxls.toml"
    cfg.write_text(cfg.read_text() + '\n[check]\nignore = ["CTX301"]\n')
    await diagnostics_for(client, root / "CLAUDE.md", until=lambda ds: "CTX301" not in codes(ds) and ds)


async def test_claude_codes_project_settings_apply(client: LanguageClient) -> None:
    """`claudeMdExcludes` in `.claude/settings.json` (spec A6): billing/CLAUDE.md no longer loads with the root
    file, so its copy of a root rule is no longer a duplicate in any session."""
    root = client.root
    billing = root / "services" / "billing" / "CLAUDE.md"
    await diagnostics_for(client, billing, until=lambda ds: "CTX201" in codes(ds))
    (root / ".claude" / "settings.json").write_text('{"claudeMdExcludes": ["**/services/billing/CLAUDE.md"]}\n')
    await diagnostics_for(client, billing, until=lambda ds: "CTX201" not in codes(ds))


async def _settled_status(client: LanguageClient) -> dict:
    """ctxls.status once two reads a quarter of a second apart agree (the watcher has nothing pending)."""
    before = None
    for _ in range(40):
        await asyncio.sleep(0.25)
        now = await client.workspace_execute_command_async(T.ExecuteCommandParams(command="ctxls.status"))
        if before is not None and now == before:
            return now
        before = now
    raise AssertionError("the server did not settle")


async def test_an_ignored_directory_appearing_does_no_work(client: LanguageClient) -> None:
    """Creating `node_modules/` or `.ctxls/` changes the root directory's list of names (a directory "modified"
    event), which must not re-analyse the workspace; a new directory that matters still does."""
    root = client.root
    await diagnostics_for(client, root / "CLAUDE.md", until=lambda ds: "CTX301" in codes(ds))
    before = await _settled_status(client)
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "node_modules" / "pkg" / "CLAUDE.md").write_text("# vendored\n@nope.md\n")
    (root / ".ctxls" / "cache").mkdir(parents=True, exist_ok=True)
    (root / ".ctxls" / "cache" / "check.json").write_text("{}")
    shutil.rmtree(root / "node_modules")
    after = await _settled_status(client)
    assert after["watch_events"] > before["watch_events"]  # the root's events did arrive
    assert after["generation"] == before["generation"] and after["checks"] == before["checks"], (before, after)
    (root / "tools").mkdir()
    (root / "tools" / "CLAUDE.md").write_text("# Tools\n@nope.md\n")
    await diagnostics_for(client, root / "tools" / "CLAUDE.md", until=lambda ds: "CTX301" in codes(ds))


async def test_memory_files_outside_the_workspace_are_watched(client: LanguageClient) -> None:
    """The auto-memory directory lives outside the workspace (the editor cannot watch it): a topic file the
    agent writes there, naming a path that does not exist, gets its CTX402 through the server's own watcher;
    an edit that fixes the path clears it, and deleting the file clears it too."""
    root = client.root
    mem = root.parent / "home" / "mem"
    await diagnostics_for(client, root / "CLAUDE.md", until=lambda ds: "CTX301" in codes(ds))  # scan done
    topic = mem / "layout.md"
    topic.write_text("# Layout\n- The stats endpoints live in `services/api/stats_v1.py`.\n")
    await diagnostics_for(client, topic, until=lambda ds: "CTX402" in codes(ds))
    topic.write_text("# Layout\n- The stats endpoints live in the services directory.\n")
    await diagnostics_for(client, topic, until=lambda ds: "CTX402" not in codes(ds))
    topic.write_text("# Layout\n- The stats endpoints live in `services/api/stats_v2.py`.\n")
    await diagnostics_for(client, topic, until=lambda ds: "CTX402" in codes(ds))
    topic.unlink()
    await diagnostics_for(client, topic, until=lambda ds: ds == [])


async def test_a_commit_outside_the_editor_updates_what_git_history_says(client: LanguageClient) -> None:
    """CTX202 says which version is newer from git history: `git init` and a commit made in a terminal (no
    file of the workspace changes) reach the server through its watcher of .git, and the next check says so."""
    import subprocess

    root = client.root
    rule = "Database migrations {} be reversible and reviewed by the data team."
    await diagnostics_for(client, root / "CLAUDE.md", until=lambda ds: "CTX301" in codes(ds))
    with (root / "CLAUDE.md").open("a") as f:
        f.write("\n- " + rule.format("MUST") + "\n")
    (root / "services" / "CLAUDE.md").write_text("# Services\n\n- " + rule.format("should") + "\n")

    def ctx202(ds) -> list[str]:
        return [d.message for d in ds if d.code == "CTX202"]

    ds = await diagnostics_for(client, root / "services" / "CLAUDE.md", until=lambda ds: ctx202(ds))
    assert "by git history" not in ctx202(ds)[0]
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "PATH": "/usr/bin:/bin:/usr/local/bin"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "first"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    await diagnostics_for(client, root / "services" / "CLAUDE.md",
                          until=lambda ds: any("the same commit" in m for m in ctx202(ds)))
