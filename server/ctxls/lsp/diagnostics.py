"""Diagnostics: push (publishDiagnostics) or pull (textDocument/diagnostic, workspace/diagnostic), chosen by
the client's capabilities. Document changes are debounced; every check re-diagnoses the whole workspace, so
cross-file findings (a duplicate in a child when the parent changes) follow, and only changed files are
republished. In push mode the worker thread that ran the check also works out what changed and encodes every
publishDiagnostics message; the event loop then writes them all at once."""

from __future__ import annotations

import asyncio
import gc
import inspect
import json
import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
import operator
from operator import attrgetter
from pathlib import Path

from lsprotocol import types as T
from pygls.capabilities import get_capability

from .convert import diagnostic_dict, path_to_uri, to_diagnostic
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
    server.published = {}
    server.uris = {}
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
        if path is None or ls.engine is None:
            return T.FullDocumentDiagnosticReport(items=[], result_id="0")
        findings = all_findings(ls, ls.engine)
        result_id = result_id_of(ls, findings)
        if params.previous_result_id == result_id:
            return T.UnchangedDocumentDiagnosticReport(result_id=result_id)
        items = [to_diagnostic(ls, f) for f in findings.get(path, [])]
        return T.FullDocumentDiagnosticReport(items=items, result_id=result_id)

    @server.feature(T.WORKSPACE_DIAGNOSTIC)
    async def workspace_diagnostic(ls: CtxlsServer, params: T.WorkspaceDiagnosticParams):
        await ls.wait_ready()
        await ensure_checked(ls)
        items = []
        if ls.engine is not None:
            merged = all_findings(ls, ls.engine)
            rid = result_id_of(ls, merged)
            for path, findings in sorted(merged.items()):
                items.append(T.WorkspaceFullDocumentDiagnosticReport(
                    uri=path_to_uri(path), items=[to_diagnostic(ls, f) for f in findings], result_id=rid))
        return T.WorkspaceDiagnosticReport(items=items)


def all_findings(ls: CtxlsServer, engine) -> dict:
    """The engine's findings, plus the stale-session warnings while an agent session is open (lsp/agent.py)."""
    if ls.agent_loop is None:
        return engine.findings
    from .agent import session_findings

    extra = session_findings(ls)
    if not extra:
        return engine.findings
    merged = dict(engine.findings)
    for path, found in extra.items():
        merged[path] = list(merged.get(path, ())) + found
    return merged


async def republish(ls: CtxlsServer) -> None:
    """Publish again without a check (findings outside the engine changed: the stale-session warnings)."""
    if ls.engine is None:
        return
    async with ls._check_lock:
        plan = None if pull_mode(ls) else await ls.in_thread(plan_publish, ls, ls.engine)
        publish(ls, plan)


def result_id_of(ls: CtxlsServer, findings: dict) -> str:
    """The engine's generation, and which files carry a stale-session warning (they change between checks)."""
    stale = sorted(str(p) for p, fs in findings.items() if any(f.code == "CTX900" for f in fs))
    return f"{ls.engine.generation}" + (f"-s{abs(hash(tuple(stale))) % 10 ** 8}" if stale else "")


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
        with gc_deferred(not engine.full_check_pending):
            plan = await asyncio.shield(ls.in_thread(check_and_plan, ls, engine))
            log.debug("check of generation %s done (%s); now %s", gen, engine.last_check_mode, engine.generation)
            ls.checks_run += 1
            ls._checked_generation = gen
            for e in engine.errors:
                ls.log(f"rule skipped after an internal error: {e}")
            t = time.perf_counter()
            publish(ls, plan)
            from .context import checked

            checked(ls, gen)
            if plan is not None:
                log.debug("check %.1f ms, publish plan %.1f ms (%d files), sent in %.1f ms",
                          plan.timings[0] * 1000, plan.timings[1] * 1000, len(plan.bodies),
                          (time.perf_counter() - t) * 1000)


@contextmanager
def gc_deferred(defer: bool = True):
    """The cyclic garbage collector waits while an incremental check runs and its diagnostics are sent: a
    re-check allocates enough to trigger dozens of young collections (and now and then an old one) on the way
    to the client; they run right after instead, when the client already has the diagnostics. (Reference
    counting still frees everything that is not in a cycle. A full check, which allocates far more, is left
    alone.)"""
    was = gc.isenabled()
    if not defer or not was:
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


# What identifies a published diagnostic (the file is the list's): when a file's findings match these, its
# diagnostics are not sent again.
_FINGERPRINT = attrgetter("span", "code", "message", "severity", "related")


def same_findings(old: list, new: list) -> bool:
    """Whether ``new`` would publish what ``old`` did. Most findings are the very same objects from check to
    check (rules keep what they found, and findings are never changed once reported): only the others are
    compared field by field."""
    if len(old) != len(new):
        return False
    if all(map(operator.is_, old, new)):
        return True
    return all(a is b or _FINGERPRINT(a) == _FINGERPRINT(b) for a, b in zip(old, new))


