"""Rules: instructions across agents (CTX801-CTX806), from the profiles of spec section C.

The workspace targets the agents whose files exist in it (CLAUDE.md or `.claude/` for Claude Code,
AGENTS.md for Codex, `.cursor/rules/` or `.cursorrules` for Cursor, `.github/copilot-instructions.md` or
`.github/instructions/` for Copilot, GEMINI.md for Gemini CLI), or those `[check] agents` names.
"""

from __future__ import annotations

import weakref
from pathlib import Path

from .. import model as M
from ..workspace import Workspace, in_vendor_dir
from ..compare import FOREIGN, NEVER, ON_TOUCH, STARTUP, Comparison, compare
from ..findings import Edit, Finding, Fix, Related, Span
from ..markdown import split_lines
from ..profiles import AGENTS
from ..profiles import codex as C
from ..profiles.common import LooseFrontmatter, agent_files_in, glob_matches, loose_frontmatter, targeted_agents
from ..profiles.copilot import apply_to
from ..profiles.cursor import ALWAYS, AUTO, MANUAL, classify
from . import rule
from .dup_disagree import HARD, Spans, disagreement
from .duplication import file_units, normalise, similarity
from .paths_glob import kind_only

_NAMES = M.AGENT_NAMES
_CACHE: "weakref.WeakKeyDictionary[Workspace, dict]" = weakref.WeakKeyDictionary()


def _memo(ws: Workspace) -> dict:
    got = _CACHE.get(ws)
    if got is None:
        got = _CACHE[ws] = {}
    return got


def agent_files(ws: Workspace) -> list[Path]:
    """Every agent's instruction files in the workspace (one scan per workspace)."""
    memo = _memo(ws)
    if "files" not in memo:  # from the workspace's one walk, not a scan of our own
        memo["files"] = agent_files_in(ws.root, ws.rel_files, ws.settings)
    return memo["files"]


def _parts(ws: Workspace, p: Path) -> tuple[str, ...]:
    try:
        return p.relative_to(ws.root).parts
    except ValueError:
        return p.parts


def targets(ws: Workspace) -> tuple[str, ...]:
    """The agents the workspace targets: `[check] agents`, else those whose files exist."""
    return targeted_agents(ws.root, agent_files(ws), ws.settings, ws.config.agents)


def root_comparison(ws: Workspace) -> Comparison | None:
    """Every targeted agent's session at the workspace root, side by side (None with fewer than two)."""
    memo = _memo(ws)
    if "cmp" not in memo:
        agents = targets(ws)
        memo["cmp"] = None if len(agents) < 2 else compare(
            ws.root, (), ws.settings, agents=agents, root=ws.root, fs=ws.fs, counter=ws.counter,
            files=agent_files(ws))
    return memo["cmp"]


def _readers(ws: Workspace, cmp: Comparison) -> dict[str, set]:
    """Real path -> the agents that load it at startup or on a touch, through any of its paths (AGENTS.md and
    .claude/CLAUDE.md may be links to one file: its readers are the readers of either)."""
    readers: dict[str, set] = {}
    for r in cmp.rows:
        readers.setdefault(ws.fs.realpath(r.source), set()).update(
            a for a, c in r.cells.items() if c.status in (STARTUP, ON_TOUCH))
    return readers


def _first_line(ws: Workspace, path: Path) -> Span:
    fi = ws.file(path)
    lines = fi.lines if fi.text is not None else [""]
    i = next((k for k, ln in enumerate(lines) if ln.strip() and ln.strip() != "---"), 0)
    return Span.line(i, lines[i] if i < len(lines) else "")


def _same_content(ws: Workspace, cmp: Comparison, path: Path, agent: str) -> bool:
    """Whether ``agent``'s session holds ``path``'s content through another file (a symlink, a copy)."""
    real = ws.fs.realpath(path)
    src = ws.fs.read(path)
    text = (src.text or "").strip() if src.ok else None
    for b in cmp.sessions[agent].blocks:
        if b.source is None or b.source == path:
            continue
        if ws.fs.realpath(b.source) == real:
            return True
        if text:
            other = ws.fs.read(b.source)
            if other.ok and (other.text or "").strip() == text:
                return True
    return False


