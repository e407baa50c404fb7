"""Rules: placement (CTX601 buried critical instructions, CTX602 task-specific sections of always-loaded files).

Both rules read markdown structure through `_sections`, a small heading tree with line ranges that ignores
headings inside code fences and HTML comments.
"""

from __future__ import annotations

import json
import os
import math
import re
from functools import lru_cache
from dataclasses import dataclass, field
from pathlib import Path

from .. import lazyre
from .. import discovery as D
from ..workspace import FileInfo, Workspace
from ..findings import Edit, Finding, Fix, Related, Span
from ..globs import parse_paths
from ..markdown import CODE_SPAN, in_code_span, split_frontmatter, structure
from .path_refs import SCHEME
from . import rule

# ----------------------------------------------------------------------------------------------- sections
_HEADING = lazyre.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")


@dataclass
class _Section:
    level: int
    title: str
    line: int
    """0-based line of the heading."""
    end: int
    """0-based line after the section: the next heading of the same or a higher level, or the line count."""
    children: list["_Section"] = field(default_factory=list)


@dataclass
class _Doc:
    lines: list[str]
    """Lines of the file, without line terminators (a final newline gives a last empty line)."""
    body_start: int
    """First line after the frontmatter."""
    hidden: frozenset[int]
    """Lines in code blocks or HTML comments (0-based, whole file)."""
    sections: list[_Section]
    """Every heading in document order (use `roots` for the tree)."""
    roots: list[_Section]


@lru_cache(maxsize=4096)
def _parse(text: str) -> _Doc:
    """Heading tree of ``text`` (cached by content; the result is never mutated)."""
    fm, body = split_frontmatter(text)
    offset = fm.end_line
    st = structure(body)
    hidden = frozenset(i + offset for i in st.code_lines | st.comment_lines)
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]
    count = len(lines)
    flat: list[_Section] = []
    for i in range(offset, count):
        ln = lines[i]
        if not ln.lstrip(" ").startswith("#") or i in hidden:
            continue
        m = _HEADING.match(ln)
        if m:
            flat.append(_Section(len(m.group(1)), (m.group(2) or "").strip(), i, count))
    roots: list[_Section] = []
    stack: list[_Section] = []
    for s in flat:
        while stack and stack[-1].level >= s.level:
            stack.pop().end = s.line
        (stack[-1].children if stack else roots).append(s)
        stack.append(s)
    return _Doc(lines, offset, hidden, flat, roots)


def _content_lines(doc: _Doc) -> int:
    """Line count ignoring the empty string after a final newline."""
    n = len(doc.lines)
    return n - 1 if n and doc.lines[-1] == "" else n


# ----------------------------------------------------------------------------------------------- CTX601
_CRITICAL = lazyre.compile(r"\b(?:MUST|NEVER|ALWAYS|IMPORTANT)\b")
_BOLD_NEG = lazyre.compile(r"(\*\*|__)\s*(?:do\s+not|don't|never)(?![A-Za-z]).*?\1", re.IGNORECASE)
_LIST_ITEM = lazyre.compile(r"^( *)(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)")


# A heading that stresses its section, as a marker rather than a word of its title: "(Critical)", "[REQUIRED]",
# "— mandatory" at the end, or a stress word in capitals. "## Required tools" or "# Important notes" are titles.
_STRESS_WORDS = r"(?:critical|important|mandatory|required|must[- ]read|must|always|never)"
_STRESS_MARK = lazyre.compile(rf"[(\[]\s*{_STRESS_WORDS}\s*[)\]]|\s[—–-]+\s*{_STRESS_WORDS}\s*[!.]*\s*$", re.IGNORECASE)
_STRESS_CAPS = lazyre.compile(r"\b(?:CRITICAL|IMPORTANT|MANDATORY|REQUIRED|MUST|ALWAYS|NEVER)\b")


def _stressed(title: str) -> bool:
    """Whether a heading marks its section as critical (see `_STRESS_MARK`)."""
    return bool(_STRESS_MARK.search(title) or _STRESS_CAPS.search(title))

