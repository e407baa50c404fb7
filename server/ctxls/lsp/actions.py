"""Code actions (every safe or unsafe fix of a finding as a quick fix; report source actions) and commands."""

from __future__ import annotations


from lsprotocol import types as T

from ..core.findings import Fix
from ..core.statedir import make_parent
from .convert import path_to_uri, to_range
from .server import CtxlsServer

CONTEXT_REPORT = "ctxls.contextReport"
BUDGET_REPORT = "ctxls.budgetReport"
REFRESH = "ctxls.refresh"
APPLY_FIX = "ctxls.applyFix"
STATUS = "ctxls.status"
OWNS = "ctxls.owns"


def register(server: CtxlsServer) -> None:
    @server.feature(T.TEXT_DOCUMENT_CODE_ACTION, T.CodeActionOptions(
        code_action_kinds=[T.CodeActionKind.QuickFix, T.CodeActionKind.Refactor, T.CodeActionKind.RefactorRewrite,
                           T.CodeActionKind.Source]))
    async def code_action(ls: CtxlsServer, params: T.CodeActionParams):
        await ls.wait_ready()
        path = ls.path_of(params.text_document.uri)
        if path is None or ls.engine is None:
            return []
        only = params.context.only
        actions: list[T.CodeAction] = []
        if not only or any(k.startswith(T.CodeActionKind.QuickFix) for k in only):
            wanted = {(d.code, d.range.start.line) for d in params.context.diagnostics}
            for f in ls.engine.findings.get(path, []):
                rng = to_range(ls, path, f.span)
                overlaps = rng.start.line <= params.range.end.line and rng.end.line >= params.range.start.line
                if not (overlaps or (f.code, rng.start.line) in wanted):
                    continue
                for fix in f.fixes:
                    actions.append(T.CodeAction(
                        title=f"{fix.title} ({f.code})", kind=T.CodeActionKind.QuickFix,
                        diagnostics=[d for d in params.context.diagnostics if d.code == f.code] or None,
                        is_preferred=fix.safe and fix is f.fixes[0], edit=workspace_edit(ls, fix)))
        from .agent import code_actions as agent_actions

        actions.extend(a for a in agent_actions(ls, params) if not only or any(a.kind.startswith(k) for k in only))
        if not only or any(k.startswith(T.CodeActionKind.Source) for k in only):
            uri = params.text_document.uri
            actions.append(T.CodeAction(title="ctxls: Show context for this directory", kind=T.CodeActionKind.Source,
                                        command=T.Command(title="ctxls: Show context for this directory",
                                                          command=CONTEXT_REPORT, arguments=[uri])))
            actions.append(T.CodeAction(title="ctxls: Show budget report", kind=T.CodeActionKind.Source,
                                        command=T.Command(title="ctxls: Show budget report", command=BUDGET_REPORT,
                                                          arguments=[])))
            from .agents import COMPARE_REPORT

            actions.append(T.CodeAction(title="ctxls: Compare what each agent loads here", kind=T.CodeActionKind.Source,
                                        command=T.Command(title="ctxls: Compare what each agent loads here",
                                                          command=COMPARE_REPORT, arguments=[uri])))
        return actions

    @server.command(CONTEXT_REPORT)
    async def context_report(ls: CtxlsServer, *args):
        """The session table for the directory of ``args[0]`` (a URI; default the workspace root), of the agent
        ``args[1]`` (a profile of core/profiles, default claude-code: the VS Code agent picker's choice)."""
        await ls.wait_ready()  # (a report asked for before the first check would find no engine)
        uri = args[0] if args and isinstance(args[0], str) else None
        agent = args[1] if len(args) > 1 and isinstance(args[1], str) else "claude-code"
        path = ls.path_of(uri) if uri else ls.root
        if path is None or ls.engine is None:
            return None
        from ..core.model import AGENT_NAMES

        if agent not in AGENT_NAMES:
            ls.window_show_message(T.ShowMessageParams(
                type=T.MessageType.Warning,
                message=f"ctxls: no agent profile {agent!r} (known: {', '.join(AGENT_NAMES)})"))
            return None
        start = path if path.is_dir() else path.parent
        from ..core.profiles import EDITOR_AGENTS

        if agent in EDITOR_AGENTS:  # (Cursor: the workspace folder, whichever file is open)
            start = ls.root
        from .hover import session_markdown

        text = await ls.in_thread(session_markdown, ls, start, None if path.is_dir() else path, agent)
        if agent == "claude-code":
            return await show_report(ls, "context.md", f"# Context of a session in `{start}`\n\n{text}\n")
        return await show_report(ls, f"context-{agent}.md",
                                 f"# Context of a {AGENT_NAMES[agent]} session in `{start}`\n\n{text}\n")

    @server.command(BUDGET_REPORT)
    async def budget_report(ls: CtxlsServer, *args):
        if ls.engine is None:
            return None
        text = await ls.in_thread(budget_markdown, ls)
        return await show_report(ls, "budget.md", text)

    @server.command(APPLY_FIX)
    async def apply_fix(ls: CtxlsServer, *args):
        """Apply fix number ``index`` of the finding ``code`` on ``line`` of ``uri`` via workspace/applyEdit
        (the editor owns undo and rejects the edit if the document changed since)."""
        try:
            uri, code, line, index = args[0], str(args[1]), int(args[2]), int(args[3]) if len(args) > 3 else 0
        except (IndexError, TypeError, ValueError):
            return {"applied": False, "reason": "usage: ctxls.applyFix(uri, code, line, index=0)"}
        path = ls.path_of(uri) if isinstance(uri, str) else None
        if path is None or ls.engine is None:
            return {"applied": False, "reason": "unknown document"}
        finding = next((f for f in ls.engine.findings.get(path, []) if f.code == code and f.span.start_line == line),
                       None)
        if finding is None or index >= len(finding.fixes):
            return {"applied": False, "reason": "no such finding or fix (re-run the check)"}
        fix = finding.fixes[index]
        res = await ls.workspace_apply_edit_async(T.ApplyWorkspaceEditParams(
            label=f"ctxls: {fix.title}", edit=workspace_edit(ls, fix)))
        return {"applied": bool(res and res.applied), "reason": getattr(res, "failure_reason", None)}

    @server.command(STATUS)
    def status(ls: CtxlsServer, *args):
        """Counters for clients and tests: how many checks ran and how file events were batched."""
        eng = ls.engine
        co = getattr(ls, "coalescer", None)
        return {"checks": ls.checks_run, "generation": eng.generation if eng else 0,
                "last_check_mode": eng.last_check_mode if eng else None,
                "watch_batches": co.batches if co else 0, "watch_events": co.events if co else 0,
                "findings": sum(len(v) for v in eng.findings.values()) if eng else 0}

    @server.command(OWNS)
    def owns(ls: CtxlsServer, *args):
        """Whether the file at ``args[0]`` (a URI) belongs to this server's workspace, memory files outside the
        root included: an editor asks before it starts a second, rootless server for such a file
        (client-nvim/ctxls.lua's root_dir)."""
        path = ls.path_of(args[0]) if args and isinstance(args[0], str) else None
        if path is None or ls.engine is None:
            return {"owns": False, "root": str(ls.root) if ls.root else None}
        return {"owns": ls.engine.owns(path), "root": str(ls.root)}

    @server.command(REFRESH)
    async def refresh(ls: CtxlsServer, *args):
        if ls.engine is None:
            return None
        ls.engine.fs.invalidate()
        ls.engine.file_changed(ls.root, structural=True)
        from .diagnostics import run_check

        await run_check(ls)
        return {"findings": sum(len(v) for v in ls.engine.findings.values())}


