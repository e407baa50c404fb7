"""Rules: stale duplicated instructions (CTX201-CTX202).

CTX201 reports an instruction unit that loads twice in one session, CTX202 two versions of one that disagree.
The work is split by job:

* `dup_units`: what a unit is (list item, paragraph, table row, sentence line), its normalised words (equal
  words: an exact duplicate) and content words (their Jaccard index: the similarity), and the records kept;
* `dup_parallel`: which pairs are parallel items, never versions (the items of one list or table, and two
  files' instances of one template: "Rule 3 for area 12: ..." / "Rule 5 for area 40: ...");
* `dup_pairs`: the near-duplicate graph by prefix filtering (ppjoin) over a word index, restricted to files that
  load together in at least one startup session (`Workspace.loads_in`), leaving parallel items apart, so
  nothing is compared all-against-all and a templated list of k items forms no k² pairs;
* `dup_analysis`: each later unit's match (an exact copy first, else its most similar earlier near duplicate),
  kept by a long-lived snapshot (the language server's) and updated after edits;
* `dup_disagree`: whether two versions disagree (a changed number, negation, modal strength or content word),
  which CTX202 requires;
* `dup_findings`: the findings' messages, related locations and fixes.

Similarity leaves out function words, modal and negation words and numbers, so a copy that changed "MUST" to
"should", "never" to "always" or "30s" to "60s" keeps similarity 1 and is reported as diverged, while two
parallel rules about different things ("Run `make lint` before pushing" / "Run `make test` before pushing")
stay apart.  At the default threshold of 0.8, one content word swapped for another counts only in instructions
of 9 or more content words (8 shared / 10 in all); one content word added counts from 4 on (4 / 5).

Both rules share one analysis per workspace (this module's `_analyse`).
"""


from __future__ import annotations

import gc
import os
import weakref

from .. import model as M
from ..workspace import Workspace, same_items
from . import rule
from .dup_analysis import Analysis
from .dup_copies import lead_in_info, negated_by_heading, regroup, variant_info, wording_info
from .dup_disagree import HARD
from .dup_disagree import disagree
from .dup_units import STOP_WORDS, Source, content_words, extract_units, file_units, normalise, similarity

# The names the other rules and the tests use, from the modules that define them.
__all__ = ["STOP_WORDS", "content_words", "extract_units", "file_units", "normalise", "similarity",
           "duplicate_instruction", "diverged_instruction"]

TEXT_SUFFIXES = frozenset({"", ".md", ".markdown", ".mdx", ".txt"})
LOADED_KINDS = frozenset({M.CLAUDE_MD, M.AGENTS_MD, M.RULE, M.IMPORT, M.AUTO_MEMORY})

_CACHE: "weakref.WeakKeyDictionary[Workspace, tuple[tuple, Analysis]]" = weakref.WeakKeyDictionary()


# ----------------------------------------------------------------------------------------------- analysis

def _analyse(ws: Workspace) -> "Analysis":
    """The analysis both rules read. One per workspace; a long-lived file-system snapshot (the language
    server's) keeps it between workspaces and updates it after content-only edits."""
    cfg = ws.config
    key = (cfg.duplicate_threshold, cfg.duplicate_min_words)
    got = _CACHE.get(ws)
    if got is not None and got[0] == key:
        return got[1]
    threshold, min_words = cfg.duplicate_threshold, max(1, cfg.duplicate_min_words)
    # Everything the findings' text depends on besides the files: where the workspace and home are, the
    # severities run_checks writes into the (kept) findings, and how tokens are counted.
    memo_key = ("ctxls.rules.duplication", ws.root, ws.settings.home, threshold, min_words,
                tuple(sorted(cfg.severity.items())), ws.counter.method)
    # The analysis (and reading its units, cold) allocates many small objects; cyclic GC passes over the (large,
    # long-lived) session model would cost more than the analysis itself, so they wait until it is done.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        layout, sequences, sources = _inputs(ws, min_words)
        an = ws.fs.memo.get(memo_key)
        try:
            current = an is not None and an.update(layout, sources)
        except Exception:
            ws.fs.memo.pop(memo_key, None)  # half updated: the next check builds afresh
            raise
        if not current:
            an = Analysis.build(layout, sequences, sources, threshold, min_words)
            ws.fs.memo[memo_key] = an
    finally:
        if was_enabled:
            gc.enable()
    _CACHE[ws] = (key, an)
    return an


