"""`paths:` globs of rules and skills (spec A5): gitignore semantics on a path relative to a base directory."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import pathspec

MAX_EXPANSIONS = 1_000
MAX_EXPANDED_BYTES = 4 * 1024 * 1024
_BRACE_RE = re.compile(r"\{([^{}]*)\}")


@dataclass(frozen=True)
class PathGlobs:
    patterns: tuple[str, ...]
    """Patterns after splitting, brace expansion and trailing `/**` stripping."""
    unconditional: bool
    """True when there is no `paths` or it is only `**`."""
    errors: tuple[str, ...] = ()
    root_only_md: bool = False

    def matches(self, rel_path: str) -> bool:
        if self.unconditional:
            return True
        return _spec(self.patterns, self.root_only_md).match_file(rel_path)


def parse_paths(value: Any, root_only_md: bool = False) -> PathGlobs:
    """Normalise a `paths:` value (YAML list or comma-separated string)."""
    if value is None:
        return PathGlobs((), True)
    errors: list[str] = []
    raw: list[str] = []
    if isinstance(value, str):
        raw = [p.strip() for p in value.split(",")]
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                raw.append(item.strip())
            else:
                errors.append(f"paths entry {item!r} is not a string")
    else:
        errors.append(f"paths must be a list or a comma-separated string, not {type(value).__name__}")
        return PathGlobs((), True, tuple(errors))
    out: list[str] = []
    for pat in raw:
        if not pat:
            continue
        for p in expand_braces(pat):
            while p.endswith("/**") and len(p) > 3:
                p = p[:-3]
            out.append(p)
    if not out or all(p in ("**", "**/*") for p in out):
        return PathGlobs(tuple(out), True, tuple(errors))
    valid: list[str] = []
    for p in out:
        err = pattern_error(p)
        if err:
            errors.append(f"pattern {p!r} {err}: it matches nothing")
        else:
            valid.append(p)
    return PathGlobs(tuple(valid), False, tuple(errors), root_only_md)


def expand_braces(pattern: str) -> list[str]:
    """`src/{a,b}/*.{ts,tsx}` -> 4 patterns; past the budget the pattern is used literally (>= 2.1.217)."""
    if "{" not in pattern:
        return [pattern]
    results = [pattern]
    while True:
        changed = False
        nxt: list[str] = []
        for p in results:
            m = _BRACE_RE.search(p)
            if m is None or "," not in m.group(1):
                nxt.append(p)
                continue
            changed = True
            for alt in m.group(1).split(","):
                nxt.append(p[: m.start()] + alt + p[m.end():])
            if len(nxt) > MAX_EXPANSIONS or sum(map(len, nxt)) > MAX_EXPANDED_BYTES:
                return [pattern]
        results = nxt
        if not changed:
            return results


def pattern_error(p: str) -> str | None:
    if p.count("[") > p.count("]"):
        return "has an unclosed '['"
    try:
        pathspec.PathSpec.from_lines("gitignore", [p])
    except Exception as exc:
        return f"is invalid ({exc})"
    return None


@lru_cache(maxsize=4096)
def _spec(patterns: tuple[str, ...], root_only_md: bool) -> pathspec.PathSpec:
    pats = list(patterns)
    if root_only_md:
        # F2, doc reading: a slash-less `*.md` only matches in the base directory itself.
        pats = ["/" + p if "/" not in p and p.startswith("*.") else p for p in pats]
    return pathspec.PathSpec.from_lines("gitignore", pats)
