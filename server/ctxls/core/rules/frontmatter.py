"""Rules: frontmatter (CTX501, CTX502) of rules, skills, legacy commands and memory files (spec A5, A7, B2):
blocks that do not parse or are not read, and fields the agent does not know, ignores, or that belong to another
agent that reads the same file (its profile says what it does with it)."""

from __future__ import annotations

import datetime
import difflib
import os
import re
from pathlib import Path

import yaml

from .. import lazyre
from .. import discovery as D
from ..loader import is_within
from ..workspace import FileInfo, Workspace
from ..findings import Edit, Finding, Fix, Span
from ..globs import split_outside_braces
from ..generated import generator_of
from ..mentions import generated_regions
from ..markdown import _TOP_KEY_VALUE_RE, _YAML_LOADER, quote_problem_values, structure
from .. import profiles
from ..skills import command_name
from . import rule
from .sources import (COMMAND_IGNORED, KEY_LINE_RE, MEMORY_FIELDS, RULE_FIELDS, SKILL_FIELDS, key_span, kind_word,
                      read_frontmatter, sources, vendored)

# Frontmatter of other agents that people copy into Claude Code rules: the profiles' own fields (Cursor's
# `globs`/`alwaysApply`, Copilot's `applyTo`/`excludeAgent`; core/profiles), plus Windsurf's `trigger`, an agent
# ctxls has no profile for (`_WINDSURF`).
_FOREIGN = {f: f"a {profiles.module(a).LABEL} field" for a in profiles.RULE_FIELD_AGENTS
            for f in profiles.module(a).RULE_FIELDS} | {"trigger": "a Windsurf field"}
# Fields that scope a rule to some files (Cursor's and Windsurf's `globs`, Copilot's `applyTo`): copied without
# `paths:`, the author expected a scope Claude Code ignores, and Claude Code loads the rule in every session.
_SCOPING = frozenset({"globs", "applyTo"})
_MATCH_ALL = frozenset({"**", "**/*", "*", "/**", "/**/*", "./**", "./**/*"})


def _narrows(key: str, data: dict) -> bool:
    """Whether ``key`` scopes the rule to fewer files than all while Claude Code loads it everywhere (no `paths:`):
    `applyTo: "**/*"` means every file, as loading everywhere does."""
    if key not in _SCOPING or "paths" in data:
        return False
    value = data.get(key)
    items = value if isinstance(value, list) else split_outside_braces(value) if isinstance(value, str) else []
    patterns = {str(i).strip().strip("'\"") for i in items} - {""}
    return not patterns <= _MATCH_ALL


# ============================================================================================ CTX501
_CONSEQUENCE = {
    D.RULE: "Claude Code cannot read its `paths:`, so the rule loads in every session",
    D.SKILL: "Claude Code ignores every field (the description falls back to the first paragraph)",
    D.COMMAND: "Claude Code ignores every field of it",
    D.MEMORY_TOPIC: "the memory's name, description and type are lost",
    D.MEMORY_INDEX: "its fields are lost",
}


@rule("CTX501", "frontmatter-invalid", "skills", "error",
      summary="YAML frontmatter of a rule, skill, command or memory file does not parse, parses only with Claude "
              "Code's lenient retry, is never closed, or does not start on line 1.",
      why="When the frontmatter does not parse, Claude Code drops every field in it: a rule's `paths:` is lost "
          "and the rule loads in every session, a skill falls back to its first paragraph as description. Before "
          "giving up it tries once more with every top-level value that holds a YAML-special character (`: `, "
          "`*`, `{`, `[`, `#`, ...) quoted, so `paths: **/*.ts` or `description: Deploy: runs it` still work "
          "there (a warning: other agents, editors and YAML tools drop those fields). A `---` opener without a "
          "closing `---` is not frontmatter at all, so the raw `key: value` lines are sent to the model as text; "
          "neither is a block below line 1 (under a title).",
      example="```markdown\n---\ndescription: Deploy: runs the release script\n---\n```\n(a warning: Claude Code "
              "reads it by quoting the value), or an error when even that cannot help:\n\n```markdown\n---\n"
              "paths:\n  - \"src/api/**\n---\n```",
      fix="Fix the YAML at the reported line (quote values that contain `: ` or start with a special "
          "character). When Claude Code's retry reads the block, the quick fix makes the same quoting edits "
          "(safe: the fields read the same, now as valid YAML); for an unclosed block it offers to insert the "
          "closing `---` after the last field, and to move a block found under the title to the top (neither "
          "applied by --fix). In a command under .claude/commands, which only Claude Code reads, a block its retry "
          "reads is info: the unquoted `argument-hint: [a|b]` its docs show. So is a rule under .claude/rules "
          "that no other agent's rule folder reaches (`paths: **/*.cs`), and a skill under .claude/skills "
          "in a workspace that shows no other agent (no Copilot .github files, .cursor, .agents/skills, .codex or "
          "GEMINI.md).")
