"""Workspace configuration: `.ctxls.toml` or `[tool.ctxls]` in pyproject.toml. Never raises."""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .settings import Settings

CONFIG_FILE = ".ctxls.toml"


def find_root(start: Path) -> Path:
    """Workspace root for ``start``: nearest ancestor with `.ctxls.toml` or `.git`, else ``start``."""
    return choose_root(start).root


@dataclass(frozen=True)
class RootChoice:
    root: Path
    marker: str | None
    """What marks ``root`` (`.ctxls.toml`, `.git`, `[tool.ctxls]`), or None: no marker above the start."""

    def why(self) -> str:
        if self.marker is None:
            return "no .git, .ctxls.toml or [tool.ctxls] in it or above it"
        return f"it holds {self.marker}"


def choose_root(start: Path) -> RootChoice:
    """The workspace root for ``start`` and why. A directory that cannot be examined counts as unmarked (the
    walk goes on upwards): never raises."""
    start = Path(os.path.abspath(start))
    d = start if _is_dir(start) else start.parent
    probe = d
    while True:
        marker = _marker(probe)
        if marker is not None:
            return RootChoice(probe, marker)
        if probe.parent == probe:
            return RootChoice(d, None)
        probe = probe.parent


def _is_dir(p: Path) -> bool:
    try:
        return p.is_dir()
    except OSError:
        return False


def _marker(d: Path) -> str | None:
    try:
        if (d / CONFIG_FILE).is_file():
            return CONFIG_FILE
        if (d / ".git").exists():
            return ".git"
    except OSError:  # (an unreadable directory: Path.is_file raises on EACCES)
        return None
    return "[tool.ctxls] in pyproject.toml" if _has_tool_table(d) else None


def count_dirs(root: Path, limit: int) -> int:
    """Directories under ``root`` (itself included), counting stops past ``limit``; unreadable ones count
    once and are not entered. Skips what the workspace scan skips (.git, node_modules, ...)."""
    from .discovery import SKIP_DIRS

    n, stack = 0, [str(root)]
    while stack and n <= limit:
        d = stack.pop()
        n += 1
        try:
            with os.scandir(d) as it:
                for e in it:
                    try:
                        if e.is_dir(follow_symlinks=False) and e.name not in SKIP_DIRS:
                            stack.append(e.path)
                    except OSError:
                        continue
        except OSError:
            continue
    return n


def _has_tool_table(d: Path) -> bool:
    py = d / "pyproject.toml"
    try:
        if not py.is_file():
            return False
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
        for key in ("home", "config_dir", "managed_dir", "auto_memory_dir", "ceiling", "codex_home"):
            v = flat.get(key)
            if isinstance(v, str) and not v.startswith(("/", "~")):
                flat[key] = str((source.parent / v).resolve())
    settings, problems = Settings.from_mapping(flat, base)
    where = f"{source}: " if source else ""
    return settings, errors + [where + p for p in problems]


# Claude Code's own settings files, highest precedence first (managed > local project > shared project > user).
AGENT_SETTINGS = ("managed", "local", "project", "user")


def agent_settings_files(root: Path, settings: Settings) -> dict[str, Path]:
    """Where Claude Code reads the settings that change what loads, for a project at ``root``."""
    return {"managed": settings.managed_dir / "managed-settings.json",
            "local": root / ".claude" / "settings.local.json",
            "project": root / ".claude" / "settings.json",
            "user": settings.claude_dir / "settings.json"}


def apply_agent_settings(settings: Settings, root: Path) -> tuple[Settings, list[str]]:
    """``settings`` with what Claude Code's own settings files say about loading (spec A6, A7):
    `claudeMdExcludes` of every file joins `claude_md_excludes`; `autoMemoryEnabled: false` (the most important
    file that sets it decides) turns auto memory off; `autoMemoryDirectory` applies when ctxls sets no
    directory of its own. Unreadable or malformed files are problems, never errors."""
    problems: list[str] = []
    excludes = list(settings.claude_md_excludes)
    enabled: bool | None = None
    memory_dir: str | None = None
    files = agent_settings_files(root, settings)
    for scope in AGENT_SETTINGS:
        path = files[scope]
        try:
            raw = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{path}: cannot read ({exc}); ignored")
            continue
        if not raw.strip():
            continue  # an empty settings file sets nothing
        try:
            data = json.loads(raw)
        except ValueError as exc:
            problems.append(f"{path}: not valid JSON ({exc}); ignored")
            continue
        if not isinstance(data, dict):
            continue
        got = data.get("claudeMdExcludes")
        if got is not None:
            if isinstance(got, list) and all(isinstance(g, str) for g in got):
                excludes += [g for g in got if g not in excludes]
            else:
                problems.append(f"{path}: claudeMdExcludes must be a list of globs; ignored")
        if enabled is None and isinstance(data.get("autoMemoryEnabled"), bool):
            enabled = data["autoMemoryEnabled"]
        if memory_dir is None and isinstance(data.get("autoMemoryDirectory"), str) and data["autoMemoryDirectory"]:
            memory_dir = data["autoMemoryDirectory"]
    changes: dict = {}
    if tuple(excludes) != settings.claude_md_excludes:
        changes["claude_md_excludes"] = tuple(excludes)
    if enabled is False and settings.auto_memory_enabled:
        changes["auto_memory_enabled"] = False
    if memory_dir is not None and settings.auto_memory_dir is None:
        if memory_dir.startswith("~/") or memory_dir == "~":
            changes["auto_memory_dir"] = settings.home / memory_dir[2:]
        elif os.path.isabs(memory_dir):
            changes["auto_memory_dir"] = Path(memory_dir)
        else:
            problems.append(f"autoMemoryDirectory must be absolute or start with ~/: {memory_dir!r}; ignored")
    return (settings.replace(**changes) if changes else settings), problems


def check_config_for(root: Path):
    """The `[check]` table of the workspace config as a CheckConfig, with problems."""
    from .workspace import CheckConfig

    raw, errors, source = read_config(root)
    table = raw.get("check", {})
    if not isinstance(table, dict):
        return CheckConfig(), [f"{source}: [check] must be a table"]
    cfg, problems = CheckConfig.from_mapping(table)
    where = f"{source}: " if source else ""
    return cfg, [where + p for p in problems]