_LINK = lazyre.compile(r"!?\[[^\]]*\]\([^)]*\)")
_POINTER_WORDS = lazyre.compile(r"\b(?:must|always|important|never|read|see|first|also|refer\s+to|check|consult|"
                            r"before|starting|here|this|these|the|docs?|documentation|guides?)\b", re.IGNORECASE)
_ALNUM = lazyre.compile(r"[^\W_]")


# "MUST READ: [guide](x.md) — what it covers": the stressed words send the reader to a link.
_READ_LINK = lazyre.compile(r"\b(?:must|always|important)\W{0,4}(?:read|see|consult|check|refer\s+to)\b[^\[\n]{0,20}\[",
                        re.IGNORECASE)


def _is_pointer(line: str) -> bool:
    """`**MUST READ**: [the API guide](docs/api.md) — what it covers`: the critical word only points at a
    document, the line holds no instruction to move."""
    if "](" not in line:
        return False
    m = _READ_LINK.search(line)
    if m is not None:
        # a pointer, unless an instruction follows the link ("see [policy](x.md) — NEVER commit .env files")
        close = line.find(")", line.find("](", m.end()))
        return close < 0 or not _is_critical(line[close + 1:])
    rest = _POINTER_WORDS.sub(" ", _LINK.sub(" ", line))
    return not _ALNUM.search(rest)


def _is_critical(line: str) -> bool:
    if "`" in line:
        line = CODE_SPAN.sub(" ", line)
    return bool(_CRITICAL.search(line) or ("*" in line or "_" in line) and _BOLD_NEG.search(line))


CRITICAL_DENSE_LINES = 10
"""A file with this many critical lines (MUST/NEVER/...) stresses everything: CTX601 is unsure which is buried."""


@rule("CTX601", "buried-critical-instruction", "placement", "info",
      summary="A critical instruction (MUST / NEVER / ALWAYS / IMPORTANT, or a bold \"do not\") sits deep in a "
              "long always-loaded file.",
      why="Instructions deep in a long file get less weight than those near the top, and readers skim past them; "
          "the rules that must never be broken belong where they are read first.",
      example="```markdown\n# Project\n...80 lines of conventions...\n- NEVER run migrations against production "
              "by hand.\n```",
      fix="Move the line to the top of the file. The quick fix (applied by --fix) moves it, with its continuation "
          "lines, into a `**Critical:**` block right after the first heading (after any frontmatter; created once, "
          "with blank lines around it, and appended to by later fixes) and deletes it from its old place; when a "
          "file has several, the first fix moves them all at once, in their original order, and a one-line "
          "paragraph becomes a list item. It is offered only when the instruction stands alone (a list item or a "
          "one-line paragraph), never for one line of a longer paragraph. Severity is always info: on real "
          "repositories the lines it finds sit in the section they govern, and the file's length is CTX101's to "
          "report. In a file that stresses 10 or more of its lines the message says so (its emphasis is uniform: "
          "no one line is buried among the others). Lines under a heading that stresses its section "
          "(`## Caching (Critical)`, `## Mobile layout — mandatory`) are left where they are.")
