"""The agent loop behind code actions: "Ask about this…", "Fix this diagnostic", "Redesign this CLAUDE.md".

Every action runs the command `ctxls.agent.ask` with `[{"prompt": str, "uri": str, "range"?: Range}]` (the
client supplies the prompt of "Ask": an input box in VS Code, `vim.ui.input` in Neovim). The loop is the same as
`ctxls agent`'s; only the host differs: the editor. Edits reach it only as `workspace/applyEdit` with versioned
`documentChanges`: with a change annotation that needs confirmation where the client supports them (VS Code
shows its refactor preview, and that preview is the approval), otherwise after `window/showMessageRequest`
Apply / Reject. A document open in the editor is never written on disk behind it; the agent reads the buffer.
Progress and the streamed answer go through work-done progress (its cancel button cancels the run); the final
answer and the run's token ledger open as a markdown document.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from pathlib import Path
from typing import Any

from lsprotocol import types as T
from pygls.capabilities import get_capability

from ..agent.build import RunError, open_run
from ..agent.executor import FileChange
from ..agent.loop import Events, Outcome
from ..agent.provider import ProviderError
from ..core.findings import Finding, Span
from ..agent.settings import AgentSettings, agent_settings_for
from ..core.discovery import classify
from .convert import SOURCE, from_position, path_to_uri
from .server import CtxlsServer

ASK = "ctxls.agent.ask"
NEW_SESSION = "ctxls.agent.newSession"
COMPACT = "ctxls.agent.compact"
REMEMBER = "ctxls.agent.remember"
LEDGER = "ctxls.agent.ledger"
STALE = "CTX900"
"""Code of the stale-session diagnostic (not a check rule: it exists only while an agent session is open)."""
PREFIX = "ctxls agent: "
REDESIGN_PROMPT = (
    "Redesign {name} to about half its tokens without losing a rule. First audit it: its tokens and what it "
    "costs in every session that loads it, rules buried deep in the file, vague lines that give no checkable "
    "instruction, redundancy (with itself and with other instruction files), and sections that would be better "
    "as on-demand skills. Then propose the rewrite as one edit of the file, and state the tokens before and after.")
PREVIEW_CLIENTS = ("visual studio code", "code - oss", "vscodium", "code-server", "cursor", "windsurf")
"""Clients whose refactor preview asks the user before an edit annotated `needsConfirmation` applies."""
FIX_PROMPT = ("Fix this ctxls diagnostic in {rel}, line {line}: [{code}] {message}. Make the smallest change that "
              "resolves it, without losing any instruction.")


class EditorHost:
    """The gate's host in the editor: the buffers are the texts, workspace edits are the writes."""

    interactive = True

    def __init__(self, ls: CtxlsServer) -> None:
        self.ls = ls

    def current_text(self, path: Path) -> str | None:
        doc = self.ls.workspace.text_documents.get(path_to_uri(path))
        return doc.source if doc is not None else None

    def _annotations(self) -> bool:
        """Whether the client's preview of an annotated edit is the approval. Declaring change annotations is not
        enough: Neovim 0.11+ declares them and applies every edit without asking. So the client must be one known
        to confirm (VS Code and its forks), or say so itself (`agent.previewConfirms`, which our VS Code
        extension sends)."""
        if not get_capability(self.ls.client_capabilities, "workspace.workspace_edit.change_annotation_support", None):
            return False
        told = agent_settings(self.ls)[0].preview_confirms
        if told is not None:
            return told
        return (self.ls.client_name or "").lower().startswith(PREVIEW_CLIENTS)

    async def apply_change(self, change: FileChange, ask: str | None) -> tuple[str, str]:
        confirm_in_preview = bool(ask) and self._annotations()
        if ask and not confirm_in_preview:
            verb = "create" if change.before is None else "edit"
            if not await self._choose(f"ctxls agent wants to {verb} {change.target.rel} ({ask}).\n\n"
                                      f"{_short_diff(change)}", "Apply"):
                return "denied", "rejected by the user"
        edit = workspace_edit(self.ls, change, ask if confirm_in_preview else None)
        try:
            res = await self.ls.workspace_apply_edit_async(T.ApplyWorkspaceEditParams(
                edit=edit, label=f"{PREFIX}{'create' if change.before is None else 'edit'} {change.target.rel}"))
        except Exception as exc:  # noqa: BLE001 - a client that fails the request
            return "error", f"the editor did not apply the edit: {exc}"
        if res is None or not res.applied:
            if confirm_in_preview:
                return "denied", res.failure_reason if res and res.failure_reason else "rejected in the preview"
            return "error", (res.failure_reason if res else None) or "the editor did not apply the edit"
        return ("approved" if ask else "allowed"), ""

    async def confirm_command(self, command: str, ask: str) -> bool:
        return await self._choose(f"ctxls agent wants to run `{command}` in the workspace ({ask}).", "Run")

    async def _choose(self, message: str, yes: str) -> bool:
        try:
            got = await self.ls.window_show_message_request_async(T.ShowMessageRequestParams(
                type=T.MessageType.Warning, message=message,
                actions=[T.MessageActionItem(title=yes), T.MessageActionItem(title="Reject")]))
        except Exception:  # noqa: BLE001 - no answer is a no
            return False
        return got is not None and got.title == yes


