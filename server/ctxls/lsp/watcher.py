"""Watching the workspace and the auto-memory directory (which lives outside the workspace, so the editor
cannot watch it): a watchdog observer plus the client's didChangeWatchedFiles, both feeding one coalescing
queue.  A burst (a checkout touching 500 files) becomes one refresh; a change reported by both sources is
processed once (it is keyed by path and the file's mtime/size).  A directory's own "modified" event (its
list of names changed: a child appeared or went, and that child has its own event) is structural only when
names other than ignored directories changed: a build tool creating `node_modules/` or another engineer's
`ctxls check` writing `.ctxls/` at the root must not re-analyse the workspace."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

from lsprotocol import types as T

from ..core.discovery import SKIP_DIRS
from ..core.fs import list_kinds
from .server import CtxlsServer

log = logging.getLogger("ctxls.watch")

QUIET_S = 0.1
MAX_WAIT_S = 1.0
FULL_REFRESH_AT = 200


def _ignored(path: Path) -> bool:
    return any(part in SKIP_DIRS for part in path.parts)


def _says_where_head_is(path: Path) -> bool:
    """A `.git` itself, its HEAD, packed-refs, reftable or a branch ref: a commit, checkout or `git init`."""
    parts = path.parts
    if ".git" not in parts:
        return False
    rest = parts[parts.index(".git") + 1:]
    return (not rest or rest[-1] in ("HEAD", "packed-refs", "tables.list")
            or rest[:2] == ("refs", "heads") or rest[:1] == ("reftable",))


def _stamp(path: Path):
    try:
        st = os.stat(path)
        return (st.st_mtime_ns, st.st_size)
    except OSError:
        return None


def listing_changed(fs, d: Path) -> bool:
    """Whether directory ``d`` now holds other names (or kinds) than the snapshot knows, ignored directories
    aside. When only those changed, the snapshot takes the new listing and nothing needs analysing again."""
    now = list_kinds(d)
    if now is None:
        return True
    before = fs.listing(d)
    if now == before:
        return False
    changed = {n for n in now.keys() | before.keys() if now.get(n) != before.get(n)}
    if any(n not in SKIP_DIRS for n in changed):
        return True
    fs.prime_listing(d, now)
    return False


class Coalescer:
    def __init__(self, ls: CtxlsServer, loop: asyncio.AbstractEventLoop) -> None:
        self.ls = ls
        self.loop = loop
        self.pending: dict[Path, bool] = {}
        self.pending_dirs: set[Path] = set()
        """Directories whose list of names changed (see `listing_changed`)."""
        self.seen: dict[Path, object] = {}
        self.task: asyncio.Task | None = None
        self.first_at: float | None = None
        self.batches = 0
        self.events = 0
        self.git = False
        """A file that says where git's HEAD is changed (see `_says_where_head_is`)."""

    def add(self, path: Path, structural: bool) -> None:
        """Thread-safe entry point."""
        self.loop.call_soon_threadsafe(self.record, path, structural)

    def add_dir(self, path: Path) -> None:
        """Thread-safe: directory ``path`` reports that its list of names changed."""
        self.loop.call_soon_threadsafe(self.record, path, False, True)

    def record(self, path: Path, structural: bool, listing: bool = False) -> None:
        """On the event loop: one file event (a changed ``path``, or with ``listing`` a directory whose names
        changed)."""
        if _ignored(path):
            if _says_where_head_is(path):
                self.git = True
                if self.task is None or self.task.done():
                    self.task = self.ls.run_task(self._flush_later())
            return
        self.events += 1
        if listing:
            self.pending_dirs.add(path)
        else:
            self.pending[path] = self.pending.get(path, False) or structural
        if self.first_at is None:
            self.first_at = self.loop.time()
        if self.task is None or self.task.done():
            self.task = self.ls.run_task(self._flush_later())

    async def _flush_later(self) -> None:
        while True:
            n = len(self.pending) + len(self.pending_dirs)
            await asyncio.sleep(QUIET_S)
            if (len(self.pending) + len(self.pending_dirs) == n
                    or self.loop.time() - (self.first_at or 0) > MAX_WAIT_S):
                break
        batch, self.pending, self.first_at = self.pending, {}, None
        dirs, self.pending_dirs = self.pending_dirs, set()
        git, self.git = self.git, False
        engine = self.ls.engine
        if engine is None:
            return
        from .diagnostics import schedule_check

        due = git and engine.git_changed()  # a commit or checkout: the next check runs in full
        for d in dirs:
            if not batch.get(d) and listing_changed(engine.fs, d):
                batch[d] = True
        if not batch:
            if due:
                schedule_check(self.ls, delay=0)
            return
        work = []
        for path, structural in batch.items():
            stamp = _stamp(path)
            if not structural and stamp is not None and self.seen.get(path) == stamp:
                continue  # already processed this exact version (reported by both sources)
            self.seen[path] = stamp
            work.append((path, structural or stamp is None))
        if not work:
            if due:
                schedule_check(self.ls, delay=0)
            return
        self.batches += 1
        log.debug("file events: %s", [(str(p), s) for p, s in work[:5]])
        if len(work) >= FULL_REFRESH_AT:
            engine.fs.invalidate()
            engine.file_changed(self.ls.root, structural=True)
        else:
            for path, structural in work:
                if not self.ls.config_changed(path):
                    engine.file_changed(path, structural)
        schedule_check(self.ls, delay=0)