def frontmatter_invalid(ws: Workspace):
    for fi in sources(ws, D.RULE, D.SKILL, D.COMMAND, D.MEMORY_INDEX, D.MEMORY_TOPIC):
        text = fi.text or ""
        if not text.startswith("---"):
            if "\n---" in text[:4000]:
                f = _misplaced(fi)
                if f is not None:
                    yield f
            continue
        fm = fi.prepared.frontmatter
        if fm.present:
            if fm.error is None and fm.strict_error is None:
                continue
            yield _invalid_yaml(ws, fi, fm.end_line - 1, fm.data if fm.error is None else None)
        elif fm.error and fi.lines[0].rstrip("\r").rstrip() == "---":
            f = _unclosed(fi)
            if f is not None:
                yield f


_SKILL_READERS = (".github/copilot-instructions.md", ".github/instructions", ".github/skills", ".github/agents",
                  ".github/prompts", ".cursor", ".cursorrules", ".agents/skills", ".codex", "GEMINI.md", ".gemini")
"""What shows that an agent other than Claude Code works in the workspace and may read its skills. (Not
`agents.targets`: an AGENTS.md makes the workspace Codex's too, but Codex reads `.agents/skills`, not
`.claude/skills`.)"""


def _other_skill_readers(ws: Workspace) -> bool:
    return any(ws.fs.exists(ws.root / p) for p in _SKILL_READERS)


def _rule_read_elsewhere(ws: Workspace, fi: FileInfo) -> bool:
    """Whether an agent other than Claude Code reads this rule file: a profiled agent's rule folder is or links to
    its folder (`rule_reading`), or its text lives outside `.claude/` in a folder shared with other agents."""
    real = ws.fs.realpath(fi.path)
    if real != str(fi.path) and "/.claude/" not in real.replace(os.sep, "/"):
        return True
    return any(profiles.module(a).rule_reading(fi.path, fi.text or "", ws.root, ws.settings, ws.fs) is not None
               for a in profiles.RULE_FIELD_AGENTS)


def _invalid_yaml(ws: Workspace, fi: FileInfo, close: int, lenient: dict | None) -> Finding:
    """The block does not parse; ``lenient`` is what Claude Code's retry reads from it (None: nothing)."""
    raw = "\n".join(l.rstrip("\r") for l in fi.lines[1:close])
    line, col, problem = 0, 0, "does not parse"
    try:
        data = yaml.load(raw, Loader=_YAML_LOADER)
        problem = f"is a {type(data).__name__}, not a mapping of fields"
        line = 1 if close > 1 else 0
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        ctx = getattr(exc, "context_mark", None)
        if mark is not None and mark.line + 1 >= close and ctx is not None:
            mark = ctx  # an unclosed `[`, `{` or quote fails at the end: point where it opened
        if mark is not None:
            line, col = min(mark.line + 1, close), mark.column
        problem = (getattr(exc, "problem", None) or str(exc).splitlines()[0]).strip()
    except Exception as exc:  # pragma: no cover - odd yaml failures
        problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    text = fi.lines[line].rstrip("\r")
    span = Span(line, min(col, len(text)), line, len(text)) if col < len(text) else Span(line, 0, line, len(text))
    if lenient is not None:
        fixes = _quote_fix(fi, close, lenient)
        if fi.kind == D.SKILL and ".claude" in fi.path.parts and not _other_skill_readers(ws):
            # (a skill under .claude/skills, in a workspace with no sign of another agent that reads skills there
            # or beside them: Copilot's .github files, Cursor's .cursor, Codex's .agents/skills)
            msg = (f"Frontmatter is not valid YAML (line {line + 1}: {problem}): Claude Code, the only agent this "
                   f"workspace shows, reads it by quoting values itself; other agents and YAML tools would drop its "
                   f"fields")
            return Finding("CTX501", "info", fi.path, span, msg, fixes=fixes)
        if fi.kind == D.RULE and ".claude" in fi.path.parts and not _rule_read_elsewhere(ws, fi) and \
                not any(isinstance(v, str) and v.lstrip()[:1] in ("[", "{") for v in lenient.values()):
            # (not `paths: [src/api/**`, an unclosed flow list the retry turns into a glob that matches nothing)
            # (`paths: **/*.cs` unquoted in .claude/rules, which no other agent's rule folder reaches: Claude Code
            # reads it, and quoting it could break the project's own sync scripts that copy the line as it is)
            msg = (f"Frontmatter is not valid YAML (line {line + 1}: {problem}): Claude Code, the only agent that "
                   f"reads this rule, reads it by quoting values itself; YAML tools drop its fields")
            return Finding("CTX501", "info", fi.path, span, msg, fixes=fixes)
        if fi.kind == D.COMMAND:
            # (a command under .claude/commands is Claude Code's alone, and its retry reads the unquoted form the
            # docs show, `argument-hint: [group] [dry run]`; a skill is read by other agents too)
            msg = (f"Frontmatter is not valid YAML (line {line + 1}: {problem}): Claude Code, the only agent that "
                   f"reads this command, reads it by quoting values itself; YAML tools drop its fields")
            return Finding("CTX501", "info", fi.path, span, msg, fixes=fixes)
        msg = (f"Frontmatter is not valid YAML (line {line + 1}: {problem}): Claude Code reads it only by quoting "
               f"values itself, other agents and YAML tools drop its fields; quote the values")
        return Finding("CTX501", "warning", fi.path, span, msg, fixes=fixes)
    consequence = _CONSEQUENCE.get(fi.kind, "its fields are lost")
    msg = f"Frontmatter does not parse (line {line + 1}: {problem}): {consequence}; fix the YAML"
    return Finding("CTX501", "error", fi.path, span, msg)