@rule("CTX801", "agent-misses-file", "agents", "info",
      summary="An instruction file that some of the agents the workspace targets load and others, which read "
              "files of its kind, never do.",
      why="Teams that use several agents write CLAUDE.md, AGENTS.md, `.cursor/rules`, "
          "`.github/copilot-instructions.md` and GEMINI.md side by side and cannot tell which instruction reaches "
          "which agent: an instruction that only Claude Code reads does not exist for Codex. The targeted agents "
          "are those whose files exist in the workspace, or `[check] agents`.",
      example="A root CLAUDE.md with the test command, and an AGENTS.md without it: Codex, Cursor and Gemini "
              "never see the command (`ctxls compare` shows the whole table).",
      fix="Put shared instructions in the file every targeted agent reads (AGENTS.md is read by Codex, Cursor "
          "and Copilot; Claude Code can `@AGENTS.md` it and Gemini CLI can list it in `context.fileName`), or "
          "name the agents you really target in `[check] agents`.")
def agent_misses_file(ws: Workspace):
    cmp = root_comparison(ws)
    if cmp is None:
        return
    readers = _readers(ws, cmp)
    for r in cmp.rows:
        if _parts(ws, r.source) == r.source.parts:  # outside the workspace (the user's home)
            continue
        loaders = [a for a, c in r.cells.items() if c.status in (STARTUP, ON_TOUCH)]
        reach = readers[ws.fs.realpath(r.source)]  # (docs/CLAUDE.md may be a link to docs/AGENTS.md)
        # (an agent for which this is no file of its kind at all, a `.cursor/rules` rule for Codex, is not
        # missing it: only agents that read such files, and not this one here, are named)
        # (nor is Codex, for a file below the root: a Codex session started there loads it)
        missing = [a for a, c in r.cells.items() if c.status == NEVER and not (c.reason or "").startswith(FOREIGN)
                   and c.reason != C.BELOW_CWD and a not in reach and not _same_content(ws, cmp, r.source, a)]
        if not loaders or not missing:
            continue
        how = ", ".join(f"{_NAMES[a]} ({r.cells[a].status})" for a in loaders)
        why = "; ".join(f"{_NAMES[a]}: {r.cells[a].reason}" for a in missing)
        yield Finding("CTX801", "info", r.source, _first_line(ws, r.source),
                      f"Loads in {how} but never in {', '.join(_NAMES[a] for a in missing)} ({why})",
                      data={"loaded_by": loaders, "missed_by": missing})


@rule("CTX802", "codex-truncated", "agents", "warning",
      summary="Codex's shared 32 KiB project-doc budget ends inside this AGENTS.md: the rest, and every file "
              "after it, never reaches Codex.",
      why="Codex reads one AGENTS.md per directory from the project root down to where it starts and stops at "
          "`project_doc_max_bytes` (32,768 bytes) for all of them together, root first: the file that crosses the "
          "budget is cut mid-line and the deeper files are dropped without a word to the model.",
      example="A 30 KB root AGENTS.md and a 5 KB services/api/AGENTS.md: a Codex session in services/api/ gets "
              "the first 2.7 KB of the service file and nothing of services/api/payments/AGENTS.md.",
      fix="Shorten the files above (the root's costs every session), move detail into files Codex reads on "
          "demand, or raise `project_doc_max_bytes` in Codex's config (and ctxls's `codex_project_doc_max_bytes`). A cut only "
          "in sessions started where no one starts one (a skill's bundle, agent configuration, docs folders) is "
          "info, and so is the cut of a file in a template directory (`[check] template_dirs`) that is under the "
          "budget alone: copied into a new project, it stands alone.")
