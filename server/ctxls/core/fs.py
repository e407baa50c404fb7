"""Reading files without ever raising.

Every read returns a `SourceText`: the text, or the reason there is none (missing, vanished, not a regular
file, too large, binary, unreadable).  Results are cached by (path, mtime_ns, size), so asking again after
nothing changed costs one stat.  Unsaved editor buffers are overlays that win over the disk.
"""

from __future__ import annotations

import os
import time
import stat as _stat
from dataclasses import dataclass, field
from pathlib import Path

_BINARY_PROBE = 8192


@dataclass(frozen=True)
class SourceText:
    path: Path
    text: str | None
    error: str | None = None
    """Why there is no text (file skipped), or None."""
    notes: tuple[str, ...] = ()
    """Problems that did not prevent loading (e.g. invalid UTF-8 replaced)."""
    size: int = 0
    mtime_ns: int = 0

    @property
    def ok(self) -> bool:
        return self.text is not None


def list_kinds(d: Path) -> dict[str, str] | None:
    """Names in directory ``d``: 'f' regular file, 'd' directory (symlinks followed), 'o' anything else; None
    when ``d`` cannot be listed."""
    try:
        return _kinds(d)
    except (OSError, ValueError):
        return None


def _kinds(d: Path | str) -> dict[str, str]:
    """`list_kinds`, raising what `os.scandir` raises."""
    names: dict[str, str] = {}
    with os.scandir(d) as it:
        for e in it:
            try:
                names[e.name] = "f" if e.is_file() else "d" if e.is_dir() else "o"
            except OSError:
                names[e.name] = "o"
    return names


class ListedEntry:
    """What `os.scandir` yields, made from a snapshot's listing (`FileSystem.scandir`)."""

    __slots__ = ("name", "path", "_kind")

    def __init__(self, d: str, name: str, kind: str) -> None:
        self.name, self.path, self._kind = name, os.path.join(d, name), kind

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        return self._kind == "d" if follow_symlinks else not os.path.islink(self.path) and self._kind == "d"

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        return self._kind == "f" if follow_symlinks else not os.path.islink(self.path) and self._kind == "f"

    def is_symlink(self) -> bool:
        return os.path.islink(self.path)


class _Listed(list):
    """A list of `ListedEntry`, usable as `with os.scandir(d) as it` is."""

    def __enter__(self) -> "_Listed":
        return self

    def __exit__(self, *exc: object) -> None:
        return None


