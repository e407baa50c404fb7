"""Rules: token and size budgets (CTX101-CTX106)."""

from __future__ import annotations

from operator import attrgetter
from pathlib import Path

from .. import discovery as D
from .. import model as M
from ..workspace import FileInfo, Workspace
from ..findings import Edit, Finding, Fix, Related, Span
from ..loader import cut_memory
from ..markdown import line_count
from . import rule

ALWAYS_KINDS = (D.CLAUDE_MD, D.CLAUDE_LOCAL_MD, D.AGENTS_MD, D.RULE)
_FIXED = (M.TOOL_SCHEMAS, M.SYSTEM_PROMPT)
_tokens = attrgetter("tokens")


def _loaded_at_startup(ws: Workspace, fi: FileInfo) -> bool:
    return ws.fs.realpath(fi.path) in ws.loads_in


def _root_bit(ws: Workspace) -> int:
    """The `loads_in` bit of the workspace root's session (the scan lists the root first)."""
    dirs = ws.index.dirs
    if dirs and dirs[0] == ws.root:
        return 1
    return 1 << dirs.index(ws.root) if ws.root in dirs else 0


def _line_where_budget_ends(ws: Workspace, fi: FileInfo, budget: int) -> int:
    """0-based line of the file at which the prepared content passes ``budget`` tokens (binary search over
    prefixes of the loaded line range)."""
    prep = fi.prepared
    first, last = prep.first_line - 1, prep.last_line - 1
    lines = fi.lines
    lo, hi = first, last
    while lo < hi:
        mid = (lo + hi) // 2
        if ws.counter.count("\n".join(lines[first:mid + 1])) > budget:
            hi = mid
        else:
            lo = mid + 1
    return lo


FILE_BUDGET_WARN_FACTOR = 1.2
"""CTX101 is a warning for a file that loads in every session (at the workspace root) of at least this many times
its budget, info below (2,000-2,399 tokens at the default budget: a file a little over a soft budget is not worth
restructuring)."""
SCOPED_BUDGET_WARN_FACTOR = 2.0
"""The same for a file that loads only below the root (a package's, a crate's): it costs only the sessions that
start there, and is usually the very place the advice would move things to. (From the triage of 87 real
repositories: root files from 1.24x on were worth trimming; scoped files at 1.5-1.9x were dense topical guides,
judged not worth splitting 11 times out of 12, and from 2.2x on worth it.)"""


@rule("CTX101", "file-over-budget", "budget", "warning",
      summary="An always-loaded instruction file costs more tokens than its budget.",
      why="Every session that starts where this file loads pays for all of it before the first prompt, on every "
          "call. Large files crowd out the conversation and dilute the instructions that matter.",
      example="A 400-line root CLAUDE.md of 6,000 tokens with the default budget of 2,000 tokens per file.",
      fix="Move task-specific sections into skills (loaded on demand) or into the subdirectory CLAUDE.md that "
          "needs them. The finding points at the line where the budget runs out. Budget: `[check] "
          "file_budget_tokens` (default 2,000). A file over its budget by less than a fifth (one every session "
          "loads, at the root) or by less than twice (a scoped file, loaded only below the root) is info: a little "
          "over a soft budget is where most files land, and not worth restructuring. So is a file that loads at startup "
          "only in directories no one starts a session in (`.github/`, `.claude/`, other dot-directories, docs "
          "folders): in practice it loads when the agent reads a file there, as a scoped file should.")