def _quote_fix(fi: FileInfo, close: int, lenient: dict) -> list[Fix]:
    """Claude Code's retry edits (`quote_problem_values`: each problem value double-quoted) as a fix, offered when
    they make the block valid YAML that reads exactly as the agent reads it now."""
    new_lines = [l.rstrip("\r") for l in fi.lines[1:close]]
    edits = []
    for i, line in enumerate(new_lines):
        quoted = quote_problem_values(line)
        if quoted == line:
            continue
        m = _TOP_KEY_VALUE_RE.match(line)
        if m is None:  # pragma: no cover - only such lines are rewritten
            continue
        value = quoted[len(m.group(1)) + 2:]
        new_lines[i] = line[:m.start(2)] + value
        edits.append(Edit(fi.path, Span(i + 1, m.start(2), i + 1, len(line)), value))
    if not edits:
        return []
    try:
        data = yaml.load("\n".join(new_lines), Loader=_YAML_LOADER)
    except Exception:
        return []
    if data != lenient:
        return []
    return [Fix("Quote the frontmatter values as Claude Code does", tuple(edits))]


_FIELDS_OF = {D.RULE: RULE_FIELDS | {"globs", "description", "alwaysApply"}, D.SKILL: SKILL_FIELDS,
              D.COMMAND: SKILL_FIELDS, D.MEMORY_INDEX: MEMORY_FIELDS, D.MEMORY_TOPIC: MEMORY_FIELDS}


def _misplaced(fi: FileInfo) -> Finding | None:
    """A frontmatter block that does not start on line 1 (under a title, after a blank line): Claude Code reads
    frontmatter only at the very start, so its fields are ignored and its lines sent as text."""
    lines = fi.lines
    st = structure(fi.text or "")
    hidden = st.code_lines | st.comment_lines  # an example of frontmatter in a code block is just that
    seen = 0
    for i in range(min(len(lines), 40)):
        if i in hidden:
            if lines[i].strip():
                seen += 1
            continue
        line = lines[i].rstrip("\r").rstrip()
        if line != "---":
            if line:
                seen += 1
                if seen > 3:
                    return None  # deep in the body: a thematic break, not a misplaced block
            continue
        close = next((j for j in range(i + 1, min(len(lines), i + 30))
                      if j not in hidden and lines[j].rstrip("\r").rstrip() == "---"), None)
        if close is not None and any(j in hidden for j in range(i, close + 1)):
            return None
        if close is None or close == i + 1:
            return None
        try:
            data = yaml.load("\n".join(l.rstrip("\r") for l in lines[i + 1:close]), Loader=_YAML_LOADER)
        except Exception:
            return None
        if not isinstance(data, dict) or not any(isinstance(k, str) and k in _FIELDS_OF.get(fi.kind, ())
                                                 for k in data):
            return None
        consequence = {D.RULE: "its `paths:` is ignored and the rule loads in every session",
                       D.SKILL: "its fields are ignored (the description falls back to the first paragraph)"
                       }.get(fi.kind, "its fields are ignored")
        block = "".join(l.rstrip("\r") + "\n" for l in lines[i:close + 1])
        # (not applied by --fix: moving it changes when the rule loads, which the author should confirm)
        fix = Fix("Move the frontmatter block to the top of the file",
                  (Edit(fi.path, Span(0, 0, 0, 0), block), Edit(fi.path, Span(i, 0, close + 1, 0), "")), safe=False)
        return Finding("CTX501", "error", fi.path, Span(i, 0, i, 3),
                       f"Frontmatter on line {i + 1} is not on line 1, so it is not frontmatter: Claude Code sends "
                       f"its lines as text and {consequence}; move the block to the top of the file", fixes=[fix])
    return None