def register(server: CtxlsServer) -> None:
    server.coalescer = None
    server.client_watches = False

    @server.feature(T.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: CtxlsServer, params: T.DidChangeWatchedFilesParams) -> None:
        if ls.coalescer is None:
            return
        for ev in params.changes:
            path = ls.path_of(ev.uri)
            if path is not None:
                ls.coalescer.record(path, ev.type != T.FileChangeType.Changed)


def start_watcher(ls: CtxlsServer) -> None:
    loop = asyncio.get_running_loop()
    ls.coalescer = Coalescer(ls, loop)
    try:
        from watchdog import events as E
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer
    except ImportError:  # pragma: no cover - watchdog is a dependency
        ls.log("watchdog is not installed: only client file events are used", T.MessageType.Warning)
        return

    coalescer = ls.coalescer

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event):
            if event.event_type in ("opened", "closed", "closed_no_write"):
                return
            if event.is_directory and event.event_type == "modified":
                coalescer.add_dir(Path(os.fsdecode(event.src_path)))
                return
            structural = event.event_type in ("created", "deleted", "moved") or event.is_directory
            coalescer.add(Path(os.fsdecode(event.src_path)), structural)
            dest = getattr(event, "dest_path", None)
            if dest:
                coalescer.add(Path(os.fsdecode(dest)), True)

    observer = Observer()
    watched = []
    for d in {ls.root, memory_dir(ls)}:
        if d is not None and d.is_dir():
            try:
                # Changes only: without a filter, inotify reports every open and close of every file and
                # directory under the workspace, and each check reads hundreds of them (as git does, in .git).
                observer.schedule(Handler(), str(d), recursive=True, event_filter=_change_events(E))
                watched.append(d)
            except OSError as exc:
                ls.log(f"cannot watch {d}: {exc}", T.MessageType.Warning)
    observer.daemon = True
    try:
        observer.start()
    except Exception as exc:
        ls.log(f"file watcher failed to start: {exc}", T.MessageType.Warning)
        return
    ls.watcher = observer


def _change_events(E) -> list:
    return [E.FileCreatedEvent, E.DirCreatedEvent, E.FileDeletedEvent, E.DirDeletedEvent, E.FileModifiedEvent,
            E.DirModifiedEvent, E.FileMovedEvent, E.DirMovedEvent]


def memory_dir(ls: CtxlsServer) -> Path | None:
    if ls.engine is None:
        return None
    from ..core.loader import auto_memory_dir

    return auto_memory_dir(ls.root, ls.engine.settings, ls.engine.fs)


def stop_watcher(ls: CtxlsServer) -> None:
    obs = ls.watcher
    ls.watcher = None
    if obs is not None:
        try:
            obs.stop()
            obs.join(timeout=2)
        except Exception:
            pass