def buried_critical_instruction(ws: Workspace):
    cfg = ws.config
    budget = cfg.critical_after_tokens
    for fi in ws.files(D.CLAUDE_MD, D.CLAUDE_LOCAL_MD, D.AGENTS_MD, D.RULE):
        text = fi.text or ""
        # A line is buried when `critical_after_tokens` tokens of the file come before it: a position in what the
        # model reads, not a share of the file (line 34 of a 64-line file is not buried). A token is at least
        # about half a character, so a shorter text cannot reach the budget.
        if 2 * len(text) < budget:
            continue
        if not _always_loaded(ws, fi):
            continue
        doc = _parse(text)
        n = _content_lines(doc)
        limit = _line_after_tokens(ws, doc.lines[:n], budget)
        if limit is None:
            continue
        top = _top_line(doc)
        found: list[tuple[int, _Unit | None]] = []
        covered = -1
        # (a `#` title spans the whole file: only sections below it can stress themselves)
        marked = [(sec.line, sec.end) for sec in doc.sections if sec.level >= 2 and _stressed(sec.title)]
        for i in range(max(doc.body_start, limit), n):
            line = doc.lines[i]
            if i <= covered or i in doc.hidden or not line.strip():
                continue
            if marked and any(a < i < b for a, b in marked):
                continue  # under a heading that already says so ("## Caching (Critical)"): read in its context
            s = line.lstrip()
            if s.startswith(("#", "|")) or not _is_critical(line) or _is_pointer(line):
                continue
            unit = _unit(doc, i) if top < i else None
            if unit is not None:
                covered = unit.end - 1
            found.append((i, unit))
        if not found:
            continue
        units = [u for _, u in found if u is not None]
        move_all = _move_fix(fi.path, doc, top, units) if len(units) > 1 else None
        # A file that stresses many of its lines has no buried one: its emphasis is uniform, and moving them all to
        # the top would bury the top (a 453-line standards file with 21 MUST lines). Unsure: info.
        dense = sum(1 for j in range(doc.body_start, n) if j not in doc.hidden and _is_critical(doc.lines[j])
                    and not doc.lines[j].lstrip().startswith(("#", "|"))) >= CRITICAL_DENSE_LINES
        for i, unit in found:
            line = doc.lines[i]
            # Info, always: on 48 real repositories not one buried line was worth a warning (each sat in the
            # section it governs, and a long file is CTX101's to report).
            severity = "info"
            before = ws.counter.count("\n".join(doc.lines[:i]))
            msg = (f"Critical instruction buried at line {i + 1} of {n}, after ~{before:,} tokens of an always-loaded "
                   f"file; move it to the top, where it is read first" if not dense else
                   f"Critical instruction at line {i + 1} of {n}, after ~{before:,} tokens of an always-loaded file "
                   f"that stresses {CRITICAL_DENSE_LINES} or more of its lines: consider which few must be read "
                   f"first and move those to the top")
            fixes = []
            if unit is not None:
                if move_all is not None:  # --fix takes the first: one edit keeps the instructions in order
                    fixes.append(move_all)
                fixes.append(_move_fix(fi.path, doc, top, [unit]))
            start_col = len(line) - len(line.lstrip())
            yield Finding("CTX601", severity, fi.path, Span(i, start_col, i, len(line)), msg, fixes=fixes)


def _line_after_tokens(ws: Workspace, lines: list[str], budget: int) -> int | None:
    """The 0-based index of the first line preceded by at least ``budget`` tokens of ``lines`` (None when the
    whole text is shorter): a binary search over prefixes, about log2(lines) token counts of one file."""
    if ws.counter.count("\n".join(lines)) < budget:
        return None
    lo, hi = 0, len(lines)
    while lo < hi:
        mid = (lo + hi) // 2
        if ws.counter.count("\n".join(lines[:mid])) >= budget:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _always_loaded(ws: Workspace, fi: FileInfo) -> bool:
    if fi.kind in (D.CLAUDE_MD, D.CLAUDE_LOCAL_MD):
        return True
    if fi.kind == D.RULE:
        fm = fi.prepared.frontmatter
        data = fm.data if isinstance(fm.data, dict) else {}
        return parse_paths(data.get("paths")).unconditional
    if fi.kind == D.AGENTS_MD:  # depends on the agents_md mode and on a CLAUDE.md beside it
        return ws.sessions_loading(fi.path) > 0
    return False


def _top_line(doc: _Doc) -> int:
    """Where moved lines go: after the first heading when the body opens with one, else the body's first line."""
    for i in range(doc.body_start, len(doc.lines)):
        if doc.lines[i].strip():
            if doc.sections and doc.sections[0].line == i:
                return i + 1
            return i
    return doc.body_start


@dataclass(frozen=True)
class _Unit:
    start: int
    end: int
    """Lines start..end-1 hold the instruction."""
    delete: Span
    """What to delete (may take one blank line with it)."""
    text: str
    """The instruction as it will read at the top: a list item, dedented."""


