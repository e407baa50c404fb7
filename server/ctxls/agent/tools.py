"""The agent's tools as the model sees them: names, descriptions and JSON Schemas, in a fixed order.

The definitions are deterministic (no timestamps, stable key order) so that they form a stable cached prefix.
Arguments are validated against the schemas here, before anything runs.
"""

from __future__ import annotations

from typing import Any

import jsonschema

from .handoff import TOOL as _HANDOFF

_PATH = {"type": "string", "minLength": 1, "description": "Path relative to the workspace root."}

TOOLS: tuple[dict[str, Any], ...] = (
    {"name": "read_file",
     "description": "Read a text file of the workspace, with line numbers. Reading a file may also add the "
                    "instructions (CLAUDE.md, rules) that apply to its directory.",
     "input_schema": {"type": "object", "additionalProperties": False, "required": ["path"], "properties": {
         "path": _PATH,
         "start_line": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)."},
         "end_line": {"type": "integer", "minimum": 1, "description": "Last line to read (inclusive)."}}}},
    {"name": "list_dir",
     "description": "List a directory of the workspace (directories end with /).",
     "input_schema": {"type": "object", "additionalProperties": False, "required": ["path"],
                      "properties": {"path": _PATH}}},
    {"name": "search",
     "description": "Search file contents with a regular expression (Python syntax). Honours .gitignore; "
                    "returns at most 200 matching lines as path:line: text.",
     "input_schema": {"type": "object", "additionalProperties": False, "required": ["pattern"], "properties": {
         "pattern": {"type": "string", "minLength": 1, "maxLength": 1000},
         "path": {**_PATH, "description": "Directory or file to search (default: the whole workspace)."}}}},
    {"name": "edit_file",
     "description": "Replace one exact, unique occurrence of old_string with new_string in a file. Needs the "
                    "user's approval unless allow-listed.",
     "input_schema": {"type": "object", "additionalProperties": False,
                      "required": ["path", "old_string", "new_string"], "properties": {
                          "path": _PATH, "old_string": {"type": "string", "minLength": 1},
                          "new_string": {"type": "string"}}}},
    {"name": "write_file",
     "description": "Create or overwrite a file with the given content. Needs the user's approval unless "
                    "allow-listed.",
     "input_schema": {"type": "object", "additionalProperties": False, "required": ["path", "content"],
                      "properties": {"path": _PATH, "content": {"type": "string"}}}},
    {"name": "run_command",
     "description": "Run a shell command in the workspace root. Output is truncated (head and tail). Needs the "
                    "user's approval unless allow-listed.",
     "input_schema": {"type": "object", "additionalProperties": False, "required": ["command"], "properties": {
         "command": {"type": "string", "minLength": 1},
         "timeout_s": {"type": "number", "exclusiveMinimum": 0, "maximum": 3600,
                       "description": "Seconds before the command is killed (default 120)."}}}},
    {"name": "load_skill",
     "description": "Load the full instructions of a skill from the skills listing, by name.",
     "input_schema": {"type": "object", "additionalProperties": False, "required": ["name"],
                      "properties": {"name": {"type": "string", "minLength": 1}}}},
    {"name": "remember",
     "description": "Save one short fact to the project's memory, for later sessions.",
     "input_schema": {"type": "object", "additionalProperties": False, "required": ["fact"],
                      "properties": {"fact": {"type": "string", "minLength": 1}}}},
    _HANDOFF,
)

WRITES = frozenset({"edit_file", "write_file"})
COMMANDS = frozenset({"run_command"})
MANAGED = frozenset({"remember", "update_handoff"})
"""Tools that write only where ctxls manages the files: not gated, but audited and refusing secrets."""

_BY_NAME = {t["name"]: t for t in TOOLS}
_VALIDATORS: dict[str, jsonschema.protocols.Validator] = {}


def definitions(extra: tuple[dict[str, Any], ...] = ()) -> list[dict[str, Any]]:
    """The tool list sent to the model (copies, so a caller may add cache_control)."""
    return [dict(t) for t in TOOLS + extra]


def register(tool: dict[str, Any]) -> None:
    """Add a tool definition of another module (the context engine's update_handoff)."""
    _BY_NAME[tool["name"]] = tool
    _VALIDATORS.pop(tool["name"], None)


def validate(name: str, args: Any) -> str | None:
    """None when ``args`` fit the tool's schema, else one sentence naming the problem (for the model)."""
    tool = _BY_NAME.get(name)
    if tool is None:
        return f"unknown tool {name!r}; the tools are: {', '.join(_BY_NAME)}"
    v = _VALIDATORS.get(name)
    if v is None:
        cls = jsonschema.validators.validator_for(tool["input_schema"])
        v = _VALIDATORS[name] = cls(tool["input_schema"])
    err = jsonschema.exceptions.best_match(v.iter_errors(args))
    if err is None:
        return None
    where = "/".join(str(p) for p in err.absolute_path)
    return f"invalid arguments for {name}: {(where + ': ') if where else ''}{err.message}"
