"""`remember(fact)`: a dated line in the project's auto-memory index (MEMORY.md), where the session model loads it
from, so the next session's first request carries it.

The write is atomic and safe between processes: an exclusive lock on a sibling lock file, the new text written to
a temporary file, then a rename; two sessions remembering at once lose nothing. A fact that says what a line already
says, in other case, punctuation or articles, is not added again. When the index nears the part Claude Code loads (200 lines, 25 KB; spec
A7), the oldest remembered facts move to a topic file linked from the index, so the head keeps what is new.
Facts holding a secret are refused by the gate before they get here (the core's CTX701 detector).
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import re
from pathlib import Path

from .executor import write_atomic

MAX_FACT_CHARS = 500
"""A fact is a line, not a transcript dump."""
_STOP = frozenset("a an the is are was were be to of in on for and or that this it its".split())
_FACT_RE = re.compile(r"^- (?P<fact>.+) \((?P<day>\d{4}-\d{2}-\d{2})\)$")


def remember(index: Path | None, fact: str, today: str | None = None, max_lines: int = 200,
             max_bytes: int = 25_000) -> str:
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
            same = _similar(fact, text)
            if same:
                return f"already remembered: {same}"
            if text and not text.endswith("\n"):
                text += "\n"
            text += f"- {fact} ({day})\n"
            text, moved = _spill(index, text, day, max_lines, max_bytes)
            write_atomic(index, text)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    note = f"; {moved} older facts moved to a topic file" if moved else ""
    return f"remembered in {index.name}: {fact}{note}"


def _norm(s: str) -> tuple[str, ...]:
    """The words that carry a fact: case, punctuation, articles and plural -s do not (so near-identical wordings
    match), every other word, name and number does ("process A" and "process B" are two facts)."""
    words = re.sub(r"[^a-z0-9]+", " ", s.lower()).split()
    return tuple(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words if w not in _STOP)


def _similar(fact: str, text: str) -> str | None:
    want = _norm(fact)
    for line in text.splitlines():
        m = _FACT_RE.match(line)
        if want and _norm(m.group("fact") if m else line.lstrip("-* ")) == want:
            return m.group("fact") if m else line.strip()
    return None


def _spill(index: Path, text: str, day: str, max_lines: int, max_bytes: int) -> tuple[str, int]:
    """Past 90% of either cut, move the oldest half of the remembered facts to `facts-<day>.md` (appended to when
    it exists) and link it from the index."""
    lines = text.rstrip("\n").split("\n")
    if len(lines) < 0.9 * max_lines and len(text.encode("utf-8")) < 0.9 * max_bytes:
        return text, 0
    facts = [i for i, ln in enumerate(lines) if _FACT_RE.match(ln)]
    if len(facts) < 2:
        return text, 0
    moving = set(facts[: len(facts) // 2])
    topic = index.with_name(f"facts-{day}.md")
    old = topic.read_text(encoding="utf-8") if topic.exists() else f"# Facts remembered until {day}\n\n"
    write_atomic(topic, old + "\n".join(lines[i] for i in sorted(moving)) + "\n")
    link = f"- [Older facts ({day})]({topic.name}): moved from this index to keep its head short"
    kept = [ln for i, ln in enumerate(lines) if i not in moving]
    if link not in kept:
        kept.insert(min(moving), link)
    return "\n".join(kept) + "\n", len(moving)