def _unit(doc: _Doc, i: int) -> _Unit | None:
    """The instruction on line ``i`` as a movable unit: a list item with its continuation lines, or a
    one-line paragraph. None when moving it would tear text apart (a line of a longer paragraph)."""
    lines = doc.lines
    n = len(lines)

    def blank(k: int) -> bool:
        return k < 0 or k >= n or not lines[k].strip()

    def heading(k: int) -> bool:
        return 0 <= k < n and k not in doc.hidden and bool(_HEADING.match(lines[k]))

    item = _LIST_ITEM.match(lines[i])
    if item:
        indent = len(item.group(1))
        j = i + 1
        while j < n and lines[j].strip() and j not in doc.hidden and not heading(j):
            nxt = _LIST_ITEM.match(lines[j])
            lead = len(lines[j]) - len(lines[j].lstrip(" "))
            if nxt and len(nxt.group(1)) <= indent:
                break  # the next item of the same list
            if lead <= indent:
                return None  # lazy continuation: the paragraph would be torn apart
            j += 1
        k = j
        while k < n and blank(k) and k < n - 1:
            k += 1
        if k > j and k < n and not blank(k) and len(lines[k]) - len(lines[k].lstrip(" ")) > indent:
            return None  # a loose item that goes on after a blank line
    else:
        prev_ok = i == doc.body_start or blank(i - 1) or heading(i - 1)
        nxt = i + 1
        next_ok = blank(nxt) or heading(nxt) or nxt in doc.hidden or bool(_LIST_ITEM.match(lines[nxt]))
        if not (prev_ok and next_ok) or lines[i].lstrip().startswith(">"):
            return None  # one line of a longer paragraph, or of a block quote
        indent = len(lines[i]) - len(lines[i].lstrip(" "))
        j = i + 1
    body = [ln[indent:] if not ln[:indent].strip() else ln.lstrip() for ln in lines[i:j]]
    if not item:
        body[0] = "- " + body[0]
    end = j
    if not item and blank(i - 1) and j < n - 1 and blank(j):
        end = j + 1  # a paragraph between blank lines: take one blank line with it
    delete = Span(i, 0, end, 0) if end < n else Span(i, 0, n - 1, len(lines[n - 1]))
    return _Unit(i, j, delete, "\n".join(body))


CRITICAL_LABEL = "**Critical:**"
"""The label of the block the CTX601 fix moves buried lines into, right under the first heading. Not a heading:
a `## Critical` there would take the file's introduction into its section."""


def _move_fix(path: Path, doc: _Doc, top: int, units: list[_Unit]) -> Fix:
    """Move ``units`` (in file order) into the file's Critical block at line ``top`` (created the first time,
    with the blank lines markdown expects around it; later moves append to its list) and delete them where
    they were."""
    lines = doc.lines
    n = len(lines)
    items = "\n".join(u.text for u in units) + "\n"
    label = next((k for k in range(top, min(n, top + 3)) if lines[k].strip() == CRITICAL_LABEL), None)
    if label is not None:
        at = label + 1
        while at < n and lines[at].strip() and not _HEADING.match(lines[at]):
            at += 1  # after the block's last item
        edit = Edit(path, Span(at, 0, at, 0), items)
    else:
        new = f"{CRITICAL_LABEL}\n{items}"
        if top < n and lines[top].strip():
            new += "\n"  # a blank line before what follows
        if top > 0 and lines[top - 1].strip():
            new = "\n" + new  # and one after the heading above
        edit = Edit(path, Span(top, 0, top, 0), new)
    edits = [edit] + [Edit(path, u.delete, "") for u in units]
    title = ("Move this instruction to the Critical block at the top of the file" if len(units) == 1 else
             f"Move the {len(units)} buried critical instructions of this file to the Critical block at the top, "
             f"in order")
    return Fix(title, tuple(edits), safe=True)