def _inputs(ws: Workspace, min_words: int) -> tuple[tuple, list[tuple[str, ...]], list[Source]]:
    """What the analysis depends on: the files every startup session loads, in order (`layout`, with their
    masks: a change there means a full rebuild), and each file's content (a change there, an update)."""
    masks = ws.loads_in
    sequences, first = _sequences(ws)
    sources: list[Source] = []
    root = str(ws.root) + os.sep
    for real, b in first.items():
        path, span, tier = b.source, b.lines, b.tier  # read now: a patched block has the new lines
        if not span or path.suffix.lower() not in TEXT_SUFFIXES:
            continue
        mask = masks.get(real, 0)
        if not mask:
            continue
        src = ws.fs.read(path, ws.settings.max_file_bytes)  # as `ws.file(path)` reads it
        if src.text is None:
            continue
        rows = file_units(src.text, span[0] - 1, span[1] - 1, min_words)
        if not rows:
            continue
        private = tier != "Project" or not str(path).startswith(root) or path.name == "CLAUDE.local.md"
        sources.append(Source(real, path, tier, span, mask, src.text, src.mtime_ns, rows, private,
                               path.name == "AGENTS.md"))
    layout = (tuple(sequences), tuple((s.real, s.path, s.tier, s.mask) for s in sources))
    return layout, sequences, sources


def _sequences(ws: Workspace) -> tuple[list[tuple[str, ...]], dict[str, M.Block]]:
    """The distinct orders in which startup sessions load files (real paths), and each file's first block.
    Kept in the file-system snapshot for as long as every session keeps its list of blocks (patching a
    session in place never changes which files it loads, nor in what order)."""
    lists = [s.blocks for s in ws.sessions()]
    key = ("ctxls.rules.duplication.sequences", ws.root)
    got = ws.fs.memo.get(key)
    if got is not None and same_items(got[0], lists):
        return got[1], got[2]
    realpath = ws.fs.realpath
    first: dict[str, M.Block] = {}
    per_session: dict[tuple[str, ...], None] = {}
    visited: set[int] = set()
    for blocks in lists:
        if id(blocks) in visited:  # a directory that loads what its parent loads shares the parent's blocks
            continue
        visited.add(id(blocks))
        reals: list[str] = []
        for b in blocks:
            if b.source is None or not b.startup or b.kind not in LOADED_KINDS:
                continue
            real = realpath(b.source)
            reals.append(real)
            if real not in first:
                first[real] = b
        per_session[tuple(reals)] = None
    sequences = list(per_session)
    ws.fs.memo[key] = (lists, sequences, first)
    return sequences, first


# ----------------------------------------------------------------------------------------------- rules