def codex_truncated(ws: Workspace):
    if "codex" not in targets(ws):
        return
    s = ws.settings
    names = set(C.candidates(s))
    starts = sorted({p.parent for p in agent_files(ws) if p.name in names})
    cuts: dict[tuple[Path, int], dict] = {}
    drops: dict[Path, dict] = {}
    for d in starts:
        sess = C.load(d, [], s, ws.root, ws.fs, ws.counter)
        dropped = [k.source for k in sess.skipped if k.reason.startswith("dropped:")]
        cut = next((b for b in sess.blocks if b.cut and b.source is not None), None)
        if cut is not None:
            got = cuts.setdefault((cut.source, cut.lines[1]), {"dirs": [], "dropped": {}, "block": cut})
            got["dirs"].append(d)
            got["dropped"].update(dict.fromkeys(dropped))
        else:
            for p in dropped:
                drops.setdefault(p, {"dirs": [], "before": [b.source for b in sess.blocks
                                                            if b.kind == M.AGENTS_MD]})["dirs"].append(d)
    budget = s.codex_project_doc_max_bytes
    for (path, line), got in sorted(cuts.items(), key=lambda kv: str(kv[0][0])):
        fi = ws.file(path)
        lines = fi.lines if fi.text is not None else [""]
        i = min(line - 1, len(lines) - 1)
        kept = got["block"].text
        col = len(split_lines(kept)[-1]) if not kept.endswith("\n") else len(lines[i])
        where = _dirs(ws, got["dirs"])
        dropped = list(got["dropped"])
        tail = (f"; dropped: {', '.join(ws_rel(ws, p) for p in dropped)}" if dropped else "")
        # (only where nobody starts a session: a skill's bundled AGENTS.md "with all rules expanded", read on demand)
        started = any(ws.is_start(d) for d in got["dirs"])
        # a template `pipecat init` copies into new projects stands alone there: cut only because this
        # repository's root AGENTS.md comes first, unless it is over the budget alone
        shipped = ws.config.in_template_dir(ws.rel(path)) and len((fi.text or "").encode()) <= budget
        yield Finding("CTX802", "warning" if started and not shipped else "info", path,
                      Span(i, min(col, len(lines[i])), i, len(lines[i])),
                      f"Codex's {budget:,}-byte project-doc budget ends here in sessions started in {where}"
                      + ("" if started else " (where no one starts a session: a skill's bundle, agent "
                                            "configuration or docs)")
                      + (" (a template, under the budget alone: the cut exists only in this repository)"
                         if shipped else "")
                      + f": the rest of this file is not loaded{tail}",
                      related=[Related(p, _first_line(ws, p), "dropped by Codex: the budget is used up")
                               for p in dropped],
                      data={"dirs": [ws_rel(ws, d) for d in got["dirs"]], "dropped": [str(p) for p in dropped]})
    for path, got in sorted(drops.items(), key=lambda kv: str(kv[0])):
        if any(path in g["dropped"] for g in cuts.values()):
            continue
        yield Finding("CTX802", "warning" if any(ws.is_start(d) for d in got["dirs"]) else "info", path,
                      _first_line(ws, path),
                      f"Codex drops this file in sessions started in {_dirs(ws, got['dirs'])}: the files before it "
                      f"use up the {budget:,}-byte project-doc budget",
                      related=[Related(p, _first_line(ws, p), "loaded before it") for p in got["before"]])


def ws_rel(ws: Workspace, p: Path) -> str:
    return M.display_path(p, ws.root) or "."


def _dirs(ws: Workspace, dirs: list[Path]) -> str:
    shown = [ws_rel(ws, d) + ("/" if d != ws.root else "") for d in dirs[:3]]
    more = f" and {len(dirs) - 3} more" if len(dirs) > 3 else ""
    return ", ".join(shown) + more


def _quote(text: str, limit: int = 70) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[:cut if cut > 20 else limit].rstrip(" ,;:") + "…"


def _cursor_rules(ws: Workspace) -> list[Path]:
    out = []
    for p in agent_files(ws):
        parts = _parts(ws, p)
        if ".cursor" in parts and p.name.endswith(".mdc"):
            out.append(p)
    return out


