"""What each tool does once the gate has let it through. The gate (gate.py) is the only caller.

Reads go through the sandbox; writes are handed to the host (the terminal writes the disk, the editor applies a
workspace edit) as a `FileChange`; commands run in the workspace root with the provider's key removed from
their environment.
"""

from __future__ import annotations

import asyncio
import difflib
import os
import re
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..core.fs import decode
from ..core.markdown import split_frontmatter, split_lines
from .sandbox import Sandbox, Target

READ_MAX_LINES = 2_000
READ_MAX_BYTES = 4 * 1024 * 1024
LINE_MAX_CHARS = 2_000
LIST_MAX_ENTRIES = 1_000
SEARCH_MAX_LINES = 200
SEARCH_MAX_FILES = 20_000
SEARCH_MAX_FILE_BYTES = 1024 * 1024
OUTPUT_HEAD = OUTPUT_TAIL = 8 * 1024
DEFAULT_COMMAND_TIMEOUT = 120.0


@dataclass
class Outcome:
    text: str
    is_error: bool = False
    touched: Path | None = None
    """A file the tool read or wrote: the instructions of its subtree may join the context now."""
    untrusted: str | None = None
    """Why the text is untrusted (it came from a dependency or git-ignored directory), or None."""


@dataclass
class FileChange:
    target: Target
    before: str | None
    """Current text (the editor's buffer when open), None for a new file."""
    after: str

    def diff(self) -> str:
        a = (self.before or "").splitlines(keepends=True)
        b = self.after.splitlines(keepends=True)
        label = self.target.rel
        return "".join(difflib.unified_diff(a, b, f"a/{label}" if self.before is not None else "/dev/null",
                                            f"b/{label}", n=3))


class Texts(Protocol):
    def current_text(self, path: Path) -> str | None: ...


