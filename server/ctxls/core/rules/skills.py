"""Rules: skills (CTX503-CTX506): the portable Agent Skills constraints on `name` and `description`, the size of
a SKILL.md body (spec B4), and files a skill names that it does not bundle."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import unquote

from .. import lazyre
from .. import discovery as D
from ..code_imports import still_imported
from ..loader import is_within
from ..workspace import FileInfo, Workspace
from ..findings import Edit, Finding, Fix, Span
from ..markdown import code_spans, first_paragraph, structure
from ..skills import truthy
from ..mentions import CONTRAST, EXAMPLE, EXTERNAL, NEGATIVE_HEADING, LineContext, classify
from . import rule
from .path_index import name_index
from .path_refs import path_shape
from .sources import (FM, NAME_RE, PORTABLE_DESC_MAX, PORTABLE_NAME_MAX, claude_base, read_frontmatter,
                      skill_dir_name, sources, value_span, vendored, walk_dir)

_RESERVED = ("anthropic", "claude")


# ============================================================================================ CTX503
@rule("CTX503", "skill-name-invalid", "skills", "warning",
      summary="A skill `name` that breaks the portable Agent Skills spec.",
      why="The Agent Skills spec (claude.ai, the Skills API, other agents) requires `name` to be 1-64 characters "
          "of `[a-z0-9-]`, without leading, trailing or double hyphens, equal to the skill's directory name; the "
          "API also rejects the reserved words \"anthropic\" and \"claude\". Claude Code only shows `name` as a "
          "label (the command is still the directory name), so a mismatch also makes `/name` differ from what "
          "the listing says.",
      example="```markdown\n<!-- .claude/skills/deploy/SKILL.md -->\n---\nname: Deploy Helper\n---\n```",
      fix="Set `name` to the directory name (or rename the directory). The quick fix sets it to the directory "
          "name; it is applied by --fix only when the two differ in case or separators alone. A name that is the "
          "directory name under a namespace prefix (`name: dyad:pr-fix` in `pr-fix/`) is info: it is how the "
          "project invokes the skill (`/dyad:pr-fix`, Codex's `$dyad:pr-fix`), and only an upload to claude.ai or "
          "the Skills API needs the portable form. So is a name with underscores that is its directory's name too "
          "(`find_case_notes` in find_case_notes/: the listing and the command agree). So is the reserved word alone (`claude-sdk-guide`): Claude Code "
          "loads it as it is, and only an upload to claude.ai or the Skills API rejects it: info. So is a vendored "
          "skill's name (pinned by a lock file such as skills-lock.json or prpm.lock: the installer names the "
          "directory).")
def skill_name_invalid(ws: Workspace):
    for fi in sources(ws, D.SKILL):
        fm = read_frontmatter(fi)
        if fm is None or not isinstance(fm.data, dict) or "name" not in fm.data:
            continue
        line = fm.keys.get("name")
        if line is None:
            continue
        name = fm.data["name"]
        dirname = skill_dir_name(fi)
        problem = _name_problem(name, dirname)
        if problem is None:
            continue
        fixes = []
        if NAME_RE.match(dirname) and len(dirname) <= PORTABLE_NAME_MAX and \
                not any(w in dirname for w in _RESERVED) and name != dirname:
            norm = re.sub(r"[^a-z0-9]+", "-", str(name).lower()).strip("-")
            safe = norm == dirname
            span = value_span(fi, line)
            fixes.append(Fix(f"Set name to '{dirname}' (the directory name)",
                             (Edit(fi.path, span, dirname),), safe=safe))
        severity = "warning"
        if isinstance(name, str) and any(w in name for w in _RESERVED) and _name_problem(
                _unreserved(name), _unreserved(dirname)) is None:
            # `claude-agent-sdk` in .claude/skills: Claude Code loads it as it is (Anthropic ships `claude-api`);
            # only an upload to claude.ai or the Skills API rejects the reserved word
            severity, fixes = "info", []
            problem += " (only an upload to claude.ai or the Skills API rejects it; Claude Code loads it as it is)"
        if isinstance(name, str) and name == dirname and "_" in name and NAME_RE.match(name.replace("_", "-")):
            # `find_case_note_anecdotes` in find_case_note_anecdotes/: the command and the listing agree; Claude
            # Code loads it as it is, and only an upload to claude.ai or the Skills API rejects the underscore
            severity, fixes = "info", []
            problem += " (the directory has the same name: Claude Code loads it as it is; only an upload to claude.ai " \
                       "or the Skills API rejects the underscore)"
        if _namespaced(name, dirname):
            # `name: dyad:pr-fix` in pr-fix/: one prefix for the project's skills, invoked as `/dyad:pr-fix` by its
            # workflows and as `$dyad:pr-fix` by Codex. Renaming breaks those; only an upload to claude.ai or the
            # Skills API rejects the colon.
            severity, fixes = "info", []
            problem = (f"Skill `name` '{name}' is the directory name under a namespace prefix: agents that read "
                       f"`name` (Codex, the project's own `/{name}` calls) use it as it is, but the portable spec "
                       f"(claude.ai, the Skills API) allows only [a-z0-9-]; rename only to upload it there")
        if severity == "warning" and (upstream := vendored(ws, fi)) is not None:
            # (an installer names the directory: `@prpm/creating-skills-skill` in creating-skills-skill/)
            severity, fixes = "info", []
            problem += f" (a vendored skill: {upstream}; its name is upstream's to change)"
        yield Finding("CTX503", severity, fi.path, value_span(fi, line), problem, fixes=fixes)


def _namespaced(name: Any, dirname: str) -> bool:
    """`dyad:pr-fix` in `pr-fix/`, `dyad:pr-fix:ci` in `pr-fix-ci/`: a lowercase prefix and a colon before the
    directory name (its hyphens written as colons or not)."""
    if not isinstance(name, str) or ":" not in name:
        return False
    prefix, rest = name.split(":", 1)
    return bool(NAME_RE.match(prefix)) and rest.replace(":", "-") == dirname


def _unreserved(name: str) -> str:
    """``name`` with the reserved words written otherwise (to ask whether anything else is wrong with it)."""
    for w in _RESERVED:
        name = name.replace(w, "x" * len(w))
    return name


def _name_problem(name: Any, dirname: str) -> str | None:
    if not isinstance(name, str):
        return f"Skill `name` must be a string, not {type(name).__name__}; set it to '{dirname}'"
    if not name:
        return f"Skill `name` is empty; set it to '{dirname}' (the directory name) or delete it"
    if len(name) > PORTABLE_NAME_MAX:
        return (f"Skill `name` is {len(name)} characters, over the portable limit of {PORTABLE_NAME_MAX}; "
                f"shorten it (and the directory) to match")
    if not NAME_RE.match(name):
        if re.search(r"[^a-z0-9-]", name):
            why = "lowercase letters, digits and hyphens only"
        else:
            why = "no leading, trailing or double hyphens"
        if NAME_RE.match(dirname) and len(dirname) <= PORTABLE_NAME_MAX:
            return f"Skill `name` '{name}' breaks the portable spec ({why}); set it to '{dirname}', the directory name"
        return f"Skill `name` '{name}' breaks the portable spec ({why}); rename it and its directory"
    if name != dirname:
        return (f"Skill `name` '{name}' differs from its directory '{dirname}': the portable spec requires them "
                f"equal and Claude Code names the command /{dirname}; make them the same")
    for w in _RESERVED:
        if w in name:
            return f"Skill `name` contains the reserved word '{w}': the Skills API rejects it on upload; rename it"
    return None


# ============================================================================================ CTX504
@rule("CTX504", "skill-description", "skills", "warning",
      summary="A skill without a `description`, or with one that is too long.",
      why="The description is what the model reads to decide when to use a skill. Without one, Claude Code uses "
          "the first paragraph of the body, which rarely says when to use it (and the portable spec requires a "
          "description). The Agent Skills spec caps it at 1,024 characters; Claude Code truncates "
          "description + `when_to_use` at 1,536 characters in the skill listing.",
      example="```markdown\n---\nname: deploy\n---\n# Deploy\n\nThis skill has several steps.\n```",
      fix="Write a one- or two-sentence description that says what the skill does and when to use it, under "
          "1,024 characters. The quick fix (not applied by --fix) adds the first paragraph as a starting point. A vendored skill's description (a skills lock file, boost.json, its frontmatter or its own "
          "licence pins it) is info: it is upstream's to change.")
def skill_description(ws: Workspace):
    cap = ws.settings.skill_desc_cap
    for fi in sources(ws, D.SKILL, D.COMMAND):
        fm = read_frontmatter(fi)
        data = fm.data if fm is not None else None
        if fm is not None and data is None:
            continue  # CTX501 reports the broken frontmatter
        data = data or {}
        desc = data.get("description")
        is_skill = fi.kind == D.SKILL
        if desc is None or (isinstance(desc, str) and not desc.strip()):
            if not is_skill or truthy(data.get("disable-model-invocation")):
                continue  # legacy commands without a description are the norm; manual-only skills are not listed
            yield _missing_description(fi, fm)
            continue
        line = fm.keys.get("description", 1) if fm else 0
        if not isinstance(desc, str):
            yield Finding("CTX504", "warning", fi.path, value_span(fi, line),
                          f"`description` must be a string, not {type(desc).__name__}; Claude Code falls back to "
                          f"the first paragraph of the body; write it as one line of text")
            continue
        flat = " ".join(desc.split())
        # a vendored skill's description is upstream's to change (an edit here is lost on update): info
        sev = "info" if is_skill and vendored(ws, fi) is not None else "warning"
        when = data.get("when_to_use")
        listed = flat
        if isinstance(when, str) and when.strip():
            listed = f"{flat} - {' '.join(when.split())}"
        if len(listed) > cap:
            extra = " with when_to_use" if listed != flat else ""
            yield Finding("CTX504", sev, fi.path, value_span(fi, line),
                          f"Description{extra} is {len(listed):,} characters: the skill listing truncates it at "
                          f"{cap:,}; shorten it to under {PORTABLE_DESC_MAX:,} and move detail into the body")
        elif is_skill and len(flat) > PORTABLE_DESC_MAX:
            yield Finding("CTX504", sev, fi.path, value_span(fi, line),
                          f"Description is {len(flat):,} characters, over the {PORTABLE_DESC_MAX:,}-character limit "
                          f"of the Agent Skills spec (the Skills API rejects it); shorten it and move detail into "
                          f"the body")


def _missing_description(fi: FileInfo, fm: FM | None) -> Finding:
    body = "\n".join(fi.lines[fm.close + 1:]) if fm else (fi.text or "")
    para = first_paragraph(body)
    dirname = skill_dir_name(fi)
    if para:
        shown = para if len(para) <= 60 else para[:57] + "..."
        msg = (f"Skill has no `description`: Claude Code falls back to the first paragraph (\"{shown}\"); add a "
               f"description that says what the skill does and when to use it")
    else:
        msg = ("Skill has no `description` and no first paragraph: the listing shows only its name, so the model "
               "cannot tell when to use it; add a description")
    fixes = []
    if para:
        value = json.dumps(para[:PORTABLE_DESC_MAX], ensure_ascii=False)
        if fm is not None:
            line = fm.keys.get("name", 0) + 1
            edit = Edit(fi.path, Span(line, 0, line, 0), f"description: {value}\n")
        else:
            name = f"name: {dirname}\n" if NAME_RE.match(dirname) else ""
            edit = Edit(fi.path, Span(0, 0, 0, 0), f"---\n{name}description: {value}\n---\n\n")
        fixes.append(Fix("Add the first paragraph as description (then edit it)", (edit,), safe=False))
    span = Span(0, 0, 0, len(fi.lines[0].rstrip("\r"))) if fi.lines else Span(0, 0, 0, 0)
    return Finding("CTX504", "warning", fi.path, span, msg, fixes=fixes)


# ============================================================================================ CTX505
SKILL_MARGIN = 1.25
"""CTX505 is info for a body at most a quarter over the line or token guidance, a warning beyond: on real
repositories, skills 6-22% over were judged not worth splitting, and those 29% and more over worth it."""


@rule("CTX505", "skill-body-too-long", "skills", "warning",
      summary="A SKILL.md body over 500 lines or 5,000 tokens.",
      why="An invoked skill body enters the context as one message and stays for the session; after compaction "
          "only its first 5,000 tokens are re-attached. The skills guide asks for SKILL.md under 500 lines and the "
          "body under 5k tokens, with detail in bundled files the model reads only when needed (progressive "
          "disclosure).",
      example="```markdown\n---\nname: api\ndescription: ...\n---\n# API\n... 800 lines of endpoint reference ...\n```",
      fix="Move reference material (tables, long examples, per-case detail) into files such as "
          "`references/<topic>.md` next to SKILL.md and link them from the body with a line that says when to "
          "read each. Limits: `skill_max_lines` and `skill_max_tokens` in the [check] settings. At most a quarter "
          "over either is info: a few lines over the guidance is no reason to split a skill. So is a vendored skill (its "
          "frontmatter's `metadata` pins it to an upstream repository, or a skills lock file at the root, "
          "`skills-lock.json` or `agents.toml`, names it, a JSON file among the skill directories records its "
          "checksum (`.claude/skills/.mizerAgents.json`: `\"build-model/SKILL.md\": \"46dff4d6...\"`, what an "
          "installer that overwrites it keeps), or it ships its own licence file: LICENSE.txt beside "
          "SKILL.md): its length is upstream's to change.")
def skill_body_too_long(ws: Workspace):
    max_lines = ws.config.skill_max_lines
    max_tokens = ws.config.skill_max_tokens
    skills = sources(ws, D.SKILL)
    factor = max(1.0, getattr(ws.counter, "factor", 1.0) or 1.0)

    def may_exceed(content: str) -> bool:
        # a BPE token is at least one UTF-8 byte: short bodies cannot be over the budget
        return len(content) * 4 * factor > max_tokens and len(content.encode("utf-8")) * factor > max_tokens

    ws.counter.prefetch(fi.prepared.content for fi in skills if may_exceed(fi.prepared.content))
    for fi in skills:
        fm = fi.prepared.frontmatter
        offset = fm.end_line
        lines = fi.lines[offset:]
        while lines and not lines[-1].strip():
            lines = lines[:-1]
        content = fi.prepared.content
        if len(lines) <= max_lines and not may_exceed(content):
            continue
        tokens = ws.counter.count(content) if content else 0
        # A few percent over Anthropic's guidance is no reason to split a skill: info up to SKILL_MARGIN over.
        severity = "warning" if len(lines) > max_lines * SKILL_MARGIN or tokens > max_tokens * SKILL_MARGIN \
            else "info"
        upstream = vendored(ws, fi)
        tail = ""
        if upstream is not None:
            severity, tail = "info", f" (a vendored skill: {upstream}; its length is upstream's to change)"
        if len(lines) > max_lines:
            line = offset + max_lines
            yield Finding("CTX505", severity, fi.path, Span.line(line, fi.lines[line].rstrip("\r")),
                          f"SKILL.md body is {len(lines):,} lines ({tokens:,} tokens), over {max_lines:,} from this "
                          f"line on; move reference material into bundled files (e.g. references/) linked from "
                          f"the body{tail}")
        elif tokens > max_tokens:
            line = _token_cut_line(ws, fi, offset, max_tokens)
            yield Finding("CTX505", severity, fi.path, Span.line(line, fi.lines[line].rstrip("\r")),
                          f"SKILL.md body is {tokens:,} tokens, over {max_tokens:,} from about this line on; move "
                          f"reference material into bundled files (e.g. references/) linked from the body{tail}")


def _token_cut_line(ws: Workspace, fi: FileInfo, offset: int, budget: int) -> int:
    total = 0
    last = offset
    for i in range(offset, len(fi.lines)):
        line = fi.lines[i]
        if line.strip():
            last = i
        total += ws.counter.count(line + "\n")
        if total > budget:
            return i
    return last


# ============================================================================================ CTX506
_HEADING_LINE = lazyre.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_CD_RE = lazyre.compile(r"^\s*(?:\$\s+)?cd\s+([\w./-]+)\s*(?:&&|;|$)")
_OTHER_SKILL_RE = lazyre.compile(r"\bin\s+the\s+`?([a-z0-9][\w-]*)`?\s+skill\b|`?([a-z0-9][\w-]*)`?\s+skill's\b")
_BUNDLE_DIRS = ("scripts", "references", "reference", "assets", "templates")
_SKILL_DIR_VAR = r"\$\{?CLAUDE_SKILL_DIR\}?/"
_SKILL_DIR_VAR_RE = lazyre.compile("^" + _SKILL_DIR_VAR)
_BUNDLE_RE = lazyre.compile(
    r"(?<![\w./$}\\-])(" + _SKILL_DIR_VAR + r"[\w./-]+|(?:\./)?(?:" + "|".join(_BUNDLE_DIRS) + r")/[\w./-]+)")
_CODE_BUNDLE_RE = lazyre.compile(
    r"(?<![\w./$}\\-])(" + _SKILL_DIR_VAR + r"[\w./-]+|(?:\./)?(?:scripts|references)/[\w./-]+)")
_LINK_RE = lazyre.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*(<[^>\n]*>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
_EXT_RE = lazyre.compile(r"\.[A-Za-z0-9]{1,8}$")
_PLACEHOLDER_NEXT = set("<{*[$%?")
# Lines about files the skill makes rather than reads.
_NO_CONTEXT = LineContext((), (), "")
_CREATES_RE = lazyre.compile(
    r"\b(?:creat(?:e|es|ed|ing)|(?:re)?generat(?:e|es|ed|ing)|outputs?|save[sd]?|saving|writes?|written|writing|"
    r"emits?|produces?|scaffold\w*|renam(?:e|ed|ing)|moved?|delet(?:e|ed|ing)|remov(?:e|ed|ing)|add(?:s|ed|ing)?\s+"
    r"(?:a|an|new)|new\s+file|placeholder|for\s+example)\b|\be\.g\.")
_OUTPUT_ARG_RE = lazyre.compile(r"(?:>>?|\s-o|--out(?:put)?(?:=|\s))\s*[\"']?$")


@rule("CTX506", "skill-missing-bundled-file", "skills", "warning",
      summary="A file the SKILL.md body names relative to the skill directory does not exist.",
      why="Skills bundle scripts and references next to SKILL.md and the body tells the model to run or read "
          "them (`scripts/validate.py`, `[reference](references/api.md)`). When the file is missing, the model "
          "fails mid-task or improvises.",
      example="```markdown\nRun `python scripts/validate.py` before you finish. See [the API](references/api.md).\n```",
      fix="Add the file to the skill directory or fix the path. When exactly one file of that name exists "
          "elsewhere in the skill directory, the quick fix points the reference at it. References are checked "
          "in markdown links, in code spans and code blocks (`scripts/...`, `references/...`, "
          "`${CLAUDE_SKILL_DIR}/...`) and as bare `scripts/x.py`-style paths; a path that exists relative to the "
          "project instead is not reported. A link that climbs out of the skill (`../../Cargo.toml`) is resolved "
          "from the skill directory, as the model resolves it; when one `../` more or less finds the file, a quick "
          "fix (not applied by --fix) says so. Also resolved: a path the line says is another skill's "
          "(\"`references/x.md` in the `frontend` skill\"), and a command after a `cd DIR` in the same code "
          "block, from DIR; a path that the project has at a longer path (`scripts/x.sh` at `packages/y/scripts/"
          "x.sh`: written from the package) is info. Not checked: a path the text gives as an example (\"**Examples**: `references/x.md`\", "
          "\"e.g.\", \"a `scripts/x.py` script would be helpful\"), a path of another project (\"resolve links against the "
          "external repo directory\"), the files a section of what not to do names (\"## What Not To Add\", its code "
          "blocks too), link syntax shown as code (`[file](./references/file.md)`), a name slot "
          "(`scripts/episode_N.json`), and the arguments of a program named from the project root (`python "
          ".claude/skills/x/scripts/y.py scripts/episode_1.json`: it runs there, and its arguments are the "
          "project's files). A vendored skill's missing paths (see CTX504) are info: "
          "they are upstream's. So is a link out of the skill to a Python module the repository's code still "
          "imports (`../../../recidiviz/calculator/x.py` while the code says `from recidiviz.calculator import "
          "...`): the checkout leaves it out, the code does not (a filtered export).")
def skill_missing_bundled_file(ws: Workspace):
    for fi in sources(ws, D.SKILL):
        if not _may_hold_refs(fi.text or "", False):
            continue  # no line of it can name a file (most skills on a large workspace)
        skill_dir = fi.path.parent
        # A vendored skill's paths are upstream's (`./scripts/lint-skills.sh` from its home repository's root):
        # missing here they are info, as CTX401 and CTX504 treat them
        upstream = vendored(ws, fi)
        # A skill behind a symlinked `.claude/skills` lives in its real directory: that is where the model's Read
        # of a relative path lands, so a path is looked up from there too.
        real_dir = Path(os.path.dirname(ws.fs.realpath(fi.path)))
        bases = [skill_dir] + ([real_dir] if real_dir != skill_dir else [])
        own_dirs = list(bases)  # the skill's own directory (and its real one): what it bundles
        cb = claude_base(fi.path)
        if cb is not None:
            bases.append(cb[1])
        bases.append(ws.root)
        offset = fi.prepared.frontmatter.end_line
        body = fi.lines[offset:]
        st = structure("\n".join(body))
        reported: set[tuple[int, str]] = set()
        listing = None
        code_lines = st.code_lines
        cd: list[Path] = []  # where a `cd DIR` earlier in the same code block moved the commands that follow
        context = _NO_CONTEXT  # the nearest heading above the line ("## What Not To Add" lists no bundled file)
        avoid = False
        for i, raw in enumerate(body):
            in_code = i in code_lines
            if not in_code and raw.startswith("#") and (h := _HEADING_LINE.match(raw)):
                context = LineContext((h.group(1),), (), "")
                avoid = NEGATIVE_HEADING.search(h.group(1)) is not None
            if avoid:
                continue  # "## What Not To Add" and the files it names, in a code block too
            if not in_code:
                cd = []
            else:
                m = _CD_RE.match(raw)
                if m:
                    cd = [b / m.group(1) for b in (ws.root, skill_dir)]
            if not _may_hold_refs(raw, in_code) or i in st.comment_lines:
                continue
            # "`references/test-ids.md` in the `phoenix-frontend` skill": another skill's file
            other = [skill_dir.parent / n for m in _OTHER_SKILL_RE.finditer(raw) for n in m.groups()
                     if n and n != skill_dir.name]
            line_no = i + offset
            if not in_code and _CREATES_RE.search(raw.lower()):
                continue  # "write the report to `assets/report.md`": the file need not exist yet
            for col, text, target, skill_only in _refs_in_line(raw.rstrip("\r"), in_code):
                if not in_code and classify(raw, col, col + len(text), context).kind in (EXAMPLE, EXTERNAL, CONTRAST):
                    # "- **Example**: `scripts/rotate_pdf.py` for PDF rotation": a file a skill might have; "resolve
                    # reference links against the external repo directory ... `./reference/testing.md`": another's
                    continue
                rel = os.path.normpath(target)
                if any(seg in D.SKIP_DIRS for seg in rel.split(os.sep)):
                    continue  # `node_modules/x/dist/index.mjs`: the project's dependencies, not the skill's files
                if not skill_only and path_shape(target, "code") is None:
                    continue  # `scripts/episode_N.json`: a slot for a name (see path_shape), no file
                if (in_code or _in_command_span(raw, col)) and _ARG_OF_ROOTED_PROGRAM.search(raw, 0, col):
                    # `python .claude/skills/x/scripts/compose.py scripts/episode_1.json`: a command that names its
                    # program from the project root runs there, and its arguments are the project's files
                    continue
                if rel.startswith("..") and not skill_only:
                    if real_dir != skill_dir and is_within(Path(os.path.normpath(real_dir / target)), ws.root) \
                            and ws.exists(Path(os.path.normpath(real_dir / target))):
                        continue  # resolves from the skill's real directory
                    f = _climbing_ref(ws, fi, skill_dir, line_no, col, text, target)
                    if f is not None and (line_no, rel) not in reported:
                        reported.add((line_no, rel))
                        if upstream is not None:
                            f.severity = "info"
                            f.data["explain"] = [f"a vendored skill ({upstream}): its paths are upstream's"]
                        yield f
                    continue
                if rel.startswith("..") or os.path.isabs(rel) or rel == ".":
                    continue
                if (line_no, rel) in reported:
                    continue
                if any(ws.exists(b / rel) for b in (bases[:2] if skill_only else bases + cd + other)):
                    continue
                reported.add((line_no, rel))
                if listing is None:
                    listing = _skill_files(ws, skill_dir)
                name = os.path.basename(rel)
                cands = [p for p in listing if os.path.basename(p) == name]
                span = Span(line_no, col, line_no, col + len(text))
                fixes = []
                hint = ""
                if len(cands) == 1:
                    hint = f" (a file of that name is at {cands[0]})"
                    m = _SKILL_DIR_VAR_RE.match(text)
                    prefix = m.group(0) if m else ("./" if text.startswith("./") else "")
                    fixes.append(Fix(f"Point the reference at {cands[0]}", (Edit(fi.path, span, prefix + cands[0]),)))
                # A command in a code block (`node scripts/x.mjs`) naming a bundle directory the skill does not have
                # at all may run from another directory (another checkout): unsure, so info.
                top = rel.split(os.sep)[0]
                command = in_code or _in_command_span(raw, col)
                unsure = command and not skill_only and not cands and \
                    not any(os.path.isdir(b / top) for b in own_dirs)
                elsewhere = [] if skill_only or cands or "/" not in rel else _tails(ws, rel)
                if elsewhere:
                    # `scripts/check-upstream.sh` in a skill about packages/phoenix-sqlean, where it is: the path is
                    # written from that package, not from the skill
                    unsure, hint = True, f" (the project has it at {elsewhere[0]}: name it from the root)"
                why = (f"the project has a file at {elsewhere[0]}, which ends with the path" if elsewhere else
                       f"a command names `{top}/`, which this skill does not bundle at all: it may run from another "
                       f"directory" if unsure else f"looked for it in {ws.rel(skill_dir)}/"
                       + (f", {ws.rel(real_dir)}/ (the real directory)" if real_dir != skill_dir else "")
                       + (", the project" if not skill_only else ""))
                if upstream is not None:
                    unsure, why = True, f"a vendored skill ({upstream}): its paths are upstream's; " + why
                yield Finding("CTX506", "info" if unsure else "warning", fi.path, span,
                              f"The skill names `{rel}` but {ws.rel(skill_dir)}/{rel} does not exist{hint}; add the "
                              f"file to the skill or fix the path", fixes=fixes, data={"explain": [why]})


# A program named from the project root or by the skill's variable, then its arguments up to the position asked.
_ARG_OF_ROOTED_PROGRAM = lazyre.compile(r"(?:^|[\s`'\"])(?:\./)?(?:\.claude/skills/|\$\{?CLAUDE_SKILL_DIR\}?/)\S+\s+(?:\S+\s+)*$")


def _climbing_ref(ws: Workspace, fi: FileInfo, skill_dir: Path, line: int, col: int, text: str,
                  target: str) -> Finding | None:
    """A reference that climbs out of the skill directory (`[Cargo.toml](../../Cargo.toml)`): it resolves from
    the skill directory, as the model reading SKILL.md resolves it. Reported when that lands inside the
    workspace on nothing; the fix takes one `../` more or less when that finds the file."""
    dest = Path(os.path.normpath(skill_dir / target))
    if not is_within(dest, ws.root) or ws.exists(dest):
        return None
    fixes = []
    for other in ("../" + target, target[3:] if target.startswith("../") else None):
        if other and is_within(Path(os.path.normpath(skill_dir / other)), ws.root) and \
                ws.exists(Path(os.path.normpath(skill_dir / other))):
            new = other + text[len(target):] if text.startswith(target) else other
            fixes.append(Fix(f"Point the link at {other}", (Edit(fi.path, Span(line, col, line, col + len(text)),
                                                                  new),), safe=False))
            break
    hint = f" ({fixes[0].title.split(' at ', 1)[1]} exists)" if fixes else ""
    if not fixes and (got := still_imported(ws, ws.rel(dest))) is not None:
        # `../../../recidiviz/calculator/...` where the code imports recidiviz.calculator: the link is right for
        # the code, and this checkout leaves that part out (a filtered export)
        module, who = got
        return Finding("CTX506", "info", fi.path, Span(line, col, line, col + len(text)),
                       f"The skill names `{target}` ({ws.rel(dest)}), which is not in this checkout, but the code "
                       f"still imports `{module}` ({who}): a part of the repository this copy leaves out (a "
                       f"filtered export?)", data={"imported_by": who})
    return Finding("CTX506", "warning", fi.path, Span(line, col, line, col + len(text)),
                   f"The skill names `{target}`, which from {ws.rel(skill_dir)}/ is {ws.rel(dest)}: it does not "
                   f"exist{hint}; fix the path (it is relative to the skill directory)", fixes=fixes)


# What `_refs_in_line` needs to find anything: a link, or a path in a bundle directory or under
# ${CLAUDE_SKILL_DIR} (in a code block only scripts/ and references/ count).
_REF_NEEDLES = ("](", "CLAUDE_SKILL_DIR", "scripts/", "references/", "reference/", "assets/", "templates/")
_CODE_REF_NEEDLES = ("CLAUDE_SKILL_DIR", "scripts/", "references/")


def _may_hold_refs(text: str, in_code: bool) -> bool:
    """False when `_refs_in_line` finds no reference in ``text`` (a line, or a whole file for either kind)."""
    return any(n in text for n in (_CODE_REF_NEEDLES if in_code else _REF_NEEDLES))


def _skill_files(ws: Workspace, skill_dir: Path) -> list[str]:
    """The files of a skill's directory, relative to it: from the workspace's one walk when the skill's real
    directory is in the workspace, else (a personal skill) walked here."""
    got = ws.files_under(skill_dir)
    if got is not None:
        return got
    out = []
    for dirpath, _, filenames in walk_dir(skill_dir, limit=2_000):
        for f in filenames:
            out.append(os.path.relpath(os.path.join(dirpath, f), skill_dir).replace(os.sep, "/"))
    return sorted(out)


_COMMAND_SPAN = lazyre.compile(r"`(?:\$\s+)?(?:node|python3?|bash|sh|zsh|npx|bunx?|deno|ruby|perl|tsx|ts-node|uv\s+run|"
                           r"pnpm(?:\s+exec)?|yarn|npm\s+exec|go\s+run)\s+[^`]*$")


def _in_command_span(line: str, col: int) -> bool:
    """Whether the reference at ``col`` is inside a code span that is a command (`node scripts/lint.mjs`)."""
    return line.count("`", 0, col) % 2 == 1 and _COMMAND_SPAN.search(line[:col]) is not None


def _refs_in_line(line: str, in_code: bool) -> Iterator[tuple[int, str, str, bool]]:
    """(column, text as written, path relative to the skill dir, skill-dir only) of each reference on a line."""
    if in_code:
        for m in _CODE_BUNDLE_RE.finditer(line):
            if _OUTPUT_ARG_RE.search(line[: m.start(1)]):
                continue  # `> scripts/out.txt`, `-o references/new.md`: written, not read
            got = _token(line, m)
            if got:
                yield (m.start(1),) + got
        return
    spans: list[tuple[int, int]] = []
    for m in code_spans(line):
        spans.append((m.start(), m.end()))
        inner = m.group(2)
        if "](" in inner:
            continue  # "markdown links (`[file](./references/file.md)`)": link syntax shown as code, an example
        for t in _BUNDLE_RE.finditer(inner):
            got = _token(inner, t)
            if got:
                yield (m.start(2) + t.start(1),) + got

    def in_span(pos: int) -> bool:
        return any(a <= pos < b for a, b in spans)

    for m in _LINK_RE.finditer(line):
        if in_span(m.start()):
            continue
        raw, start = m.group(1), m.start(1)
        if raw.startswith("<"):
            raw, start = raw[1:-1], start + 1
        written = raw.split("#", 1)[0].split("?", 1)[0]
        if not written.strip(" .…"):
            continue  # `[GH-NNN](...)`: an elided target in an example, no path
        target = _link_target(raw, written)
        if target:
            skill_only = bool(_SKILL_DIR_VAR_RE.match(target))
            yield start, written, _SKILL_DIR_VAR_RE.sub("", target), skill_only
    # bare paths in prose: only the conventional bundle directories, and only with a file extension
    masked = _LINK_RE.sub(lambda m: " " * len(m.group(0)), line)
    for m in _BUNDLE_RE.finditer(masked):
        if in_span(m.start()):
            continue
        got = _token(masked, m)
        if got:
            yield (m.start(1),) + got


def _token(text: str, m: re.Match) -> tuple[str, str, bool] | None:
    ref = m.group(1).rstrip(".")
    end = m.start(1) + len(m.group(1))
    if end < len(text) and text[end] in _PLACEHOLDER_NEXT:
        return None  # `scripts/<name>.py`, `references/*.md`: a pattern, not a file
    if not _EXT_RE.search(ref):
        return None
    v = _SKILL_DIR_VAR_RE.match(ref)
    if v:
        return ref, ref[v.end():], True
    return ref, ref, False


def _link_target(raw: str, written: str) -> str | None:
    if not raw or raw[0] in "#/~<{" or "://" in raw or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", raw):
        return None
    if raw[0] == "$" and not _SKILL_DIR_VAR_RE.match(raw):
        return None
    if not written or any(c in _SKILL_DIR_VAR_RE.sub("", written) for c in "<>{}*[]$"):
        return None
    return unquote(written)


def _tails(ws: Workspace, rel: str) -> list[str]:
    """The workspace's files whose path ends with ``rel`` (posix, at a `/`), from the stale-path rule's index of
    files by name."""
    tail = "/" + rel.replace(os.sep, "/")
    return [f for f in name_index(ws).files.get(os.path.basename(rel), ()) if f.endswith(tail)][:3]