def workspace_edit(ls: CtxlsServer, change: FileChange, confirm: str | None) -> T.WorkspaceEdit:
    """One versioned document change; with ``confirm``, annotated as needing the user's confirmation."""
    uri = path_to_uri(change.target.path)
    annotation_id = "ctxls-agent" if confirm else None
    annotations = {annotation_id: T.ChangeAnnotation(label=f"ctxls agent: {change.target.rel}", needs_confirmation=True,
                                                     description=confirm)} if confirm else None
    changes: list[Any] = []
    if change.before is None:
        changes.append(T.CreateFile(uri=uri, options=T.CreateFileOptions(overwrite=True), annotation_id=annotation_id))
        doc_version = None
        rng = T.Range(T.Position(0, 0), T.Position(0, 0))
        new_text = change.after
    else:
        doc = ls.workspace.text_documents.get(uri)
        doc_version = doc.version if doc is not None else None
        rng, new_text = _minimal_edit(ls, change.before, change.after)
    edit: T.TextEdit = (T.AnnotatedTextEdit(range=rng, new_text=new_text, annotation_id=annotation_id)
                        if annotation_id else T.TextEdit(range=rng, new_text=new_text))
    changes.append(T.TextDocumentEdit(
        text_document=T.OptionalVersionedTextDocumentIdentifier(uri=uri, version=doc_version), edits=[edit]))
    return T.WorkspaceEdit(document_changes=changes, change_annotations=annotations)


def _minimal_edit(ls: CtxlsServer, before: str, after: str) -> tuple[T.Range, str]:
    """The changed middle of ``before`` (common head and tail kept), as a client range and its new text."""
    head = 0
    limit = min(len(before), len(after))
    while head < limit and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < limit - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    codec = ls.workspace.position_codec
    lines = before.split("\n")

    def pos(offset: int) -> T.Position:
        line = before.count("\n", 0, offset)
        col = offset - (before.rfind("\n", 0, offset) + 1)
        return codec.position_to_client_units(lines, T.Position(line, col))

    return T.Range(pos(head), pos(len(before) - tail)), after[head:len(after) - tail]


def _short_diff(change: FileChange, limit: int = 40) -> str:
    lines = change.diff().splitlines()
    return "\n".join(lines[:limit] + ([f"... {len(lines) - limit} more lines"] if len(lines) > limit else []))