@rule("CTX201", "duplicate-instruction", "duplication", "warning",
      summary="The same instruction loads twice in one session (within a file or across co-loading files).",
      why="Instruction files are concatenated, never merged: a bullet copied from the root CLAUDE.md into "
          "`services/api/CLAUDE.md` (or into an import, an unconditional rule, CLAUDE.local.md, AGENTS.md or "
          "auto memory) is sent twice in every session where both load. That wastes tokens on every call, and "
          "the copies drift apart the day one is edited. Units are list items, paragraphs, table rows and "
          "sentence-per-line paragraph lines of at least `duplicate_min_words` (default 4) words; headings, "
          "code blocks, HTML comments, frontmatter and `@import` lines are skipped. Two units are duplicates "
          "when their words are equal after normalisation: list markers and numbering, emphasis, backticks, "
          "link brackets, punctuation between words, case and whitespace are ignored. Only files that load "
          "together in at least one startup session are compared.",
      example="```markdown\n<!-- CLAUDE.md -->\n- Run `pnpm test` before pushing.\n\n"
              "<!-- services/api/CLAUDE.md -->\n- run `pnpm test` before pushing\n```",
      fix="Keep one copy, in the file every session that needs it loads (usually the parent). The finding sits "
          "on the copy that loads later, with the earlier copy as related location, and says how many tokens "
          "it wastes in how many sessions. The safe quick fix deletes the later copy, offered only when that "
          "loses nothing: every session loading it also loads the earlier copy, the later copy has no nested "
          "items, a checked-in file is never made to rely on a private one (CLAUDE.local.md, ~/.claude, "
          "auto memory), and AGENTS.md never relies on a Claude-only file (other agents read it alone). "
          "Otherwise the message says where the copy should go. When one file repeats 5 or more instructions "
          "of another, the line findings are info and one finding says the file is a copy (info when the names "
          "say the two are variants of one file: `constitution.md`, `constitution-py.md`). A copy whose two places "
          "both open a section of the same title (\"These rules cannot be overridden.\" under `## HARD Rules` "
          "in each file) is a template's lead-in, bound to its section: info. So are copies that mean something "
          "only with what surrounds them: a list's lead-in (\"When reviewing pull requests:\" over two different "
          "lists), a line that points back at its section (\"Such tests ...\" under two headings of different "
          "titles), a copy inside a block a tool writes into the file (`<!-- BEGIN X -->` ... `<!-- END X -->`, or "
          "an element such as `<claude-mem-context>` holding an 'auto-generated' comment: change what the tool "
          "writes), and a copy in a section that restates on purpose (a summary: Quick summary, TL;DR, cheat "
          "sheet; or a numbered procedure step, `### 1. Before testing`). Two lines whose code spans differ "
          "(`type: description` / `[type] description`) are not duplicates: normalising dropped what they are "
          "about. Code spans are compared over the whole unit (a paragraph soft-wrapped over lines too): a word "
          "one copy marks as code and the other writes plainly (`Priority` / Priority) is no difference, and a "
          "span that differs only in punctuation at its edges (`:core:paging` / core:paging, `perf:` / `perf: "
          "...`) is info naming both spellings. A copy in a file an npm package publishes (its package.json is not private and its `files` "
          "lists the file: `\"files\": [\"dist\", \"AGENTS.md\"]`) goes to the package's users, who read it "
          "without the other copy: info (CTX202 too). "
          "A navigation link that each nested file writes from its own directory (`../../ARCHITECTURE.md` / "
          "`../../../ARCHITECTURE.md`) is info, so is an item naming an instruction file in each nested guide's "
          "\"See also:\" (Related, Navigation) list (\"- Root `AGENTS.md` for general project overview\"), and so is an item of two lists whose lead-ins speak of each "
          "file's own place (\"**DO NOT** modify this package for:\" / \"Work here for:\"). A rule under "
          ".claude/rules reads relative paths from the project's directory, as the root CLAUDE.md does.")
def duplicate_instruction(ws: Workspace):
    return regroup(ws, _analyse(ws).findings(ws, exact=True))


