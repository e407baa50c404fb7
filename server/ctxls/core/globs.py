"""`paths:` globs of rules and skills (spec A5): gitignore semantics on a path relative to a base directory."""

from __future__ import annotations

import re
from . import lazyre
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import pathspec

MAX_EXPANSIONS = 1_000
MAX_EXPANDED_BYTES = 4 * 1024 * 1024
_BRACE_RE = lazyre.compile(r"\{([^{}]+)\}")


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
        return _spec(self.patterns, self.root_only_md).match_file(rel_path.lower())


def parse_paths(value: Any, root_only_md: bool = False) -> PathGlobs:
    """Normalise a `paths:` value (YAML list or comma-separated string) as Claude Code's splitPathInFrontmatter
    does: a string, and each string item of a list, is split at the commas outside braces (`**/*.{ts,tsx}` is
    one pattern), then brace-expanded."""
    if value is None:
        return PathGlobs((), True)
    errors: list[str] = []
    raw: list[str] = []
    if isinstance(value, str):
        raw = split_outside_braces(value)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                raw += split_outside_braces(item)
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


def split_outside_braces(value: str) -> list[str]:
    """`a, src/*.{ts,tsx}` -> `a`, `src/*.{ts,tsx}`: commas inside braces separate alternatives, not patterns."""
    if "{" not in value:
        return [p.strip() for p in value.split(",")]
    parts: list[str] = []
    depth = start = 0
    for i, ch in enumerate(value):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(value[start:i].strip())
            start = i + 1
    parts.append(value[start:].strip())
    return parts


def expand_braces(pattern: str) -> list[str]:
    """`src/{a,b}/*.{ts,tsx}` -> 4 patterns, each alternative trimmed; past the budget the pattern is used
    literally (>= 2.1.217)."""
    if "{" not in pattern:
        return [pattern]
    results = [pattern]
    while True:
        changed = False
        nxt: list[str] = []
        for p in results:
            m = _BRACE_RE.search(p)
            if m is None:
                nxt.append(p)
                continue
            changed = True
            for alt in m.group(1).split(","):
                nxt.append(p[: m.start()] + alt.strip() + p[m.end():])
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
    """The matcher of ``patterns``, for lower-cased paths: Claude Code matches with the `ignore` npm library,
    whose `ignorecase` option is on by default (`**/treatment/**` matches `pages/Treatment/x.tsx`)."""
    pats = [p.lower() for p in patterns]
    if root_only_md:
        # F2, doc reading: a slash-less `*.md` only matches in the base directory itself.
        pats = ["/" + p if "/" not in p and p.startswith("*.") else p for p in pats]
    return pathspec.PathSpec.from_lines("gitignore", pats)
