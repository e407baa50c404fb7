"""Plain data returned by the loader: blocks of the session, skipped sources, skills."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Block kinds, in the vocabulary of the JSON schema (docs/json-schema.md).
SYSTEM_PROMPT = "system_prompt"
TOOL_SCHEMAS = "tool_schemas"
CONTEXT_HEADER = "context_header"  # "<system-reminder> ... # claudeMd ..." preamble of the startup message
CONTEXT_FOOTER = "context_footer"  # "# currentDate ... </system-reminder>"
CLAUDE_MD = "claude_md"  # CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md (tier tells which)
AGENTS_MD = "agents_md"
RULE = "rule"
IMPORT = "import"
AUTO_MEMORY = "auto_memory"
SKILL_LISTING = "skill_listing"
READ = "read"  # the tool result of reading a touched file
NESTED_CLAUDE_MD = "nested_claude_md"
NESTED_AGENTS_MD = "nested_agents_md"
NESTED_RULE = "nested_rule"  # unconditional rule of a directory below the start dir
PATH_RULE = "path_rule"  # rule whose `paths:` matched a touched file
# Other agents' files (spec C; profiles in core/profiles/)
GLOBAL_INSTRUCTIONS = "global_instructions"  # ~/.codex/AGENTS.md, ~/.gemini/GEMINI.md, ~/.copilot/copilot-instructions.md
CURSOR_RULE = "cursor_rule"  # .cursor/rules/**/*.mdc that applies (Always, or Auto Attached on a touch)
RULE_LISTING = "rule_listing"  # Cursor's Agent Requested rules: name and description, the body on request
CURSORRULES = "cursorrules"  # legacy .cursorrules
COPILOT_INSTRUCTIONS = "copilot_instructions"  # .github/copilot-instructions.md
PATH_INSTRUCTIONS = "path_instructions"  # .github/instructions/**/*.instructions.md whose applyTo matched
GEMINI_MD = "gemini_md"
NESTED_GEMINI_MD = "nested_gemini_md"  # JIT: a GEMINI.md a tool's touch discovered

STARTUP = "startup"

# How each block kind is named to people (CLI tables, hovers, reports).
KIND_LABELS = {
    TOOL_SCHEMAS: "tool schemas", SYSTEM_PROMPT: "system prompt", CONTEXT_HEADER: "claudeMd header",
    CONTEXT_FOOTER: "claudeMd footer", CLAUDE_MD: "CLAUDE.md", AGENTS_MD: "AGENTS.md", RULE: "rule",
    IMPORT: "@import", AUTO_MEMORY: "auto memory", SKILL_LISTING: "skills listing", READ: "file read",
    NESTED_CLAUDE_MD: "nested CLAUDE.md", NESTED_AGENTS_MD: "nested AGENTS.md", NESTED_RULE: "nested rule",
    PATH_RULE: "path rule", GLOBAL_INSTRUCTIONS: "global instructions", CURSOR_RULE: "Cursor rule",
    RULE_LISTING: "rule listing", CURSORRULES: ".cursorrules", COPILOT_INSTRUCTIONS: "copilot-instructions.md",
    PATH_INSTRUCTIONS: "path instructions", GEMINI_MD: "GEMINI.md", NESTED_GEMINI_MD: "nested GEMINI.md",
}

# Agent profiles (core/loader.py PROFILES) as named to people.
AGENT_NAMES = {"claude-code": "Claude Code", "codex": "Codex", "cursor": "Cursor", "copilot": "Copilot",
               "gemini": "Gemini CLI"}


@dataclass
class Block:
    kind: str
    trigger: str
    text: str
    source: Path | None = None
    tier: str | None = None
    """Managed | User | Project | Local | AutoMem (spec A3 labels), None for non-file blocks."""
    lines: tuple[int, int] | None = None
    """1-based first and last line of ``source`` actually loaded."""
    cut: str | None = None
    """What of the source was not loaded, in words (e.g. MEMORY.md past line 200)."""
    notes: list[str] = field(default_factory=list)
    tokens: int = 0
    cumulative: int = 0
    estimated: bool = True
    """Token figure is an estimate (local tokenizer or a configured constant)."""
    startup: bool = True
    """Sent before the first prompt (False for everything a touched file appends)."""


@dataclass
class Skipped:
    source: Path
    reason: str
    trigger: str = STARTUP
    kind: str = CLAUDE_MD
    when: str | None = None
    """For a file the agent knows but did not load yet: `touch` (loads when a matching file is touched),
    `request` (the model may fetch it), `manual` (only when the user names it); None = not loaded at all."""


@dataclass
class SkillInfo:
    name: str
    source: Path
    scope: str  # managed | personal | project | command
    description: str
    entry: str
    """The listing line as sent when the description survives."""
    listed: bool = True
    """False when hidden from the model (disable-model-invocation, path-scoped not yet activated)."""
    description_dropped: bool = False
    truncated: bool = False
    hidden_reason: str | None = None
    shadowed_by: Path | None = None
    frontmatter: dict[str, Any] | None = None
    frontmatter_error: str | None = None
    paths: tuple[str, ...] = ()


@dataclass
class SkillListing:
    skills: list[SkillInfo]
    budget_chars: int
    full_chars: int
    """Characters the listing would take with every description."""
    sent_chars: int
    """Characters after dropping descriptions to fit the budget."""

    @property
    def over_budget(self) -> bool:
        return self.full_chars > self.budget_chars


@dataclass
class Session:
    start_dir: Path
    root: Path
    """Workspace root: `source` paths inside it are shown relative."""
    blocks: list[Block]
    skipped: list[Skipped]
    skills: SkillListing | None
    window: int
    token_method: str
    touched: list[Path] = field(default_factory=list)
    agent: str = "claude-code"

    @property
    def total_tokens(self) -> int:
        return self.blocks[-1].cumulative if self.blocks else 0

    @property
    def startup_tokens(self) -> int:
        return sum(b.tokens for b in self.blocks if b.startup)

    def display_source(self, path: Path | None) -> str | None:
        return display_path(path, self.root)


def display_path(path: Path | None, root: Path) -> str | None:
    if path is None:
        return None
    from .paths import rel_path

    return rel_path(path, root)