def _unclosed(fi: FileInfo) -> Finding | None:
    last = 0
    for i in range(1, min(len(fi.lines), 200)):
        line = fi.lines[i].rstrip("\r")
        if KEY_LINE_RE.match(line) or (last and line[:1] in (" ", "\t") and line.strip()) or \
                (last and line.lstrip().startswith("- ")):
            last = i
            continue
        break
    if last == 0:
        return None  # a thematic break followed by prose: not meant as frontmatter
    fix = Fix("Close the frontmatter after its last field", (Edit(fi.path, Span(last + 1, 0, last + 1, 0), "---\n"),),
              safe=False)
    msg = (f"Frontmatter opened on line 1 is never closed: it is not frontmatter, its fields are ignored and sent "
           f"to the model as text; add a `---` line after line {last + 1}")
    return Finding("CTX501", "error", fi.path, Span(0, 0, 0, 3), msg, fixes=[fix])


# ============================================================================================ CTX502
@rule("CTX502", "frontmatter-unknown-field", "skills", "warning",
      summary="A frontmatter field the agent does not know (or ignores) in a rule, skill, command or memory file.",
      why="Unknown fields are silently ignored: a misspelt `allowed_tools` grants nothing, a Cursor-style `globs:` "
          "on a rule does not scope it (the rule loads in every session), `paths:` on a command or a CLAUDE.md does "
          "nothing. Skills uploaded to claude.ai or the Skills API (the portable Agent Skills spec) accept only "
          "`name`, `description`, `license`, `compatibility`, `metadata` and `allowed-tools`: any other field is "
          "a hard upload error, so keep custom data under `metadata:`. A field that is merely unknown to a rule or "
          "memory file is reported as info: it is stripped and costs nothing. So is descriptive metadata on a command or "
          "skill (who wrote it, when, which version, how it is filed: `version: 1.0`, `last_updated:`, `author:`, "
          "`tags:`, where it came from, `source:`, or any field whose value is a version, a date or a web address), "
          "which acts on nothing in any agent, and a field the project defines for its own tooling (a file beside "
          "the skill or command folders, `.claude/skills/SCHEMA.md` or `_index.json`, names it), and a field of "
          "a file a tool writes whole (Spec Kit's `speckit.*` commands, OpenSpec's: `tools:` in "
          "`speckit.taskstoissues.md`, rewritten on the tool's next update); a field "
          "that expected an effect (`hidden: true`) stays a warning, unless it is a misspelling whose value is the "
          "field's default (`user_invocable: true`): info, the rename changes nothing. Another agent's field on a rule "
          "(Cursor's `globs`/`alwaysApply` and Copilot's `applyTo`/`excludeAgent`, from their profiles; Windsurf's "
          "`trigger`) is left alone when that agent is in use (its rule folder is or links to the rule's folder, "
          "the rule's text lives in a folder shared outside `.claude/`, or the workspace targets the agent): the "
          "agent's profile says whether it reads the very file (through its own folder, by a name it reads: "
          "`*.instructions.md` for Copilot, `.mdc` for Cursor) and what it does with it (Cursor's rule type, "
          "Copilot's `applyTo`). That is info, and a warning only when the field scoped the rule to some files and "
          "Claude Code, with no `paths:`, loads it in every session (`applyTo: \"**/*\"` scopes nothing).",
      example="```markdown\n---\nglobs: src/**/*.ts\n---\n# TypeScript rules\n```",
      fix="Rename the field to the one the agent reads, delete it, or move custom data under `metadata:`. The "
          "quick fix renames misspelt fields; --fix applies it only when case or `_`/`-` alone differ and the field "
          "grants no permissions (`argument_hint` -> `argument-hint`); `allowed_tools` -> `allowed-tools` and "
          "`globs` -> `paths` change what the agent may do or load, so they are offered, not applied. A field of a vendored skill (pinned upstream by its frontmatter's `metadata` or a skills lock file) is "
          "info: change it upstream, an edit here is lost on the next update. So is a field that four or more "
          "commands (or skills) of one folder share (`handoffs:` in spec-kit's commands, `category:` and `tags:` in "
          "OpenSpec's, and its display `name: \"OPSX: Apply\"`): the tool that generated them wrote it and writes it "
          "again.")