def file_over_budget(ws: Workspace):
    budget = ws.config.file_budget_tokens
    for fi in ws.files(*ALWAYS_KINDS):
        if not _loaded_at_startup(ws, fi):
            continue
        tokens = ws.counter.count(fi.prepared.content)
        if tokens <= budget:
            continue
        line = _line_where_budget_ends(ws, fi, budget)
        mask = ws.loads_in.get(ws.fs.realpath(fi.path), 0)
        n = mask.bit_count()
        # A little over a soft budget is where most files land: a warning from a fifth over for a file every session
        # loads, from twice the budget for a scoped one
        factor = FILE_BUDGET_WARN_FACTOR if mask & _root_bit(ws) else SCOPED_BUDGET_WARN_FACTOR
        severity = "warning" if tokens >= factor * budget else "info"
        where = f"in {n} director{'y' if n == 1 else 'ies'}"
        explain = []
        if not mask & ws.start_mask:
            # `.github/AGENTS.md` (or a CLAUDE.md under docs/): nobody starts a session there, so in practice it
            # loads when the agent reads a file below it, which is what a scoped file is for
            severity = "info"
            where += " no one starts a session in (agent configuration or docs), so in practice on touch"
            explain = ["loads at startup only in directories that are not start directories: info"]
        yield Finding("CTX101", severity, fi.path, Span.line(line, fi.lines[line]),
                      f"{tokens:,} tokens load at startup {where} (budget {budget:,}); the budget runs out here: "
                      f"move later sections into skills or subdirectory files",
                      data={"tokens": tokens, "budget": budget, **({"explain": explain} if explain else {})})


@rule("CTX102", "directory-over-budget", "budget", "warning",
      summary="Starting a session in some directory loads more instruction tokens than the session budget.",
      why="What loads depends on where the agent starts: every CLAUDE.md from the root down, their imports, "
          "unconditional rules, memory and the skills listing. A deep directory can inherit a heavy stack.",
      example="services/billing/tests/ loads the root, services/ and billing/ CLAUDE.md files plus imports: "
              "14,000 tokens against a 10,000-token budget.",
      fix="Trim the file that contributes most (the finding sits on it) or move its sections where they are "
          "needed. Budget: `[check] session_budget_tokens` (default 10,000, fixed overhead excluded). Confidence: "
          "info when the worst directory is less than a fifth over the budget (as CTX101 weighs a file), when no directory over the budget is a start directory (agent configuration, docs), or when the "
          "finding's file is in a template directory (`[check] template_dirs`) and under the budget alone: "
          "copied into a new project it stands alone, and the sum with this repository's files exists only "
          "here.")
def directory_over_budget(ws: Workspace):
    budget = ws.config.session_budget_tokens
    over: dict[Path, list[tuple[Path, int, int]]] = {}
    # A directory that loads what its parent loads shares the parent's list of blocks: weigh each list once.
    weighed: dict[int, tuple[int, M.Block | None]] = {}
    for s in ws.sessions():
        blocks = s.blocks
        got = weighed.get(id(blocks))
        if got is None:
            fixed = 0
            for b in blocks:  # the fixed overhead comes first
                if b.kind not in _FIXED:
                    break
                fixed += b.tokens
            instr = s.startup_tokens - fixed
            top = None
            if instr > budget:
                top = max((b for b in blocks if b.source is not None and b.startup), key=_tokens, default=None)
            got = weighed[id(blocks)] = (instr, top)
        instr, top = got
        if instr <= budget or top is None:
            continue
        over.setdefault(top.source, []).append((s.start_dir, instr, top.tokens))
    for path, dirs in sorted(over.items()):
        dirs.sort(key=lambda x: -x[1])
        worst, worst_tokens, mine = dirs[0]
        fi = ws.file(path)
        where = ws.rel(worst) if worst != ws.root else "the workspace root"
        started = any(ws.is_start(d) for d, _, _ in dirs)
        # A template that `pipecat init` copies into new projects stands alone there: the sum with this
        # repository's root files exists only here (unless the template alone is over the budget)
        shipped = mine <= budget and ws.config.in_template_dir(ws.rel(path))
        why = "" if started and not shipped else (
            " (the file is in a template directory and under the budget alone: the sum exists only here)" if shipped
            else " (none a start directory: agent configuration or docs)")
        if not why and worst_tokens < FILE_BUDGET_WARN_FACTOR * budget:
            # (a little over a soft budget, as CTX101 weighs a file: 10,002 tokens against 10,000)
            why = f" (at most {worst_tokens / budget - 1:.0%} over the budget)"
        yield Finding("CTX102", "info" if why else "warning", path, Span.line(0, fi.lines[0] if fi.lines else ""),
                      f"Sessions in {len(dirs)} director{'y' if len(dirs) == 1 else 'ies'}{why} "
                      f"load more than {budget:,} instruction tokens (worst: {where}, {worst_tokens:,}); this file "
                      f"contributes {mine:,}: trim it or move sections into skills",
                      data={"dirs": [str(d) for d, _, _ in dirs], "worst_tokens": worst_tokens})


