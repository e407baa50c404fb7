"""Initialize, configuration, the initial scan (with work-done progress) and shutdown."""

from __future__ import annotations

import gc
import os
import uuid
from pathlib import Path

from lsprotocol import types as T
from pygls.capabilities import get_capability

from .convert import uri_to_path
from .server import CtxlsServer


def register(server: CtxlsServer) -> None:
    @server.feature(T.INITIALIZE)
    def initialize(ls: CtxlsServer, params: T.InitializeParams) -> None:
        root = None
        if params.workspace_folders:
            root = uri_to_path(params.workspace_folders[0].uri)
        if root is None and params.root_uri:
            root = uri_to_path(params.root_uri)
        if root is None and params.root_path:
            root = Path(params.root_path)
        ls.root = Path(os.path.abspath(root or os.getcwd()))
        ls.client_name = params.client_info.name if params.client_info else None
        from .diagnostics import drop_pull_features

        drop_pull_features(ls)
        opts = params.initialization_options
        ls.init_options = opts if isinstance(opts, dict) else {}
        if opts is not None and not isinstance(opts, dict):
            ls.log("initializationOptions must be an object; ignored", T.MessageType.Warning)

    @server.feature(T.INITIALIZED)
    async def initialized(ls: CtxlsServer, params: T.InitializedParams) -> None:
        try:
            await fetch_client_settings(ls)
            ls.apply_configuration()
            await register_file_watching(ls)
            # watch before scanning: a file that changes while the scan runs is queued, not missed
            from .watcher import start_watcher

            start_watcher(ls)
            await initial_scan(ls)
        finally:
            ls.ready_event.set()

    @server.feature(T.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: CtxlsServer, params: T.DidChangeConfigurationParams) -> None:
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get("ctxls"), dict):
            ls.client_settings = settings["ctxls"]
        else:
            await fetch_client_settings(ls)
        ls.apply_configuration()
        from .diagnostics import schedule_check

        schedule_check(ls, delay=0)

    @server.feature(T.SHUTDOWN)
    def shutdown(ls: CtxlsServer, params) -> None:
        from .watcher import stop_watcher

        stop_watcher(ls)


async def fetch_client_settings(ls: CtxlsServer) -> None:
    if not get_capability(ls.client_capabilities, "workspace.configuration", False):
        return
    try:
        got = await ls.workspace_configuration_async(T.ConfigurationParams(items=[
            T.ConfigurationItem(section="ctxls", scope_uri=ls.root.as_uri() if ls.root else None)]))
    except Exception as exc:
        ls.log(f"workspace/configuration failed: {exc}", T.MessageType.Warning)
        return
    value = got[0] if got else None
    if isinstance(value, dict):
        ls.client_settings = value
    elif value is not None:
        ls.log("workspace/configuration section `ctxls` must be an object; ignored", T.MessageType.Warning)


async def register_file_watching(ls: CtxlsServer) -> None:
    """Ask the client to send didChangeWatchedFiles for instruction files, when it can."""
    if not get_capability(ls.client_capabilities, "workspace.did_change_watched_files.dynamic_registration", False):
        return
    watchers = [T.FileSystemWatcher(glob_pattern=g) for g in
                ("**/CLAUDE.md", "**/CLAUDE.local.md", "**/AGENTS.md", "**/.claude/**", "**/.ctxls.toml")]
    try:
        await ls.client_register_capability_async(T.RegistrationParams(registrations=[T.Registration(
            id=str(uuid.uuid4()), method=T.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=T.DidChangeWatchedFilesRegistrationOptions(watchers=watchers))]))
        ls.client_watches = True
    except Exception as exc:
        ls.log(f"could not register file watching: {exc}", T.MessageType.Warning)


async def initial_scan(ls: CtxlsServer) -> None:
    token = None
    if get_capability(ls.client_capabilities, "window.work_done_progress", False):
        token = str(uuid.uuid4())
        try:
            await ls.work_done_progress.create_async(token)
            ls.work_done_progress.begin(token, T.WorkDoneProgressBegin(title="ctxls", message="scanning workspace",
                                                                       percentage=0, cancellable=False))
        except Exception:
            token = None
    engine = ls.engine
    index = await ls.in_thread(lambda: engine.index)
    if token:
        ls.work_done_progress.report(token, T.WorkDoneProgressReport(
            message=f"{len(index.dirs):,} directories, {len(index.sources):,} instruction files; checking",
            percentage=50))
    from .diagnostics import run_check

    await run_check(ls)
    # The initial analysis leaves hundreds of thousands of long-lived objects; moving them out of the cyclic
    # collector's reach keeps later collections (during every re-check) cheap.
    gc.collect()
    gc.freeze()
    if token:
        ls.work_done_progress.end(token, T.WorkDoneProgressEnd(message="ready"))