def _value_span(lines: list[str], line: int) -> Span:
    """The value of the `key: value` frontmatter line ``line`` (1-based)."""
    text = lines[line - 1]
    col = text.index(":") + 1
    while col < len(text) and text[col] == " ":
        col += 1
    return Span(line - 1, col, line - 1, len(text.rstrip("\r")))


@rule("CTX803", "cursor-frontmatter", "agents", "warning",
      summary="Cursor rule frontmatter that Cursor reads differently from what the author meant.",
      why="Cursor reads `.mdc` frontmatter as `key: value` text, not YAML: `alwaysApply: \"true\"` is a string, "
          "not the boolean, so the rule is not always applied; `globs` is one comma-separated string, so a YAML "
          "list is not a list of globs; a rule with neither `alwaysApply: true`, `globs` nor `description` is "
          "Manual and applies only when someone types `@name`.",
      example="```markdown\n---\nalwaysApply: \"true\"\nglobs:\n  - src/**/*.ts\n---\n```",
      fix="Write `alwaysApply: true` without quotes and `globs: src/**/*.ts, tests/**/*.ts` on one line (both are "
          "safe fixes); give a rule meant to apply by itself globs or a description. A YAML-list `globs` on a rule "
          "that always applies is info: the list changes nothing while `alwaysApply: true` stands. So is a Manual rule "
          "whose frontmatter writes `alwaysApply: false` out (the shape Cursor gives a rule meant for @-mentions).")
def cursor_frontmatter(ws: Workspace):
    for p in _cursor_rules(ws):
        fi = ws.file(p)
        if fi.text is None:
            continue
        fm = loose_frontmatter(fi.text)
        lines = split_lines(fi.text)
        kind, globs, _ = classify(fm)
        aa = fm.fields.get("alwaysApply")
        if aa is not None and aa.quoted and aa.text.strip().lower() in ("true", "false"):
            span = _value_span(lines, aa.line)
            meant = aa.text.strip().lower()
            yield Finding("CTX803", "warning", p, span,
                          f"alwaysApply is the string {aa.raw}, not a boolean: Cursor treats this rule as {kind}"
                          + (" (not always applied)" if meant == "true" else ""),
                          fixes=[Fix(f"Write alwaysApply: {meant}", (Edit(p, span, meant),))])
        g = fm.fields.get("globs")
        if g is not None and (g.flow_list or (not g.raw and g.items)):
            items = g.list_items
            line = g.line - 1
            end = line + len(g.items) if not g.raw else line
            span = Span(line, 0, end, len(lines[end]))
            read = "an empty value (no globs)" if not g.raw else f"the text {g.raw}"
            fixes = [Fix("Write globs as one comma-separated string",
                         (Edit(p, span, f"globs: {', '.join(items)}"),))] if items else []
            # (an Always rule loads whatever its globs say: the list changes nothing today)
            yield Finding("CTX803", "info" if kind == ALWAYS else "warning", p, Span(line, 0, line, len(lines[line])),
                          f"globs is a YAML list, but Cursor reads one comma-separated string: it sees {read}, "
                          f"which matches no file, so the rule never attaches to the files it names"
                          + (f" (Cursor treats it as {kind})" if kind != AUTO else ""), fixes=fixes)
        elif kind == MANUAL and (aa is None or not aa.quoted):
            # `alwaysApply: false` written out beside no globs and no description is the shape Cursor itself
            # writes for a Manual rule (a feature explainer pulled in with @): chosen, so info
            chosen = aa is not None and aa.text.strip().lower() == "false"
            yield Finding("CTX803", "info" if chosen else "warning", p,
                          _first_line(ws, p) if fm.end_line == 0 else Span.line(0, lines[0]),
                          "No alwaysApply: true, globs or description: Cursor treats this rule as Manual, so it "
                          "never applies unless someone types @" + _rule_name(p)
                          + (" (its alwaysApply: false says that is meant)" if chosen else ""))


def _rule_name(p: Path) -> str:
    parts = p.parts
    i = len(parts) - 1 - parts[::-1].index("rules")
    return "/".join(parts[i + 1:]).rsplit(".", 1)[0]


