"""A long-lived analysis of one workspace, for the language server: the same core, kept warm.

The engine owns one `FileSystem` snapshot (with editor buffers as overlays), the token cache, the workspace
index and the startup sessions computed so far.  Edits and file events invalidate only what depends on the
changed file: sessions that loaded it, the rule/skill sets when a `.claude/` file changes, the index when a
file appears or disappears.  Everything here is synchronous and pure apart from reading files; the LSP layer
runs it off the event loop.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from . import discovery as D
from .check import CheckConfig, Workspace, run_checks
from .findings import Finding
from .fs import FileSystem
from .loader import load_session
from .model import Session
from .settings import Settings
from .tokens import TokenCounter, factor_for


@dataclass
class FileLens:
    tokens: int
    startup_dirs: int
    touch_dirs: int
    kind: str


class Engine:
    def __init__(self, root: Path, settings: Settings | None = None, config: CheckConfig | None = None,
                 token_cache: dict | None = None) -> None:
        self.root = Path(os.path.abspath(root))
        self.settings = settings or Settings()
        self.config = config or CheckConfig()
        self.fs = FileSystem(max_bytes=self.settings.max_file_bytes)
        self.counter = TokenCounter(factor_for(self.settings.model, self.settings.token_factor),
                                    token_cache if token_cache is not None else {})
        self.lock = threading.RLock()
        """Held by a check; queries that must see one consistent state take it too."""
        self._mut = threading.RLock()
        """Held briefly by edits and file events."""
        self._index: D.WorkspaceIndex | None = None
        self._sessions: dict[Path, Session] = {}
        self._workspace: Workspace | None = None
        self.findings: dict[Path, list[Finding]] = {}
        self.errors: list[str] = []
        self.generation = 0
        self._full_check = True
        self._dirty_paths: set[Path] = set()
        self._file_findings: list[Finding] = []
        self._global_findings: list[Finding] = []
        self.last_check_mode = "full"

    # ------------------------------------------------------------------ configuration
    def reconfigure(self, settings: Settings, config: CheckConfig) -> None:
        with self.lock:
            self.settings, self.config = settings, config
            self.counter.factor = factor_for(settings.model, settings.token_factor)
            self.fs.invalidate()
            self._index = None
            self._sessions.clear()
            self._workspace = None
            self._full_check = True

    # ------------------------------------------------------------------ changes
    def affects_analysis(self, path: Path) -> bool:
        """Instruction, rule, skill, command, memory and config files (and anything they may import: any
        markdown or text file) can change findings; source files only matter when read."""
        if path.name in ("CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", ".ctxls.toml", "pyproject.toml"):
            return True
        if ".claude" in path.parts or path.suffix.lower() in (".md", ".markdown", ".mdx", ".txt"):
            return True
        return False

    def set_buffer(self, path: Path, text: str | None) -> None:
        """Edits never wait for a running check (they only take the short mutation lock); a check that read
        the old text is followed by another one, because the generation moved on."""
        with self._mut:
            if self.fs.set_overlay(path, text) and self.affects_analysis(path):
                self._dirty(path, structural=False)

    def file_changed(self, path: Path, structural: bool) -> None:
        """A file event from the watcher or the client (created/deleted = structural)."""
        with self._mut:
            if path in self.fs.overlays and not structural:
                return  # the editor's buffer is the truth for open files
            self.fs.changed(path, structural)
            self._dirty(path, structural)

    def _dirty(self, path: Path, structural: bool) -> None:
        self.generation += 1
        self._workspace = None
        if structural or path.name in (".ctxls.toml", "pyproject.toml"):
            self._full_check = True
        else:
            self._dirty_paths.add(path)
        if structural or ".claude" in path.parts or self._index is None:
            if structural:
                self._index = None
            self._sessions.clear()
            return
        real = self.fs.realpath(path)
        for d, s in list(self._sessions.items()):
            if any(b.source is not None and (b.source == path or self.fs.realpath(b.source) == real)
                   for b in s.blocks):
                del self._sessions[d]
            elif path.name in ("CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "MEMORY.md"):
                # a file that did not load before (empty, unreadable) may load now
                if str(d).startswith(str(path.parent)) or str(path.parent).startswith(str(d)):
                    del self._sessions[d]

    # ------------------------------------------------------------------ queries
    @property
    def index(self) -> D.WorkspaceIndex:
        with self.lock:
            if self._index is None:
                self._index = D.scan_workspace(self.root, self.settings)
                for d in self._index.dirs:
                    self.fs.listing(d)
            return self._index

    def session(self, start: Path, touched: list[Path] | tuple = ()) -> Session:
        """For hover: does not wait for a running check (the snapshot's caches are safe to share)."""
        if touched:
            return load_session(start, list(touched), self.settings, root=self.root, fs=self.fs,
                                counter=self.counter)
        s = self._sessions.get(start)
        if s is None:
            s = load_session(start, (), self.settings, root=self.root, fs=self.fs, counter=self.counter)
            self._sessions[start] = s
        return s

    def workspace(self) -> Workspace:
        with self.lock:
            if self._workspace is None:
                ws = Workspace(self.root, self.settings, self.config, fs=self.fs, counter=self.counter,
                               index=self.index)
                ws._sessions = self._sessions  # share: rules fill it, hovers reuse it
                self._workspace = ws
            return self._workspace

    def check(self) -> dict[Path, list[Finding]]:
        """Run the rules; returns findings grouped by file.

        After content-only edits, rules whose findings depend on one file at a time run for the edited files
        alone and keep their earlier findings elsewhere; workspace-scoped rules (duplicates, directory budgets,
        import graphs) always run in full. Structural changes and configuration changes run everything."""
        from .rules import WORKSPACE_SCOPED

        with self.lock:
            with self._mut:
                dirty, full = self._dirty_paths, self._full_check
                self._dirty_paths, self._full_check = set(), False
            ws = self.workspace()
            if full:
                res = run_checks(ws)
                self._file_findings = [f for f in res.findings if f.code not in WORKSPACE_SCOPED]
                self._global_findings = [f for f in res.findings if f.code in WORKSPACE_SCOPED]
                errors = res.errors
                self.last_check_mode = "full"
            else:
                glob = run_checks(ws, codes=lambda c: c in WORKSPACE_SCOPED)
                ws.scope = dirty
                try:
                    local = run_checks(ws, codes=lambda c: c not in WORKSPACE_SCOPED)
                finally:
                    ws.scope = None
                kept = [f for f in self._file_findings if f.path not in dirty]
                seen = {f.key() for f in kept}
                self._file_findings = kept + [f for f in local.findings if f.key() not in seen]
                self._global_findings = glob.findings
                errors = glob.errors + local.errors
                self.last_check_mode = f"incremental ({len(dirty)} file{'s' if len(dirty) != 1 else ''})"
            grouped: dict[Path, list[Finding]] = {}
            for f in sorted(self._file_findings + self._global_findings, key=lambda f: (str(f.path), f.span, f.code)):
                grouped.setdefault(f.path, []).append(f)
            self.findings = grouped
            self.errors = errors
            return grouped

    def lens(self, path: Path) -> FileLens | None:
        """Tokens of an instruction file and in how many directories it loads at startup vs on touch."""
        with self.lock:
            ws = self.workspace()
            fi = ws.file(path)
            if fi.text is None:
                return None
            kind = ws.kind_of(path)
            tokens = self.counter.count(fi.prepared.content)
            startup = ws.sessions_loading(path)
            touch = 0
            if kind in (D.CLAUDE_MD, D.CLAUDE_LOCAL_MD, D.AGENTS_MD):
                # loads on touch in every directory above it (below the git root) where it is not loaded at startup
                d = path.parent.parent if path.parent.name == ".claude" else path.parent
                for s in ws.sessions():
                    if s.start_dir != d and str(d).startswith(str(s.start_dir) + os.sep):
                        touch += 1
            elif kind == D.RULE:
                touch = len(ws.index.dirs) - startup if startup < len(ws.index.dirs) else 0
            return FileLens(tokens, startup, touch, kind)
