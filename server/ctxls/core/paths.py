"""How ctxls names a path to a person: the one relative-path helper of the CLI, the reports and the rules."""

from __future__ import annotations

import os
from pathlib import Path


def rel_path(path: Path | str, root: Path | str, home: Path | str | None = None) -> str:
    """``path`` relative to ``root`` (posix separators; `.` for the root itself); with ``home``, a path under it
    as `~/…`; anything else absolute. String work only: it runs for every one of tens of thousands of
    findings."""
    p, r = str(path), str(root).rstrip(os.sep) or os.sep
    if p == r:
        return "."
    got = _under(p, r)
    if got is not None:
        return got
    if home is not None:
        got = _under(p, str(home).rstrip(os.sep) or os.sep)
        if got is not None:
            return "~/" + got
    return p


def _under(p: str, base: str) -> str | None:
    prefix = base if base.endswith(os.sep) else base + os.sep
    if not p.startswith(prefix):
        return None
    rest = p[len(prefix):]
    return rest.replace(os.sep, "/") if os.sep != "/" else rest