def register(server: CtxlsServer) -> None:
    @server.command(ASK)
    async def ask(ls: CtxlsServer, *args):
        req = args[0] if args and isinstance(args[0], dict) else None
        if req is None or not isinstance(req.get("uri"), str):
            return _fail(ls, f"{ASK} takes one argument: {{\"prompt\": str, \"uri\": str, \"range\"?: Range}}")
        if not isinstance(req.get("prompt"), str) or not req["prompt"].strip():
            return _fail(ls, f"{ASK} needs a prompt (the client asks the user for it)")
        await ls.wait_ready()
        path = ls.path_of(req["uri"])
        if path is None or ls.engine is None or ls.root is None:
            return _fail(ls, f"{req['uri']} is not in the workspace")
        if ls.agent_task is not None and not ls.agent_task.done():
            return _fail(ls, "an agent run is already in progress; cancel it first")
        ls.agent_task = asyncio.current_task()
        try:
            return await run_ask(ls, path, req["prompt"], req.get("range"))
        finally:
            ls.agent_task = None
            refresh_session_diagnostics(ls)

    @server.command(NEW_SESSION)
    async def new_session(ls: CtxlsServer, *args):
        """Close the editor's agent session: the next ask starts fresh from the instructions on disk."""
        if ls.agent_task is not None and not ls.agent_task.done():
            return _fail(ls, "an agent run is in progress; cancel it first")
        old = ls.agent_loop
        ls.agent_loop = None
        refresh_session_diagnostics(ls)
        return {"closed": old.transcript.session if old else None}

    @server.command(COMPACT)
    async def compact(ls: CtxlsServer, *args):
        loop = ls.agent_loop
        if loop is None:
            return _fail(ls, "no agent session is open")
        if ls.agent_task is not None and not ls.agent_task.done():
            return _fail(ls, "an agent run is in progress; compact when it is done")
        ls.agent_task = asyncio.current_task()
        try:
            done = await loop.compact(manual=True)
        except ProviderError as exc:
            return _fail(ls, f"compaction failed: {exc}")
        finally:
            ls.agent_task = None
            refresh_session_diagnostics(ls)
        return {"session": loop.transcript.session, "compacted": done}

    @server.command(REMEMBER)
    async def remember_cmd(ls: CtxlsServer, *args):
        """`[{"fact": str}]`, or `[{"uri", "range"}]` to remember the selected text."""
        req = args[0] if args and isinstance(args[0], dict) else {}
        fact = req.get("fact")
        if not isinstance(fact, str) and isinstance(req.get("uri"), str):
            path = ls.path_of(req["uri"])
            fact = _task_text(ls, path, "", req.get("range")).split("```\n", 1)[-1].rsplit("\n```", 1)[0] if path else None
        if not isinstance(fact, str) or not fact.strip():
            return _fail(ls, f"{REMEMBER} takes [{{\"fact\": str}}] or [{{\"uri\": str, \"range\": Range}}]")
        await ls.wait_ready()
        from ..agent.context import SessionContext
        from ..agent.gate import Call, Gate
        from ..agent.memory import remember
        from ..agent.records import Audit
        from ..agent.sandbox import Sandbox

        ctx = ls.agent_loop.ctx if ls.agent_loop else SessionContext(ls.root, ls.root, ls.engine.settings)
        gate = Gate(Sandbox(ls.root), EditorHost(ls), Audit(ls.root, ls.agent_loop.transcript.session
                                                              if ls.agent_loop else "editor"),
                    remember=lambda f: remember(ctx.memory_index(), f, ls.engine.settings.today))
        res = await gate.run(Call("editor", "remember", {"fact": fact}), 0)
        ls.window_show_message(T.ShowMessageParams(type=T.MessageType.Error if res.is_error else T.MessageType.Info,
                                                   message=f"{PREFIX}{res.text}"))
        return {"remembered": not res.is_error, "detail": res.text}

    @server.command(LEDGER)
    async def ledger_cmd(ls: CtxlsServer, *args):
        loop = ls.agent_loop
        if loop is None:
            return _fail(ls, "no agent session is open")
        from ..agent.ledger import markdown
        from .actions import show_report

        text = markdown(loop.ledger, loop.prices, loop.policy.window, f"Session ledger {loop.transcript.session}")
        return await show_report(ls, f"ledger-{loop.transcript.session}.md", text)


async def run_ask(ls: CtxlsServer, path: Path, prompt: str, rng: Any) -> dict[str, Any]:
    start = path if path.is_dir() else path.parent
    task = _task_text(ls, path, prompt, rng)
    if _instruction_file(path, ls.root):  # what ctxls knows of its cost: the "before" of a redesign
        lens = await ls.in_thread(ls.engine.lens, path)
        if lens is not None:
            task += (f"\n\n(ctxls: {os.path.relpath(path, ls.root)} is {lens.tokens:,} tokens of instructions, "
                     f"loaded at startup in {lens.startup_dirs} directories and on touch in {lens.touch_dirs}.)")
    agent, problems = agent_settings(ls)
    for p in problems:
        ls.log(p, T.MessageType.Warning)
    progress = _Progress(ls)
    await progress.begin(f"{PREFIX}{prompt[:60]}")
    events = Events(on_text=progress.text, on_retry=progress.note, on_tool=lambda r: progress.note(
        f"{r.call.name}: {r.decision}"))
    loop = ls.agent_loop
    if loop is None:  # the editor's session stays open across asks until "Start a fresh session"
        try:
            loop = open_run(start, ls.root, ls.engine.settings, agent, EditorHost(ls), events=events)
        except RunError as exc:
            progress.end(str(exc))
            return _fail(ls, str(exc))
        ls.agent_loop = loop
    loop.events = events
    progress.cancel_to(asyncio.current_task())
    outcome = await loop.run(task)
    progress.end(outcome.detail)
    from .actions import show_report

    shown = await show_report(ls, f"agent-{outcome.session}.md", report_markdown(outcome, prompt))
    return {"session": outcome.session, "status": outcome.status, "detail": outcome.detail,
            "answer": outcome.answer, **({"uri": shown["uri"]} if "uri" in shown else {})}