def _copilot_files(ws: Workspace) -> list[Path]:
    base = ws.root / ".github" / "instructions"
    return [p for p in agent_files(ws) if p.name.endswith(".instructions.md") and str(p).startswith(str(base) + "/")]


@rule("CTX804", "copilot-applyto-no-match", "agents", "warning",
      summary="A Copilot `applyTo` glob that matches no file of the workspace.",
      why="Copilot applies a path-specific `.instructions.md` only while it works on a file its `applyTo` matches, "
          "relative to the repository root: `*` stays within one directory (`*.py` is the root's Python files "
          "only), `**` crosses directories. A glob that matches nothing means the instructions never apply.",
      example="```markdown\n---\napplyTo: \"*.py\"\n---\n```\nin a repository whose Python files all live under src/.",
      fix="Fix the glob (`**/*.py` for every Python file, `src/**` for a directory), or delete the file. Confidence: "
          "info for a dead glob beside others that match (`*.yaml` beside `*.yml`: the instructions apply through "
          "the others), unless it is the `*` slip a hint names; so is a glob that names a kind of file wherever it is "
          "(`**/*.py`, `**/*.{test.ts,spec.ts}`) in a project that has none yet: the instructions are written ahead "
          "of the files. A YAML list of globs, block or flow (`applyTo: ['*']`), "
          "is read as its globs.")
def copilot_apply_to_no_match(ws: Workspace):
    files = None
    for p in _copilot_files(ws):
        fi = ws.file(p)
        if fi.text is None:
            continue
        fm = loose_frontmatter(fi.text)
        v = fm.fields.get("applyTo")
        if v is None:
            continue
        globs = apply_to(fm)
        if files is None:
            files = ws.rel_files
        dead = [g for g in globs if not any(glob_matches((g,), f) for f in files)]
        if not dead:
            continue
        lines = split_lines(fi.text)
        hint = ""
        if any("/" not in g.lstrip("/") and g.startswith("*") and not g.startswith("**") for g in dead):
            hint = " (`*` does not cross directories: `**/" + next(g for g in dead if g.startswith("*")) + "` would)"
        # (one dead glob beside live ones, `*.yaml` beside `*.yml`, is a harmless companion unless it is the `*` slip)
        partial = len(dead) < len(globs) and not hint
        # (`**/*.py`, `**/*.{test.ts,spec.ts}` in a project with none yet: a kind of file, wherever it is, that the
        # instructions are written ahead of; nothing about the glob is wrong, as CTX507 says of `paths:`)
        ahead = not hint and all(kind_only(g) for g in dead)
        yield Finding("CTX804", "info" if partial or ahead else "warning", p, _value_span(lines, v.line),
                      f"applyTo {', '.join(dead)} matches no file of the workspace, so Copilot never applies "
                      f"{'these instructions' if len(dead) == len(globs) else 'through it'}{hint}"
                      + (" (it names a kind of file the project has none of yet: fix it if such files exist)"
                         if ahead and not partial else ""),
                      data={"globs": dead})


_COPILOT_KEYS = ("applyTo", "excludeAgent")


def _claude_always(ws: Workspace, p: Path, fm: LooseFrontmatter) -> bool:
    """Whether Claude Code loads ``p`` unconditionally (a CLAUDE.md of any kind, or a rule without `paths`)."""
    parts = _parts(ws, p)
    if p.name in ("CLAUDE.md", "CLAUDE.local.md"):
        return True
    if ".claude" in parts and p.name.endswith(".md"):
        i = len(parts) - 1 - parts[::-1].index(".claude")
        return parts[i + 1:i + 2] == ("rules",) and "paths" not in fm.fields
    return False


