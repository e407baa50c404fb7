"""Settings of the simulated agent.

Every value that `shared/spec/loading.md` section F lists as changed between versions is a setting here,
defaulting to the newest behaviour.  Settings are frozen; derive a changed copy with ``settings.replace(...)``.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

# AGENTS.md handling in Claude Code (spec A8, F3): plugin option `instructionFiles`, newest default first.
AGENTS_MD_MODES = ("claude-md-or-agents-md", "claude-md", "claude-md-and-agents-md", "managed-only")
AUTO_MEMORY_POSITIONS = ("first", "last")  # spec A1 row 4 / F6
COPILOT_AGENTS = ("coding-agent", "code-review")  # which Copilot surface the copilot profile simulates (spec C4)


@dataclass(frozen=True)
class Settings:
    # -- window and fixed overhead ------------------------------------------------------------------
    window: int = 200_000
    """Context window in tokens (200K default; 1,000,000 for the 1M option)."""
    system_prompt_tokens: int = 2_600
    """Estimate of Claude Code's own system prompt (what `/context` reports as "System prompt")."""
    tool_schema_tokens: int = 13_900
    """Estimate of the built-in tool schemas (what `/context` reports as "System tools")."""
    max_output_tokens: int = 32_000
    """Used for the auto-compact threshold: window - min(max_output, 20,000) - 13,000 (spec A11)."""

    # -- where things live ------------------------------------------------------------------------
    home: Path = field(default_factory=Path.home)
    """The user's home; tests point it at a fixture so they never touch the real one."""
    config_dir: Path | None = None
    """`~/.claude` (CLAUDE_CONFIG_DIR when set)."""
    managed_dir: Path = Path("/etc/claude-code")
    """Directory of the managed CLAUDE.md (Linux path; see spec A1)."""
    auto_memory_dir: Path | None = None
    """Override of the auto-memory directory (`autoMemoryDirectory`); derived from the git root when unset."""
    ceiling: Path | None = None
    """Stop the upward walk here (inclusive). None = filesystem root, as Claude Code does."""

    # -- loader switches ------------------------------------------------------------------------
    import_max_hops: int = 4
    """@import depth (spec A4, F1): four hops since the 2026-07-10 docs; five in older docs."""
    max_file_bytes: int = 4 * 1024 * 1024
    """CLAUDE.md larger than this is skipped (spec A6)."""
    memory_max_lines: int = 200
    memory_max_bytes: int = 25_000
    auto_memory_enabled: bool = True
    auto_memory_position: str = "first"
    """Where the MEMORY.md head sits among the startup blocks (F6): the 2026-08 docs timeline shows it right
    after the system prompt ("first"); the 2026-03 source lists it last ("last")."""
    external_imports_approved: bool = True
    """Whether the user approved imports that resolve outside the project (spec A4)."""
    agents_md_mode: str = "claude-md-or-agents-md"
    claude_md_excludes: tuple[str, ...] = ()
    """`claudeMdExcludes`: globs on absolute paths; never excludes managed files (spec A6)."""
    paths_md_root_only: bool = False
    """F2: `*.md` in `paths:` matches at any depth (gitignore semantics, default) or only at the root (doc table)."""
    respect_gitignore: bool = False
    """Skip gitignored directories when scanning the workspace. Claude Code itself walks regardless (spec A1)."""

    # -- skills listing (spec B3, F5) -----------------------------------------------------------
    skill_desc_cap: int = 1_536
    skill_budget_fraction: float = 0.01
    skill_budget_chars: int | None = None
    """Fixed override of the listing budget (SLASH_COMMAND_TOOL_CHAR_BUDGET)."""
    skill_invocations: Mapping[str, int] = field(default_factory=dict)
    """How often each skill was invoked; the least-invoked lose their descriptions first."""

    # -- reading files (the Read tool) ------------------------------------------------------------
    read_max_lines: int = 2_000

    # -- tokens ---------------------------------------------------------------------------------
    token_factor: float = 1.0
    """Calibration factor applied to cl100k counts (spec E); 1.0 = raw cl100k."""
    model: str | None = None
    """Model name; picks a calibration factor from the table in tokens.py when token_factor is 1.0."""

    today: str = field(default_factory=lambda: _dt.date.today().isoformat())

    # -- other agents (spec C; core/profiles/) ------------------------------------------------------
    codex_home: Path | None = None
    """`$CODEX_HOME` (default `~/.codex`): its AGENTS.override.md, else AGENTS.md, is Codex's global file."""
    codex_project_doc_max_bytes: int = 32_768
    """`project_doc_max_bytes`: the byte budget all of Codex's project docs share (0 disables them)."""
    codex_project_root_markers: tuple[str, ...] = (".git",)
    """`project_root_markers`: the upward walk from cwd stops at the first directory holding one of these."""
    codex_fallback_filenames: tuple[str, ...] = ()
    """`project_doc_fallback_filenames`, tried after AGENTS.override.md and AGENTS.md in each directory."""
    cursor_md_rules: bool = False
    """Also read plain `.md` files under `.cursor/rules/` (some third-party references say Cursor does; the
    official guidance names `.mdc`)."""
    cursor_legacy_rules: bool = True
    """Read the legacy `.cursorrules` at the workspace root (deprecated, still read)."""
    copilot_agent: str = "coding-agent"
    """The Copilot surface simulated: `coding-agent` (and the CLI) or `code-review` (`excludeAgent` is matched
    against it; code review reads only the .github instruction files, each cut at copilot_review_max_chars)."""
    copilot_review_max_chars: int = 4_000
    """Copilot code review reads only the first 4,000 characters of an instructions file (GitHub blog, 2025-11)."""
    copilot_root_files: tuple[str, ...] = ("CLAUDE.md", "GEMINI.md")
    """Other agents' files Copilot accepts at the repository root, besides AGENTS.md."""
    gemini_context_file_names: tuple[str, ...] = ("GEMINI.md",)
    """`context.fileName` (string or list): the names Gemini CLI loads as context files."""
    gemini_jit_context: bool = True
    """`experimental.jitContext` (default since 2026-03-16): subdirectory context files load when a tool touches a
    path there; False = the legacy eager scan of every directory below cwd at startup."""
    gemini_discovery_max_dirs: int = 200
    """`context.discoveryMaxDirs`: directories the legacy eager scan visits at most."""
    gemini_import_max_depth: int = 5
    """`@file` import depth in GEMINI.md (memport's maxDepth): imports five hops deep load, a sixth does not."""

    # -----------------------------------------------------------------------------------------
    @property
    def claude_dir(self) -> Path:
        return self.config_dir if self.config_dir is not None else self.home / ".claude"

    @property
    def skill_budget(self) -> int:
        if self.skill_budget_chars is not None:
            return self.skill_budget_chars
        return int(self.window * 4 * self.skill_budget_fraction)

    @property
    def autocompact_threshold(self) -> int:
        return self.window - min(self.max_output_tokens, 20_000) - 13_000

    def replace(self, **changes: Any) -> "Settings":
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], base: "Settings | None" = None) -> tuple["Settings", list[str]]:
        """Build settings from user data (TOML, JSON, LSP options). Unknown keys or bad values become
        messages and fall back to the default; this never raises."""
        base = base or cls()
        errors: list[str] = []
        changes: dict[str, Any] = {}
        fields = {f.name: f for f in dataclasses.fields(cls)}
        for raw_key, value in data.items():
            key = raw_key.replace("-", "_")
            f = fields.get(key)
            if f is None:
                errors.append(f"unknown setting {raw_key!r}")
                continue
            current = getattr(base, key)
            try:
                changes[key] = _coerce(key, value, current)
            except (TypeError, ValueError) as exc:
                errors.append(f"setting {raw_key!r}: {exc}; using {current!r}")
        return dataclasses.replace(base, **changes), errors


