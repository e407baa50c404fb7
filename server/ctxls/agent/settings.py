"""Settings of the agent loop: `[agent]` in `.ctxls.toml`, the language server's `agent` object, CLI flags.

Keys may be written snake_case (TOML) or camelCase (VS Code settings): `max_turns` = `maxTurns`. Bad values are
reported and fall back to the default, as everywhere in ctxls.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from .provider import DEFAULT_MODEL
from .sandbox import DEFAULT_DENY


@dataclass(frozen=True)
class AgentSettings:
    model: str = DEFAULT_MODEL
    max_tokens: int = 8_192
    """Output tokens per model call."""
    max_turns: int = 40
    """Model calls per invocation."""
    max_run_tokens: int | None = None
    """Stop once a run has been billed this many tokens (input, cache and output together)."""
    timeout_s: float | None = None
    """Wall-clock limit of one invocation."""
    yes_to: tuple[str, ...] = ()
    """Allow-list: `edit_file`, `run_command:pytest*`."""
    deny: tuple[str, ...] = DEFAULT_DENY
    max_attempts: int = 5
    """Attempts per model call (429, 529, 5xx, broken streams are retried with backoff)."""
    preview_confirms: bool | None = None
    """Editor only: whether the client's refactor preview confirms an edit annotated `needsConfirmation` (None:
    trust VS Code and its forks, ask everyone else with Apply / Reject first)."""
    retry_backoff_s: float = 0.5
    """First backoff between attempts (doubling, capped at 20 s) when the server names no retry-after."""
    # -- the context engine (compaction.py)
    clear_at: int | None = None
    """Soft threshold in tokens: clear old tool results past it (default: 30% of the window)."""
    clear_keep: int = 3
    clear_at_least: int = 10_000
    keep_turns: int = 6
    server_side_clearing: bool = False
    """Clear with the API's context editing (clear_tool_uses_20250919) instead of locally."""
    cache_breakpoints: bool = True
    """Mark the cacheable prefix (tools, system, startup block, newest message); off only to measure without."""
    # -- prices (spec D2 list prices of the current Sonnet; per million tokens)
    price_input: float = 3.0
    price_output: float = 15.0
    cache_write_multiplier: float = 1.25
    cache_read_multiplier: float = 0.1

    def policy(self, window: int):
        from .compaction import ContextPolicy

        return ContextPolicy(window=window, max_tokens=self.max_tokens, clear_at=self.clear_at,
                             clear_keep=self.clear_keep, clear_at_least=self.clear_at_least,
                             keep_turns=self.keep_turns, server_side_clearing=self.server_side_clearing)

    def prices(self):
        from .ledger import Prices

        return Prices(self.price_input, self.price_output, self.cache_write_multiplier, self.cache_read_multiplier)

    def replace(self, **changes: Any) -> "AgentSettings":
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any], base: "AgentSettings | None" = None) -> tuple["AgentSettings", list[str]]:
        base = base or cls()
        fields = {f.name: f for f in dataclasses.fields(cls)}
        changes: dict[str, Any] = {}
        problems: list[str] = []
        for key, value in raw.items():
            name = re.sub(r"(?<!^)(?=[A-Z])", "_", str(key)).lower().replace("-", "_")
            if name not in fields:
                problems.append(f"agent settings: unknown key {key!r}")
                continue
            got = _coerce(name, value, getattr(base, name))
            if isinstance(got, _Bad):
                problems.append(f"agent settings: {key} {got.why}; using {getattr(base, name)!r}")
                continue
            changes[name] = got
        return dataclasses.replace(base, **changes), problems


class _Bad:
    def __init__(self, why: str) -> None:
        self.why = why


def _coerce(name: str, value: Any, default: Any) -> Any:
    if name in ("yes_to", "deny"):
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            return _Bad("must be a list of strings")
        return tuple(value)
    if name in ("preview_confirms", "server_side_clearing", "cache_breakpoints"):
        return value if isinstance(value, bool) or value is None else _Bad("must be true or false")
    if name == "clear_at" and value is None:
        return None
    if name == "model":
        return value if isinstance(value, str) and value.strip() else _Bad("must be a model name")
    if name in ("max_run_tokens", "timeout_s") and value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return _Bad("must be a number")
    if value < 0 or (value == 0 and name not in ("clear_keep", "clear_at_least")):
        return _Bad("must be positive")
    floats = ("timeout_s", "retry_backoff_s", "price_input", "price_output", "cache_write_multiplier",
              "cache_read_multiplier")
    return float(value) if name in floats else int(value)


def agent_settings_for(root: Path) -> tuple[AgentSettings, list[str]]:
    """The `[agent]` table of the workspace configuration."""
    from ..core.config import read_config

    raw, errors, source = read_config(root)
    table = raw.get("agent", {})
    if not isinstance(table, dict):
        return AgentSettings(), errors + [f"{source}: [agent] must be a table"]
    settings, problems = AgentSettings.from_mapping(table)
    where = f"{source}: " if source else ""
    return settings, errors + [where + p for p in problems]