def frontmatter_unknown_field(ws: Workspace):
    files = []
    family: dict[tuple[str, str], int] = {}  # (folder, unknown field) -> how many commands or skills there have it
    members: dict[str, int] = {}  # folder -> how many commands or skills it holds
    for fi in sources(ws, D.RULE, D.SKILL, D.COMMAND, D.MEMORY_INDEX, D.MEMORY_TOPIC, D.CLAUDE_MD, D.CLAUDE_LOCAL_MD):
        fm = read_frontmatter(fi)
        if fm is None or not isinstance(fm.data, dict):
            continue
        files.append((fi, fm))
        if fi.kind in (D.COMMAND, D.SKILL):
            members[_folder(fi)] = members.get(_folder(fi), 0) + 1
            for key in fm.data:
                if isinstance(key, str) and _unknown_field(_field_kind(fi), key, fm.data) is not None:
                    family[(_folder(fi), key)] = family.get((_folder(fi), key), 0) + 1
    for fi, fm in files:
        for key in fm.data:
            if not isinstance(key, str):
                continue
            line = fm.keys.get(key)
            if line is None:
                continue
            got = _unknown_field(_field_kind(fi), key, fm.data)
            if got is None:
                continue
            msg, rename = got
            other = _other_agent(ws, fi, key) if fi.kind == D.RULE and key in _FOREIGN else None
            if other is not None:
                yield _foreign_finding(fi, key, line, fm.data, *other)
                continue
            # A field that is merely unknown to a rule or memory file costs nothing (frontmatter is stripped):
            # report it as info; misspellings and other tools' fields change behaviour and stay warnings.
            # Another agent's field on a rule is a warning when the author's scope is lost (Claude Code loads the
            # rule everywhere, `globs: src/**` meant some files).
            if fi.kind == D.COMMAND and key == "name" and _same_name(fm.data.get("name"), fi.path):
                severity = "info"  # `name: deploy` in deploy.md: redundant, and it says what happens anyway
            elif fi.kind == D.RULE and key in _FOREIGN:
                severity = "warning" if _narrows(key, fm.data) else "info"
            else:
                # A warning when the author expected the field to act: a misspelt known field, `globs:` for
                # `paths:`, `paths:` or another `name:` on a legacy command. A field that is merely unknown
                # (`version:`, `last_updated:`, `author:`) is inert in Claude Code: info, in every kind of file.
                severity = "info" if fi.kind in (D.RULE, D.MEMORY_INDEX, D.MEMORY_TOPIC) and rename is None \
                    and key != "globs" else "warning"
            fixes = []
            if rename is not None and rename not in fm.data:
                # A spelling fix (case or separators only) is safe, except for fields that grant permissions or run
                # code; `globs` -> `paths` and guessed names change what loads, so the user decides.
                safe = _norm(key) == _norm(rename) and rename not in _PERMISSION_FIELDS
                fixes.append(Fix(f"Rename `{key}` to `{rename}`", (Edit(fi.path, Span(line, 0, line, len(key)), rename),),
                                 safe=safe))
            if severity == "warning" and rename is not None and _DEFAULTS.get(rename, _NO_DEFAULT) == fm.data.get(key):
                # `user_invocable: true`: the misspelt field asks for what Claude Code does anyway
                severity = "info"
                msg += f" (its value is `{rename}`'s default: the misspelling changes nothing today)"
            elif severity == "warning" and fi.kind == D.SKILL and (upstream := vendored(ws, fi)) is not None:
                severity, fixes = "info", []
                msg += f" (a vendored skill: {upstream}; change it upstream, an edit here is lost on update)"
            elif severity == "warning" and rename is None and (tool := generator_of(ws.rel(fi.path))) is not None:
                # `tools: ['github/github-mcp-server/issue_write']` in Spec Kit's taskstoissues command: the tool's
                # field (Copilot's), written again on its next update
                severity, fixes = "info", []
                msg += f" ({tool} writes this file: a field of the tool, rewritten on its next update)"
            elif severity == "warning" and rename is None and fi.kind in (D.COMMAND, D.SKILL) \
                    and ((n := family.get((_folder(fi), key), 0)) >= _FAMILY
                         or (n >= 3 and n == members.get(_folder(fi))) or generated_regions(fi.lines)):
                # `handoffs:` in every spec-kit command, `category:`/`tags:` in every OpenSpec one: a tool that
                # generates the folder wrote it; inert here, and written again on the tool's next update. So is a
                # field every command of a folder of three carries, or one in a file with a tool's block
                # (`<!-- OPENSPEC:START -->`)
                severity, fixes = "info", []
                msg += (f" (the {n} {'skills' if fi.kind == D.SKILL else 'commands'} of this folder carry it: a "
                        f"field of the tool that generates them, rewritten on its next update)")
            elif severity == "warning" and rename is None and key != "globs" \
                    and (doc := _documented_in(ws, fi, key)) is not None:
                # `requires_eos_validation:` in a skill whose folder's SCHEMA.md or _index.json names the field: a
                # field of the project's own convention, read by its own scripts; inert in Claude Code
                severity, fixes = "info", []
                msg += f" (the project's own field: {doc} names it)"
            elif severity == "warning" and rename is None and key not in COMMAND_IGNORED and key != "globs" \
                    and _describes(key, fm.data.get(key)):
                # `version: 1.0`, `last_updated: 2025-01-10`, `author:`: descriptive metadata, which acts on
                # nothing in any agent (a flag such as `hidden: true` expected an effect: still a warning)
                severity = "info"
                msg += " (descriptive metadata: it acts on nothing)"
            yield Finding("CTX502", severity, fi.path, key_span(fi, line, key), msg, fixes=fixes)