_PATH_KEYS = {"home", "config_dir", "managed_dir", "auto_memory_dir", "ceiling", "codex_home"}
_NAME_LIST_KEYS = {"codex_project_root_markers", "codex_fallback_filenames", "copilot_root_files",
                   "gemini_context_file_names"}


def _coerce(key: str, value: Any, current: Any) -> Any:
    if key in _PATH_KEYS:
        if value is None:
            return None
        if not isinstance(value, str):
            raise TypeError("expected a path string")
        return Path(value).expanduser()
    if key == "agents_md_mode":
        if value not in AGENTS_MD_MODES:
            raise ValueError(f"expected one of {', '.join(AGENTS_MD_MODES)}")
        return value
    if key == "auto_memory_position":
        if value not in AUTO_MEMORY_POSITIONS:
            raise ValueError(f"expected one of {', '.join(AUTO_MEMORY_POSITIONS)}")
        return value
    if key in _NAME_LIST_KEYS:
        if isinstance(value, str) and key == "gemini_context_file_names":  # context.fileName: a string or a list
            value = [value]
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v for v in value):
            raise TypeError("expected a list of file names")
        return tuple(value)
    if key == "copilot_agent":
        if value not in COPILOT_AGENTS:
            raise ValueError(f"expected one of {', '.join(COPILOT_AGENTS)}")
        return value
    if key == "claude_md_excludes":
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise TypeError("expected a list of glob strings")
        return tuple(value)
    if key == "skill_invocations":
        if not isinstance(value, Mapping):
            raise TypeError("expected a table of name = count")
        return {str(k): int(v) for k, v in value.items()}
    if isinstance(current, bool) or key in {"auto_memory_enabled", "external_imports_approved",
                                             "paths_md_root_only", "respect_gitignore"}:
        if not isinstance(value, bool):
            raise TypeError("expected true or false")
        return value
    if key in {"skill_budget_chars", "model"} and value is None:
        return None
    if key in {"token_factor", "skill_budget_fraction"}:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ValueError("expected a positive number")
        return float(value)
    if key in {"model", "today"}:
        if not isinstance(value, str):
            raise TypeError("expected a string")
        return value
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("expected a non-negative integer")
    return value