def workspace_edit(ls: CtxlsServer, fix: Fix) -> T.WorkspaceEdit:
    changes: list = []
    for e in fix.edits:
        if e.create:
            uri = path_to_uri(e.path)
            changes.append(T.CreateFile(uri=uri, options=T.CreateFileOptions(overwrite=False, ignore_if_exists=True)))
            changes.append(T.TextDocumentEdit(
                text_document=T.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
                edits=[T.TextEdit(range=T.Range(T.Position(0, 0), T.Position(0, 0)), new_text=e.new_text)]))
            continue
        uri = path_to_uri(e.path)
        doc = ls.workspace.text_documents.get(uri)
        changes.append(T.TextDocumentEdit(
            text_document=T.OptionalVersionedTextDocumentIdentifier(uri=uri, version=doc.version if doc else None),
            edits=[T.TextEdit(range=to_range(ls, e.path, e.span), new_text=e.new_text)]))
    return T.WorkspaceEdit(document_changes=changes)


async def show_report(ls: CtxlsServer, name: str, text: str):
    """Write a markdown report under the workspace's `.ctxls/reports/` and ask the client to show it."""
    out = ls.root / ".ctxls" / "reports" / name
    try:
        make_parent(out)
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        ls.log(f"cannot write report {out}: {exc}", T.MessageType.Warning)
        return {"markdown": text}
    try:
        await ls.window_show_document_async(T.ShowDocumentParams(uri=out.as_uri(), take_focus=True))
    except Exception as exc:  # clients without showDocument still get the path back
        ls.log(f"showDocument failed: {exc}")
    return {"uri": out.as_uri(), "markdown": text}


def budget_markdown(ls: CtxlsServer) -> str:
    from ..core.budget import compute_budget
    from ..core.report import budget_to_json

    eng = ls.engine
    with eng.lock:
        rep = compute_budget(ls.root, eng.settings, fs=eng.fs, counter=eng.counter)
    j = budget_to_json(rep, 10)
    out = [f"# Context budget for `{rep.root}`", "",
           f"{j['scan']['dirs']:,} directories, {j['scan']['sources']:,} instruction sources; window {j['window']:,}; "
           f"tokens: {j['token_method']}.", "", "| directory | startup tokens | % window | largest block |",
           "|---|---|---|---|"]
    for d in j["directories"]:
        out.append(f"| `{d['dir']}` | {d['startup_tokens']:,} | {d['percent_of_window']}% | "
                   f"`{d['top_source']}` ({d['top_tokens']:,}) |")
    out += ["", "| largest files | kind | tokens |", "|---|---|---|"]
    for f in j["largest_files"]:
        out.append(f"| `{f['source']}` | {f['kind']} | {f['tokens']:,} |")
    sc = j["scenarios"]["root"]
    out += ["", f"From the root: {sc['reads_until_half']:,} reads of 300-token files until half the window; "
                f"~{sc['turns_until_compact']:,} turns until auto-compact.", "", "## Suggested policy", ""]
    out += [f"- {p}" for p in j["policy"]]
    return "\n".join(out) + "\n"
