"""Diagnostics: push (publishDiagnostics) or pull (textDocument/diagnostic, workspace/diagnostic), chosen by
the client's capabilities. Document changes are debounced; every check re-diagnoses the whole workspace, so
cross-file findings (a duplicate in a child when the parent changes) follow, and only changed files are
republished."""

from __future__ import annotations

import asyncio
import logging

from lsprotocol import types as T
from pygls.capabilities import get_capability

from .convert import path_to_uri, to_diagnostic
from .server import CtxlsServer

log = logging.getLogger("ctxls.diagnostics")

IDENTIFIER = "ctxls"


def pull_mode(ls: CtxlsServer) -> bool:
    """Pull only when the client can pull *and* be told to pull again (workspace/diagnostic/refresh):
    otherwise changes made on disk would never reach it (Neovim 0.11/0.12 pull without refresh)."""
    caps = ls.client_capabilities
    return (get_capability(caps, "text_document.diagnostic", None) is not None
            and bool(get_capability(caps, "workspace.diagnostics.refresh_support", False)))


def drop_pull_features(ls: CtxlsServer) -> None:
    """Called from initialize, before capabilities are built: a client that will be pushed to must not also be
    offered pull diagnostics, or it shows every diagnostic twice."""
    if not pull_mode(ls):
        for method in (T.TEXT_DOCUMENT_DIAGNOSTIC, T.WORKSPACE_DIAGNOSTIC):
            ls.protocol.fm.features.pop(method, None)
            ls.protocol.fm.feature_options.pop(method, None)


def register(server: CtxlsServer) -> None:
    server._check_task = None
    server._check_sleeping = False
    server.checks_run = 0
    server._last_schedule = float("-inf")
    server.published_keys = {}
    server._check_lock = asyncio.Lock()
    server._checked_generation = -1

    @server.feature(T.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: CtxlsServer, params: T.DidOpenTextDocumentParams) -> None:
        buffer_changed(ls, params.text_document.uri, params.text_document.text)

    @server.feature(T.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: CtxlsServer, params: T.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        buffer_changed(ls, uri, ls.workspace.get_text_document(uri).source)

    @server.feature(T.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: CtxlsServer, params: T.DidSaveTextDocumentParams) -> None:
        path = ls.path_of(params.text_document.uri)
        if path is None or ls.engine is None:
            return
        if ls.config_changed(path):
            schedule_check(ls, delay=0)
        elif is_instruction(ls, path):
            ls.engine.file_changed(path, structural=False)
            schedule_check(ls)

    @server.feature(T.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: CtxlsServer, params: T.DidCloseTextDocumentParams) -> None:
        buffer_changed(ls, params.text_document.uri, None)  # back to what is on disk

    @server.feature(T.TEXT_DOCUMENT_DIAGNOSTIC,
                    T.DiagnosticOptions(identifier=IDENTIFIER, inter_file_dependencies=True,
                                        workspace_diagnostics=True))
    async def document_diagnostic(ls: CtxlsServer, params: T.DocumentDiagnosticParams):
        await ls.wait_ready()
        await ensure_checked(ls)
        path = ls.path_of(params.text_document.uri)
        result_id = str(ls.engine.generation if ls.engine else 0)
        if path is None or ls.engine is None:
            return T.FullDocumentDiagnosticReport(items=[], result_id=result_id)
        if params.previous_result_id == result_id:
            return T.UnchangedDocumentDiagnosticReport(result_id=result_id)
        items = [to_diagnostic(ls, f) for f in ls.engine.findings.get(path, [])]
        return T.FullDocumentDiagnosticReport(items=items, result_id=result_id)

    @server.feature(T.WORKSPACE_DIAGNOSTIC)
    async def workspace_diagnostic(ls: CtxlsServer, params: T.WorkspaceDiagnosticParams):
        await ls.wait_ready()
        await ensure_checked(ls)
        items = []
        if ls.engine is not None:
            rid = str(ls.engine.generation)
            for path, findings in sorted(ls.engine.findings.items()):
                items.append(T.WorkspaceFullDocumentDiagnosticReport(
                    uri=path_to_uri(path), items=[to_diagnostic(ls, f) for f in findings], result_id=rid))
        return T.WorkspaceDiagnosticReport(items=items)


def buffer_changed(ls: CtxlsServer, uri: str, text: str | None) -> None:
    """An editor buffer opened, changed or closed (None): the engine sees it at once; a check follows when
    the file can change findings."""
    path = ls.path_of(uri)
    if path is None or ls.engine is None:
        return
    ls.engine.set_buffer(path, text)
    if is_instruction(ls, path):
        schedule_check(ls)


def is_instruction(ls: CtxlsServer, path) -> bool:
    """Whether edits to ``path`` can change any finding (source files only matter for hover)."""
    return ls.engine is not None and ls.engine.affects_analysis(path)


def schedule_check(ls: CtxlsServer, delay: float | None = None) -> None:
    """Debounce: a burst of edits or file events becomes one check. A check already running is never
    cancelled (its result would be lost): it finishes, publishes, and the loop checks again if the state
    moved on meanwhile."""
    loop = asyncio.get_running_loop()
    now = loop.time()
    if delay is None:
        # leading edge: an isolated edit is checked at once; edits that follow each other within the debounce
        # interval (typing) wait for the burst to end
        delay = ls.debounce_s if now - ls._last_schedule < ls.debounce_s else 0.0
    ls._last_schedule = now
    task = ls._check_task
    if task is not None and not task.done():
        if not ls._check_sleeping:
            return  # the running loop below sees the new generation
        task.cancel()
        delay = max(delay, ls.debounce_s)

    async def later():
        ls._check_sleeping = True
        try:
            await asyncio.sleep(delay)
        finally:
            ls._check_sleeping = False
        while ls.engine is not None and ls._checked_generation != ls.engine.generation:
            await run_check(ls)

    ls._check_task = ls.run_task(later())


async def ensure_checked(ls: CtxlsServer) -> None:
    if ls.engine is not None and ls._checked_generation != ls.engine.generation:
        await run_check(ls)


async def run_check(ls: CtxlsServer) -> None:
    if ls.engine is None:
        return
    async with ls._check_lock:
        engine = ls.engine
        gen = engine.generation
        if ls._checked_generation == gen:
            return
        await asyncio.shield(ls.in_thread(engine.check))
        log.debug("check of generation %s done (%s); now %s", gen, engine.last_check_mode, engine.generation)
        ls.checks_run += 1
        ls._checked_generation = gen
        for e in engine.errors:
            ls.log(f"rule skipped after an internal error: {e}")
        publish(ls)


def publish(ls: CtxlsServer) -> None:
    """Push the diagnostics of files whose findings changed since the last publish (and clear vanished ones);
    findings are converted only for those files."""
    engine = ls.engine
    if pull_mode(ls):
        if get_capability(ls.client_capabilities, "workspace.diagnostics.refresh_support", False):
            ls.workspace_diagnostic_refresh(None)
        return
    current = {path_to_uri(p): (p, fs) for p, fs in engine.findings.items()}
    for uri in set(ls.published_keys) | set(current):
        path, findings = current.get(uri, (None, []))
        keys = tuple(f.key() for f in findings)
        if ls.published_keys.get(uri, ()) == keys:
            continue
        lines = ls.lines_of(path) if path is not None else None
        diags = [to_diagnostic(ls, f, lines) for f in findings]
        ls.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=uri, diagnostics=diags))
        if keys:
            ls.published_keys[uri] = keys
        else:
            ls.published_keys.pop(uri, None)
