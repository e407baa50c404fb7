"""What an agent run leaves on disk: the audit log and the session transcript, both JSON lines under `.ctxls/`.

Each line is written whole and synced before the caller goes on, so a kill loses at most the line being written,
never an earlier one (and a torn last line is skipped on reading).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import secrets as _secrets
from pathlib import Path
from typing import Any, Iterator

from ..core.rules.security import scan_text

STATE_DIR = ".ctxls"


def state_dir(root: Path) -> Path:
    """`.ctxls/` of the workspace, created with a `.gitignore` of `*` so it never shows as untracked."""
    d = root / STATE_DIR
    d.mkdir(parents=True, exist_ok=True)
    gi = d / ".gitignore"
    if not gi.exists():
        try:
            gi.write_text("# written by ctxls\n*\n", encoding="utf-8")
        except OSError:
            pass
    return d


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_session_id() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S-") + _secrets.token_hex(3)


def append_line(path: Path, record: dict[str, Any]) -> None:
    line = json.dumps(record, ensure_ascii=False, sort_keys=False) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode("utf-8"))
        (getattr(os, "fdatasync", None) or os.fsync)(fd)  # the data, before the next call (metadata can wait)
    finally:
        os.close(fd)


def read_lines(path: Path) -> Iterator[dict[str, Any]]:
    try:
        raw = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    for line in raw.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue  # a line torn by a kill
        if isinstance(rec, dict):
            yield rec


def redact(value: Any) -> Any:
    """``value`` with every secret the core's CTX701 detector finds replaced by `<redacted: kind>`."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


def redact_text(text: str) -> str:
    found = [f for f in scan_text(text) if f.code == "CTX701"]
    if not found:
        return text
    starts = _line_starts(text)
    out, last = [], 0
    for f in sorted(found, key=lambda f: (f.span.start_line, f.span.start_col)):
        a = starts[f.span.start_line] + f.span.start_col
        b = starts[f.span.end_line] + f.span.end_col
        if a < last:
            continue
        out.append(text[last:a])
        out.append(f"<redacted: {f.data.get('secret_kind', 'secret')}>")
        last = b
    out.append(text[last:])
    return "".join(out)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def merge_into(messages: list[dict[str, Any]], message: dict[str, Any]) -> None:
    """Append ``message``; a user message right after another one joins it (the API wants roles to alternate)."""
    if messages and messages[-1]["role"] == message["role"] == "user":
        messages[-1] = {"role": "user", "content": list(messages[-1]["content"]) + list(message["content"])}
    else:
        messages.append(message)


class Audit:
    """`.ctxls/audit.jsonl`: one line per tool call (ts, session, turn, tool, input, decision, reason, tainted)."""

    def __init__(self, root: Path, session: str) -> None:
        self.path = state_dir(root) / "audit.jsonl"
        self.session = session

    def record(self, turn: int, tool: str, args: Any, decision: str, reason: str, tainted: bool) -> None:
        append_line(self.path, {"ts": now_iso(), "session": self.session, "turn": turn, "tool": tool,
                                "input": redact(args), "decision": decision, "reason": reason,
                                "tainted": tainted})


class Transcript:
    """`.ctxls/sessions/<id>.jsonl`: a `meta` line, then every message of the conversation as it is sent, and
    one `turn` line per model call (usage, timings). `--resume ID` rebuilds the message array from it."""

    def __init__(self, path: Path, session: str) -> None:
        self.path = path
        self.session = session

    @classmethod
    def create(cls, root: Path, session: str, meta: dict[str, Any]) -> "Transcript":
        d = state_dir(root) / "sessions"
        d.mkdir(exist_ok=True)
        t = cls(d / f"{session}.jsonl", session)
        append_line(t.path, {"type": "meta", "session": session, "ts": now_iso(), **meta})
        return t

    @classmethod
    def open(cls, root: Path, session: str) -> "Transcript | None":
        if not session or "/" in session or session.startswith("."):
            return None
        path = root / STATE_DIR / "sessions" / f"{session}.jsonl"
        return cls(path, session) if path.is_file() else None

    def append_message(self, message: dict[str, Any], turn: int) -> None:
        append_line(self.path, {"type": "message", "turn": turn, "message": message})

    def append(self, record: dict[str, Any]) -> None:
        append_line(self.path, record)

    def records(self) -> list[dict[str, Any]]:
        return list(read_lines(self.path))

    def messages(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for r in self.records():
            if r.get("type") == "message" and isinstance(r.get("message"), dict):
                merge_into(out, r["message"])
        return out

    def meta(self) -> dict[str, Any]:
        return next((r for r in self.records() if r.get("type") == "meta"), {})

    def turns(self) -> int:
        return max((int(r.get("turn", 0)) for r in self.records() if r.get("type") == "turn"), default=0)
