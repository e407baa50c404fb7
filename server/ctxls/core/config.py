"""Workspace configuration: `.ctxls.toml` or `[tool.ctxls]` in pyproject.toml. Never raises."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from .settings import Settings

CONFIG_FILE = ".ctxls.toml"


def find_root(start: Path) -> Path:
    """Workspace root for ``start``: nearest ancestor with `.ctxls.toml` or `.git`, else ``start``."""
    start = Path(os.path.abspath(start))
    d = start if start.is_dir() else start.parent
    probe = d
    while True:
        if (probe / CONFIG_FILE).is_file() or (probe / ".git").exists() or _has_tool_table(probe):
            return probe
        if probe.parent == probe:
            return d
        probe = probe.parent


def _has_tool_table(d: Path) -> bool:
    py = d / "pyproject.toml"
    if not py.is_file():
        return False
    try:
        return isinstance(tomllib.loads(py.read_text(encoding="utf-8")).get("tool", {}).get("ctxls"), dict)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False


def read_config(root: Path) -> tuple[dict[str, Any], list[str], Path | None]:
    """Raw settings table, problems, and the file it came from."""
    cfg = root / CONFIG_FILE
    if cfg.is_file():
        try:
            return tomllib.loads(cfg.read_text(encoding="utf-8")), [], cfg
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            return {}, [f"{cfg}: {exc}; using defaults"], cfg
    py = root / "pyproject.toml"
    if py.is_file():
        try:
            data = tomllib.loads(py.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            return {}, [f"{py}: {exc}; ignoring [tool.ctxls]"], py
        table = data.get("tool", {}).get("ctxls")
        if isinstance(table, dict):
            return table, [], py
    return {}, [], None


def settings_for(root: Path, base: Settings | None = None) -> tuple[Settings, list[str]]:
    """Settings from the workspace config. Sub-tables (e.g. `[check]` of later features) are left to their owners."""
    raw, errors, source = read_config(root)
    flat = {k: v for k, v in raw.items() if not isinstance(v, dict) or k == "skill_invocations"}
    # Relative paths in a config file are relative to the file's directory.
    if source is not None:
        for key in ("home", "config_dir", "managed_dir", "auto_memory_dir", "ceiling"):
            v = flat.get(key)
            if isinstance(v, str) and not v.startswith(("/", "~")):
                flat[key] = str((source.parent / v).resolve())
    settings, problems = Settings.from_mapping(flat, base)
    where = f"{source}: " if source else ""
    return settings, errors + [where + p for p in problems]


def check_config_for(root: Path):
    """The `[check]` table of the workspace config as a CheckConfig, with problems."""
    from .check import CheckConfig

    raw, errors, source = read_config(root)
    table = raw.get("check", {})
    if not isinstance(table, dict):
        return CheckConfig(), [f"{source}: [check] must be a table"]
    cfg, problems = CheckConfig.from_mapping(table)
    where = f"{source}: " if source else ""
    return cfg, [where + p for p in problems]