def agent_settings(ls: CtxlsServer) -> tuple[AgentSettings, list[str]]:
    """`[agent]` of the workspace config, then the client's `agent` settings object."""
    base, problems = agent_settings_for(ls.root)
    raw = ls.merged_options().get("agent")
    if isinstance(raw, dict):
        base, more = AgentSettings.from_mapping(raw, base)
        problems += more
    elif raw is not None:
        problems.append("ctxls settings: `agent` must be an object")
    return base, problems


def _task_text(ls: CtxlsServer, path: Path, prompt: str, rng: Any) -> str:
    rel = os.path.relpath(path, ls.root)
    if not isinstance(rng, dict):
        return f"{prompt}\n\n(The user is looking at {rel}.)"
    try:
        r = T.Range(T.Position(**rng["start"]), T.Position(**rng["end"]))
    except (KeyError, TypeError):
        return f"{prompt}\n\n(The user is looking at {rel}.)"
    (sl, sc), (el, ec) = from_position(ls, path, r.start), from_position(ls, path, r.end)
    lines = ls.lines_of(path)
    if el >= len(lines):
        el, ec = len(lines) - 1, len(lines[-1]) if lines else 0
    if (sl, sc) == (el, ec):
        return f"{prompt}\n\n(The user is looking at {rel}, line {sl + 1}.)"
    part = lines[sl:el + 1]
    if part:
        part[-1] = part[-1][:ec] if sl != el else part[-1][sc:ec]
        if sl != el:
            part[0] = part[0][sc:]
    body = "\n".join(part)
    return f"{prompt}\n\nThe user selected {rel}, lines {sl + 1}-{el + 1}:\n```\n{body}\n```"


def report_markdown(outcome: Outcome, prompt: str) -> str:
    out = [f"# ctxls agent: {prompt.splitlines()[0][:80]}", "",
           f"Session `{outcome.session}` · {outcome.status} ({outcome.detail})", "", "## Answer", "",
           outcome.answer or "(no answer)", "", "## Token ledger", "",
           "| turn | input | cache write | cache read | output | model s | ctxls ms |", "|---|---|---|---|---|---|---|"]
    for t in outcome.turns:
        u = t.usage
        out.append(f"| {t.turn} | {u['input_tokens']:,} | {u['cache_creation_input_tokens']:,} | "
                   f"{u['cache_read_input_tokens']:,} | {u['output_tokens']:,} | {t.provider_s:.2f} | "
                   f"{t.loop_s * 1000:.1f} |")
    return "\n".join(out) + "\n"


def _fail(ls: CtxlsServer, message: str) -> dict[str, Any]:
    ls.window_show_message(T.ShowMessageParams(type=T.MessageType.Error, message=f"{PREFIX}{message}"))
    return {"status": "error", "detail": message}


class _Progress:
    """Work-done progress of one run (nothing when the client has none); its cancel button cancels the run."""

    def __init__(self, ls: CtxlsServer) -> None:
        self.ls = ls
        self.token: str | None = None
        self.buffer = ""
        self.last = 0.0

    async def begin(self, title: str) -> None:
        if not get_capability(self.ls.client_capabilities, "window.work_done_progress", False):
            return
        token = f"ctxls-agent-{uuid.uuid4()}"
        try:
            await self.ls.work_done_progress.create_async(token)
        except Exception:  # noqa: BLE001 - progress is a courtesy
            return
        self.token = token
        self.ls.work_done_progress.begin(token, T.WorkDoneProgressBegin(title=title, cancellable=True,
                                                                       message="starting"))

    def cancel_to(self, task: asyncio.Task | None) -> None:
        fut = self.ls.work_done_progress.tokens.get(self.token) if self.token else None
        if fut is None or task is None:
            return
        loop = asyncio.get_running_loop()
        fut.add_done_callback(lambda f: loop.call_soon_threadsafe(task.cancel) if f.cancelled() else None)

    def text(self, delta: str) -> None:
        self.buffer = (self.buffer + delta)[-200:]
        now = time.monotonic()
        if self.token and now - self.last > 0.1:
            self.last = now
            self.ls.work_done_progress.report(self.token, T.WorkDoneProgressReport(
                message=" ".join(self.buffer.split())[-120:]))

    def note(self, message: str) -> None:
        if self.token:
            self.ls.work_done_progress.report(self.token, T.WorkDoneProgressReport(message=message))

    def end(self, message: str) -> None:
        if self.token:
            self.ls.work_done_progress.end(self.token, T.WorkDoneProgressEnd(message=message))