# ----------------------------------------------------------------------------------------------- CTX602
@dataclass(frozen=True)
class _Task:
    name: str
    heading: re.Pattern
    activity: str


_TASKS = (
    _Task("testing", re.compile(r"\b(?:tests?|testing|e2e|end-to-end|qa)\b"), "writing or running tests"),
    _Task("release", re.compile(r"\b(?:releas(?:e|es|ing)|publish(?:ing)?|versioning|changelog)\b"),
          "cutting a release"),
    _Task("deployment", re.compile(r"\b(?:deploy(?:s|ing|ment|ments)?|rollouts?|rollbacks?)\b"), "deploying"),
    _Task("migrations", re.compile(r"\b(?:migrations?|schema\s+changes?)\b"),
          "writing or applying database migrations"),
    _Task("ci", re.compile(r"\b(?:ci|ci/cd|continuous\s+integration|github\s+actions)\b"),
          "changing or debugging CI"),
    _Task("benchmarking", re.compile(r"\b(?:benchmarks?|benchmarking|profiling|load\s+testing)\b"),
          "benchmarking or profiling"),
    _Task("setup", re.compile(r"\b(?:set\s*up|setting\s+up|installation|installing|getting\s+started|onboarding|"
                              r"bootstrap(?:ping)?)\b"), "setting up a development environment"),
    _Task("troubleshooting", re.compile(r"\b(?:troubleshoot(?:ing)?|incidents?|on-?call|runbooks?)\b"),
          "troubleshooting or handling an incident"),
    _Task("review", re.compile(r"\b(?:code\s+reviews?|review\s+checklist|reviewing|pull\s+requests?)\b"),
          "reviewing code or preparing a pull request"),
)
# "Build and test", "Style & testing": a task mixed with something every session needs.
_GENERAL = lazyre.compile(r"\b(?:build|builds|building|style|conventions?|architecture|overview|guidelines|rules|"
                      r"general|structure|layout|commands|workflow|principles|basics|code)\b")
_JOINER = lazyre.compile(r"\band\b|&|,|/|\+")
_MANY_SESSIONS = 3
"""A CLAUDE.md below the root is considered when it loads in at least this many directory sessions."""
_IMPORT_LINE = lazyre.compile(r"(?:^|\s)@[A-Za-z0-9._~/-]")
_PATH_TOKEN = lazyre.compile(r"(?<![\w@./-])((?:\.{1,2}/)?[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+/?)")


def _task_of(title: str) -> _Task | None:
    t = re.sub(r"[`*_]", "", title)
    if _stressed(t):
        return None  # the heading says the section is critical: its author wants it in every session
    t = t.lower()
    for task in _TASKS:
        if task.heading.search(t):
            if _JOINER.search(t) and _GENERAL.search(t):
                return None
            return task
    return None


@rule("CTX602", "task-specific-section", "placement", "info",
      summary="A section of an always-loaded CLAUDE.md serves one kind of task (testing, release, deployment, "
              "migrations, CI, ...) yet costs tokens in every session.",
      why="Release steps or a testing playbook are needed in a few sessions but the root CLAUDE.md loads in all of "
          "them. As a skill only its one-line description is listed until the task comes up; in the subdirectory "
          "that needs it, it loads only there.",
      example="```markdown\n# Acme\n## Release\n1. Bump the version in `pyproject.toml`.\n2. Tag the release.\n"
              "3. Run `make release` and watch CI.\n```",
      fix="Extract the section into `.claude/skills/<name>/SKILL.md` (quick fix, applied by --fix: writes the "
          "skill under the workspace root's .claude/ with `name` and `description` frontmatter and removes the "
          "section from the file; a section of a nested CLAUDE.md gets a skill named after its directory; not "
          "offered when a project, personal or managed skill or command of that name exists, nor for a section "
          "holding @imports). When most paths the section names are under one subdirectory, an alternative quick "
          "fix moves it into that directory's CLAUDE.md. Only `##` sections of at least `section_min_tokens` "
          "tokens count, in a root CLAUDE.md or one that loads in at least 3 directory sessions; a heading that marks "
          "its section critical (CRITICAL, IMPORTANT, MUST, ALWAYS) is left alone.")