@rule("CTX103", "large-instruction-file", "budget", "warning",
      summary="A CLAUDE.md is over the agent's own large-file threshold (40,000 characters).",
      why="Claude Code warns about memory files over 40,000 characters (MAX_MEMORY_CHARACTER_COUNT); above 4 MiB "
          "they are skipped entirely.",
      example="A CLAUDE.md that pasted a whole API reference: 55,000 characters.",
      fix="Split it: keep the rules that apply everywhere, move reference material into files read on demand. Only "
          "files Claude Code loads count (an AGENTS.md only when a CLAUDE.md links or imports it); a file that "
          "loads at startup only in directories no one starts a session in (a skill's bundle, `.github/`, docs "
          "folders) is info.")
def large_file(ws: Workspace):
    limit = ws.config.large_file_chars
    for fi in ws.files(D.CLAUDE_MD, D.CLAUDE_LOCAL_MD, D.AGENTS_MD):
        n = len(fi.text or "")
        if n <= limit:
            continue
        mask = ws.loads_in.get(ws.fs.realpath(fi.path), 0)
        if fi.kind == D.AGENTS_MD and not mask:
            continue  # an AGENTS.md Claude Code never loads (no CLAUDE.md links or imports it): not its threshold
        severity, where = "warning", ""
        if mask and not mask & ws.start_mask:
            # a skill's AGENTS.md "with all rules expanded", read on demand; a CLAUDE.md under docs/
            severity, where = "info", " (it loads at startup only where no one starts a session: mostly read on demand)"
        yield Finding("CTX103", severity, fi.path, Span.line(0, fi.lines[0]),
                      f"{n:,} characters is over Claude Code's {limit:,}-character large-file threshold{where}: "
                      f"split it and move reference material into files read on demand")


@rule("CTX104", "too-many-lines", "budget", "info",
      summary="A CLAUDE.md is longer than the recommended 200 lines.",
      why="Anthropic's guidance is to keep each CLAUDE.md under 200 lines; long files are followed less reliably.",
      example="A 320-line CLAUDE.md.",
      fix="Move sections into skills or subdirectory files. Threshold: `[check] max_lines` (default 200).")
def too_many_lines(ws: Workspace):
    limit = ws.config.max_lines
    for fi in ws.files(D.CLAUDE_MD, D.CLAUDE_LOCAL_MD, D.AGENTS_MD):
        n = line_count(fi.text or "")
        if n > limit:
            yield Finding("CTX104", "info", fi.path, Span.line(limit, fi.lines[limit]),
                          f"{n} lines is past the recommended {limit}: move the sections below into skills or "
                          f"subdirectory files")


@rule("CTX105", "memory-past-cutoff", "budget", "warning",
      summary="MEMORY.md has content past the first 200 lines / 25,000 bytes, which never loads.",
      why="Claude Code loads only the head of MEMORY.md at startup: the first 200 lines or 25,000 bytes, "
          "whichever comes first. Anything after that is invisible to the model unless it reads the file.",
      example="A MEMORY.md index of 250 one-line entries: entries 201-250 never load.",
      fix="Keep MEMORY.md a short index. The quick fix moves the hidden tail into a topic file "
          "(`archive.md`) and links it from the index.")
