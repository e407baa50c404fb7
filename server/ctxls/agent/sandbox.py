"""Where the agent's tools may go: inside the workspace, never onto a denied (secret) file.

Every path a tool names is resolved here, symlinks included, before anything reads or writes it. Pure path
logic over the file system's own answers (realpath, stat, .gitignore files); no reading of file contents.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import pathspec

from ..core.discovery import GitIgnore

DEFAULT_DENY = (".env*", "*.pem", "*.key", "id_*", "secrets/")
"""Secret files: never read, listed or sent (configurable with `[agent] deny`)."""
PROTECTED = (".git", ".ctxls")
"""Directories the agent may read but never write: the repository itself, and ctxls's audit and transcripts."""
DEPENDENCY_DIRS = frozenset({"node_modules", "vendor", ".venv", "venv", "site-packages", "dist-packages",
                             "bower_components", "third_party", "__pypackages__", ".tox", ".nox", "Pods",
                             ".bundle", ".yarn", "jspm_packages", ".cargo", ".gradle", ".m2"})
"""Code other people wrote: text read from there is untrusted (it may carry instructions aimed at the model)."""


@dataclass(frozen=True)
class Target:
    path: Path
    """Absolute path after resolving symlinks (what is really read or written)."""
    rel: str
    """POSIX path relative to the workspace root ("." for the root)."""


class Sandbox:
    def __init__(self, root: Path, deny: Sequence[str] = DEFAULT_DENY) -> None:
        self.root = Path(os.path.realpath(root))
        self.deny_patterns = tuple(deny)
        self._deny = pathspec.PathSpec.from_lines("gitignore", self.deny_patterns)
        self._ignore: GitIgnore | None = None

    # ------------------------------------------------------------------ resolution
    def resolve(self, raw: object) -> Target | str:
        """The target of a path a tool was given, or the reason it is refused (a sentence for the model)."""
        if not isinstance(raw, str) or not raw.strip():
            return "refused: the path must be a non-empty string relative to the workspace root"
        if "\x00" in raw:
            return "refused: the path contains a NUL character"
        p = raw.strip()
        lexical = Path(os.path.normpath(p if os.path.isabs(p) else self.root / p))
        if not _within(lexical, self.root):
            return f"refused: {raw} is outside the workspace ({self.root.name}); paths are relative to its root"
        real = Path(os.path.realpath(lexical))  # a missing tail stays as written, its existing parents resolve
        if not _within(real, self.root):
            return f"refused: {raw} resolves (through a symbolic link) to {real}, outside the workspace"
        for candidate in (lexical, real):
            rel = self.relative(candidate)
            why = self.denied(rel, candidate.is_dir())
            if why:
                return f"refused: {rel} {why}"
        return Target(real, self.relative(real))

    def relative(self, path: Path) -> str:
        rel = os.path.relpath(path, self.root)
        return "." if rel == "." else Path(rel).as_posix()

    def denied(self, rel: str, is_dir: bool = False) -> str | None:
        """Why ``rel`` is on the deny list, or None."""
        if rel == ".":
            return None
        probe = rel + "/" if is_dir else rel
        if self._deny.match_file(probe):
            pattern = next((p for p in self.deny_patterns
                            if pathspec.PathSpec.from_lines("gitignore", [p]).match_file(probe)), "?")
            return f"matches the deny pattern {pattern!r}: secret files are never read, listed or sent"
        return None

    def protected(self, rel: str) -> str | None:
        """Why the agent may not write ``rel``, or None."""
        first = rel.split("/", 1)[0]
        if first in PROTECTED:
            return f"refused: {rel} is inside {first}/, which the agent may not write"
        return None

    # ------------------------------------------------------------------ trust
    def untrusted(self, target: Target) -> str | None:
        """Why text read from ``target`` is untrusted (a dependency or git-ignored directory), or None."""
        parts = target.rel.split("/") if target.rel != "." else []
        for part in parts[:-1] if not target.path.is_dir() else parts:
            if part in DEPENDENCY_DIRS:
                return f"{target.rel} is inside a dependency directory ({part}/)"
        if self.ignored(target):
            return f"{target.rel} is git-ignored"
        return None

    def ignored(self, target: Target) -> bool:
        if target.rel == ".":
            return False
        if self._ignore is None:
            self._ignore = GitIgnore(self.root)
            self._entered: set[tuple[str, ...]] = set()
        parts = tuple(target.rel.split("/"))
        for i in range(len(parts)):
            base = parts[:i]
            if base not in self._entered:
                self._entered.add(base)
                self._ignore.enter(self.root.joinpath(*base), base)
            if i and self._ignore.ignored(parts[:i], True):
                return True
        return self._ignore.ignored(parts, target.path.is_dir())


def _within(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False