@rule("CTX805", "copilot-frontmatter-in-claude-file", "agents", "warning",
      summary="Copilot-only frontmatter (`applyTo`, `excludeAgent`) in a file Claude Code loads in every session.",
      why="Claude Code ignores `applyTo` and `excludeAgent`: a CLAUDE.md, or a `.claude/rules/` file without "
          "`paths`, loads at startup whatever they say. An instruction the author scoped to Python files for "
          "Copilot then costs tokens in every Claude Code session.",
      example="```markdown\n<!-- .claude/rules/python.md -->\n---\napplyTo: \"**/*.py\"\n---\n- Use type hints.\n```",
      fix="In `.claude/rules/`, scope the rule with `paths:` (Claude Code's key; the safe fix adds it with the same "
          "globs); keep `applyTo` for the Copilot copy under `.github/instructions/`.")
def copilot_frontmatter_in_claude_file(ws: Workspace):
    for p in agent_files(ws):
        if p.name.endswith(".instructions.md"):
            continue
        fi = ws.file(p)
        if fi.text is None or not fi.text.startswith("---"):
            continue
        fm = loose_frontmatter(fi.text)
        keys = [k for k in _COPILOT_KEYS if k in fm.fields]
        if "applyTo" in keys and any(g in ("**", "**/*") for g in apply_to(fm)):
            keys.remove("applyTo")  # meant for every file: loading in every session is what the author wants
        if not keys or not _claude_always(ws, p, fm):
            continue
        lines = split_lines(fi.text)
        v = fm.fields[keys[0]]
        fixes = []
        is_rule = p.name not in ("CLAUDE.md", "CLAUDE.local.md")
        if is_rule and "applyTo" in fm.fields and apply_to(fm):
            globs = apply_to(fm)
            at = fm.fields["applyTo"].line
            fixes.append(Fix("Add paths: with the same globs",
                             (Edit(p, Span(at, 0, at, 0), "paths: " + ", ".join(f'"{g}"' for g in globs) + "\n"),)))
        scope = f"Copilot applies it only to {', '.join(apply_to(fm))}" if "applyTo" in keys else \
            f"excludeAgent: {fm.fields['excludeAgent'].text}"
        yield Finding("CTX805", "warning", p, Span.line(v.line - 1, lines[v.line - 1]),
                      f"{' and '.join(keys)} is Copilot frontmatter: Claude Code ignores it and loads this file in "
                      f"every session ({scope})", fixes=fixes)


@rule("CTX806", "agents-diverged-instruction", "agents", "warning",
      summary="The same instruction in two agents' files, and the two versions differ.",
      why="An instruction copied from CLAUDE.md into AGENTS.md (or `.cursor/rules`, GEMINI.md) gets updated in one "
          "place only; each agent then follows its own version. Two units are the same instruction when the "
          "Jaccard index of their content words is at least `duplicate_threshold` (CTX202's measure, default 0.8) "
          "without being equal. Only files that different targeted agents load are compared, and only versions "
          "that some agent reads without the other: when every agent that reads one version reads the other too "
          "(a package's CLAUDE.md words a line of the root CLAUDE.md its own way, and Copilot reads the root's "
          "wording only), no agent follows a version of its own, and CTX202 speaks of the pair.",
      example="```markdown\n<!-- CLAUDE.md -->\n- Run `make test` before every commit.\n\n<!-- AGENTS.md -->\n"
              "- Run `make check` before every commit.\n```",
      fix="Decide which version is right and make the other the same, or keep the instruction in one file every "
          "agent reads (Claude Code can `@AGENTS.md` it). A version in a template directory (`[check] "
          "template_dirs`) ships into other projects: info, as for CTX201 and CTX202; so are versions that differ "
          "in prose words only (CTX202's confidence), versions of which one only has three words or more the other "
          "lacks (a CLAUDE.md that condenses AGENTS.md, an AGENTS.md with a detail only Codex needs: on 168 real "
          "repositories one such pair in six was stale), and a vendored project's files (under vendor/, "
          "third_party/: its upstream's).")
