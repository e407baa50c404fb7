"""`remember(fact)`: a dated line appended to the project's auto-memory index (MEMORY.md), where the session
model loads it from, so the next session's first request carries it.

The append is atomic and safe between processes: an exclusive lock on a sibling lock file, the new text written
to a temporary file, then a rename. Facts that hold a secret are refused by the gate before they get here.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
from pathlib import Path

from .executor import write_atomic

MAX_FACT_CHARS = 500
"""A fact is a line, not a transcript dump."""


def remember(index: Path | None, fact: str, today: str | None = None) -> str:
    if index is None:
        raise ValueError("auto memory is off for this project (autoMemoryEnabled: false)")
    fact = " ".join(fact.split())
    if len(fact) > MAX_FACT_CHARS:
        raise ValueError(f"a fact is one line of at most {MAX_FACT_CHARS} characters (this one has {len(fact)}); "
                         f"keep the gist")
    day = today or _dt.date.today().isoformat()
    index.parent.mkdir(parents=True, exist_ok=True)
    with open(index.with_name(".MEMORY.md.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            try:
                text = index.read_text(encoding="utf-8")
            except FileNotFoundError:
                text = ""
            if fact.lower() in text.lower():
                return f"already remembered: {fact}"
            if text and not text.endswith("\n"):
                text += "\n"
            write_atomic(index, f"{text}- {fact} ({day})\n")
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return f"remembered in {index.name}: {fact}"