def code_actions(ls: CtxlsServer, params: T.CodeActionParams) -> list[T.CodeAction]:
    """The `ctxls agent: …` actions for a range of a document (called by actions.py's code-action handler)."""
    uri = params.text_document.uri
    path = ls.path_of(uri)
    if path is None or ls.root is None:
        return []
    rng = {"start": {"line": params.range.start.line, "character": params.range.start.character},
           "end": {"line": params.range.end.line, "character": params.range.end.character}}
    out = [_action("Ask about this selection…" if params.range.start != params.range.end else "Ask about this file…",
                   {"uri": uri, "range": rng})]
    rel = os.path.relpath(path, ls.root)
    for d in params.context.diagnostics:
        if d.source != SOURCE:
            continue
        if d.code == STALE:
            out.append(_action("Start a fresh session", {}, [d], T.CodeActionKind.QuickFix, NEW_SESSION))
            out.append(_action("Compact now", {}, [d], T.CodeActionKind.QuickFix, COMPACT))
            continue
        prompt = FIX_PROMPT.format(rel=rel, line=d.range.start.line + 1, code=d.code, message=d.message)
        r = {"start": {"line": d.range.start.line, "character": d.range.start.character},
             "end": {"line": d.range.end.line, "character": d.range.end.character}}
        out.append(_action(f"Fix this diagnostic ({d.code})", {"prompt": prompt, "uri": uri, "range": r},
                           [d], T.CodeActionKind.QuickFix))
    if ls.agent_loop is not None:  # the open session's own actions
        out.append(_action("Compact session", {}, kind=T.CodeActionKind.Source, command=COMPACT))
        out.append(_action("Show session ledger", {}, kind=T.CodeActionKind.Source, command=LEDGER))
    if params.range.start != params.range.end:
        out.append(_action("Remember this…", {"uri": uri, "range": rng}, kind=T.CodeActionKind.Source,
                           command=REMEMBER))
    if _instruction_file(path, ls.root):
        out.append(_action(f"Redesign this {path.name}", {"prompt": REDESIGN_PROMPT.format(name=rel), "uri": uri},
                           kind=T.CodeActionKind.RefactorRewrite))
    return out


def _instruction_file(path: Path, root: Path) -> bool:
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return False
    return classify(parts) is not None


def _action(title: str, arg: dict[str, Any], diagnostics=None, kind=T.CodeActionKind.Refactor,
            command: str = ASK) -> T.CodeAction:
    return T.CodeAction(title=PREFIX + title, kind=kind, diagnostics=diagnostics,
                        command=T.Command(title=PREFIX + title, command=command, arguments=[arg]))


# ---------------------------------------------------------------------- the stale-session warning
def session_findings(ls: CtxlsServer) -> dict[Path, list[Finding]]:
    """While an agent session is open: each instruction file it loaded whose text changed since (in the editor
    or on disk) gets a finding saying what the session holds and what the edit will do."""
    loop = ls.agent_loop
    if loop is None or ls.engine is None:
        return {}
    out: dict[Path, list[Finding]] = {}
    size = loop.ledger[-1].usage if loop.ledger else None
    cached = (size.get("cache_read_input_tokens", 0) + size.get("cache_creation_input_tokens", 0)) if size else 0
    for path, (turn, text, tokens) in loop.ctx.loaded.items():
        now = ls.engine.fs.read(path).text
        if text is None or now == text:
            continue
        first = (now or "").split("\n", 1)[0]
        msg = (f"The open agent session ({loop.transcript.session}) holds this file as it was at turn {turn}: your "
               f"edit takes effect after the next compaction or in a fresh session. Re-reading it now would add a "
               f"second, competing copy ({tokens:,} tokens) and rewrite about {cached:,} cached tokens.")
        out[path] = [Finding(STALE, "warning", path, Span(0, 0, 0, len(first)), msg)]
    return out


def refresh_session_diagnostics(ls: CtxlsServer) -> None:
    """Publish again (the stale-session findings are merged into every publish)."""
    from .diagnostics import republish

    ls.run_task(republish(ls))
