"""Agent profiles beside Claude Code's (spec section C): Codex, Cursor, Copilot and Gemini CLI.

Each profile module has `load(start, touched, settings, root, fs, counter, prefixes)` returning the same
agent-neutral `Session` the Claude Code loader does (core/model.py), and `unloaded(path, session, settings, fs)`
saying why a file of the workspace is not in that session (for `ctxls compare`). The modules are imported
on first use: they use the loader's helpers, and the loader registers them in its PROFILES.
"""

from __future__ import annotations

import importlib
from typing import Callable

AGENTS = ("claude-code", "codex", "cursor", "copilot", "gemini")
"""Every profile, in the order tables list them."""
EDITOR_AGENTS = frozenset({"cursor"})
"""Agents that run inside an editor: a session starts at the workspace folder (cursor.py: "The workspace folder
is the start directory"), whichever file is open, and the open file is a touch. The others are started in a
directory (a CLI's cwd), which an editor takes to be the active file's."""
_MODULES = {"claude-code": "claude", "codex": "codex", "cursor": "cursor", "copilot": "copilot", "gemini": "gemini"}


_LOADED: dict = {}


def module(agent: str):
    got = _LOADED.get(agent)
    if got is None:
        got = _LOADED[agent] = importlib.import_module(f"{__name__}.{_MODULES[agent]}")
    return got


def _lazy(agent: str) -> Callable:
    def run(*args, **kwargs):
        return module(agent).load(*args, **kwargs)

    run.__name__ = f"load_{agent.replace('-', '_')}"
    return run


PROFILES: dict[str, Callable] = {a: _lazy(a) for a in AGENTS if a != "claude-code"}


RULE_FIELD_AGENTS = ("cursor", "copilot")
"""Profiles whose rule files carry frontmatter of their own (`RULE_FIELDS`, `RULE_DIRS`, `rule_reading`)."""


def rule_field_owner(field: str) -> str | None:
    """The profile whose rule frontmatter ``field`` is (`globs` is Cursor's, `applyTo` Copilot's), or None."""
    for agent in RULE_FIELD_AGENTS:
        if field in module(agent).RULE_FIELDS:
            return agent
    return None