def agents_diverged_instruction(ws: Workspace):
    cmp = root_comparison(ws)
    if cmp is None:
        return
    threshold, min_words = ws.config.duplicate_threshold, max(1, ws.config.duplicate_min_words)
    readers = _readers(ws, cmp)
    files = []
    done: set[str] = set()
    for r in cmp.rows:
        real = ws.fs.realpath(r.source)
        loaders = frozenset(readers[real])
        if not loaders or _parts(ws, r.source) == r.source.parts or real in done:
            continue
        done.add(real)
        fi = ws.file(r.source)
        if fi.text is None:
            continue
        units = file_units(fi.text, 0, fi.text.count("\n"), min_words)
        if units:
            files.append((r.source, loaders, fi, units))
    # Which agents see each exact text, in any of their files: when every agent that reads one version also
    # reads the other (the root CLAUDE.md, which Claude Code and Copilot read, words it as copilot-instructions.md
    # does, and a package's CLAUDE.md, which Claude Code reads on a touch, words it its own way), no agent follows
    # a version of its own: the agent that reads both has two versions in one context, which is CTX202's case.
    seen_by: dict[str, set] = {}
    for _, loaders, _, units in files:
        for u in units:
            seen_by.setdefault(u[3], set()).update(loaders)
    seen_real = set()
    for i, (p, la, fp, ua) in enumerate(files):
        for q, lb, fq, ub in files[i + 1:]:
            if la == lb or la <= lb or lb <= la or ws.fs.realpath(p) == ws.fs.realpath(q):
                continue
            for u in ub:
                for v in ua:
                    if u[3] == v[3] or similarity(u[4], v[4]) < threshold \
                            or seen_by[u[3]] <= seen_by[v[3]] or seen_by[v[3]] <= seen_by[u[3]]:
                        continue
                    kind = disagreement(u[3], u[4], v[3], v[4],
                                       Spans(fp.lines[v[0]:v[1] + 1], fq.lines[u[0]:u[1] + 1]))
                    if kind is None or kind == "elaboration":
                        continue  # a paraphrase or an elaboration (CTX202's test): the agents follow one rule
                    key = (q, u[0])
                    if key in seen_real:
                        continue
                    seen_real.add(key)
                    quote = _quote(" ".join(" ".join(fp.lines[k].split()) for k in range(v[0], v[1] + 1)))
                    here = [_NAMES[a] for a in sorted(lb - la, key=AGENTS.index)]
                    there = [_NAMES[a] for a in sorted(la - lb, key=AGENTS.index)]
                    # a copy under a template directory ships into other projects: as CTX201/CTX202 say there; a
                    # vendored project's files are its upstream's, not this project's to keep the same
                    vendor = any(in_vendor_dir(ws.rel(x)) for x in (p, q))
                    shipped = any(ws.config.in_template_dir(ws.rel(x)) for x in (p, q))
                    # (as CTX202: versions that differ in a content word only are mostly two wordings of one rule.
                    # So, across agents, is one copy with three words more: a CLAUDE.md that condenses AGENTS.md,
                    # an AGENTS.md with a detail only Codex needs; on 168 real repositories 1 in 6 was stale)
                    if vendor:
                        why = "the files are a vendored project's, which its upstream keeps: check before editing"
                    elif shipped:
                        why = ("one copy is in a template directory, which ships into other projects: check the "
                               "difference is meant")
                    elif kind == "grown":
                        why = ("one version has three words or more the other lacks, and nothing else changed: a "
                               "fuller or a condensed copy more often than a stale one; check they say the same thing")
                    elif kind not in HARD:
                        why = ("the versions differ in wording only (no number, negation or strength changed): check "
                               "they say the same thing")
                    else:
                        why = "keep them the same"
                    yield Finding(
                        "CTX806", "warning" if why == "keep them the same" else "info", q,
                        Span(u[0], u[2], u[1], len(fq.lines[u[1]])),
                        f"Diverged from \"{quote}\" in {ws_rel(ws, p)}: {', '.join(here)} "
                        f"follow{'s' if len(here) == 1 else ''} this version, {', '.join(there)} the other; {why}",
                        related=[Related(p, Span(v[0], v[2], v[1], len(fp.lines[v[1]])), "the other version")],
                        data={"similarity": round(similarity(u[4], v[4]), 3), "kind": kind})
                    break