class Executor:
    def __init__(self, sandbox: Sandbox, texts: Texts) -> None:
        self.sandbox = sandbox
        self.texts = texts

    def _current(self, t: Target) -> str | Outcome:
        """The text the user sees: the editor's buffer when the file is open there, else the disk."""
        text = self.texts.current_text(t.path)
        return read_text(t.path) if text is None else text

    # ------------------------------------------------------------------ reads
    def read_file(self, t: Target, start_line: int | None = None, end_line: int | None = None) -> Outcome:
        if t.path.is_dir():
            return Outcome(f"{t.rel} is a directory; use list_dir", is_error=True)
        text = self._current(t)
        if isinstance(text, Outcome):
            return text
        lines = split_lines(text)
        if lines and lines[-1] == "":
            lines.pop()
        first = max(1, start_line or 1)
        last = min(len(lines), end_line or (first + READ_MAX_LINES - 1), first + READ_MAX_LINES - 1)
        if first > max(1, len(lines)):
            return Outcome(f"{t.rel} has {len(lines)} lines; start_line {first} is past the end", is_error=True)
        body = "\n".join(f"{i:>6}\t{lines[i - 1][:LINE_MAX_CHARS]}" for i in range(first, last + 1))
        if last < len(lines):
            body += f"\n[lines {last + 1}-{len(lines)} not shown; pass start_line to read on]"
        return Outcome(body or f"({t.rel} is empty)", touched=t.path, untrusted=self.sandbox.untrusted(t))

    def list_dir(self, t: Target) -> Outcome:
        if not t.path.is_dir():
            return Outcome(f"{t.rel} is not a directory", is_error=True)
        try:
            entries = sorted(os.scandir(t.path), key=lambda e: e.name)
        except OSError as exc:
            return Outcome(f"cannot list {t.rel}: {exc.strerror or exc}", is_error=True)
        shown, hidden = [], 0
        for e in entries:
            rel = f"{t.rel}/{e.name}" if t.rel != "." else e.name
            is_dir = _is_dir(e)
            if self.sandbox.denied(rel, is_dir):
                hidden += 1
                continue
            shown.append(e.name + ("/" if is_dir else ""))
        out = shown[:LIST_MAX_ENTRIES]
        if len(shown) > LIST_MAX_ENTRIES:
            out.append(f"[{len(shown) - LIST_MAX_ENTRIES} more entries not shown]")
        if hidden:
            out.append(f"[{hidden} entr{'y' if hidden == 1 else 'ies'} hidden by the deny list]")
        return Outcome("\n".join(out) or f"({t.rel} is empty)", untrusted=self.sandbox.untrusted(t))

    def search(self, pattern: str, t: Target) -> Outcome:
        try:
            rx = re.compile(pattern)
        except re.error as exc:
            return Outcome(f"invalid regular expression: {exc}", is_error=True)
        hits: list[str] = []
        files = 0
        for path, rel in self._walk(t):
            files += 1
            if files > SEARCH_MAX_FILES or len(hits) >= SEARCH_MAX_LINES:
                break
            try:
                if path.stat().st_size > SEARCH_MAX_FILE_BYTES:
                    continue
                data = path.read_bytes()
            except OSError:
                continue
            if b"\x00" in data[:8192]:
                continue
            text, _ = decode(data)
            for i, line in enumerate(split_lines(text), 1):
                if rx.search(line):
                    hits.append(f"{rel}:{i}: {line.strip()[:300]}")
                    if len(hits) >= SEARCH_MAX_LINES:
                        break
        if not hits:
            return Outcome(f"no matches for {pattern!r} in {t.rel}")
        more = f"\n[stopped at {SEARCH_MAX_LINES} matches]" if len(hits) >= SEARCH_MAX_LINES else ""
        return Outcome("\n".join(hits) + more)

    def _walk(self, t: Target):
        """Files under ``t`` in a stable order, skipping .git, denied and git-ignored paths and symlinked dirs."""
        if not t.path.is_dir():
            yield t.path, t.rel
            return
        sb = self.sandbox
        for dirpath, dirnames, filenames in os.walk(t.path):
            base = sb.relative(Path(dirpath))
            keep = []
            for d in sorted(dirnames):
                rel = d if base == "." else f"{base}/{d}"
                full = Path(dirpath) / d
                if d == ".git" or full.is_symlink() or sb.denied(rel, True) or sb.ignored(Target(full, rel)):
                    continue
                keep.append(d)
            dirnames[:] = keep
            for f in sorted(filenames):
                rel = f if base == "." else f"{base}/{f}"
                full = Path(dirpath) / f
                if sb.denied(rel) or sb.ignored(Target(full, rel)) or full.is_symlink():
                    continue
                yield full, rel

    # ------------------------------------------------------------------ writes (planned here, applied by the host)
    def plan_edit(self, t: Target, old: str, new: str) -> FileChange | Outcome:
        if t.path.is_dir():
            return Outcome(f"{t.rel} is a directory", is_error=True)
        before = self._current(t)
        if isinstance(before, Outcome):
            return before
        n = before.count(old)
        if n == 0:
            return Outcome(f"old_string was not found in {t.rel}; read the file and copy the text exactly",
                           is_error=True)
        if n > 1:
            return Outcome(f"old_string appears {n} times in {t.rel}; include more surrounding text so that it "
                           f"is unique", is_error=True)
        return FileChange(t, before, before.replace(old, new, 1))

    def plan_write(self, t: Target, content: str) -> FileChange | Outcome:
        if t.path.is_dir():
            return Outcome(f"{t.rel} is a directory", is_error=True)
        before = self.texts.current_text(t.path)
        if before is None and t.path.exists():
            got = read_text(t.path)
            before = got if isinstance(got, str) else None
        return FileChange(t, before, content)

    # ------------------------------------------------------------------ commands
    async def run_command(self, command: str, timeout_s: float | None) -> Outcome:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        timeout = float(timeout_s or DEFAULT_COMMAND_TIMEOUT)
        try:
            proc = await asyncio.create_subprocess_shell(
                command, cwd=self.sandbox.root, env=env, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, start_new_session=True)
        except OSError as exc:
            return Outcome(f"cannot start the command: {exc}", is_error=True)
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), timeout)
        except asyncio.TimeoutError:
            _kill(proc)
            out = await _drain(proc)
            return Outcome(f"timed out after {timeout:g} s (killed)\n{truncate(out)}", is_error=True)
        except asyncio.CancelledError:
            _kill(proc)
            raise
        text = truncate(out)
        return Outcome(f"exit code {proc.returncode}\n{text}", is_error=proc.returncode != 0)

    # ------------------------------------------------------------------ skills
    @staticmethod
    def skill_body(path: Path) -> Outcome:
        got = read_text(path)
        if isinstance(got, Outcome):
            return got
        _, body = split_frontmatter(got)
        return Outcome(body.strip("\n") or "(the skill has no instructions)")


def read_text(path: Path) -> str | Outcome:
    try:
        st = path.stat()
        if st.st_size > READ_MAX_BYTES:
            return Outcome(f"{path.name} is {st.st_size:,} bytes, over the {READ_MAX_BYTES:,}-byte limit; "
                           f"search it instead", is_error=True)
        data = path.read_bytes()
    except FileNotFoundError:
        return Outcome(f"{path.name} does not exist", is_error=True)
    except OSError as exc:
        return Outcome(f"cannot read {path.name}: {exc.strerror or exc}", is_error=True)
    if b"\x00" in data[:8192]:
        return Outcome(f"{path.name} is a binary file", is_error=True)
    text, _ = decode(data)
    return text


def write_atomic(path: Path, text: str) -> None:
    """Write through a temporary file and a rename: a reader (or a kill) never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.ctxls-{os.getpid()}.tmp")
    try:
        mode = path.stat().st_mode & 0o7777 if path.exists() else None
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def truncate(data: bytes) -> str:
    """Command output for the model: all of it when short, else the head and the tail with the byte count."""
    if len(data) <= OUTPUT_HEAD + OUTPUT_TAIL:
        return decode(data)[0]
    head = decode(data[:OUTPUT_HEAD])[0]
    tail = decode(data[-OUTPUT_TAIL:])[0]
    return f"{head}\n[... {len(data) - OUTPUT_HEAD - OUTPUT_TAIL:,} of {len(data):,} bytes omitted ...]\n{tail}"


def _kill(proc) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass


async def _drain(proc) -> bytes:
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), 5)
        return out or b""
    except (asyncio.TimeoutError, ValueError):
        return b""


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


