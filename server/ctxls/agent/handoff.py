"""The handoff file `.ctxls/handoff.md`: the goal and the check that proves it, decisions, open bugs, files
touched, the next step. The agent rewrites it through `update_handoff {content}` at milestones; the loop (not the
model) puts it back into the context after every compaction, and a fresh session can start from it."""

from __future__ import annotations

from pathlib import Path

from .executor import write_atomic
from .records import state_dir

MAX_LINES = 60
"""The file should stay under ~40 lines; past this it is refused, with the reason."""

TOOL = {
    "name": "update_handoff",
    "description": "Rewrite the handoff file .ctxls/handoff.md (under ~40 lines): the goal and the check that proves "
                   "it, decisions, open bugs, files touched, the next step. Do it at milestones; it survives "
                   "compaction.",
    "input_schema": {"type": "object", "additionalProperties": False, "required": ["content"],
                     "properties": {"content": {"type": "string", "minLength": 1}}},
}


def handoff_path(root: Path) -> Path:
    return root / ".ctxls" / "handoff.md"


def update_handoff(root: Path, content: str) -> str:
    lines = content.strip("\n").split("\n")
    if len(lines) > MAX_LINES:
        raise ValueError(f"the handoff file is {len(lines)} lines; keep it under ~40 (goal, check, decisions, "
                         f"open bugs, files, next step)")
    state_dir(root)
    path = handoff_path(root)
    write_atomic(path, "\n".join(lines) + "\n")
    return f"handoff file updated ({len(lines)} lines)"