@dataclass
class Published:
    findings: list
    """The findings last published for the file."""
    text: str | None
    """The file's text they were converted against."""


@dataclass
class PublishPlan:
    bodies: list[str] = field(default_factory=list)
    """Encoded publishDiagnostics notifications."""
    updates: dict[str, Published | None] = field(default_factory=dict)
    """What `ls.published` becomes once they are sent (None: nothing published any more)."""
    timings: tuple[float, float] = (0.0, 0.0)
    """Seconds the check and the planning took (for the debug log)."""


def check_and_plan(ls: CtxlsServer, engine) -> PublishPlan | None:
    """Worker thread: run the check and, in push mode, prepare the publishes."""
    t0 = time.perf_counter()
    engine.check()
    if pull_mode(ls):
        return None
    t1 = time.perf_counter()
    plan = plan_publish(ls, engine)
    plan.timings = (t1 - t0, time.perf_counter() - t1)
    return plan


def uri_of(ls: CtxlsServer, path: Path) -> str:
    got = ls.uris.get(path)
    if got is None:
        got = ls.uris[path] = path_to_uri(path)
    return got


def plan_publish(ls: CtxlsServer, engine) -> PublishPlan:
    """The publishDiagnostics notifications for files whose findings changed since the last publish, and for
    files that have none any more, encoded (runs in the worker thread; `ls.published` changes only on the
    event loop, in `publish`, so a plan that is never sent leaves it describing what the client has).

    A file's diagnostics are converted again when its findings differ in span, code, message or severity, or
    when its text changed and is not ASCII (its ranges in UTF-16 units may have moved with unchanged spans)."""
    plan = PublishPlan()
    published = ls.published
    encoding = ls.workspace.position_codec.encoding
    lines: dict[Path, list[str]] = {}

    def lines_of(p: Path) -> list[str]:
        got = lines.get(p)
        if got is None:
            got = lines[p] = (engine.fs.read(p).text or "").split("\n")
        return got

    fs = engine.fs
    current: set[str] = set()
    for path, findings in all_findings(ls, engine).items():
        uri = uri_of(ls, path)
        current.add(uri)
        prev = published.get(uri)
        text = fs.read(path).text
        if prev is not None and same_findings(prev.findings, findings):
            # (ASCII on both sides: the published ranges are the same in any encoding, and still right)
            if prev.text is text or (text is not None and text.isascii() and prev.text is not None
                                     and prev.text.isascii()):
                if prev.findings is not findings or prev.text is not text:
                    plan.updates[uri] = Published(findings, text)  # compared by identity next time
                continue
        diags = [diagnostic_dict(f, encoding, lines_of, lambda p: uri_of(ls, p)) for f in findings]
        plan.bodies.append(_notification(uri, diags))
        plan.updates[uri] = Published(findings, text)
    for uri in published:
        if uri not in current:
            plan.bodies.append(_notification(uri, []))
            plan.updates[uri] = None
    return plan


def _notification(uri: str, diagnostics: list[dict]) -> str:
    return json.dumps({"jsonrpc": "2.0", "method": T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
                       "params": {"uri": uri, "diagnostics": diagnostics}}, separators=(",", ":"),
                      check_circular=False)


def publish(ls: CtxlsServer, plan: PublishPlan | None) -> None:
    """Push the planned diagnostics (one write for all of them), or ask a pull client to pull again."""
    if plan is None:
        if get_capability(ls.client_capabilities, "workspace.diagnostics.refresh_support", False):
            ls.workspace_diagnostic_refresh(None)
        return
    send_encoded(ls, plan.bodies)
    for uri, got in plan.updates.items():
        if got is None:
            ls.published.pop(uri, None)
        else:
            ls.published[uri] = got


def send_encoded(ls: CtxlsServer, bodies: list[str]) -> None:
    """Write JSON-RPC messages encoded by `json.dumps` (ASCII), framed as pygls frames what it sends, in one
    write when the transport frames with headers (stdio, TCP)."""
    proto = ls.protocol
    writer = proto.writer
    if not bodies or writer is None:
        return
    if getattr(proto, "_include_headers", True):
        head = f"Content-Type: {proto.CONTENT_TYPE}; charset={proto.CHARSET}\r\n\r\n"
        chunks = ["".join(f"Content-Length: {len(b)}\r\n{head}{b}" for b in bodies)]
    else:  # a message per write (WebSocket)
        chunks = bodies
    for chunk in chunks:
        res = writer.write(chunk.encode(proto.CHARSET))
        if inspect.isawaitable(res):
            asyncio.ensure_future(res)