# Descriptive metadata: who wrote a command or skill, when, which version, how it is filed.
_METADATA_KEY = lazyre.compile(r"^(?:version|authors?|maintainers?|owners?|created|updated|last[-_]?(?:updated|modified|"
                           r"reviewed)|modified|date|tags|category|categories|status|keywords|changelog|"
                           # where a copied skill came from, and how its collection rates it (`risk: safe`)
                           r"source|origin|upstream|homepage|repository|credits?|risk)$", re.I)
# (a version, a date, or a web address: `source: https://github.com/x/skills/...`)
_METADATA_VALUE = lazyre.compile(r"^v?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)?$|^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+Z?)?$"
                             r"|^https?://\S+$")


def _field_kind(fi: FileInfo) -> str:
    """The kind whose fields a file's frontmatter takes: a SKILL.md in a folder under `.claude/commands/` is a
    skill-format command (named by its folder), whose fields are a skill's (`name:` included)."""
    return D.SKILL if fi.kind == D.COMMAND and fi.path.name == "SKILL.md" else fi.kind


def _describes(key: str, value) -> bool:
    """Whether a frontmatter field only describes its file (`version: 1.0`, `last_updated: 2025-01-10`)."""
    return bool(_METADATA_KEY.match(key)) or isinstance(value, datetime.date) or (
        isinstance(value, (str, float)) and bool(_METADATA_VALUE.match(str(value).strip())))


_PERMISSION_FIELDS = frozenset({"allowed-tools", "hooks", "shell", "agent", "context"})
_NO_DEFAULT = object()
_DEFAULTS = {"user-invocable": True, "disable-model-invocation": False}
"""Boolean skill and command fields with the value Claude Code assumes when they are absent."""


_FIELD_DOCS = frozenset({"README", "SCHEMA", "INDEX", "FIELDS", "FRONTMATTER", "CONVENTIONS"})


def _documented_in(ws: Workspace, fi: FileInfo, key: str) -> str | None:
    """The file beside the skill or command folders (`.claude/skills/SCHEMA.md`, `_index.json`, a README) that
    names ``key`` as a field (`key:` or `"key"`), if any: the project defines the field for its own tooling."""
    if fi.kind not in (D.SKILL, D.COMMAND):
        return None
    folder = fi.path.parent.parent if fi.kind == D.SKILL else fi.path.parent
    memo = ws.fs.memo.setdefault(("field-docs",), {})
    texts = memo.get(folder)
    if texts is None:
        texts = []
        # (in a commands folder every other .md is a command, whose frontmatter documents nothing: there only a
        # README, SCHEMA or index file, or a data file, can define the project's fields)
        names = sorted(n for n, kind in ws.fs.listing(folder).items()
                       if kind == "f" and n.rpartition(".")[2].lower() in ("md", "json", "yaml", "yml", "toml")
                       and not (fi.kind == D.COMMAND and n.lower().endswith(".md")
                                and n.rpartition(".")[0].upper().lstrip("_") not in _FIELD_DOCS))
        for n in names[:20]:
            p = folder / n
            src = ws.fs.read(p)
            if src.ok and src.text and len(src.text) < 2_000_000:
                texts.append((ws.rel(p), src.text))
        memo[folder] = texts
    pat = re.compile(rf"(?:^|[\s`\"'|{{,]){re.escape(key)}(?:[`\"']?\s*:|[`\"'|])", re.MULTILINE)
    for rel, text in texts:
        if pat.search(text):
            return rel
    return None