def memory_past_cutoff(ws: Workspace):
    s = ws.settings
    for fi in ws.files(D.MEMORY_INDEX):
        text = fi.text or ""
        head, cut = cut_memory(text, s.memory_max_lines, s.memory_max_bytes)
        if cut is None:
            continue
        first_hidden = head.count("\n") + 1
        total = line_count(text)
        hidden = total - first_hidden
        if hidden <= 0:
            continue
        name = _free_name(ws, fi.path.parent, "archive")
        # The link itself must load: start moving early enough that head + link fit both limits.
        start = first_hidden
        while start > 0:
            link = f"- [Archived entries]({name}): {total - start + 1} older entries moved out of the index\n"
            head_bytes = len("\n".join(fi.lines[:start - 1]).encode()) + 1
            if start <= s.memory_max_lines and head_bytes + len(link.encode()) <= s.memory_max_bytes:
                break
            start -= 1
        start -= 1  # 0-based first moved line
        tail = "\n".join(fi.lines[start:]).rstrip("\n") + "\n"
        end = len(fi.lines) - 1
        fix = Fix(f"Move the {hidden} hidden lines into {name} and link it",
                  (Edit(fi.path, Span(start, 0, end, len(fi.lines[end])), link),
                   Edit(fi.path.parent / name, None, f"# Archived memory entries\n\n{tail}", create=True)))
        yield Finding("CTX105", "warning", fi.path, Span.line(first_hidden, fi.lines[first_hidden]),
                      f"Lines {first_hidden + 1}-{total} never load (the agent reads the first "
                      f"{s.memory_max_lines} lines / {s.memory_max_bytes:,} bytes): move them into a topic file "
                      f"linked from the index", fixes=[fix], data={"hidden_lines": hidden})


def _free_name(ws: Workspace, d: Path, stem: str) -> str:
    n = 0
    while True:
        name = f"{stem}.md" if n == 0 else f"{stem}-{n}.md"
        if not (d / name).exists():
            return name
        n += 1


@rule("CTX106", "skill-description-dropped", "budget", "warning",
      summary="The skills listing is over its budget, so this skill's description is not sent (a warning on the "
              "first skill to lose it, naming how many others do; info on each of those).",
      why="The model chooses skills from one line each. When the listing exceeds its budget (1% of the window x 4 "
          "characters: 8,000 at 200K) Claude Code keeps every name but drops descriptions, least-invoked first: "
          "the model then sees only the name.",
      example="60 skills with 200-character descriptions need 12,780 characters; 24 lose their description.",
      fix="Shorten descriptions across skills, merge rarely used skills, or mark user-only skills "
          "`disable-model-invocation: true` so they leave the listing.")
def skill_description_dropped(ws: Workspace):
    listing = ws.session(ws.root).skills
    if listing is None or not listing.over_budget:
        return
    dropped = [sk for sk in listing.skills if sk.description_dropped]
    kept = [Related(s.source, Span(0, 0, 0, 0), "a skill whose description is kept")
            for s in listing.skills[:1] if s.listed and not s.description_dropped]
    # One overflow is one problem: the first skill to lose its description carries the warning and names how
    # many others do; each of those is info, so the editor still marks every skill the model sees by name only
    # (71 warnings for one listing told a user nothing the first did not).
    for i, sk in enumerate(dropped):
        fi = ws.file(sk.source)
        line = next((k for k, t in enumerate(fi.lines) if t.startswith("description:")), 0)
        others = "" if i or len(dropped) == 1 else f", and {len(dropped) - 1} other skills' too"
        yield Finding("CTX106", "info" if i else "warning", sk.source,
                      Span.line(line, fi.lines[line] if fi.lines else ""),
                      f"The skills listing needs {listing.full_chars:,} characters but its budget is "
                      f"{listing.budget_chars:,}: this description is dropped and the model sees only "
                      f"'{sk.name}'{others}; shorten descriptions or hide user-only skills",
                      related=kept if i else kept + [Related(o.source, Span(0, 0, 0, 0), "also dropped")
                                                     for o in dropped[1:6]])