def task_specific_section(ws: Workspace):
    cfg = ws.config
    used_slugs: set[str] = set()
    memo = ws.fs.memo
    # The language server re-runs this rule after every edit: the sections of a text, and a finding built
    # from the same text, sessions count, slugs taken before it and severities, are kept in the snapshot (a
    # file created or deleted, which may take a skill's name or a destination, clears it).
    method, severities = ws.counter.method, tuple(sorted(cfg.severity.items()))
    for fi in ws.files(D.CLAUDE_MD):
        text = fi.text or ""
        if "##" not in text:
            continue
        key = ("ctx602.sections", text, cfg.section_min_tokens, method)
        cands = memo.get(key)
        if cands is None:
            cands = memo[key] = _candidates(ws, text)
        if not cands:
            continue
        root_level = fi.path.parent == ws.root or (fi.path.parent.name == ".claude" and
                                                   fi.path.parent.parent == ws.root)
        sessions = ws.sessions_loading(fi.path)
        if sessions == 0 or (not root_level and sessions < _MANY_SESSIONS):
            continue
        doc = _parse(text)
        for sec, task, body, tokens in cands:
            # the "move into" fix edits the subdirectory's CLAUDE.md as it is now: its text is part of the key
            target = _subdirectory_of(ws, fi, doc, sec)
            dest = ws.fs.read(target / "CLAUDE.md").text if target is not None else None
            fkey = ("ctx602.finding", fi.path, text, sec.line, sessions, frozenset(used_slugs), ws.root,
                    ws.settings.claude_dir, ws.settings.managed_dir, severities, method, dest)
            got = memo.get(fkey)
            if got is None:
                before = set(used_slugs)
                f = _section_finding(ws, fi, doc, sec, task, body, tokens, sessions, used_slugs)
                got = memo[fkey] = (f, frozenset(used_slugs - before))
            else:
                used_slugs.update(got[1])
            yield got[0]


def _candidates(ws: Workspace, text: str) -> tuple:
    """(section, task, body, tokens) of each task-specific `##` section worth extracting."""
    doc = _parse(text)
    cands = []
    for sec in doc.sections:
        if sec.level != 2:
            continue
        task = _task_of(sec.title)
        if task is None:
            continue
        body = _section_text(doc, sec)
        if not body:
            continue
        tokens = ws.counter.count(body)
        if tokens < ws.config.section_min_tokens:
            continue
        cands.append((sec, task, body, tokens))
    return tuple(cands)


def _section_text(doc: _Doc, sec: _Section) -> str:
    end = sec.end
    while end > sec.line + 1 and not doc.lines[end - 1].strip():
        end -= 1
    if end <= sec.line + 1:
        return ""  # a heading with nothing under it
    return "\n".join(doc.lines[sec.line:end])