def _folder(fi: FileInfo) -> str:
    """The folder whose commands (or skills: the folder of skill directories) form one family."""
    return str(fi.path.parent.parent if fi.kind == D.SKILL else fi.path.parent)


_FAMILY = 4
"""Commands (or skills) of one folder that carry the same unknown field: a generating tool's convention
(spec-kit's `handoffs:` in 5 commands, OpenSpec's `category:` and `tags:` in 10). Three skills copied by hand
(`invocable: true`) are not; nor is `name:`, which says the author expects it to name the command (a
misunderstanding worth fixing even when a tool wrote it)."""

# Windsurf (no profile): where it reads rule files, and what says the workspace uses it at all.
_WINDSURF_DIRS = (".windsurf/rules", ".agent/rules", ".agents/rules")
_WINDSURF_MARKERS = (".windsurf", ".windsurfrules", ".agent", ".agents/rules")


def _other_agent(ws: Workspace, fi: FileInfo, key: str) -> tuple[str, str, bool, str] | None:
    """For a rule carrying another agent's field ``key``: (the agent's name, what it does with the file or why
    it does not read it, whether it reads it, why ctxls thinks the agent is in use), or None when nothing says
    the agent is in use (the field was copied in by mistake). A profiled agent (Cursor, Copilot) reads the file
    when its profile finds it through its own rule folder (`rule_reading`: the folder is, or links to, the
    rule's folder, and the file's name is one the agent reads); it is in use when it reads the file, when its
    rule folder links to the rule's folder, when the rule's text lives outside `.claude/` in a folder shared
    by construction (`.ai/rules`, linked in), or when the workspace targets it (CTX8xx)."""
    real = ws.fs.realpath(fi.path)
    real_dir = os.path.dirname(real)
    agent = profiles.rule_field_owner(key)
    mod = profiles.module(agent) if agent is not None else None
    dirs = mod.RULE_DIRS if mod is not None else _WINDSURF_DIRS
    label = mod.LABEL if mod is not None else "Windsurf"
    if mod is not None:
        got = mod.rule_reading(fi.path, fi.text or "", ws.root, ws.settings, ws.fs)
        if got is not None:
            where, what = got
            how = "is this very file" if where == ws.rel(fi.path) else "links to this file"
            return label, what, True, f"{where} {how}"
    sign = None
    for d in dirs:
        p = ws.root / d
        if os.path.isdir(p) and ws.fs.realpath(p) == real_dir:
            sign = f"{d} is this rule's folder" if not os.path.islink(p) else f"{d} links to this rule's folder"
            break
    if sign is None and real != str(fi.path) and "/.claude/" not in real.replace(os.sep, "/"):
        sign = (f"its text lives in {ws.rel(Path(real)) if is_within(real, str(ws.root)) else real}, a folder "
                f"shared with other agents")
    if sign is None:
        if mod is not None:
            from .agents import targets  # (the agents family's own view of the workspace)

            if agent in targets(ws):
                sign = f"the workspace targets {label}"
        else:
            sign = next((f"the workspace has {m}" for m in _WINDSURF_MARKERS if os.path.exists(ws.root / m)), None)
    if sign is None:
        return None
    if mod is None:  # no profile to say more: Windsurf reads its rule folders
        return label, f"{label} reads rules from {', '.join(dirs)}", True, sign
    return label, mod.unread_reason(fi.path), False, sign