@rule("CTX202", "diverged-instruction", "duplication", "warning",
      summary="Two versions of one instruction load in the same session and they differ: one is stale.",
      why="A rule copied into two files gets updated in one place and goes stale in the other; the model then "
          "sees both versions (\"MUST\" here, \"should\" there; 30 s here, 60 s there) and may follow either. "
          "Two units are near-duplicates when the Jaccard index of their content-word sets is at least "
          "`duplicate_threshold` (default 0.8) without being exact duplicates (CTX201). Content words are the "
          "normalised words (see CTX201) minus function words, modal and negation words (must, should, never, "
          "always, not, please...) and numbers, so a changed strength, negation or number keeps two versions "
          "together while a changed tool, path or subject sets them apart: at 0.8, one content word swapped "
          "for another counts only in instructions of 9 or more content words, one added word from 4 on. "
          "Only files that load together in at least one startup session are compared. A near-duplicate is "
          "reported only when the two versions disagree: a changed number (both name one), negation (one copy "
          "negates more often: \"Don't use x\" and \"No x\" agree), modal "
          "strength (both have one), or a content word the other copy lacks outside the names of its code spans; "
          "a consistent paraphrase and a table row restating a list item are not versions of one instruction, nor "
          "are parallel items, which are never paired: the items of one list or table (`Rule 3 for area 12` / "
          "`Rule 4 for area 12`), and two co-loading files' instances of one template, items of lists whose items "
          "vary in at most half their words (numbers counted as one word) that differ only where both lists vary "
          "(`Rule 3 for area 12: the handler 33 ...` in a list of such rules beside `Rule 5 for area 40: the handler "
          "21 ...` in another). A rule alone in its list is in no template. `✅`/`❌` example lines (a `✅` line "
          "only in a section, heading to heading, that also marks a wrong way: elsewhere it is a done item of a "
          "status list) "
          "and table rows linking an anchor of their own file are not instructions (CTX201 too). A copy in a "
          "template directory (`[check] template_dirs`: templates/, examples/, fixtures/, testdata/, ...) ships "
          "into other projects on purpose: CTX201 and CTX202 say info there, without a delete fix. So is a "
          "version in two variants of one file (`guidelines.md` / `guidelines-py.md`): they are meant to differ. "
          "MUST and Always are one strength, and a verb that carries nothing (\"Don't use f-strings\" / \"No "
          "f-strings\") changes nothing: neither is a disagreement (CTX806 asks the same). A copy that only adds a "
          "word or two (`stateless agent loop` / `stateless loop`), or gives a code span's command more (`iex -S mix "
          "phx.server` / `iex -S mix`), elaborates the other: info (the shorter copy may be out of date; CTX806 "
          "leaves it out). Confidence: a "
          "warning when the versions contradict each other (a number, a negation count, a modal strength, an "
          "on/off value, a name in a code span, one name of a code span put in place of another word for word "
          "(`gitnexus_impact(...)` / `impact(...)`; not a scope or path added to it, `@acme/sdk` / `sdk`), or one "
          "copy that gained three words or more); info when they "
          "differ in prose words only, which on 40 real repositories was a rewording or a rule for another "
          "subject every time. Both versions in one file, in different sections, is the same case. A negation "
          "that only one version writes, when the other sits under a heading or label that negates what it lists "
          "(`## Don't`, `**Avoid:**`), is no contradiction: info. Nor are two versions under different headings of "
          "one file that differ in a number or a name (each section's own subject), rows of two tables with "
          "different header rows, or two lead-ins of two lists (\"Phase 1 "
          "milestones are:\" / \"Phase 3 milestones are:\"): info. Nor, in a git repository, are two versions "
          "one commit last changed (a table row and the list item it restates, written together: on 168 real "
          "repositories no such pair was a copy left behind; a stale copy is one a later commit updated in one "
          "place only). Numbers are compared as quantities (`5.0%` is 5, `2台` is 2), and a copy that only gives a number more (`Vite 6` / `Vite`, `Node 18 or 20` / `Node 18`) elaborates the other (info), and \"x instead of y\" "
          "negates y as \"x, not y\" does. A line that opens with its date (`2026-03-20` — Initial CLAUDE.md "
          "created) is a log entry, not an instruction (CTX201 too). A version inside a block a tool writes "
          "(`<!-- gitnexus:start -->` ... `<!-- gitnexus:end -->`, each run's own counts) is info: change what the "
          "tool writes.",
      example="```markdown\n<!-- CLAUDE.md -->\n- Database migrations MUST be reversible.\n\n"
              "<!-- services/api/CLAUDE.md -->\n- Database migrations should be reversible.\n```",
      fix="Decide which version is right, update it, and delete the other copy (or keep it only where it "
          "applies). The finding sits on the copy that loads later, quotes the other version, points at it, "
          "and says which version is newer: by git history when both files are tracked (`git blame` of the two "
          "versions' own lines, so an unrelated edit elsewhere in a file does not count; uncommitted and unsaved "
          "changes are the newest), else by file modification time. `[check] git_history = false` uses "
          "modification times only. There is no automatic fix; a manual quick fix can replace the older "
          "version with the newer one.")
def diverged_instruction(ws: Workspace):
    a = _analyse(ws)
    out = a.findings(ws, exact=False)
    keep = a.verdicts  # (findings are kept and reused: so are their verdicts)
    entries = a.listed(False)
    got = []
    for _, uid, f in entries:
        v = keep.get(id(f))
        if v is None or v[0] is not f:
            m = a.matches.get(uid)
            kind = "unknown" if m is None else disagree(a.files, m)
            if kind == "negation" and f.related and negated_by_heading(ws, f):
                kind = "content"  # "Use dashes in group names" under `## Don't`: the heading says the "not"
            v = keep[id(f)] = (f, kind, wording_info(f, kind) if kind not in HARD else lead_in_info(ws, f, kind))
        if v[1]:
            got.append(variant_info(v[2] or f))
    if len(keep) > 4 * len(entries) + 1000:
        live = {id(f) for _, _, f in entries}
        for k in [k for k in keep if k not in live]:
            del keep[k]
    return got if entries else out