def _section_finding(ws: Workspace, fi: FileInfo, doc: _Doc, sec: _Section, task: _Task, body: str,
                     tokens: int, sessions: int, used_slugs: set[str]) -> Finding:
    title = re.sub(r"\s+", " ", re.sub(r"[`*_]", "", sec.title)).strip()
    heading = doc.lines[sec.line]
    span = Span(sec.line, 0, sec.line, len(heading))
    where = "every session" if sessions == 1 else f"every session started in any of the {sessions} directories " \
                                                   f"that load this file"
    msg = (f"Section \"{title}\" is only needed when {task.activity} but costs {tokens:,} tokens in {where}; "
           f"move it into a skill or the subdirectory that needs it")
    delete = _delete_span(doc, sec)
    fixes: list[Fix] = []
    has_imports = any(_IMPORT_LINE.search(ln) for k, ln in enumerate(doc.lines[sec.line:sec.end], sec.line)
                      if k not in doc.hidden and "@" in ln)
    related: list[Related] = []
    data = {"tokens": tokens, "sessions": sessions, "saving": tokens * sessions, "task": task.name}
    owner = fi.path.parent.parent if fi.path.parent.name == ".claude" else fi.path.parent
    if not has_imports:  # moving @imports would change what they load relative to
        # a nested file's skill lands in the root's .claude/skills too: name it after its directory
        slug = _slug(title if owner == ws.root else f"{owner.name} {title}", task.name, used_slugs)
        skill_dir = ws.root / ".claude" / "skills" / slug
        if slug and not _skill_taken(ws, slug):
            used_slugs.add(slug)
            scope = "this repository" if owner == ws.root else f"`{ws.rel(owner)}`"
            desc = f"{title} instructions for {scope}. Use when {task.activity}."
            moved = rebase_links(body, fi.path.parent, skill_dir)
            skill = f"---\nname: {slug}\ndescription: {json.dumps(desc, ensure_ascii=False)}\n---\n\n{moved}\n"
            fixes.append(Fix(f"Extract into the skill `.claude/skills/{slug}/SKILL.md`",
                             (Edit(skill_dir / "SKILL.md", None, skill, create=True), Edit(fi.path, delete, "")),
                             safe=True))
            data["skill"] = slug
        target = _subdirectory_of(ws, fi, doc, sec)
        if target is not None:
            dest = target / "CLAUDE.md"
            fixes.append(Fix(f"Move into `{ws.rel(dest)}`",
                             (_append(ws, dest, rebase_links(body, fi.path.parent, target)), Edit(fi.path, delete, "")),
                             safe=False))
            if ws.fs.exists(dest):
                related.append(Related(dest, Span(0, 0, 0, 0), "the subdirectory CLAUDE.md this section is about"))
            data["subdirectory"] = ws.rel(target)
    return Finding("CTX602", "info", fi.path, span, msg, related=related, fixes=fixes, data=data)


_MD_LINK = lazyre.compile(r"(!?\[[^\]\n]*\]\()(<[^>\n]*>|[^)\s]+)((?:\s+\"[^\"\n]*\")?\))")


def rebase_links(text: str, src_dir: Path, dest_dir: Path) -> str:
    """``text`` moved from a file in ``src_dir`` to one in ``dest_dir``: relative markdown link targets rewritten
    to name the same files from the new place (`[guide](../docs/x.md)`). URLs, anchors, absolute paths and
    links in code are left alone."""
    if src_dir == dest_dir or "](" not in text:
        return text
    st = structure(text)
    hidden = st.code_lines | st.comment_lines
    out = []
    for i, line in enumerate(text.split("\n")):
        if i not in hidden and "](" in line:
            line = _MD_LINK.sub(lambda m: _rebased(m, src_dir, dest_dir, line), line)
        out.append(line)
    return "\n".join(out)


def _rebased(m: re.Match, src_dir: Path, dest_dir: Path, line: str) -> str:
    target = m.group(2)
    bracketed = target.startswith("<")
    raw = target[1:-1] if bracketed else target
    if not raw or raw.startswith(("#", "/", "~")) or SCHEME.match(raw) or in_code_span(line, m.start()):
        return m.group(0)
    path, sep, frag = raw.partition("#")
    new = os.path.relpath(os.path.normpath(src_dir / path), dest_dir).replace(os.sep, "/")
    if path.endswith("/") and not new.endswith("/"):
        new += "/"
    new = new + sep + frag
    return m.group(1) + (f"<{new}>" if bracketed else new) + m.group(3)


def _delete_span(doc: _Doc, sec: _Section) -> Span:
    n = len(doc.lines)
    if sec.end < n:
        return Span(sec.line, 0, sec.end, 0)
    # the last section: drop the blank lines before it too, keep the previous line's newline
    start = sec.line
    while start > doc.body_start and not doc.lines[start - 1].strip():
        start -= 1
    if start == 0:
        return Span(0, 0, n - 1, len(doc.lines[n - 1]))
    return Span(start, 0, n - 1, len(doc.lines[n - 1])) if doc.lines[n - 1] == "" else \
        Span(start - 1, len(doc.lines[start - 1]), n - 1, len(doc.lines[n - 1]))


