"""The conversation as stored and as sent.

The stored history is append-only (the transcript). What is sent is a view of it: old tool results cleared to
a one-line placeholder, and after a compaction a new first message (the startup instructions read again from
disk, the handoff file, invoked skills, the summary) followed by the last turns verbatim. Clearing and
compaction are records in the transcript too, so `--resume` rebuilds the same view.

Cache discipline (spec D2): `request()` puts breakpoints on the last tool, the system prompt, the first
message's instruction block and the newest message, four at most, and serialises nothing that varies.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from .records import merge_into

EPHEMERAL = {"type": "ephemeral"}


@dataclass
class Conversation:
    messages: list[dict[str, Any]] = field(default_factory=list)
    """The whole history, as stored (consecutive user messages merged)."""
    start: int = 0
    """Index of the first stored message still in the view (after a compaction: the first kept turn)."""
    head: dict[str, Any] | None = None
    """The first message of the view after a compaction (instructions, handoff, skills, summary)."""
    cleared: dict[str, str] = field(default_factory=dict)
    """tool_use id -> the placeholder its result is replaced with."""
    compactions: int = 0

    # ------------------------------------------------------------------ building
    def append(self, message: dict[str, Any]) -> None:
        merge_into(self.messages, message)

    def apply(self, record: dict[str, Any]) -> None:
        """Replay a transcript record (message, clear, compaction)."""
        kind = record.get("type")
        if kind == "message" and isinstance(record.get("message"), dict):
            self.append(record["message"])
        elif kind == "clear":
            self.cleared.update(record.get("placeholders") or {})
        elif kind == "compaction":
            self.start = int(record["start"])
            self.head = record["head"]
            self.compactions += 1

    # ------------------------------------------------------------------ the view
    def view(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if self.head is not None:
            out.append(self.head)
        for m in self.messages[self.start:]:
            if m["role"] == "user" and self.cleared:
                m = {"role": "user", "content": [self._cleared(b) for b in m["content"]]}
            merge_into(out, m)
        return out

    def _cleared(self, block: dict[str, Any]) -> dict[str, Any]:
        if block.get("type") == "tool_result" and block.get("tool_use_id") in self.cleared:
            return {"type": "tool_result", "tool_use_id": block["tool_use_id"],
                    "content": self.cleared[block["tool_use_id"]]}
        return block

    def tool_uses(self) -> dict[str, dict[str, Any]]:
        """tool_use id -> its block, over the live view's stored messages."""
        return {b["id"]: b for m in self.messages[self.start:] if m["role"] == "assistant"
                for b in m["content"] if b.get("type") == "tool_use"}

    def results_in_view(self) -> list[tuple[int, dict[str, Any]]]:
        """(stored message index, tool_result block) of the live view, oldest first, not yet cleared."""
        out = []
        for i in range(self.start, len(self.messages)):
            m = self.messages[i]
            if m["role"] != "user":
                continue
            for b in m["content"]:
                if b.get("type") == "tool_result" and b.get("tool_use_id") not in self.cleared:
                    out.append((i, b))
        return out

    def turn_starts(self) -> list[int]:
        """Stored indexes of the assistant messages of the live view (each starts a turn)."""
        return [i for i in range(self.start, len(self.messages)) if self.messages[i]["role"] == "assistant"]


def request_messages(view: list[dict[str, Any]], breakpoints: bool = True) -> list[dict[str, Any]]:
    """The view with cache breakpoints on the first message's first block (the startup instructions) and on
    the newest message's last block. Copies only what it marks."""
    if not breakpoints or not view:
        return view
    out = list(view)
    out[0] = _marked(out[0], 0)
    if len(out) > 1:
        out[-1] = _marked(out[-1], -1)
    else:
        out[0] = _marked(out[0], -1)
    return out


def _marked(message: dict[str, Any], index: int) -> dict[str, Any]:
    content = list(message["content"])
    block = content[index]
    if block.get("type") in ("text", "tool_result", "tool_use", "image", "document"):
        content[index] = {**block, "cache_control": EPHEMERAL}
    return {"role": message["role"], "content": content}


def with_breakpoints(tools: list[dict[str, Any]], system: list[dict[str, Any]]) -> tuple[list, list]:
    """Tools and system with one breakpoint each (on the last tool and the last system block)."""
    tools = copy.copy(tools)
    if tools:
        tools[-1] = {**tools[-1], "cache_control": EPHEMERAL}
    system = [dict(b) for b in system]
    if system:
        system[-1]["cache_control"] = EPHEMERAL
    return tools, system