def _foreign_finding(fi: FileInfo, key: str, line: int, data: dict, label: str, what: str, reads: bool,
                     sign: str) -> Finding:
    """CTX502 on another agent's field in a rule that agent uses (`_other_agent`): what each agent does with
    the file. A warning only when Claude Code loads the rule in every session because the author scoped it
    with the other agent's field alone."""
    explain = [f"{label} is in use: {sign}", what]
    unscoped = _narrows(key, data)
    claude = ("Claude Code ignores it and, with no `paths:`, loads the rule in every session" if unscoped else
              "Claude Code ignores it and, with no `paths:`, loads the rule in every session, as it does" if key in
              _SCOPING and "paths" not in data else
              "Claude Code ignores it and scopes the rule by `paths:` alone" if "paths" in data else
              "Claude Code ignores it")
    if reads:
        advice = (f"add `paths:` with the same patterns for Claude Code and keep `{key}` for {label}" if unscoped
                  else f"keep it for {label}")
        msg = f"`{key}` is {label}'s field ({sign}): {what}. {claude}; {advice}"
    else:
        advice = (f"for {label} to read it, give the file a name it reads; for Claude Code, add `paths:`"
                  if unscoped else f"for {label} to read it, give the file a name it reads, or delete the field")
        msg = f"`{key}` is {label}'s field, but {label} does not read this file: {what}. {claude}; {advice}"
    return Finding("CTX502", "warning" if unscoped else "info", fi.path, key_span(fi, line, key), msg,
                   data={"explain": explain})


def _same_name(value: object, path: Path) -> bool:
    """Whether a legacy command's `name:` is the name its file gives it anyway."""
    return isinstance(value, str) and value.strip().lstrip("/").lower() in (path.stem.lower(), command_name(path).lower())


def _norm(key: str) -> str:
    return key.lower().replace("_", "-")


def _close_match(key: str, known: frozenset[str]) -> str | None:
    norm = _norm(key)
    for k in known:
        if _norm(k) == norm:
            return k
    got = difflib.get_close_matches(norm, sorted(known), n=1, cutoff=0.85)
    return got[0] if got else None


def _unknown_field(kind: str, key: str, data: dict) -> tuple[str, str | None] | None:
    if kind in (D.CLAUDE_MD, D.CLAUDE_LOCAL_MD):
        if key in ("paths", "globs"):
            return (f"`{key}:` in a {kind_word(kind)} is ignored: the file always loads; move the "
                    f"instructions to a `.claude/rules/` file with `paths:` to scope them", None)
        return None
    if kind == D.RULE:
        if key in RULE_FIELDS:
            return None
        if key == "globs":
            if "paths" in data:
                return ("`globs:` is not a Claude Code field and is ignored here (the rule is scoped by `paths:`); "
                        "delete it", None)
            return ("`globs:` is not a Claude Code field: the rule is unconditional and loads in every session; "
                    "rename it to `paths:` to scope it", "paths")
        near = _close_match(key, RULE_FIELDS)
        if near:
            return (f"Unknown rule field `{key}` (did you mean `{near}`?): it is ignored and the rule loads in "
                    f"every session; rename it", near)
        origin = f" ({_FOREIGN[key]})" if key in _FOREIGN else ""
        return (f"Unknown rule field `{key}`{origin}: rules read only `paths:`, so Claude Code ignores it; "
                f"delete it (it is stripped and costs no tokens)" if not origin else
                f"Unknown rule field `{key}`{origin}: rules read only `paths:`, so Claude Code ignores it; delete it",
                None)
    if kind in (D.MEMORY_INDEX, D.MEMORY_TOPIC):
        if key in MEMORY_FIELDS:
            return None
        near = _close_match(key, MEMORY_FIELDS)
        if near:
            return f"Unknown memory field `{key}` (did you mean `{near}`?); rename it", near
        return (f"Unknown memory field `{key}`: memory files use only name, description, type and modified; "
                f"delete it", None)
    if kind == D.COMMAND:
        if key in COMMAND_IGNORED:
            what = "the command name is the file name" if key == "name" else "commands always load"
            return (f"`{key}:` is ignored in a legacy command ({what}); delete it, or turn the command into a "
                    f"skill under .claude/skills/", None)
        if key in SKILL_FIELDS:
            return None
        near = _close_match(key, SKILL_FIELDS - COMMAND_IGNORED)
        if near:
            return f"Unknown command field `{key}` (did you mean `{near}`?): it is ignored; rename it", near
        return f"Unknown command field `{key}`: Claude Code ignores it; delete it", None
    if kind == D.SKILL:
        if key in SKILL_FIELDS:
            return None
        near = _close_match(key, SKILL_FIELDS)
        if near:
            return (f"Unknown skill field `{key}` (did you mean `{near}`?): Claude Code ignores it; rename it",
                    near)
        if key == "globs":
            return "`globs:` is not a skill field: Claude Code ignores it; rename it to `paths:`", "paths"
        return (f"Unknown skill field `{key}`: Claude Code ignores it and the Agent Skills API rejects the upload; "
                f"move it under `metadata:` or delete it", None)
    return None