def _slug(title: str, fallback: str, used: set[str]) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", title.lower())
    s = re.sub(r"\b(?:claude|anthropic)\b", "", s)
    s = re.sub(r"-{2,}", "-", s).strip("-")
    if len(s) > 64:
        s = s[:64].rsplit("-", 1)[0] if "-" in s[:64] else s[:64]
    s = s.strip("-") or fallback
    base, k = s, 2
    while s in used:
        suffix = f"-{k}"
        s = base[: 64 - len(suffix)].rstrip("-") + suffix
        k += 1
    return s


def _skill_taken(ws: Workspace, slug: str) -> bool:
    """A skill or command of that name anywhere the agent looks would clash with (or shadow) the new one."""
    places = [ws.root / ".claude" / "skills" / slug, ws.settings.claude_dir / "skills" / slug,
              ws.settings.managed_dir / ".claude" / "skills" / slug,
              ws.root / ".claude" / "commands" / f"{slug}.md", ws.settings.claude_dir / "commands" / f"{slug}.md"]
    return any(ws.fs.exists(p) for p in places)


def _subdirectory_of(ws: Workspace, fi: FileInfo, doc: _Doc, sec: _Section) -> Path | None:
    """The one directory below the file's own that the section's paths predominantly name (at least two thirds
    of them, two or more). Paths may be written relative to the file's directory or to any ancestor.
    Memoised in the snapshot (it depends on the section's text and on which directories exist)."""
    key = ("ctx602.subdir", fi.path, "\n".join(doc.lines[sec.line:sec.end]))
    memo = ws.fs.memo
    if key not in memo:
        memo[key] = _find_subdirectory(ws, fi, doc, sec)
    return memo[key]


def _find_subdirectory(ws: Workspace, fi: FileInfo, doc: _Doc, sec: _Section) -> Path | None:
    own = fi.path.parent.parent if fi.path.parent.name == ".claude" else fi.path.parent
    anchors = [own]
    while anchors[-1] != ws.root and anchors[-1].parent != anchors[-1] and own != ws.root:
        anchors.append(anchors[-1].parent)
    fs = ws.fs
    counts: dict[Path, int] = {}
    total = 0
    for k in range(sec.line + 1, sec.end):  # code blocks too: their commands name paths as well
        for m in _PATH_TOKEN.finditer(doc.lines[k]):
            parts = [p for p in m.group(1).rstrip("/.").split("/") if p not in ("", ".")]
            if not parts or ".." in parts or parts[-1].lower().endswith(_DOC_SUFFIXES):
                continue  # (a link to a document says where to read, not where the work happens)
            base = next((a for a in anchors if fs.is_dir(a / parts[0])), None)
            if base is None:
                continue
            chain: list[Path] = []
            d = base
            for p in parts:
                d = d / p
                if not fs.is_dir(d):
                    break
                chain.append(d)
            total += 1
            for c in chain:
                if c != own and _below(c, own) and ".claude" not in c.relative_to(own).parts:
                    counts[c] = counts.get(c, 0) + 1
    if total < 2:
        return None
    need = max(2, math.ceil(total * 2 / 3))
    best = [d for d, c in counts.items() if c >= need]
    if not best:
        return None
    return max(best, key=lambda d: len(d.parts))


_DOC_SUFFIXES = (".md", ".mdx", ".markdown", ".rst", ".txt", ".adoc")


def _below(path: Path, base: Path) -> bool:
    try:
        path.relative_to(base)
        return True
    except ValueError:
        return False


def _append(ws: Workspace, dest: Path, body: str) -> Edit:
    if not ws.fs.exists(dest):
        return Edit(dest, None, body + "\n", create=True)
    text = ws.file(dest).text or ""
    lines = text.split("\n")
    last = len(lines) - 1
    sep = "\n" if text.endswith("\n") else "\n\n"
    if not text.strip():
        sep = ""
    return Edit(dest, Span(last, len(lines[last]), last, len(lines[last])), sep + body + "\n")