@dataclass
class FileSystem:
    """Cached, fault-tolerant file access shared by discovery, the loader and the rules.

    The cache is a snapshot: directory listings, real paths and file contents are remembered until
    `invalidate()` says something changed (the language server's watcher does; the CLI runs once).
    ``memo`` holds derived results other modules cache against the same snapshot.
    """

    max_bytes: int = 4 * 1024 * 1024
    overlays: dict[Path, str] = field(default_factory=dict)
    _overlay_mtime: dict[Path, tuple[int, int]] = field(default_factory=dict)
    _cache: dict[Path, SourceText] = field(default_factory=dict)
    _listings: dict[Path, dict[str, str]] = field(default_factory=dict)
    _real: dict[str, str] = field(default_factory=dict)
    _aliases: dict[str, set[Path]] = field(default_factory=dict)
    """Real path -> the other paths a file under `.claude/` was read through (a symlinked skill, rule or
    command): an event at the real path is a change of those paths too (`aliases`)."""
    memo: dict = field(default_factory=dict)
    reads: int = 0
    elsewhere: dict[str, list[int]] = field(default_factory=dict)
    """(mtime_ns, size) of files another process read for this snapshot (`ctxls check` runs some rules in a
    forked process); only the result cache's fingerprint looks at it."""
    elsewhere_dirs: list[Path] = field(default_factory=list)
    """Directories another process listed."""
    depends: dict[str, list[int] | None] = field(default_factory=dict)
    """Other files the analysis depended on, read by something else than this snapshot (git's HEAD and ref
    files): their (mtime_ns, size) when recorded, None when absent (`depend`)."""
    _memo_base: int | None = None
    config_dirs: tuple[str, ...] = ()
    """Directories whose files parse into rule and skill sets like a `.claude/` does, whatever their name (a
    configured `CLAUDE_CONFIG_DIR`, the managed settings directory): set by whoever knows the settings."""
    """Size of `memo` at the first content change after it was last emptied (see `changed`)."""

    def set_overlay(self, path: Path, text: str | None) -> bool:
        """An unsaved editor buffer (None: closed, back to the disk). Returns whether the content changed."""
        if text is None:
            if self.overlays.pop(path, None) is None:
                return False
            self._overlay_mtime.pop(path, None)
        else:
            if self.overlays.get(path) == text:
                return False
            if path not in self.overlays:
                disk = self._cache.get(path) or self.read(path)
                if disk.ok and disk.text == text:  # opening a file changes nothing
                    self._overlay_mtime[path] = (disk.mtime_ns, disk.size)
                    self.overlays[path] = text
                    return False
            self.overlays[path] = text
            # an edited buffer is the newest version there is
            self._overlay_mtime[path] = (time.time_ns(), len(text.encode("utf-8", "surrogatepass")))
        self.changed(path)
        return True

    def changed(self, path: Path, structural: bool = False) -> None:
        """``path``'s content changed; ``structural`` when it was created or deleted (or is a directory).

        Memo entries keyed by content stay valid; rule and skill sets parse file contents under `.claude/`,
        so those go when such a file changes; a structural change drops every derived result."""
        self._cache.pop(path, None)
        if structural:
            self._listings.pop(path, None)
            self._listings.pop(path.parent, None)
            self._real.clear()
            if self._aliases:  # a link path that is gone is no alias any more (the others stay: their reads do)
                for paths in self._aliases.values():
                    paths.discard(path)
            self.memo.clear()
            self._memo_base = None
            return
        # Results memoised by content pile up, a few per edited version of a file, in a long editing session:
        # past twice what a full analysis needs, start over (the next check rebuilds what it uses).
        n = len(self.memo)
        if self._memo_base is None:
            self._memo_base = n
        elif n > 2 * self._memo_base + 1000:
            self.memo.clear()
            self._memo_base = None
            return
        if self.in_config_dir(path):
            for k in [k for k in self.memo if k[0] in ("rules", "rules-scan", "skills")]:
                del self.memo[k]

    def in_config_dir(self, path: Path) -> bool:
        """Under a `.claude/` or one of `config_dirs`: a change there can change which rules and skills load."""
        if ".claude" in path.parts:
            return True
        s = str(path)
        return any(s.startswith(d + os.sep) for d in self.config_dirs)

    def invalidate(self, path: Path | None = None) -> None:
        """Forget everything cached (``path`` None) or everything about ``path``."""
        if path is not None:
            self.changed(path, structural=True)
            return
        self.memo.clear()
        self._memo_base = None
        self._real.clear()
        self._aliases.clear()
        self._cache.clear()
        self._listings.clear()

    def aliases(self, path: Path) -> list[Path]:
        """The other paths of the file ``path`` names, through which the analysis reads it (symlinks under
        `.claude/`: a linked file, or a file in a linked directory, created since too): what an editor or the
        watcher reporting ``path`` changed also changed. Resolved anew: the root itself may be a link."""
        if not self._aliases:
            return []
        try:
            real = os.path.realpath(path)
        except (OSError, ValueError):
            real = os.fspath(path)
        out = set(self._aliases.get(real, ()))
        parent, name = os.path.split(real)
        for d in self._aliases.get(parent, ()):
            out.add(d / name)
        out.discard(path)
        return sorted(out)

    def _alias(self, path: Path) -> None:
        """Record ``path`` under its real path when a symlink is on the way (see `aliases`)."""
        real = self.realpath(path)
        if real != os.fspath(path):
            self._aliases.setdefault(real, set()).add(path)

    def prime_listing(self, d: Path, names: dict[str, str]) -> None:
        """Take ``names`` as ``d``'s listing (the form `listing` returns), from whoever just listed it (the
        workspace scan, the watcher)."""
        self._listings[d] = names
        if ".claude" in d.parts:
            self._alias(d)

    def scandir(self, d: Path) -> _Listed:
        """`os.scandir(d)` over the snapshot's listing of ``d`` (listed now if it is not known yet, raising what
        os.scandir raises): a walk through it lists no directory the workspace scan has listed."""
        names = self._listings.get(d)
        if names is None:
            names = _kinds(d)  # (an unlistable directory raises, as os.scandir would)
            self.prime_listing(d, names)
        sd = os.fspath(d)
        return _Listed(ListedEntry(sd, n, k) for n, k in names.items())

    def listing(self, d: Path) -> dict[str, str]:
        """Names in directory ``d``: 'f' regular file, 'd' directory (symlinks followed), 'o' anything else."""
        got = self._listings.get(d)
        if got is not None:
            return got
        names = self._listings[d] = list_kinds(d) or {}
        if ".claude" in d.parts:  # a linked skills or rules directory: files created at its real path show here
            self._alias(d)
        return names

    def depend(self, path: str) -> None:
        """Record that the analysis depended on ``path`` as it is now (present or not) without reading it here:
        a stored report is valid while its state stays the same (see `read_stats`)."""
        try:
            st = os.stat(path)
            self.depends[path] = [st.st_mtime_ns, st.st_size]
        except OSError:
            self.depends[path] = None

    def read_stats(self) -> tuple[dict[str, list[int] | None], list[Path]]:
        """What this snapshot read: (mtime_ns, size) by path (None: a `depend`ed file that was absent), and the
        directories it listed."""
        files: dict[str, list[int] | None] = {str(p): [src.mtime_ns, src.size] for p, src in self._cache.items()
                                              if src.mtime_ns}
        files.update(self.elsewhere)
        files.update(self.depends)
        return files, list(self._listings) + self.elsewhere_dirs

    def absorb_reads(self, stats: tuple[dict[str, list[int] | None], list[Path]]) -> None:
        """Record what another process read for this snapshot (see `read_stats`)."""
        files, dirs = stats
        self.elsewhere.update(files)
        self.elsewhere_dirs.extend(dirs)

    def realpath(self, path: Path | str) -> str:
        """``os.path.realpath(path)``, memoised for the snapshot (a structural change forgets it). A path that is
        no symlink is resolved from its parent directory's real path and one `lstat`, where a full realpath
        stats every component: directories are shared by many files."""
        s = path if type(path) is str else os.fspath(path)
        got = self._real.get(s)
        if got is None:
            parent, name = os.path.split(s)
            if parent and name and parent != s and name not in (".", ".."):
                try:
                    plain = not _stat.S_ISLNK(os.lstat(s).st_mode)
                except (OSError, ValueError):
                    plain = False  # missing, a loop on the way...: os.path.realpath judges
                if plain:
                    got = os.path.join(self.realpath(parent), name)
            if got is None:
                try:
                    got = os.path.realpath(s)
                except (OSError, ValueError):
                    got = s
            self._real[s] = got
        return got

    def stat(self, path: Path) -> os.stat_result | None:
        try:
            return os.stat(path)
        except (OSError, ValueError):
            return None

    def exists(self, path: Path) -> bool:
        if path.parent == path:
            return True
        return path.name in self.listing(path.parent)

    def is_file(self, path: Path) -> bool:
        if path in self.overlays:
            return True
        return self.listing(path.parent).get(path.name) == "f"

    def is_dir(self, path: Path) -> bool:
        if path.parent == path:
            return True
        return self.listing(path.parent).get(path.name) == "d"

    def read(self, path: Path, max_bytes: int | None = None) -> SourceText:
        limit = self.max_bytes if max_bytes is None else max_bytes
        if path in self.overlays:
            text = self.overlays[path]
            mtime, size = self._overlay_mtime.get(path, (0, len(text)))
            return SourceText(path, text, size=size, mtime_ns=mtime)
        cached = self._cache.get(path)
        if cached is not None:
            return cached
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return SourceText(path, None, "file not found")
        except PermissionError:
            return SourceText(path, None, "permission denied")
        except OSError as exc:  # symlink loop (ELOOP), name too long, ...
            return SourceText(path, None, f"cannot stat: {exc.strerror or exc}")
        if not _stat.S_ISREG(st.st_mode):
            return SourceText(path, None, "not a regular file")
        result = self._read_uncached(path, st, limit)
        self._cache[path] = result
        if ".claude" in path.parts:  # skills, rules and commands may be symlinks to files kept elsewhere
            self._alias(path)
        return result

    def _read_uncached(self, path: Path, st: os.stat_result, limit: int) -> SourceText:
        size, mtime = st.st_size, st.st_mtime_ns
        if size > limit:
            return SourceText(path, None, f"larger than {_human(limit)} ({_human(size)}): skipped",
                              size=size, mtime_ns=mtime)
        self.reads += 1
        try:
            with open(path, "rb") as fh:
                data = fh.read(limit + 1)
        except FileNotFoundError:
            return SourceText(path, None, "vanished while reading", size=size, mtime_ns=mtime)
        except PermissionError:
            return SourceText(path, None, "permission denied", size=size, mtime_ns=mtime)
        except OSError as exc:
            return SourceText(path, None, f"cannot read: {exc.strerror or exc}", size=size, mtime_ns=mtime)
        if len(data) > limit:
            return SourceText(path, None, f"grew past {_human(limit)} while reading: skipped",
                              size=len(data), mtime_ns=mtime)
        if b"\x00" in data[:_BINARY_PROBE]:
            return SourceText(path, None, "binary file (NUL bytes): skipped", size=size, mtime_ns=mtime)
        text, notes = decode(data)
        return SourceText(path, text, notes=notes, size=size, mtime_ns=mtime)


def decode(data: bytes) -> tuple[str, tuple[str, ...]]:
    """A file's bytes as the analysis reads them: UTF-8 (undecodable bytes replaced, with a note), without a
    byte-order mark."""
    notes: tuple[str, ...] = ()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        notes = (f"invalid UTF-8 at byte {exc.start}; undecodable bytes replaced with U+FFFD",)
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, notes


def _human(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f} MiB"
    if n >= 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n} bytes"
