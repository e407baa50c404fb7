"""Which directories a user would start an agent session in.

Budget rankings and "in each of N sessions" count these only. Agent configuration (`.claude/`, `.github/` and
every other dot-directory) and documentation folders (`docs/`, `doc/`, `documentation/`) are places an agent
reads from, not places anyone starts one: ranking `.claude/rules` or `…/plan/.claude` as the most expensive place
to start a session answered a question nobody asks.
"""

from __future__ import annotations

from pathlib import Path

NOT_STARTED_IN = frozenset({"docs", "doc", "documentation"})


def is_start_dir(d: Path, root: Path) -> bool:
    """False for a directory at or under a dot-directory or a docs folder of the workspace (the root itself
    always counts, whatever its name)."""
    try:
        parts = d.relative_to(root).parts
    except ValueError:
        return True
    return not any(p.startswith(".") or p.lower() in NOT_STARTED_IN for p in parts)
