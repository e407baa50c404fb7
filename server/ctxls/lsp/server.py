"""The ctxls language server: state, lifecycle and the glue between features and the core engine.

Each feature lives in its own module with a `register(server)` function; `create_server()` wires them in
order.  CPU work (the engine) runs in a worker thread so the event loop keeps answering; the engine's own
lock serialises it.  Logs go to stderr and `window/logMessage`, never stdout (stdout is the protocol stream).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path
from typing import Any, Callable

from lsprotocol import types as T
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..core.check import CheckConfig
from ..core.engine import Engine
from ..core.settings import Settings
from .convert import uri_to_path

log = logging.getLogger("ctxls.lsp")


class CtxlsServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("ctxls", __version__, text_document_sync_kind=T.TextDocumentSyncKind.Incremental)
        self.engine: Engine | None = None
        self.root: Path | None = None
        self.init_options: dict[str, Any] = {}
        self.client_settings: dict[str, Any] = {}
        self.tasks: set[asyncio.Task] = set()
        self.debounce_s = 0.05
        self.watcher = None
        self.diagnostic_versions: dict[str, int] = {}
        self.home_override: Path | None = None
        self._ready: asyncio.Event | None = None
        self.client_name: str | None = None
        """`clientInfo.name` of the initialize request."""
        self.agent_task: asyncio.Task | None = None
        """The agent run in progress (one at a time)."""
        self.agent_loop = None
        """The editor's open agent session (an AgentLoop), continued by each ask until a fresh one starts."""
        # The check scheduler's state (lsp/diagnostics.py runs it; the server holds it).
        self.check_task: asyncio.Task | None = None
        """The scheduled or running check."""
        self.check_sleeping = False
        """Whether `check_task` is still in its debounce sleep (a new edit then just extends the burst)."""
        self.checks_run = 0
        self.last_schedule = float("-inf")
        """When the last check was scheduled (loop time): bursts are debounced."""
        self.check_lock = asyncio.Lock()
        """One check or publish at a time."""
        self.checked_generation = -1
        """The engine generation the last check saw."""
        self.published: dict[str, Any] = {}
        """URI -> what was last published for it (push model)."""
        self.uris: dict[Path, str] = {}
        """Path -> its URI (built once)."""

    # ------------------------------------------------------------------ readiness
    @property
    def ready_event(self) -> asyncio.Event:
        if self._ready is None:
            self._ready = asyncio.Event()
        return self._ready

    async def wait_ready(self, timeout: float = 30.0) -> bool:
        """Requests that arrive while the initial scan runs wait for it instead of answering empty."""
        if self.ready_event.is_set():
            return True
        try:
            await asyncio.wait_for(self.ready_event.wait(), timeout)
            return True
        except asyncio.TimeoutError:
            return False

    # ------------------------------------------------------------------ helpers
    def run_task(self, coro) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)

        def done(t: asyncio.Task) -> None:
            self.tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                log.error("background task failed", exc_info=t.exception())

        task.add_done_callback(done)
        return task

    async def in_thread(self, fn: Callable, *args):
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    def path_of(self, uri: str) -> Path | None:
        p = uri_to_path(uri)
        if p is None or self.root is None:
            return None
        return Path(os.path.abspath(p))

    def lines_of(self, path: Path) -> list[str]:
        """Current text of a file as lines (the editor buffer when open)."""
        if self.engine is None:
            return []
        src = self.engine.fs.read(path)
        return (src.text or "").split("\n")

    def log(self, message: str, level: T.MessageType = T.MessageType.Log) -> None:
        print(f"ctxls: {message}", file=sys.stderr, flush=True)
        try:
            self.window_log_message(T.LogMessageParams(type=level, message=message))
        except Exception:
            pass

    def report_server_error(self, error: Exception, source) -> None:  # no popups for internal errors
        log.error("internal error", exc_info=error)
        self.log(f"internal error: {type(error).__name__}: {error}", T.MessageType.Error)

    # ------------------------------------------------------------------ configuration
    def build_settings(self, raw: dict[str, Any]) -> tuple[Settings, CheckConfig, list[str]]:
        """Defaults < .ctxls.toml < initializationOptions < workspace/configuration (section `ctxls`)."""
        from ..core.config import apply_agent_settings, check_config_for, settings_for

        assert self.root is not None
        settings, problems = settings_for(self.root)
        config, more = check_config_for(self.root)
        problems += more
        flat = {k: v for k, v in raw.items() if k not in ("check", "agent")}  # (`agent`: lsp/agent.py reads it)
        if self.home_override is not None and "home" not in flat:
            flat["home"] = str(self.home_override)
        settings, errs = Settings.from_mapping(flat, settings)
        problems += [f"ctxls settings: {e}" for e in errs]
        settings, errs = apply_agent_settings(settings, self.root)
        problems += errs
        check = raw.get("check")
        if isinstance(check, dict):
            import dataclasses

            extra, errs = CheckConfig.from_mapping(check)
            problems += [f"ctxls settings: {e}" for e in errs]
            changed = {f.name: getattr(extra, f.name) for f in dataclasses.fields(extra)
                       if f.name in {k.replace('-', '_') for k in check}}
            config = dataclasses.replace(config, **changed)
        elif check is not None:
            problems.append("ctxls settings: `check` must be an object")
        return settings, config, problems

    def config_changed(self, path: Path) -> bool:
        """Re-read the configuration when the workspace's `.ctxls.toml` or `pyproject.toml`, or Claude Code's
        project settings (`.claude/settings.json`, `.claude/settings.local.json`), changed on disk."""
        if self.root is None:
            return False
        if not ((path.parent == self.root and path.name in (".ctxls.toml", "pyproject.toml")) or
                (path.parent == self.root / ".claude" and path.name in ("settings.json", "settings.local.json"))):
            return False
        self.apply_configuration()
        return True

    def merged_options(self) -> dict[str, Any]:
        out = dict(self.init_options)
        out.update(self.client_settings)
        return out

    def apply_configuration(self) -> None:
        settings, config, problems = self.build_settings(self.merged_options())
        for p in problems:
            self.window_show_message(T.ShowMessageParams(type=T.MessageType.Warning, message=p))
            self.log(p, T.MessageType.Warning)
        if self.engine is None:
            self.engine = Engine(self.root, settings, config)
        else:
            self.engine.reconfigure(settings, config)


def create_server() -> CtxlsServer:
    from . import actions, agent, agents, context, diagnostics, hover, lenses, lifecycle, watcher

    server = CtxlsServer()
    for module in (lifecycle, diagnostics, hover, lenses, actions, agent, agents, context, watcher):
        module.register(server)
    return server


def main(tcp: tuple[str, int] | None = None, home: Path | None = None) -> int:
    """Serve on stdio, or on TCP at ``(host, port)`` (the CLI parsed and checked it). A port that cannot be
    bound raises OSError before anything is served."""
    logging.basicConfig(level=os.environ.get("CTXLS_LOG", "WARNING"), format="ctxls %(levelname)s %(message)s")
    if "CTXLS_LOG" not in os.environ:  # cancellations of already-answered pulls are routine, not warnings
        logging.getLogger("pygls.protocol.json_rpc").setLevel(logging.ERROR)
    server = create_server()
    server.home_override = home
    if tcp:
        server.start_tcp(*tcp)
    else:
        server.start_io()
    return 0
