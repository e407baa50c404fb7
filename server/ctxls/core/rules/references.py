"""Rules: stale references (CTX401 in instruction, rule and skill files; CTX402 in auto-memory files).

A reference is a path the text names: a backticked path (`src/billing/refunds.py`), a markdown link target
([x](docs/a.md)), an `@` mention that is not an import (imports are the imports family's), or a bare
`src/...`-style token.  It is stale when it resolves nowhere: not against the file's directory, any of its
ancestors up to the workspace root, nor (for informal paths like `handlers/users.py`) as the tail of a path
that exists.

False positives are worse than misses here, so a token must look unmistakably like a path to be checked:

- commands and code (`make test`, `pytest tests -q`: a code span with whitespace), fenced and indented code
  blocks, HTML comments and frontmatter are never read;
- globs (`*`, `?`, `[`), placeholders (`<name>`, `{x}`, `$X`, `%s`, `...`, `path/to/`, `foo`), URLs, e-mail
  addresses, absolute and `~/` paths, scoped packages (`@acme/ui`), decorators (`@pytest.fixture`), domains
  and versions (`github.com/x`, `v1.2/`), `.env` and `*.local.*` files, build output (`dist/`, `node_modules/`,
  anything the root .gitignore ignores) are skipped;
- a line that talks about creating, generating, moving, renaming or removing things is skipped: the path it
  names may legitimately not exist (yet, or any more); so is a line saying a path is saved or cloned there,
  gitignored or local-only, present only "if it exists" or "may not exist", and a line giving examples
  ("e.g.", "for example", "z. B.", "par exemple", "por ejemplo", "例:", "例えば", "例如"...);
- a slash-less name (`web.py`) needs a known source/doc extension and counts as present when a file of that
  name exists anywhere in the workspace; in prose (not backticked) it is checked in memory files only ("the
  endpoints live in web.py"), where names are written that way; the names of well-known JavaScript libraries
  (`decimal.js`, `Next.js`) are not paths; a slash path without an extension is checked only when its first
  directory exists (so `log/slog` or `owner/repo` are not paths), and counts as present when a file of that
  name plus an extension exists (`src/utils/format` for format.ts: import specifiers and program names; not
  in a markdown link, which must name the file itself).

A missing path's message suggests where it went only on real evidence: a file of the same name elsewhere
(unless the name is generic, like README.md, CLAUDE.md or index.ts, or the file is the one naming the path), a
unique directory of that name, or a directory where the file was (`routes.ts` -> `routes/`: split up).
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
import re
from functools import lru_cache
from pathlib import Path
from typing import Iterator

from .. import lazyre
from .. import discovery as D
from ..loader import is_within
from ..workspace import FileInfo, Workspace
from ..findings import Edit, Finding, Fix, Span
from ..code_imports import still_imported
from ..generated import generator_of
from ..mentions import (CLAIM, CREATED, EXTERNAL, HISTORY, IN_OTHER_PLACE, OPTIONAL, FileContext, Purpose, classify,
                        built_from, declared_external, example_section, imagined_names, is_subject)
from . import GIT_BUDGET_S, rule
from .path_index import submodules, Base, GitIgnores, Names, ancestor_bases, name_index
from .path_refs import EXT, KNOWN_EXT, Ref, extract, import_cols, path_shape
from .sources import vendored

_ROW_REPO = lazyre.compile(r"\(\s*`([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)`\s*\)")
_CAMEL_HUMP = lazyre.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_CODE_EXT = KNOWN_EXT - {"md", "mdx", "markdown", "txt", "rst", "adoc", "json", "jsonc", "yaml", "yml", "toml",
                          "ini", "cfg", "conf", "csv", "lock"}
# Skill-relative bundle directories: CTX506 (skills family) checks those, and every link of a skill.
_BUNDLE_DIRS = frozenset({"scripts", "references", "reference", "assets", "templates"})

# Lines that say the paths they name need not be there on every machine or every time, and examples in other
# languages. Asked only of the lines that name a missing path (`_context_more`), which are few: every line pays
# for the first list, and each word it holds costs a little on every line.
_CONTEXT_SKIP_MORE = lazyre.compile(
    # saved or cloned there, kept out of git or on one machine, present only in CI or only sometimes
    # ("in CI" and "optional" are not among them: "tests run in CI via `scripts/ci.sh`" names a real path)
    # ("CI:" neither: "**CI:** `.github/workflows/ci.yml` runs lint" names a committed file; a clone only when
    # the line says where it goes, not "clone the fixtures with `scripts/fetch.sh`")
    r"\b(?:sav(?:e|es|ed)\s+to|clon(?:e|es|ed|ing)\b[^.;]*?\binto|git-?ignored|ignored\s+by\s+git|local-only|"
    r"may\s+not\s+exist|if\s+it\s+exists|if\s+present|"
    # examples: German, French, Spanish
    r"par\s+exemple|por\s+ejemplo)\b|\bz\. ?b\.|\bp\. ?e[xj]\.|\(local\)|"
    # examples (Japanese, Chinese; full-width parentheses included), "may not exist yet", "if it is absent"
    r"例[:：]|例えば|例如|比如|如：|可能尚不存在|不存在则|存在しない場合"
)
_CONTEXT_WORDS_MORE = ("sav", "clon", "ignored", "local", "exist", "present", "exemple",
                       "ejemplo", "z.b", "z. b", "p.e", "p. e")
_CONTEXT_WORDS_CJK = ("例", "如", "存在")  # tested on lines with non-ASCII characters only


@lru_cache(maxsize=4096)
def _context_more(line: str) -> bool:
    """Whether ``line`` says that the paths it names need not be present, or gives examples (the second list:
    asked only of lines naming a missing path, which are few; the first list runs on every line)."""
    low = line.lower()
    for w in _CONTEXT_WORDS_MORE:
        if w in low:
            return _CONTEXT_SKIP_MORE.search(low) is not None
    if not low.isascii():
        for w in _CONTEXT_WORDS_CJK:
            if w in low:
                return _CONTEXT_SKIP_MORE.search(low) is not None
    return False


# TypeScript sources that an import written with the emitted extension names (`./helpers.js` -> helpers.ts).
_REPO_LABEL = lazyre.compile(r"^\W*(?:\d+[.)]\s*)?[*_]{0,2}[\w .-]{0,30}\b(?:repo(?:sitory)?|upstream|source)[*_]{0,2}\s*[:：]"
                         r"\s*[*_]{0,2}<?https?://github\.com/", re.IGNORECASE)
_GITHUB_REPO = lazyre.compile(r"https?://github\.com/([\w.-]+/[\w.-]+)")
_BARE_WORD = lazyre.compile(r"^[a-z][a-z0-9_-]*$")
_THE_X_REPO = lazyre.compile(r"\b(?:in|from|at)\s+the\s+[*_`]*([\w.-]+)[*_`]*\s+repo(?:sitory)?\b", re.IGNORECASE)
_LABEL_AFTER = lazyre.compile(r"`?\s*\(\s*[*_]{0,2}([A-Za-z][\w.-]*)[*_]{0,2}\s*\)")
_TS_SOURCE = {"js": "ts", "jsx": "tsx", "mjs": "mts", "cjs": "cts"}
# "See `HOOKS.md` for the protocol", "Biome, configured in `biome.json`": the text sends the reader to the file.
_POINTER_BEFORE = lazyre.compile(
    r"\b(?:see|read|refer\s+to|consult|open|per|(?:configured|defined|documented|described|declared|specified|"
    r"listed|kept|stored|located|found|lives?|set\s+up)\s+(?:in|at|by))\W*$", re.IGNORECASE)


def _real_list(found: list, ref: Ref, lctx, fctx: FileContext, offset: int) -> list[str]:
    """Two paths of the same list (or of the same section, outside lists) as ``ref``'s that exist, when at least
    twice as many of its paths exist as are missing: then the list names real files ("For examples of this
    structure see: - `cmd/commit.rs` - `cmd/move.rs` - `cmd/diff.rs`"), else []."""
    here, missing = [], 0
    for r, p, st in found:
        if "/" not in p.rstrip("/") or abs(r.line - ref.line) > 40:
            continue
        c = fctx.at(r.line - offset)
        if c.headings != lctx.headings or c.parents != lctx.parents:
            continue
        if st == "exists":
            here.append(p)
        elif st == "missing":
            missing += 1
    return here[:2] if len(here) >= 2 and len(here) >= 2 * missing else []


@rule("CTX401", "stale-path", "references", "warning",
      summary="A path named in an instruction, rule or skill file does not exist in the workspace.",
      why="Instructions that point at files that moved or were deleted send the agent looking for them, or make "
          "it recreate them; every session pays for the wrong directions.",
      example="```markdown\n- Refunds go through `src/billing/refunds.py`.   <!-- the file moved -->\n"
              "- See [the architecture notes](docs/architecture.md).\n```",
      fix="Point the reference at the file's new location or delete it. When exactly one file of that name "
          "exists elsewhere, a quick fix (not applied by --fix) rewrites the path to it. Heuristics: only a *claim* "
          "that a path exists is checked (core/mentions.py classifies each mention from the clause around it, its "
          "list item, the headings above and a lead-in line ending in a colon; a sentence markdown soft-wraps over "
          "lines is read whole): a counter-example (`not x`, `❌`, \"(doesn't exist)\"), an example "
          "(`✅`, e.g., such as, followed by e.g., a cell of a table whose header says Bad / Good, a list under a "
          "lead-in ending \"such as:\"; but a bare `✅` marks work done unless its section also marks something "
          "wrong, and a ticked item whose list's other paths exist, or an example on a line with an existing path "
          "(\"Real examples: `a`, `b`\"), names real files: info, a warning when git shows the file was there), "
          "a name beside the same name in another case style (\"`jobUtils.tsx` is `job-utils.tsx`\": info), "
          "a directory-like name among bare words that name nothing here (\"`engine`, `render`, `engine/voxel`, "
          "`game`\": info, a warning when git had it), "
          "the object of a "
          "creating or writing verb (create, generate, write to, output to, save to, \"is generated\", under a "
          "\"Generated ...\" item, an imperative \"Write `x`\", install to, the built frontend in `x/`, a gitignored build output "
          "(`/static/*` ignores what goes into `static/`), \"`x.json` schema\"), a path a command on its line "
          "removes (`rm -rf x/`), "
          "a path built from a name the text makes up (\"Imagine we're implementing a new `commit3` command\"), a "
          "file listed under a lead-in that says the agent makes them (\"You may create additional files in `x/`:\"), "
          "a table row whose other cell says it is created (\"Created during daily housekeeping\"), a "
          "directory named as where things are put (capture, record, add ... in "
          "`docs/x/`; these and files under a \"Generated ...\" heading are reported after all, as warnings, when git "
          "shows the path was renamed away: the text names the old place), where a record goes (\"document them "
          "(`x.md`)\"), where a new one goes (\"a new feature would live in `x`\", \"belongs at `x`\"), a "
          "case made up (\"If your issue number is `1238`, read `x`\"), a renamed-away path, a conditional one (if it exists), a file of another repository (`x` "
          "in `owner/repo`, owned by the X repo, or under a path that any instruction file says is another "
          "repository's: \"`site/web` is owned by the Website repo\") "
          "and file-name suffixes (`.spec.ts`), naming conventions (`kebab-case.test.ts`), placeholder segments "
          "(`TEST_SUITE_NAME`, `ComponentName`), ids with a number for a last segment (`mvcc/insert-heavy/2000`), "
          "sibling directories written in prose as one word list (common/node/vscode-node, all three present), "
          "paths in a repository named by a link (`live in [acme/x](https://...)`), agents' own directories "
          "(`.kiro/`, `.roo/`: info), branches (`release/3.x`, a remote's `origin/main`, \"a branch ... named `x`\"), "
          "one-letter slots (`vX.Y.Z`, `vN`, `X.md`), a package's qualified symbol (`pkg/syncx.OnceValues`, "
          "`asyncio.Lock`: a capitalised camel-case name after the dot is no extension), a path under a heading "
          "about history (\"## History note\"), \"no longer ... in `x`\", \"there is intentionally no `x`\", a "
          "labelled examples item (\"**Examples**: `a`, `b`\"), \"a `x` file would be helpful\", a hypothetical setup "
          "(\"If not using Next.js, replace ...\"), \"commonly `x` or similar\", a package name ending in .js in a "
          "table or list of dependencies or one that \"runs as\" a client (`revolt.js`), a Julia package "
          "(`RxInfer.jl`), a Python module's dotted name whose module is a file here (`tests.test_x.py`), name "
          "slots (`N_step.py`, `NN_name.md`, `TASK-XXX`, `test_MODULENAME_x.py`, `feature_or_section`), paths "
          "under an outputs heading (\"### Output Products\") or a \"Files to Rename\" one, and scoped packages are not. Paths are "
          "resolved from the file's directory and its ancestors, from the real directory of a file reached through "
          "a symlink, as the tail of an existing path, as a name plus an extension (a bare name anywhere in the "
          "file's package: a name that exists only in another package of a monorepo, nearest package.json, "
          "Cargo.toml, go.mod, pyproject.toml... above the file, is info when a layout line describes it and "
          "reported in running text only when git shows the package had it; a `target/` directory is build output "
          "only beside a Cargo.toml, pom.xml or sbt/gradle build, else source) and, for `x.js` (`.jsx`, `.mjs`, "
          "`.cjs`) with a directory, as the TypeScript source TypeScript's imports name that way (`src/x.ts`; unless git "
          "shows the `.js` file itself was there: a layout written before the code moved to TypeScript is stale, a "
          "warning that names the commit); files the instruction "
          "files `@import` are checked too. Confidence: a claim is a warning unless the rule is unsure, then info: "
          "a bare file name in running text (not what its list item, table row or label describes, not what the "
          "text points at: see `x`, configured in `x`, not one or two letters from an existing file name of its "
          "extension, eight letters long or more: `copuntry-combobox.tsx`, `6.0-plan.md` beside `6.1-plan.md`, "
          "and no existing path of the same kind on the line), a line "
          "in a section about examples or conventions or in a recipe for making a new thing (`## Adding a New "
          "Effect`) (unless the other paths of its list exist: then it lists real files), words or alternatives "
          "joined by slashes in prose, outside code spans and links (`README/CLAUDE.md`), even beside real paths, two "
          "words joined by a slash whose first is a directory only of a parent of the file, neither beside it nor "
          "at the root (`phel/duplicate-def` in src/php/Lint/CLAUDE.md: a namespaced name as often as a path), a file in a template directory (unless the path's first directory is beside the file: an "
          "example app's CLAUDE.md describing its own tree), an agent's configuration location "
          "(`.claude/settings.json`), a package's export subpath (`create-app/commands` where `create-app/` holds a "
          "package.json, and no directory of its tree: `web/src/icons` is a path where `web/src/` exists), a path whose first directory exists nowhere in the workspace (another "
          "repository's, a package's or a sibling checkout's), a path another line of the file says is created, "
          "optional, gone or another repository's (a file's mentions of one path usually share its purpose; so do "
          "the workspace's: a path another instruction file says it writes, `/start-work` creating `HANDOVER.md`), a "
          "bare name beside other variants of its stem (`Component.client.jsx`, `Component.jsx`: a naming "
          "convention), a file under a vendor/ or third_party/ directory or in a vendored skill's folder (its "
          "compiled AGENTS.md), a file a tool writes whole (Spec Kit's `speckit.*` commands, OpenSpec's "
          "`openspec/AGENTS.md` and commands: the files it scaffolds, whatever git says), a path inside a block a tool writes into the file and rewrites on its next update "
          "(`<!-- BEGIN BEADS INTEGRATION -->` ... `<!-- END ... -->`, `<!-- OPENSPEC:START -->`), a path in a vendored skill (pinned by a skills lock file, its frontmatter or its own licence file: its "
          "paths are upstream's conventions). Git history settles the first two, an agent's configuration location, a path with a directory in a "
          "section about examples, and a path the text calls "
          "optional (\"from `x` when available\"): when git shows the repository had a file at that path, or of "
          "that name, or below that directory (two segments or more: `.claude/rules/`), deleted or renamed away after the instruction file was first committed (at any time for a path of "
          "three segments or more: `web/src/icons`), it is a warning "
          "that names the commit (the instruction file's first version counts, followed through renames: one moved "
          "after the removal was still written before it; not for a name the root .gitignore speaks of, a runtime artifact, nor when the "
          "file spells out a longer path of that name; `[check] git_history = false` turns this off). In a git "
          "repository every other claim in text (not a link, not a misspelt name) is put to git too: a warning "
          "that names the commit when the repository had the file, info when the whole history (not a shallow "
          "clone's, read in time) never had a file there, since a path never committed is an example, a plan or "
          "another repository's as often as a wrong one (`[check] never_committed = \"warning\"` reports those "
          "as warnings), and info too when git could not read the log in time to say (a very long history on a "
          "busy machine: the answer must not turn into a warning with the load; a shallow clone's log stops at "
          "its cut and leaves the warning); a path git never had whose file name exists elsewhere in the workspace stays a warning "
          "(`docs/api.md` where `docs/architecture/api.md` is: a real file named at a wrong path). "
          "A path whose Python module the repository's code still imports (`from recidiviz.calculator import ...` "
          "while recidiviz/calculator/ is not in the checkout: a filtered export of a larger repository, asked "
          "with `git grep`) is info. "
          "`ctxls check --explain CTX401` prints, per finding, the heuristic and where the path was looked for. "
          "Also not claims: \"This was `x`\" and \"Was `x` until ...\", \"previously at `x`\", a table cell "
          "marking it *(removed)*, a CJK sentence saying it was removed (已 ... 移除), a path under \"## What "
          "changed\", \"`x` and `y` are placeholders\", \"No separate `x` or `y` folders\", \"There is also **no `x`**\", "
          "\"`x` and `y` used to hold ...\", \"`x` **and** `y` are both deleted\" (a block quote's wrapped lines "
          "read as one sentence), every item of a list its sentence denies (\"No `a`, `b` ... anywhere in the "
          "repo\") or its lead says was removed (\"Removed in v3.1, do not resurrect: `a`, `b`\"), what \"the prior "
          "doc described\", a list under \"**... archived externally:**\", the files each one of a kind has "
          "(\"Manifests per service: `namespace.yaml`, ...\"), a file a CJK sentence says a tool generates "
          "(`secret.yml` は `op inject` で生成する), a file beside its tracked template (`secret.yml` with "
          "secret.yml.tpl, `.env` with .env.example: each user makes it), what the sentence says is "
          "never committed (\"Never commit plan documents (`docs/plans/`)\"), where things must be kept (\"All "
          "prompts must be versioned in `x/`\"), Claude Code's own run-time folders (`.claude/worktrees/`, "
          "`.claude/todos/`: unsure), where not to create things (\"Do not "
          "create or edit prompt files under `x/`\"), patterns in a list whose lead-in "
          "speaks of patterns (\"**Common Patterns by Technology**:\", `.Rproj.user/`), a pair written `x.h/.cpp`, a media type "
          "(`application/x.y`), name slots (`newCommand.ts`, `myPlugin.css`, `XxxNamespace`), a file below a directory the "
          "root .gitignore ignores (git ignores everything under it; a nested .gitignore counts as git reads it: "
          "`fuzz/.gitignore` listing `artifacts` ignores `fuzz/artifacts/`), files listed under an imperative lead-in "
          "that stores them (\"**Save the document:**\", \"Write the review to local files:\"), the path of an HTTP "
          "request (GET `sitemap.xml`), paths built from a name the text makes up (\"say `Widget`\": "
          "`widget_types.ex`), a module named in CamelCase whose file is snake_case (`flows/Dispatcher` for "
          "`flows/dispatcher.ex`), names after a label that forbids them (\"NOT allowed: `index.ts` barrels\") or "
          "that the text says were considered and rejected, a file inside a parenthesis that opens with an example "
          "marker (\"(e.g. if the branch is `x-0912`, the file is `.changeset/x-0912.md`)\"), a log file or log "
          "directory, a lock, pid or socket file (`backend/log`, `app.log`, `ecchronos.lock`: written at run time; not "
          "a file below it, nor a package manager's lockfile), a path below a git submodule the checkout left empty "
          "(`.gitmodules`), a path a nested .gitignore names relative to its own directory (go/engine/.gitignore "
          "listing `compiled/compiled_engine.go`), a Go standard-library package (`go/parser`, `net/http`), \"there "
          "is no native `x`\", \"the former `x`\", a path going on from a directory a line places in another "
          "repository (\"`packages/runtime/src/cloudflare/` in the flue monorepo\", then `src/cloudflare/x.ts`), "
          "Cargo's crate/feature notation (`depot/test-faults`, a feature in depot/Cargo.toml), a Java package under "
          "its module (`core/repair.types`), a Flutter library (`flutter/foundation.dart`), two missing paths joined "
          "by an arrow (\"`lib/x/widgets.ex` → `test/x/widgets_test.exs`\": a mapping shown with a made-up name) and "
          "the missing sides of a line of two arrows or more (\"Map `.agent/rules` -> `.github/instructions`, "
          "`.agent/skills` -> `.github/skills`\": one layout translated into another), "
          "what a build copies a file to or turns it into (\"is copied to `x`\", \"becomes `x`\", a table column "
          "headed Destination or Output), an import path (\"imported as `pkg/assert`\"), a path \"in upstream\", \"the "
          "`x` suite has been decommissioned\", \"extract ... into `x`\", \"generated into `x`\", a directory new "
          "things \"MUST live under\", \"No dedicated `x`\", a slot named my plus a generic noun "
          "(`src/commands/mycommand/`), a version or date slot in a name (`RELEASE_NOTES_vX.Y.Z.md`, "
          "`specs/YYYYMMDDThhmmss-x.md`), a suffix (`_tests.rs`), planned files (\"target modules `ids.rs`\", a table "
          "whose lead-in says the names in parentheses are targets), \"Do not create `a`, `b`, or `c`\", a section "
          "of what not to do (\"## What Not To Add\"), a table column headed Example ... (\"Example Rejection\"), the files a tool "
          "looks for, listed under \"is loaded from:\", \"`x` stays deleted\", what the text calls output (\"`x/pkg/` as wasm-pack output\"), a "
          "table column of examples (\"Example Filename\"), a name illustrating a naming convention (\"StudlyCase "
          "(`ModuleConfig.php`)\"), a name shown in a parenthesis after a naming instruction (\"naming files "
          "with the feature under test (`manager_failover.rs`)\"), what an imperative creates (\"Create MCP "
          "package: `x/`\", \"Create reusable dependencies in `x.py`\"), a path under a directory the file reads in "
          "another repository it clones (`git clone URL /tmp/ext-apps`, then `/tmp/ext-apps/src/`: `src/app.ts` "
          "is that checkout's), `memory/x.md` where no memory/ is beside the file or at the root (Claude Code's "
          "auto memory), where a new one goes (\"A test for `x` goes in `y`\", a section headed \"Where to Extract "
          "To\"), what a tool writes (a list under \"This generates reports in `x/`:\"), a path mapped by an arrow to "
          "a pattern with a placeholder (`docs/topic.md` → `docs/topic/<subtopic>.md`), the form a reference takes "
          "(\"Reference specs as `specs/auth/spec.md`\"), Claude Code's auto memory (`MEMORY.md`, files a line or its "
          "lead-in places in the auto memory directory), a missing path whose one-word label differs from the labels "
          "of existing paths (\"`ServerConnection.cs` (client) and `TrainingHub.cs` (server)\": the other place's "
          "file), a place something should move to (\"should move to `packages/ui`\"), a file the text calls "
          "retired, files under a heading of expected or planned files (\"## Affected Files (Expected)\"), a path "
          "on the line after one that labels another GitHub repository (\"**Repository**: https://github.com/x/y\", "
          "then \"**Source**: `src/vs/...`\"; not this checkout's own origin), and the paths of a skill "
          "whose frontmatter names "
          "its home in another GitHub repository (vendored: info). A dotted name of one segment (`.mise.toml`, "
          "`.spec.ts`) is a suffix where files of that suffix exist, else reported only when git shows the "
          "repository had it; a bare name of a kind of file the workspace has none of (`main.tf` with no `.tf` "
          "file) is unsure. A file git tracks that a sparse checkout leaves off the disk exists.")
def stale_path(ws: Workspace):
    kinds = (D.CLAUDE_MD, D.CLAUDE_LOCAL_MD, D.AGENTS_MD, D.GEMINI_MD, D.RULE, D.SKILL, D.COMMAND)
    files = ws.files(*kinds)
    if not files:
        return
    checker = _Checker(ws)
    unsure: list[Finding] = []
    found: list[Finding] = []  # (held until every file is read: another file may say a path is created)
    for fi in files:
        if fi.kind not in kinds:
            continue
        found += checker.check_file(fi, memory=False)
    # Files the instruction files `@import` load with them: a path they name is read the same way (the
    # imports family's walk of the import graph; imported lazily, that module imports this one).
    from .imports import _importers

    checked = {fi.path for fi in files}
    for fi in _importers(ws):
        if fi.path in checked or fi.text is None or not is_within(fi.path, ws.root) or \
                fi.path.suffix.lower() not in (".md", ".markdown", ".mdx", ""):
            continue
        checked.add(fi.path)
        found += checker.check_file(fi, memory=False)
    _gather_tells(ws, checker, kinds, checked)
    if checker.created:
        found = [_told_elsewhere(checker, f) for f in found]
    for f in _sure(iter(found), unsure):
        yield _in_code(ws, f) if f.severity == "warning" else f
    for f in _was_there(ws, unsure):  # (after `_sure` has gathered them)
        yield _in_code(ws, f) if f.severity == "warning" else f


def _in_code(ws: Workspace, f: Finding) -> Finding:
    """A missing path whose Python module the repository's code still imports is info: the checkout lacks it
    (a filtered export of a larger repository), the code does not (`code_imports`)."""
    got = still_imported(ws, f.data["path"].rstrip("/"), f.path.parent) if "/" in f.data["path"].strip("/") else None
    if got is None:
        return f
    module, who = got
    return dataclasses.replace(
        f, severity="info", data={**f.data, "imported_by": who},
        message=f"`{f.data['text']}` is not in this checkout, but the code still imports `{module}` ({who}): "
                f"a part of the repository this copy leaves out (a filtered export?), not a stale path")


_IDENT = lazyre.compile(r"^[a-z_][a-z0-9_]*$")


_VENDOR_DIRS = frozenset({"vendor", "third_party", "third-party", "3rdparty"})

_MANIFESTS = ("package.json", "Cargo.toml", "go.mod", "pyproject.toml", "setup.py", "pom.xml", "build.gradle",
              "build.gradle.kts", "composer.json", "mix.exs", "Gemfile", "pubspec.yaml", "Package.swift")
"""Files that make their directory a package of a monorepo (see `_Checker._in_package`)."""

_MAPS_TO = lazyre.compile(r"^[`*_\s]*(?:→|->|=>|⇒|⟶)[`*_\s]*$")


# What a template a user copies a local file from adds to the file's name (`config.yml.example`).
_TEMPLATE_SUFFIXES = (".tpl", ".template", ".example", ".sample", ".dist", ".default", ".in")


def _missing_mappings(found: list) -> set[tuple[int, int]]:
    """(line, column) of the missing paths joined by an arrow to another missing path on their line (`a.ex` →
    `a_test.exs`): both sides made up to show a mapping, not files that should be there. On a line of two arrows
    or more ("Map `.agent/rules` -> `.github/instructions`, `.agent/skills` -> `.github/skills`"), every missing
    side: the line translates one layout into another, whichever side exists."""
    out: set[tuple[int, int]] = set()
    by_line: dict[int, list] = {}
    for ref, _, state in found:
        by_line.setdefault(ref.line, []).append((ref, state))
    for refs in by_line.values():
        if len(refs) < 2:
            continue
        refs.sort(key=lambda rs: rs[0].col)
        pairs = [(a, sa, b, sb) for (a, sa), (b, sb) in zip(refs, refs[1:])
                 if _MAPS_TO.match(a.source[a.col + len(a.text):b.col])]
        for a, sa, b, sb in pairs:
            if len(pairs) >= 2:
                out.update((r.line, r.col) for r, st in ((a, sa), (b, sb)) if st == "missing")
            elif sa == sb == "missing":
                out.update(((a.line, a.col), (b.line, b.col)))
    return out


def _module_of_file(path: str, files: dict) -> bool:
    """Whether bare name ``path`` is a Python module's dotted name (`tests.test_report_integration.py`,
    `gui.gui_1.markdown`: identifiers, one with an underscore after the first) whose last module is a file of
    the workspace (`test_report_integration.py`, `markdown.py`)."""
    if "/" in path:
        return False
    parts = path.split(".")
    if len(parts) < 3 or not all(_IDENT.match(x) for x in parts) or not any("_" in x for x in parts[1:-1]):
        return False
    return any(n in files for n in (f"{parts[-2]}.{parts[-1]}", f"{parts[-1]}.py"))


_WORDY = lazyre.compile(r"[A-Za-z]{2}")


def _peers(found: list, ref: Ref, path: str, stem: str | None = None) -> list[str]:
    """The existing paths on ``ref``'s line that say the line describes this workspace: a path with a directory,
    or a bare name of ``path``'s extension that is not a generic name (`commonWorker.server.ts` beside a missing
    `legacyWorker.server.ts`; `index.md` beside `overview.md` says nothing), and not of ``stem``."""
    ext = path.rpartition(".")[2] if "." in path.rpartition("/")[2] else None
    return [p for r, p, st in found if r.line == ref.line and st == "exists" and p != path and
            ("/" in p or (ext is not None and p.endswith("." + ext) and not _generic_name(p)
                          and p.split(".")[0] != stem))]


def _one_name(a: str, b: str) -> bool:
    """Whether paths ``a`` and ``b`` end in one name written in two case styles (`jobUtils.tsx`, `job-utils.tsx`)."""
    x, y = a.rstrip("/").rpartition("/")[2], b.rstrip("/").rpartition("/")[2]
    return x != y and re.sub(r"[-_]", "", x).lower() == re.sub(r"[-_]", "", y).lower()


def _edits_at_most(a: str, b: str, k: int) -> bool:
    """Whether the edit distance (insertions, deletions, substitutions) between ``a`` and ``b`` is at most ``k``
    (a band of the dynamic programme: names are short, and most pairs fail on length or in the first row)."""
    if abs(len(a) - len(b)) > k:
        return False
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
        if min(cur) > k:
            return False
        prev = cur
    return prev[-1] <= k


def _strip_dot(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/")


def _gather_tells(ws: Workspace, checker: "_Checker", kinds: tuple[str, ...], checked: set[Path]) -> None:
    """Fill ``checker.created`` from every instruction file's tells. An incremental re-check (``ws.scope``) reads
    a few files: the others' tells come from what the last check of their content recorded (memoised by
    content, which an edit elsewhere leaves valid), or from checking them again when it recorded none."""
    memo = ws.fs.memo
    moved: set[str] = set()  # names whose tells an edit in the scope added or removed
    for p in checked:
        key, now = ("ctxls.rules.references.tells", str(p)), checker.tells.get(p, [])
        before = memo.get(key)
        if ws.scope is not None and before is not None:
            moved |= {c.rpartition("/")[2] for c, _, _ in before[1]} ^ {c.rpartition("/")[2] for c, _, _ in now}
        memo[key] = (ws.file(p).text, now)
    order = sorted(checked, key=str)  # (the first file to tell is the one an explanation cites)
    if ws.scope is not None:
        with ws.unscoped():
            every = [fi for fi in ws.files(*kinds) if fi.kind in kinds and fi.path not in checked]
        if moved:  # the files naming those paths judge them anew (their findings were kept otherwise)
            ws.also_check |= {fi.path for fi in every if any(n in (fi.text or "") for n in moved)}
        for fi in every:
            key = ("ctxls.rules.references.tells", str(fi.path))
            got = memo.get(key)
            if got is None or got[0] != fi.text:
                for _ in checker.check_file(fi, memory=False):
                    pass  # (run for its tells only: its findings were kept from the check of this content)
                memo[key] = (fi.text, checker.tells.get(fi.path, []))
            else:
                checker.tells[fi.path] = got[1]
            order.append(fi.path)
        order.sort(key=str)
    for p in order:
        for clean, line, why in checker.tells.get(p, ()):
            for k in (clean, "\0" + clean.rpartition("/")[2]):
                checker.created.setdefault(k, (p, line, why))


def _told_elsewhere(checker: "_Checker", f: Finding) -> Finding:
    """A warning on a path an instruction file (this one under another spelling, or another) says is created (`start-work.md` makes `HANDOVER.md`;
    CLAUDE.md and `resume.md` read it): unsure, as a path the same file says is created (info, unless git shows
    the repository had it). Matched by path, or by file name when either side is a bare name."""
    path = _strip_dot(str(f.data.get("path", "")))
    name = path.rpartition("/")[2]
    got = checker.created.get(path) or (checker.created.get("\0" + name) if "/" not in path else None) or \
        checker.created.get(name)
    if got is None or f.severity != "warning":  # (the same file's `./x` for its `x`, too)
        return f
    where, line, why = got
    f.severity = "info"
    f.data["unsure"] = True
    f.data.setdefault("explain", []).append(
        f"{checker.ws.rel(where)}:{line + 1} says it is not a file that must be there: {why}")
    return f


def _sure(found: Iterator[Finding], unsure: list[Finding]) -> Iterator[Finding]:
    """The findings the rule is sure of; those it is unsure of (`data["unsure"]`), and claims git is to confirm
    (`data["if_never"]`), wait in ``unsure`` for git."""
    for f in found:
        if f.data.get("unsure") or (f.data.get("if_never") and f.severity == "warning"):
            unsure.append(f)
        else:
            yield f


def _history_path(path: str) -> str | None:
    """The workspace-relative path git's removals are asked about for a missing ``path`` as written (`./`
    prefixes dropped; a directory of two segments or more ends in `/`), or None when git could have had no such
    file: a path climbing out with `..`, a name without an extension or a directory of one segment."""
    while path.startswith("./"):
        path = path[2:]
    if not path or ".." in path.split("/"):
        return None
    if not path.endswith("/") and EXT.match(path.rpartition("/")[2]):
        return path
    if len(path.strip("/").split("/")) >= 2:
        # a directory (`.claude/rules/`, `web/src/icons`): git had it when it removed a file below it (one
        # segment, `src/`, would match every project's)
        return path.rstrip("/") + "/"
    return None


def _was_there(ws: Workspace, unsure: list[Finding]) -> list[Finding]:
    """The claims the rule is unsure of (a bare name in running text, a first directory found nowhere) are
    warnings after all when git history shows a file at that path, or of that name, was deleted or renamed
    away: the repository had it, and the text still names it (`core_components.ex`, folded into components/)."""
    wanted = {}
    ignore = ws.fs.read(ws.root / ".gitignore")
    ignore_text = ignore.text if ignore.ok and ignore.text else ""
    for f in unsure:
        path = _history_path(f.data["path"])
        name = path.rstrip("/").rpartition("/")[2] if path is not None else ""
        # (a generic name, `README.md`, is asked about only in a path of three segments or more, which git
        # matches as a whole: `gradle/build-logic/CLAUDE.md`)
        # (a place things are put that moved, `.agents/logs/.archive/`, against the .gitignore's words for its new
        # place, `.agents/.archive/*`: the whole path)
        needle = path.rstrip("/") if path is not None and f.data.get("only_if_moved") else name
        if path is not None and (_confirming(f) or path.rstrip("/").count("/") >= 2 or not _generic_name(name)) and \
                not re.search(rf"(?<![\w.-]){re.escape(needle)}(?![\w.-])", ignore_text):
            # (a name the root .gitignore speaks of, "Transitory artifacts (WORKING.md, ...)", is made at run time:
            # a copy once committed by mistake and deleted says nothing)
            wanted[f.data["path"]] = path
    history = ws.git() if wanted else None
    # (a second look, not the rule's main evidence: git gets a short budget, and what it cannot answer in time
    # stays info; a later check asks again)
    removals = history.removals(wanted.values(), budget=GIT_BUDGET_S, settle=True) if history is not None else {}
    never = history.never_removed(wanted.values()) if history is not None else set()
    late = history.unanswered(wanted.values()) if history is not None else set()
    # The file naming it must be older than the removal: one written after the file went names something else
    # (`component.tsx` in a command added after a `component.tsx` of an old layout was deleted). Not for a path of
    # three segments or more (`web/src/icons`): so precise a path names what was there, even in text that moved
    # into a new file from others (git follows a rename, not a merge of two files into one).
    def precise(f: Finding) -> bool:
        return wanted.get(f.data["path"], "").rstrip("/").count("/") >= 2

    asked = {f.path for f in unsure if wanted.get(f.data["path"], "") in removals and not precise(f)
             and not _confirming(f)}
    born = history.added(asked) if asked and history is not None else {}
    out = []
    for f in unsure:
        r = removals.get(wanted.get(f.data["path"], ""))
        if _confirming(f):
            out.append(_confirmed(f, r, wanted.get(f.data["path"]) in never, ws.config.never_committed,
                                  late=wanted.get(f.data["path"]) in late))
            continue
        if r is not None and f.data.get("package") and not r.path.startswith(f.data["package"] + "/"):
            r = None  # a file of that name that another package had
        if r is not None and not precise(f) and not (f.path in born and born[f.path] <= r.time):
            # (a file added at its path after the removal may have been moved there: its first version counts)
            first = history.first_added(f.path) if f.path in born and history is not None else None
            if first is None or first > r.time:
                r = None
        if r is not None and f.data.get("only_if_moved") and (r.renamed_to is None or r.deleted_later):
            r = None  # (a generated file deleted, not moved: it may be made again)
        data = {k: v for k, v in f.data.items() if k not in ("unsure", "only_if_gone", "only_if_moved", "package")}
        if r is None:
            if not f.data.get("only_if_gone"):
                out.append(dataclasses.replace(f, data=data))
            continue
        out.append(_removed(f, data, r))
    return out


def _confirming(f: Finding) -> bool:
    """A claim the rule would warn on, which git is to confirm (see `_confirmed`)."""
    return bool(f.data.get("if_never")) and not f.data.get("unsure")


def _confirmed(f: Finding, r: "Removal | None", never: bool, severity: str = "info", late: bool = False) -> Finding:
    """A claim in text, once git has been asked about it. Git showing the repository had the file makes it a
    warning that names the commit; git's whole history (not a shallow clone's, and read in time) showing no file
    ever there makes it info: on 144 repositories, paths never committed were examples, planned files, other
    repositories' and made-up layouts about two times in three, where paths git had were stale nine times in
    ten. A link and a misspelt name never come here. A repository whose log git could not read in time (a very
    long history on a busy machine, or a broken object) confirms nothing either way: info too, saying so, which
    keeps the answer from turning into a warning with the machine's load. No repository, `git_history = false`
    or a shallow clone (whose log stops at its cut) leave the warning."""
    data = {k: v for k, v in f.data.items() if k != "if_never"}
    if r is not None:
        return _removed(f, data, r)
    if late and not data.get("candidates"):
        data["explain"] = [*data.get("explain", ()), "git history could not be read in time to say whether the "
                           "repository ever had this path"]
        return dataclasses.replace(f, severity=severity, data=data,
                                   message=f"`{f.data['text']}` does not exist, and git history could not be read in "
                                           f"time to say whether it ever had it; point the reference at the right "
                                           f"path or remove it")
    if not never:
        return dataclasses.replace(f, data=data)
    if data.get("candidates"):
        # (`docs/api.md` where the project has `docs/architecture/api.md`: a real file named at a wrong path, which
        # the quick fix rewrites; whatever git says, the claim is the workspace's)
        data["explain"] = [*data.get("explain", ()), "git history never had this path, but a file of that name "
                           f"exists at `{data['candidates'][0]}`: the text names it at the wrong path"]
        return dataclasses.replace(f, data=data)
    data["never_in_git"] = True
    data["explain"] = [*data.get("explain", ()), "git history: no file was ever committed at that path (or of that "
                       f"name): it may be a file to create, an example or another repository's ([check] "
                       f"never_committed = \"{severity}\")"]
    return dataclasses.replace(f, severity=severity, data=data,
                               message=f"`{f.data['text']}` does not exist, and git history never had it; point the "
                                       f"reference at the right path or remove it")


def _removed(f: Finding, data: dict, r: "Removal") -> Finding:
    if "explain" in data:
        data["explain"] = [*data["explain"], f"git history: {r.describe()}, so the text names a file that was here"]
    return dataclasses.replace(
        f, severity="warning", data={**data, "removed_in": r.commit, "removed_path": r.path},
        message=f"`{f.data['text']}` does not exist: {r.describe()}; point the reference at the right path or "
                f"remove it")


@rule("CTX402", "stale-memory", "references", "warning",
      summary="An auto-memory file names a path that no longer exists: the memory may be stale.",
      why="Memories are written once and loaded for months. A memory saying \"the stats endpoints live in web.py\" "
          "after web.py was split sends every later session to the wrong place.",
      example="```markdown\n- The stats endpoints live in `web.py`.   <!-- web.py was split into src/web/ -->\n```",
      fix="Update the memory to the current layout or delete it. In a git repository the finding names what "
          "removed the file: the commit that deleted or renamed it, when, and its subject (`[check] "
          "git_history = false` turns this off); otherwise it says where a file of that name exists now. A "
          "rename whose target exists, or else a single file of that name elsewhere, becomes a quick fix (not "
          "applied by --fix) that rewrites the path.")
def stale_memory(ws: Workspace):
    files = ws.files(D.MEMORY_INDEX, D.MEMORY_TOPIC)
    if not files:
        return []
    checker = _Checker(ws)
    found = [f for fi in files for f in checker.check_file(fi, memory=True)]
    return _what_changed(ws, found) if found else found


def _what_changed(ws: Workspace, found: list[Finding]) -> list[Finding]:
    """Name what removed each missing file a memory names, from git history (deleted or renamed, when, in
    which commit and why), in place of the guess from the names left in the workspace; a rename whose target
    still exists becomes the quick fix. Unchanged without git history or for paths it never had."""
    wanted = {}
    for f in found:
        path = _history_path(f.data["path"])
        if path is not None:
            wanted[f.data["path"]] = path
    if not wanted:
        return found
    history = ws.git()
    if history is None:
        return found
    removals = history.removals(wanted.values())
    out = []
    for f in found:
        r = removals.get(wanted.get(f.data["path"], ""))
        if r is not None and f.data.get("package") and not r.path.startswith(f.data["package"] + "/"):
            r = None  # a file of that name that another package had
        if r is None:
            out.append(f)
            continue
        fixes = f.fixes
        if r.renamed_to and ws.exists(ws.root / r.renamed_to):
            fixes = [Fix(f"Replace with `{r.renamed_to}`", (Edit(f.path, f.span, r.renamed_to),), safe=False)]
        out.append(Finding(f.code, f.severity, f.path, f.span,
                           f"This memory may be stale: `{f.data['text']}` no longer exists: {r.describe()}; update "
                           f"or delete the memory", fixes=fixes,
                           data={**f.data, "removed_in": r.commit, "removed_path": r.path}))
    return out


# ----------------------------------------------------------------------------------------------- engine
class _Checker:
    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.root = ws.root
        self._names: Names | None = None
        self._ignores: GitIgnores | None = None
        self._states: dict[tuple[str, str, bool], str] = {}
        self._suffixes: dict[str, bool] = {}
        self._exts: set[str] | None = None
        self._origin: str | None = None
        self._root_str = str(ws.root)
        self._ancestors: dict[str, list[Base]] = {}
        self._hints: dict[tuple[str, str, bool, bool], tuple[list[str], str, str | None]] = {}
        self._by_ext: dict[tuple[str, int], list[str]] | None = None
        self.tells: dict[Path, list[tuple[str, int, str]]] = {}
        """Per instruction file checked, the missing paths it says are created (`/start-work` writes
        `HANDOVER.md`): path as written without `./`, line, why."""
        self.created: dict[str, tuple[Path, int, str]] = {}
        """Every file's `tells` by path and by file name (`\0` + name): what `_told_elsewhere` asks."""
        self._external: dict[str, str] | None = None
        self._package_dirs: dict[str, str] = {}

    @property
    def external(self) -> dict[str, str]:
        """Paths that a line of some instruction file says are another repository's ("`Documentation/web` is
        owned by the Documentation repo"), with where it says so: mentions of them anywhere are not claims."""
        got = self._external
        if got is None:
            got = self._external = {}
            for fi in self.ws.files():
                text = fi.text or ""
                if "repo" not in text and "Repo" not in text:
                    continue
                for i, line in enumerate(fi.lines):
                    if "`" in line and self._names_this_repo(line) is not None:
                        continue  # "`docs/wiki/x.md` in the agent repository", in cloudzero-agent: this one
                    for p in declared_external(line):
                        got.setdefault(p.rstrip("/"), f"{self.ws.rel(fi.path)}:{i + 1}")
        return got

    def _declared_external(self, path: str) -> str | None:
        ext = self.external
        if not ext:
            return None
        p = path.removeprefix("./").rstrip("/")
        first = p.split("/", 1)[0]
        for e, where in ext.items():
            if p == e or p.startswith(e + "/"):
                return where
            # `web/scripts/x.mjs` beside "`Documentation/web` is the Website repo's": relative to that directory,
            # when the workspace root has no `web/` of its own
            if "/" in e and first == e.rsplit("/", 1)[1] and "/" in p and not self.ws.fs.is_dir(self.root / first):
                return where
            # `src/cloudflare/run-store.ts` beside "`packages/runtime/src/cloudflare/` in the flue monorepo": the
            # path goes on from the other repository's directory (two segments or more in common), which this
            # workspace's root does not have
            segs, tail = p.split("/"), e.split("/")
            for k in range(min(len(segs), len(tail)), 1, -1):
                if segs[:k] == tail[-k:]:
                    if not self.ws.fs.is_dir(self.root.joinpath(*segs[:k])):
                        return where
                    break
        return None

    @property
    def names(self) -> Names:
        names = self._names
        if names is None:
            names = self._names = name_index(self.ws)
        return names

    def check_file(self, fi: FileInfo, memory: bool) -> Iterator[Finding]:
        text = fi.text or ""
        if not text.strip():
            return
        fdir = fi.path.parent
        bases = self._bases(fdir, memory)
        where = str(fdir)
        d = bases[0].abs
        if not memory:
            # A file reached through a symlink (`.claude/rules/x.md -> ../../.ai/rules/x.md`, `AGENTS.md ->
            # .ai/rules/general.md`) names paths relative to where its text really lives as well as to where it is
            # linked: the author wrote them next to the real file. Both are tried.
            real = os.path.dirname(self.ws.fs.realpath(fi.path))
            if real != where and is_within(real, self._root_str):
                extra = [b for b in self._bases(Path(real), False) if b not in bases]
                if extra:
                    bases = bases + extra
                    d = f"{d}\0{real}"
        states = self._states
        own = fi.path.name
        ctx: list = []
        # the loader expands imports in instruction files, never in memory
        refs = extract(text, import_cols if not memory and "@" in text else frozenset(), into=ctx)
        found: list[tuple[Ref, str, str]] = []
        elsewhere: dict[tuple[int, int], bool] = {}  # "elsewhere" mentions -> whether it is its line's subject
        emitted: set[tuple[int, int]] = set()  # `x.js` mentions whose x.ts exists (see `_resolve`)
        for ref in refs:
            path = self._candidate(ref, bases, memory, fi.kind)
            if path is None:
                continue
            link = ref.kind == "link"
            state = states.get((path, d, link))  # the bases are those of directory d
            if state is None:
                state = states[(path, d, link)] = self._resolve(path, bases, link)
            if state == "emitted":
                emitted.add((ref.line, ref.col))
                state = "missing"
            if state == "elsewhere":
                # (a layout line, "- `target.converter.ts` — dispatcher", describes a file of its own package; in
                # running text the name may be the other package's file: reported only when git shows this package
                # had one, see `_was_there`)
                elsewhere[(ref.line, ref.col)] = is_subject(ref.source, ref.col, ref.col + len(ref.text))
                state = "missing"
            found.append((ref, path, state))
        if not any(state == "missing" for _, _, state in found):
            return
        offset, body = ctx
        fctx = FileContext(body)
        template = not memory and self.ws.config.in_template_dir(self.ws.rel(fi.path))
        upstream = vendored(self.ws, fi) if fi.kind == D.SKILL else self._vendored_elsewise(fi)
        if upstream is None and (tool := generator_of(self.ws.rel(fi.path))) is not None:
            # (`design.md` in OpenSpec's AGENTS.md is the file it scaffolds for each change; git showing one
            # change's design.md deleted says nothing of it)
            upstream = f"{tool} writes this file whole and rewrites it on its next update"
        # "Tests mirror `lib/` exactly: `lib/app/widgets.ex` → `test/app/widgets_test.exs`": a mapping between two
        # paths neither of which exists illustrates a rule of the layout with a made-up name
        mapped = _missing_mappings(found)
        purposes = []
        told: dict[str, tuple[int, Purpose]] = {}  # paths the file says, somewhere, are created, optional, gone...
        for ref, path, state in found:
            if state != "missing" or _context_more(ref.source) or (ref.line, ref.col) in mapped:
                continue
            line = ref.source[:-1] if ref.source.endswith("\r") else ref.source
            end = ref.col + len(ref.text)
            text, shift = fctx.sentence(ref.line - offset, line)  # a sentence soft-wrapped over lines is one
            purpose = classify(text, ref.col + shift, end + shift, fctx.at(ref.line - offset))
            if purpose.kind == EXTERNAL and not memory and (named := self._names_this_repo(line)) is not None:
                # ("fall back to the local copy at `docs/wiki/x.md` in the agent repository", in cloudzero-agent)
                purpose = Purpose(CLAIM, f"the repository the line names, the {named} repository, is this one")
            purposes.append((ref, path, line, purpose))
            if purpose.kind in (CREATED, OPTIONAL, HISTORY, EXTERNAL):
                told.setdefault(path, (ref.line, purpose))
                if purpose.kind == CREATED and not memory:
                    self.tells.setdefault(fi.path, []).append((_strip_dot(path), ref.line, purpose.why))
        imagined: frozenset[str] | None = None
        cloned: frozenset[str] | None = None
        # "`ServerConnection.cs` (client) and `TrainingHub.cs` (server)", "| `x` (**yaat-server**) |" beside "| `y`
        # (**yaat**) |": a one-word label after a path says where the file is; a missing path labelled otherwise
        # than the existing ones is the other place's
        labels = {(r.line, r.col): m.group(1).lower() for r, _, _ in found
                  if (m := _LABEL_AFTER.match(r.source, r.col + len(r.text))) is not None}
        here_labels = {labels[(r.line, r.col)] for r, _, st in found if st == "exists" and (r.line, r.col) in labels}
        if labels:
            # (a name the path rules leave aside, `Directory.Build.props` (**yaat**), still says where it is)
            names = self.names
            here_labels.update(m.group(1).lower() for r in refs if (r.text in names.files or r.text in names.paths)
                               and (m := _LABEL_AFTER.match(r.source, r.col + len(r.text))) is not None)
        for ref, path, line, purpose in purposes:
            listed = None
            if purpose.weak in ("listed", "beside"):
                listed = self._listed_with(found, ref, path, fctx, offset, purpose.weak == "listed")
                if listed is None:
                    continue  # an example among made-up names
                purpose = Purpose(CLAIM, f"{purpose.why}, but `{listed}`, listed with it, exists: it names real files")
            if purpose.weak == "moved" and not memory and upstream is None:
                # ("Build artifacts: ... the exe (`src/os.cpp` `GetResDir`)": a file a heading calls generated, or a
                # place things are put, which git shows was renamed away: the text names its old place)
                f = self._finding(fi, ref, path, bases, memory, where, own, "info",
                                  [f"why it is not a claim: {purpose.why}", "reported only because git history "
                                   "shows the path was moved elsewhere (see below)"])
                f.data.update(unsure=True, only_if_gone=True, only_if_moved=True)
                yield f
                continue
            if purpose.kind == OPTIONAL and not memory and upstream is None:
                # "from `core_components.ex` when available": reported only when git shows the repository had it
                f = self._finding(fi, ref, path, bases, memory, where, own, "info",
                                  [f"why it is not a claim: {purpose.why}", "reported only because git history "
                                   "shows the repository had the file (see below)"])
                f.data.update(unsure=True, only_if_gone=True)
                yield f
                continue
            if purpose.kind != CLAIM:
                continue  # an example, a counter-example, a place to create, another repository...
            said = told.get(path)  # "`WORKING.md` is maintained by the AI" elsewhere in the file: it may be made
            if _module_of_file(path, self.names.files):
                continue  # `tests.test_report_integration.py`: a module's dotted name, and the module is there
            if imagined is None:
                imagined = imagined_names(body)
            if imagined and any(built_from(seg, imagined) for seg in path.rstrip("/").split("/")):
                continue  # "Imagine we're implementing a new `commit3` command ... `args/commit3.rs`": made up
            if self._declared_external(path) is not None:
                continue  # another line says the path is another repository's
            if self._upstream_near(body, ref.line - offset):
                continue  # "- **Repository**: https://github.com/microsoft/vscode" / "- Terminal source: `src/vs/x/`"
            label = labels.get((ref.line, ref.col))
            if label is not None and here_labels and label not in here_labels:
                continue  # `TrainingHub.cs` (server) beside `ServerConnection.cs` (client): the server's file
            if cloned is None:
                cloned = cloned_children(fi.text or "")
            if cloned and path.removeprefix("./").split("/", 1)[0] in cloned and "/" in path.rstrip("/"):
                continue  # "git clone … /tmp/mcp-ext-apps", "read `/tmp/mcp-ext-apps/src/`": `src/app.ts` is its file
            # only peers with a directory count: a bare name "exists" wherever a file of that name is
            # A peer is a path with a directory, or a bare name of the same extension that is not a generic name
            # (`commonWorker.server.ts` beside a missing `legacyWorker.server.ts`): a bare name "exists" wherever a
            # file of that name is, so `index.md` beside `overview.md` says nothing.
            # (a name of the same stem is a variant, `server.ts` vs `server.rsc.ts`: a naming pattern, no peer)
            stem = path.split(".")[0] if "/" not in path else None
            if stem is not None and not _WORDY.search(stem):
                stem = None  # `6.0-channels.md` and `6.1-channels.md`: versions, not variants of a stem `6`
            peers = _peers(found, ref, path, stem)
            lctx = fctx.at(ref.line - offset)
            pointed = _POINTER_BEFORE.search(line, 0, ref.col) is not None
            severity, confidence = self._confidence(ref, line, path, bases, memory, template, peers, pointed)
            if severity == "warning" and not peers and "." not in path.rpartition("/")[2]:
                words = [r.text for r in refs if r.line == ref.line and r.kind == "code" and _BARE_WORD.match(r.text)
                         and not any(self._exists_at(b, r.text) for b in bases)]
                if len(words) >= 2:
                    # "`engine`, `render`, `engine/voxel`, `game`, etc." as the scopes of a PR title: a path-like
                    # name among words that name nothing here is a vocabulary's (a warning when git had the path)
                    severity, confidence = "unsure", (f"listed among bare words that name nothing here (`{words[0]}`, "
                                                      f"`{words[1]}`): the line lists names, not paths")
            twin = next((p for p in peers if _one_name(p, path)), None) if severity == "warning" else None
            if twin is not None:
                # "`usageUtils.ts` is `usage-utils.ts`", under a naming rule: the wrong or old form beside the file
                severity, confidence = "info", (f"the line names it beside `{twin}`, the same name in another case "
                                                "style: a naming pair, whose other half is the file")
            if listed is not None and severity == "warning":
                # (a warning when git shows the repository had the file, as for a claim the rule is unsure of)
                severity, confidence = "unsure", f"an example whose list names real files (`{listed}`)"
            if severity == "warning" and stem is not None and "." in path and any(
                    "/" not in p and p != path and p.split(".")[0] == stem and 0 < abs(r.line - ref.line) <= 3
                    for r, p, _ in found):
                # `Component.client.jsx`, `Component.server.jsx`, `Component.jsx` in one list: a naming convention
                severity, confidence = "info", "the lines around it name other variants of the same stem " \
                                               "(`x.client.jsx`, `x.jsx`): a naming convention"
            if said is not None and severity in ("warning", "unsure"):
                # (every mention of one path in a file usually shares its purpose; but the file may also name it
                # as there after saying it was created, as a stale "Current status" note does: info, not silence,
                # and a warning when git shows the repository had the file)
                severity, confidence = "unsure", (f"line {said[0] + 1} of the file says it is not a file that must be "
                                                f"there: {said[1].why}")
            section = example_section(lctx) if severity == "warning" and not peers and not pointed else None
            if section is not None and _names_the_section(path, section):
                section = None  # "#### Examples: validated against `examples/07-x.py`": the project's examples/
            if section is not None:
                real = _real_list(found, ref, lctx, fctx, offset)
                if real:
                    section = None
                    confidence = (f"in a section about examples, but the other paths of its list exist "
                                  f"(`{real[0]}`, `{real[1]}`): it lists real files")
            if section is not None:
                # (with a directory, git may still show the repository had that very path: then it is stale)
                severity = "unsure" if "/" in path.rstrip("/") else "info"
                confidence = f"the line is in a section or list about examples or conventions ({section})"
            block = fctx.generated_block(ref.line - offset) if severity == "warning" else None
            if block is not None:
                # (a tool wrote the block and rewrites it: its paths may be the tool's own docs; git may still show
                # the repository had the file)
                severity, confidence = "unsure", (f"inside a block a tool writes into the file ({block}): its paths "
                                                  "may be the tool's, and an edit is lost on the tool's next update")
            if upstream is not None and severity in ("warning", "unsure"):
                # (its paths are the conventions of the project it comes from, often made on first use: `docs/adr/`)
                severity, confidence = "info", (f"the file is vendored or generated ({upstream}): its paths are its upstream's, "
                                                "and an edit here is lost on the next update")
            if severity is None:
                continue
            explain = [f"why it counts as a claim: {purpose.why}", f"confidence: {confidence}",
                       "looked for it from: " + ", ".join(f"`{b.rel or '.'}/`" if b.rel is not None else f"`{b.abs}`"
                                                          for b in bases),
                       "also tried: a file of that name anywhere (names without a `/`), the path as the tail of an "
                       "existing path, the name plus an extension (not for links), the file system (symlinks), "
                       "every .gitignore above it"]
            package = None
            if (ref.line, ref.col) in elsewhere and severity is not None:
                # (a layout line, "- `krd.ts` — re-export shim", is info at least; a name in running text is
                # reported only when git shows this package had the file)
                package = self._package_dirs.get(bases[0].rel or "", "")
                subject = elsewhere[(ref.line, ref.col)]
                severity = "unsure"
                explain[1] = (f"confidence: a file of that name exists, but only outside this file's package "
                              f"(`{package}/`): " + ("info, a warning when git shows the package had one" if subject
                                                     else "reported only when git shows the package had one"))
            gone_only = severity == "if_gone" or (severity is not None and (ref.line, ref.col) in emitted)
            if gone_only:
                severity = "unsure"
            f = self._finding(fi, ref, path, bases, memory, where, own,
                              "info" if severity == "unsure" else severity, explain)
            if gone_only:
                f.data.update(unsure=True, only_if_gone=True)
            elif package is not None:
                f.data.update(unsure=True, only_if_gone=not elsewhere[(ref.line, ref.col)], package=package)
            elif severity == "unsure" and not memory and not any(p.endswith("/" + path) for _, p, _ in found):
                # (not when the file spells out a longer path of that name: `WORKING.md` is the
                # `.module-builder/WORKING.md` it names, whatever git says of a `WORKING.md` at the root)
                f.data["unsure"] = True
            elif severity == "warning" and not memory and ref.kind != "link" and \
                    self._near_name(path.rstrip("/").rpartition("/")[2]) is None:
                # (a claim in text: git decides, `_was_there`; a link, which the model follows, and a misspelt
                # name stay warnings whatever git says)
                f.data["if_never"] = True
            yield f

    def _confidence(self, ref: Ref, line: str, path: str, bases: list[Base], memory: bool, template: bool,
                    peers: list[str], pointed: bool = False) -> tuple[str | None, str]:
        """(severity or None to leave it out, why) of a missing path the text claims exists (``pointed``: the text
        right before it sends the reader to it, see `_POINTER_BEFORE`). "unsure": info, unless git history shows
        the repository had the file (`_was_there`)."""
        if memory:
            return "warning", "a memory names it as a file of the workspace"
        segs = [s for s in path.rstrip("/").split("/") if s not in (".", "..")]
        first, name = segs[0], segs[-1]
        m = IN_OTHER_PLACE.match(line[ref.col + len(ref.text):])
        if m and not self._first_dir_exists(m.group(1), bases) and m.group(1) not in self.names.dirs:
            return None, ""  # "`docs/x.md` in `acme/tools`": a file of that repository
        if line.lstrip().startswith("|"):
            # "| Visual editor (`quarto-dev/quarto`) | `packages/editor-server/src/core/xref.ts` |": another cell of
            # the row names the repository whose file it is
            for cell in line.strip().strip("|").split("|"):
                if ref.text in cell:
                    continue
                for owner, _ in _ROW_REPO.findall(cell):
                    if not self._first_dir_exists(owner, bases):
                        return None, ""
        if first == "memory" and len(segs) > 1 and not self._first_dir_exists(first, bases):
            # "See `memory/feedback_deploy_workflow.md`" in a command, where no `memory/` is beside the file or at
            # the root: Claude Code's auto memory (~/.claude/projects/<project>/memory/), each user's own
            return None, ""
        if path.rstrip("/") in _TOOL_LOCATIONS or (path.rstrip("/") + "/").startswith(_TOOL_LOCATION_DIRS):
            # (unsure: a warning when git shows the repository had it, `.claude/rules/` deleted since)
            return "unsure", ("a location an agent or editor defines for its own configuration (it reads it there "
                            "when present): the text may say where to put one rather than that it exists")
        if len(segs) > 1 and "." not in name and not path.endswith("/") and self._package(first, bases) \
                and not (len(segs) > 2 and self._first_dir_exists(f"{first}/{segs[1]}", bases)):
            # (`docs/d2-spike/`, written as a directory, is no import specifier; nor is `web/src/icons` where
            # `web/src/` is a directory: an export subpath names no directory of the package's tree)
            return "info", (f"`{first}` is a package of the workspace (its directory has a package.json): "
                            f"`{path}` may be an import specifier of it (an `exports` entry), not a path")
        if len(segs) == 2 and "." in name.strip(".") and self._java_package(first, name, bases):
            return None, ""  # "in `core/repair.types`": module `core`, Java package `repair.types`, which is there
        if len(segs) == 2 and EXT.match(name) is None and self._cargo_feature(first, name, bases):
            return None, ""  # "`depot/test-faults` must stay dev/test-only": Cargo's crate/feature notation
        if ref.kind == "bare" and len(segs) > 2 and EXT.match(name) is None and self._siblings(segs):
            # "in the appropriate directory (common/node/vscode-node)": three directories, one each (in prose only:
            # `deps/cli/src` in a code span is a path even where deps/, cli/ and src/ all sit at the root)
            return None, ""
        if len(segs) == 2 and EXT.match(name) is None and not path.endswith("/") and ref.kind != "link" and \
                not self._first_dir_exists(first, [b for b in bases if b is bases[0] or b.rel == ""]):
            # `phel/duplicate-def`, `php/new` in src/php/Lint/CLAUDE.md, where only src/ has a phel/ and a php/:
            # a namespaced name (a lint rule's id, a special form) as often as a directory of a parent
            return "unsure", (f"two words joined by a slash, whose first (`{first}/`) is a directory neither beside "
                              "the file nor at the root, only of a directory above the file: it may be a namespaced "
                              "name (`ns/name`), not a path")
        nowhere = len(segs) > 1 and first not in self.names.dirs and not self._first_dir_exists(first, bases)
        if peers and not (ref.kind == "bare" and (nowhere or (EXT.match(name) is None and not path.endswith("/")))):
            # (a path in prose, outside code spans and links, keeps its own shape's doubt: "reply/thread/DM" in a
            # table row beside `actions/nav.dart`, "README/CLAUDE.md" for the two files, are words and alternatives)
            return "warning", f"other paths on the same line exist (`{peers[0]}`): the line describes this workspace"
        if template and not (len(segs) > 1 and self._first_dir_exists(first, bases[:1])):
            # (`examples/app/CLAUDE.md` naming `src/components/x.tsx` with `examples/app/src/` there describes the
            # example's own tree, wrong in every copy: not demoted)
            return "info", ("the file lies in a template directory ([check] template_dirs): the paths it names are "
                            "those of the project it is copied into")
        if nowhere:
            # (on 27 real repositories every such path was another repository's, a package's or a sibling
            # checkout's: `../other-docs/x.mdx`, `nx/presets/npm.json`, `owner/.github/x.json`)
            return "unsure", (f"its first directory `{first}/` exists nowhere in the workspace: it may be another "
                            "repository's, a package's or a sibling checkout's path")
        if ref.kind == "bare" and "/" in path and EXT.match(name) is None and (
                not path.endswith("/") or len(segs) >= 3):
            # (`source/map/extract/ask/…` in prose: four words, even written as a directory)
            return "info", "words joined by slashes in prose (`capabilities/toolsets/models`), without an extension"
        if len(segs) == 1 and ref.kind != "link" and "/" not in path:
            if _dotted(path):
                # (`.mise.toml`, `.pre-commit-config.yaml`: a dotfile, or a suffix of files not written yet)
                return "if_gone", ("a dotted name that may be a file-name suffix (`.spec.ts`) as much as a dotfile "
                                   "(`.mise.toml`): reported only when git shows the repository had it")
            ext = EXT.match(path)
            if ext is not None and not self._ext_present(ext.group(2).lower()):
                # (`main.tf`, `variables.tf` in a rule's "File Organization" table where the project has no `.tf`
                # file: the conventions of a kind of project, or files to come; git may show it had one)
                return "unsure", (f"a bare file name of a kind the workspace has no file of (`.{ext.group(2)}`): "
                                  "a convention or a file to come (info, a warning when git shows the repository "
                                  "had it)")
            if is_subject(line, ref.col, ref.col + len(ref.text)):
                return "warning", "a bare file name that its list item, table row or label describes"
            if pointed:
                return "warning", "a bare file name the text points at (see `x`, configured in `x`)"
            near = self._near_name(path)
            if near is not None:
                return "warning", (f"a bare file name one or two letters away from an existing one (`{near}`): a "
                                   "misspelt reference")
            return "unsure", ("a bare file name (no directory) in running text: it may name a kind of file or an "
                            "illustration rather than a file here")
        return "warning", ("named as a file of this workspace (a link, or a path whose first directory exists)"
                           if ref.kind == "link" or len(segs) > 1 else "named as a file of this workspace")

    def _listed_with(self, found: list, ref: Ref, path: str, fctx: FileContext, offset: int,
                     whole_list: bool) -> str | None:
        """An existing path listed with ``ref`` (on its line, or with ``whole_list`` two of its list: see
        `_real_list`), which makes an example ("- ✅ `x.py`", "Test examples: `a`, `b`") name real files; else
        None."""
        # (not a directory of one segment, `src/`: every project has one)
        beside = [p for p in _peers(found, ref, path) if "/" in p.rstrip("/") or not p.endswith("/")]
        if beside:
            return beside[0]
        real = _real_list(found, ref, fctx.at(ref.line - offset), fctx, offset) if whole_list else []
        return real[0] if real else None

    def _near_name(self, name: str) -> str | None:
        """An existing file name of the same extension at most two edits from ``name`` (`copuntry-combobox.tsx`
        for country-combobox.tsx), or None. Only for names of eight characters or more before the extension: a
        short name is one letter away from many others."""
        stem, dot, ext = name.rpartition(".")
        if not dot or len(stem) < 8:
            return None
        by_ext = self._by_ext
        if by_ext is None:  # (by extension and length: a name is asked only of names two letters longer or shorter)
            by_ext = self._by_ext = {}
            for n in self.names.files:
                by_ext.setdefault((n.rpartition(".")[2], len(n)), []).append(n)
        for size in range(len(name) - 2, len(name) + 3):
            for other in by_ext.get((ext, size), ()):
                if other != name and _edits_at_most(name, other, 2):
                    return other
        return None

    def _siblings(self, segs: list[str]) -> bool:
        """Whether every segment of a slash-joined word list is a directory beside the others (in one parent):
        `common/node/vscode-node` names three directories, not a path."""
        dirset, named = self.names.dirset, self.names.dirs.get(segs[0], [])
        parents = {""} | {d.rsplit("/", 1)[0] + "/" for d in named if "/" in d}
        return any(all(parent + s in dirset for s in segs) for parent in parents)

    def _package(self, name: str, bases: list[Base]) -> bool:
        """Whether ``name``, read from one of ``bases``, is a directory holding a package.json
        (`create-payload-app/commands` in packages/create-payload-app/CLAUDE.md names the package's `./commands`
        export; the caller asks only for an extensionless last segment, as export subpaths are written)."""
        paths = self.names.paths
        return any(b.rel is not None and (f"{b.rel}/{name}/package.json" if b.rel else f"{name}/package.json") in paths
                   for b in bases)

    def _vendored_elsewise(self, fi: FileInfo) -> str | None:
        """Why a file that is not a SKILL.md is another project's copy: it lies under a `vendor/` or
        `third_party/` directory (Go modules, Composer packages), or in the folder of a vendored skill (the
        AGENTS.md a skill compiles from its rules)."""
        parts = self.ws.rel(fi.path).split("/")
        if any(p in _VENDOR_DIRS for p in parts[:-1]):
            return "it lies under a vendor directory: a third-party project's file"
        skill = fi.path.parent / "SKILL.md"
        if skill != fi.path and self.ws.exists(skill):
            sfi = self.ws.file(skill)
            if sfi.text is not None:
                return vendored(self.ws, sfi)
        return None

    def _in_package(self, tails: list[str], base: Base) -> bool:
        """Whether one of ``tails`` (workspace-relative paths) lies in the package of directory ``base``: below
        the nearest directory at or above it holding a package manifest, when that is not the root."""
        if base.rel is None or not base.rel:
            return True
        pkg = self._package_dirs.get(base.rel)
        if pkg is None:
            pkg, d = "", base.rel
            while d:
                if any(f"{d}/{m}" in self.names.paths for m in _MANIFESTS):
                    pkg = d
                    break
                d = d.rpartition("/")[0]
            self._package_dirs[base.rel] = pkg
        return not pkg or any(t.startswith(pkg + "/") for t in tails)

    def _java_package(self, module: str, package: str, bases: list[Base]) -> bool:
        """Whether ``module``, read from one of ``bases``, holds the directories of the dotted package name
        ``package`` somewhere below it (`core/repair.types`: core/src/main/java/.../repair/types/)."""
        tail = "/" + package.replace(".", "/")
        for b in bases:
            if b.rel is None:
                continue
            top = f"{b.rel}/{module}/" if b.rel else f"{module}/"
            if any(p.startswith(top) and p.endswith(tail) for p in self.names.dirs.get(package.rsplit(".", 1)[1], ())):
                return True
        return False

    def _cargo_feature(self, crate: str, feature: str, bases: list[Base]) -> bool:
        """Whether ``crate``, read from one of ``bases``, is a directory whose Cargo.toml declares the feature
        ``feature`` (`depot/test-faults` is Cargo's notation for the `test-faults` feature of crate `depot`)."""
        for b in bases:
            if b.rel is None:
                continue
            rel = f"{b.rel}/{crate}/Cargo.toml" if b.rel else f"{crate}/Cargo.toml"
            if rel not in self.names.paths:
                continue
            src = self.ws.fs.read(self.root / rel)
            text = src.text if src.ok and src.text else ""
            if "[features]" in text and re.search(rf"^\s*\"?{re.escape(feature)}\"?\s*=", text, re.MULTILINE):
                return True
        return False

    # -- which tokens are paths ------------------------------------------------------------------------
    def _bases(self, fdir: Path, memory: bool) -> list[Base]:
        """Where a relative path may be anchored: the file's directory and its ancestors up to the root
        (memory files: the memory directory and the root)."""
        if memory:
            return [Base(str(fdir), None), Base(self._root_str, "")]
        d = str(fdir)
        out = self._ancestors.get(d)
        if out is None:
            out = self._ancestors[d] = ancestor_bases(d, self._root_str)
        return out

    def _candidate(self, ref: Ref, bases: list[Base], memory: bool, kind: str) -> str | None:
        """The relative path ``ref`` names, or None when it is not (checkably) a path."""
        got = path_shape(ref.text, ref.kind)
        if got is None:
            return None
        need_dir, has_slash, first = got
        if ref.kind == "bare" and not has_slash and not memory:
            return None  # `README.txt` in prose may name anything; memories ("lives in web.py") are checked
        if kind == D.SKILL and not memory:
            # Paths relative to the skill directory are the skills family's (bundled files); only check
            # references that clearly point into the workspace.
            if ref.kind == "link" or not has_slash or first in _BUNDLE_DIRS:
                return None
            if not self._first_dir_exists(first, bases[1:]):
                return None
            if self._exists_at(bases[0], first) is True:
                return None
        if need_dir and not self._first_dir_exists(first, bases):
            return None
        if not has_slash and _dotted(ref.text) and self._suffix_of_files(ref.text):
            return None  # `.spec.ts` where `x.spec.ts` files are: a file-name suffix, no path (and no peer of one)
        return ref.text

    def _upstream_near(self, body: list[str], i: int) -> bool:
        """Whether line ``i`` or the line above it gives another GitHub repository's address (not this
        checkout's own `origin`): a list that points into that repository ("Repository: https://github.com/x/y",
        then "Terminal source: `src/vs/...`")."""
        for k in range(max(0, i - 1), i + 1):
            line = body[k]
            if "github.com/" not in line or (k < i and not _REPO_LABEL.match(line)):
                continue  # (a line above counts when it labels a repository: "2. **Repository**: https://...")
            for m in _GITHUB_REPO.finditer(line):
                if m.group(1).lower().removesuffix(".git") != self._own_repo():
                    return True
        return False

    def _own_repo(self) -> str:
        """`owner/name` of this checkout's `origin` on GitHub (lower-case), or ''."""
        got = self._origin
        if got is None:
            got = ""
            src = self.ws.fs.read(self.root / ".git" / "config")
            if src.ok and src.text:
                m = re.search(r'\[remote "origin"\][^\[]*?url\s*=\s*\S*github\.com[:/]([\w.-]+/[\w.-]+?)(?:\.git)?\s*$',
                              src.text, re.MULTILINE)
                got = m.group(1).lower() if m else ""
            self._origin = got
        return got

    def _names_this_repo(self, line: str) -> str | None:
        """The word of "in the <word> repository" on ``line`` when it is this repository's name or a part of it
        (`agent` in cloudzero-agent: the directory of the workspace, or its GitHub origin), else None."""
        m = _THE_X_REPO.search(line)
        if m is None:
            return None
        word = m.group(1).lower()
        names = {self.root.name.lower(), self._own_repo().rpartition("/")[2]}
        parts = {p for n in names if n for p in re.split(r"[-_.]+", n) if p}
        return m.group(1) if word in parts or word in names else None

    def _ext_present(self, ext: str) -> bool:
        """Whether some file of the workspace has extension ``ext`` (lower-case)."""
        exts = self._exts
        if exts is None:
            exts = self._exts = {n.rpartition(".")[2].lower() for n in self.names.files if "." in n}
        return ext in exts

    def _suffix_of_files(self, suffix: str) -> bool:
        """Whether some file's name ends with ``suffix`` (`.spec.ts`) and is longer: the suffix names their kind."""
        got = self._suffixes.get(suffix)
        if got is None:
            got = self._suffixes[suffix] = any(n.endswith(suffix) and n != suffix for n in self.names.files)
        return got

    def _first_dir_exists(self, first: str, bases: list[Base]) -> bool:
        names = self.names
        for b in bases:
            if b.rel is None:
                if os.path.isdir(os.path.join(b.abs, first)):
                    return True
            elif (f"{b.rel}/{first}" if b.rel else first) in names.dirset:
                return True
        return False

    def _exists_at(self, b: Base, path: str, probe: bool = False) -> bool | None:
        """True / False, or None when ``path`` from ``b`` leaves the area that can be checked. Inside the
        workspace the scan answers; ``probe`` asks the file system too (symlinked dirs, files created since)."""
        if b.rel is None:
            p = os.path.normpath(os.path.join(b.abs, path))
            if not is_within(p, b.abs):
                return None
            return os.path.exists(p)
        r = f"{b.rel}/{path}" if b.rel else path
        if "." in r and ("./" in r or r.startswith(".") or r.endswith("/..")):
            r = posixpath.normpath(r)
            if r == ".":
                return True
            if r == ".." or r.startswith("../"):
                return None
        names = self._names or self.names
        if r in names.paths:
            return True
        return self._on_disk(r) if probe else False

    def _on_disk(self, r: str) -> bool:
        """Whether root-relative ``r``, which the scan did not see, exists all the same. The scan saw every
        directory it entered in full: below one of those, absence is certain. Anything else (symlinked
        directories, files created since the scan) is asked of the file system."""
        names = self._names or self.names
        parent = r.rpartition("/")[0]
        while parent and parent not in names.paths:
            parent = parent.rpartition("/")[0]
        if parent == "" or parent in names.dirset:
            return False
        return os.path.exists(os.path.join(self.ws.root, r))

    # -- does it exist -----------------------------------------------------------------------------------
    def _resolve(self, path: str, bases: list[Base], link: bool) -> str:
        """exists | missing | unverifiable (resolves outside the workspace) | ignored (gitignored).
        (`check_file` remembers the answer for the rest of the run.)"""
        clean = path.rstrip("/")
        names = self.names
        paths = names.paths
        # Without `.`-led segments, `_exists_at` of a workspace base is a lookup of the joined string (the
        # common case, inlined: this runs for every base of every distinct reference).
        plain = not clean.startswith(".") and "/." not in clean
        inside = []
        for b in bases:
            if plain and b.rel is not None:
                if (f"{b.rel}/{clean}" if b.rel else clean) in paths:
                    return "exists"
                inside.append(b)
                continue
            got = self._exists_at(b, clean)
            if got:
                return "exists"
            if got is not None:
                inside.append(b)
        if not inside:
            return "unverifiable"
        segs = [s for s in clean.split("/") if s not in (".", "..")]
        name = segs[-1]
        has_slash = len(segs) > 1 or path.endswith("/")
        tails = names.files.get(name, []) + names.dirs.get(name, [])
        if not has_slash and name.startswith(".") and not tails and not link:
            # `.yaml` with config.yaml present: the suffix of a kind of file (a dotted one, `.spec.ts`, never gets
            # here: `_candidate` drops it; where no file has it, `_confidence` leaves it to git)
            if self._suffix_of_files(name):
                return "exists"
        if not has_slash:
            if tails and not link:
                # `web.py`: some web.py exists; the author named it informally. Only in another package than the
                # file's (`target.converter.ts` in packages/garmin/.../AGENTS.md, where only packages/fit has one):
                # "elsewhere", which a layout line describing its own files counts as missing (`check_file`)
                return "exists" if self._in_package(tails, bases[0]) else "elsewhere"
        else:
            tail = "/".join(segs)
            if any(r == tail or r.endswith("/" + tail) for r in tails):
                return "exists"  # `handlers/users.py` for services/api/handlers/users.py
            if len(segs) >= 2 and segs[1] != "src":
                # `composeApp/androidMain` for composeApp/src/androidMain: a module and what is in its sources
                # (a Kotlin source set, a crate's module), written without the `src/` every module has
                into = "/".join((segs[0], "src", *segs[1:]))
                if any(r == into or r.endswith("/" + into) for r in tails):
                    return "exists"
        m = EXT.match(name) if "." in name else None
        # (not for links: `[setup](docs/setup)` is a broken link on GitHub and for the agent's Read)
        full = names.with_stem(name) if not link and (m is None or m.group(2).lower() not in KNOWN_EXT) else None
        if full and not path.endswith("/"):
            # `src/utils/format` for src/utils/format.ts, `tests/TestCore` for tests/TestCore.dpr: import
            # specifiers and program names drop the extension (`app.module` for app.module.ts too)
            for b in inside:
                if b.rel is None:
                    continue
                r = f"{b.rel}/{clean}" if b.rel else clean
                if not plain:
                    r = posixpath.normpath(r)
                if r != name and not r.endswith("/" + name):
                    continue  # `a/b/..`
                r = r[:len(r) - len(name)]
                if any(r + n in paths for n in full):
                    return "exists"
            if has_slash:
                tail = "/".join(segs[:-1])
                for n in full:
                    t = f"{tail}/{n}"
                    if any(r == t or r.endswith("/" + t) for r in names.files[n]):
                        return "exists"
        for b in inside:
            if plain and b.rel is not None:
                if self._on_disk(f"{b.rel}/{clean}" if b.rel else clean):
                    return "exists"
            elif self._exists_at(b, clean, probe=True):
                return "exists"
        if not link and "." not in name and name[:1].isupper() and not name.isupper():
            # `flows/webhooks/core/Dispatcher` for .../dispatcher.ex: a module's name (Elixir, Ruby, Python name
            # a module in CamelCase and its file in snake_case)
            snake = _CAMEL_HUMP.sub("_", name).lower()
            if self._resolve(clean[:-len(name)] + snake, bases, False) == "exists":
                return "exists"
        # (with a directory only, as an import specifier is written: a bare `sidebars.js` beside a sidebars.ts
        # names a configuration file by its old name, which the tool reading it no longer finds)
        ts = _TS_SOURCE.get(name.rpartition(".")[2]) if not link and "." in name and "/" in clean else None
        # (`x.js` names x.ts or, for a component, x.tsx: TypeScript resolves the emitted name to either)
        for t in ((ts, "tsx") if ts == "ts" else (ts,)) if ts is not None else ():
            if self._resolve(clean[:-len(name)] + name.rpartition(".")[0] + "." + t, bases, False) == "exists":
                # `helpers.js` for helpers.ts: TypeScript's ESM imports name the emitted file (unless git shows the
                # .js file itself was here: a layout written before the code moved to TypeScript, `_was_there`)
                return "emitted"
        if self._ignores is None:
            self._ignores = GitIgnores(self.ws, names)
        if self._ignores:
            # (the file's directory and the root: a symlinked file's real-directory bases come after the root;
            # every .gitignore on the way down counts, the root's and a nested one's alike)
            for b in [b for b in bases if b.rel is not None and (b is bases[0] or b.rel == "")]:
                rel = posixpath.normpath(posixpath.join(b.rel, clean)) if b.rel else posixpath.normpath(clean)
                # (an extensionless name may be a directory whose every file is ignored, `/src/main/assets/*`: git
                # keeps no such directory, so a clone has none)
                if not rel.startswith("..") and self._ignores.ignores(rel, path.endswith("/") or "." not in name):
                    return "ignored"
            if ".." not in clean.split("/") and self._ignores.names_below(clean) is not None:
                return "ignored"
        for b in bases:
            if b.rel is None:
                continue
            rel = posixpath.normpath(posixpath.join(b.rel, clean)) if b.rel else posixpath.normpath(clean)
            if any(rel == m or rel.startswith(m + "/") for m in submodules(self.ws)):
                return "ignored"  # below a git submodule the checkout left empty: another repository's file
        if not link and "." in name and not path.endswith("/"):
            # `secret.yml` beside a tracked secret.yml.tpl, `.env` beside .env.example: each user makes the file
            # from its template (and keeps it out of git), so a clone never has it
            for suffix in _TEMPLATE_SUFFIXES:
                made = [r for r in names.files.get(name + suffix, ())
                        if r[:len(r) - len(suffix)] == clean or r[:len(r) - len(suffix)].endswith("/" + clean)]
                if made:
                    return "ignored"
        return "missing"

    # -- reporting ----------------------------------------------------------------------------------------
    def _finding(self, fi: FileInfo, ref: Ref, path: str, bases: list[Base], memory: bool, where: str,
                 own: str, severity: str = "warning", explain: list[str] | None = None) -> Finding:
        # What a missing path suggests depends on the path, the directory of the file that names it (``where``)
        # and whether it is a link: worked out once per directory and path.
        # (Whether the file shares the missing path's name too: it is never suggested as where that path went.)
        key = (path, where, memory, ref.kind == "link", own in path and own == path.rstrip("/").rpartition("/")[2])
        got = self._hints.get(key)
        if got is None:
            got = self._hints[key] = self._hint(fi, ref, path, bases, memory)
        cands, hint, new = got
        span = Span(ref.line, ref.col, ref.line, ref.col + len(ref.text))
        fixes = [] if new is None else [Fix(f"Replace with `{new}`", (Edit(fi.path, span, new),), safe=False)]
        data = {"path": path, "candidates": cands[:10], "text": ref.text}
        if explain:
            data["explain"] = explain + ([f"where it may have gone: {', '.join(f'`{c}`' for c in cands[:10])}"]
                                         if cands else [])
        if memory:
            msg = f"This memory may be stale: `{ref.text}` no longer exists{hint}; update or delete the memory"
            return Finding("CTX402", severity, fi.path, span, msg, fixes=fixes, data=data)
        msg = f"`{ref.text}` does not exist{hint}; point the reference at the right path or remove it"
        return Finding("CTX401", severity, fi.path, span, msg, fixes=fixes, data=data)

    def _hint(self, fi: FileInfo, ref: Ref, path: str, bases: list[Base], memory: bool
              ) -> tuple[list[str], str, str | None]:
        """Where the missing ``path`` may have gone: (candidates, hint for the message, replacement text
        for a fix or None)."""
        segs = [s for s in path.rstrip("/").split("/") if s not in (".", "..")]
        name = segs[-1]
        parent = path.rstrip("/").rpartition("/")[0]
        m = EXT.match(name)
        ext = m.group(2).lower() if m else None
        is_dir = path.endswith("/") or ext is None
        names = self.names
        cands: list[str] = []
        split_dir = self._split_into(path, parent, m, ext, bases) if parent else None
        if memory and ref.kind == "link" and "/" not in path:
            pass  # a topic file of the memory directory: workspace files of that name are unrelated
        elif split_dir is not None:
            pass  # services/stats/web.py -> services/stats/web/ beside it: split up, not moved
        elif not path.endswith("/") and not _generic_name(name):
            # a file of that name: strong evidence it moved (unless every other directory has one, or it is
            # the file that names the path)
            cands = names.files.get(name, [])
            if cands and fi.path.name == name:
                own = self.ws.rel(fi.path)
                cands = [c for c in cands if c != own]
            cands = sorted(cands)
        if not cands and is_dir and not (memory and ref.kind == "link"):
            dirs = names.dirs.get(name, [])
            # a directory name alone is weak evidence: only when it is unique and only its last part is missing
            if len(dirs) == 1 and (not parent or any(self._exists_at(b, parent) for b in bases)):
                cands = [dirs[0] + "/"]
        hint = ""
        new = None
        if len(cands) == 1:
            new = self._rewrite(fi, ref, cands[0].rstrip("/"), cands[0].endswith("/"), memory)
            hint = f" (did it move to `{cands[0]}`?)"
        elif cands:
            shown = ", ".join(f"`{c}`" for c in cands[:3]) + (", ..." if len(cands) > 3 else "")
            hint = f" (`{name}` exists at {shown})"
        elif ext in _CODE_EXT and m is not None:
            stem = m.group(1)
            split = [split_dir] if split_dir is not None else [] if parent else names.dirs.get(stem, [])
            if len(split) == 1:
                hint = f" (there is now a directory `{split[0]}/`: was it split up?)"
        return cands, hint, new

    def _split_into(self, path: str, parent: str, m, ext: str | None, bases: list[Base]) -> str | None:
        """The directory `parent/stem/` that a missing code file `parent/stem.ext` became, if there is one."""
        if m is None or ext not in _CODE_EXT:
            return None
        stem = m.group(1)
        for b in bases:
            if b.rel is None:
                continue
            r = f"{b.rel}/{parent}/{stem}" if b.rel else f"{parent}/{stem}"
            if r.startswith(".") or "/." in r:  # else already normal (and normpath is slow)
                r = posixpath.normpath(r)
            if r in self.names.dirset:
                return r
        return None

    def _rewrite(self, fi: FileInfo, ref: Ref, cand: str, is_dir: bool, memory: bool) -> str:
        """The replacement text for a reference to ``cand`` (root-relative), written the way the file needs it."""
        target = self.root / cand
        new = cand
        if memory:
            pass  # memory lives outside the workspace: workspace paths are written root-relative
        elif ref.kind == "link":
            try:
                new = os.path.relpath(target, fi.path.parent).replace(os.sep, "/")
            except ValueError:
                new = cand
        elif is_within(fi.path.parent, self.root) and is_within(target, fi.path.parent) and fi.path.parent != self.root:
            new = target.relative_to(fi.path.parent).as_posix()
        if is_dir and ref.text.endswith("/") and not new.endswith("/"):
            new += "/"
        return new


# Where agents and editors look for their own configuration: named to say where one goes, present or not.
_TOOL_LOCATIONS = frozenset("""
    .claude/settings.json .claude/settings.local.json .claude/hooks .claude/agents .claude/commands .claude/rules
    .claude/skills .claude/output-styles .claude/CLAUDE.md .mcp.json CLAUDE.local.md .cursor/rules .cursor/mcp.json
    .cursorrules .github/instructions .github/prompts .github/copilot-instructions.md .github/chatmodes
    .windsurf/rules .windsurfrules .vscode/settings.json .vscode/mcp.json .gemini/settings.json .codex/config.toml
    .clinerules AGENTS.override.md""".split())
_TOOL_LOCATION_DIRS = (".claude/agent-memory/", ".claude/worktrees/", ".claude/todos/", ".continue/", ".cursor/", ".windsurf/", ".gemini/", ".codex/", ".aider", ".kiro/", ".roo/",
                       ".clinerules/", ".amazonq/", ".junie/", ".opencode/")


# File names found in many directories: one elsewhere is no evidence that a missing path moved there.
_GENERIC_NAMES = frozenset(n.lower() for n in """
    CLAUDE.md CLAUDE.local.md AGENTS.md AGENTS.override.md GEMINI.md SKILL.md README CHANGELOG.md CONTRIBUTING.md
    LICENSE LICENSE.md LICENSE.txt __init__.py __main__.py conftest.py setup.py setup.cfg pyproject.toml tox.ini
    requirements.txt package.json package-lock.json pnpm-lock.yaml yarn.lock tsconfig.json jsconfig.json
    Cargo.toml Cargo.lock mod.rs lib.rs main.rs build.rs go.mod go.sum main.go doc.go Makefile CMakeLists.txt
    Dockerfile docker-compose.yml docker-compose.yaml compose.yaml justfile BUILD BUILD.bazel Gemfile pom.xml
    build.gradle build.gradle.kts .gitignore .dockerignore .editorconfig""".split())
_GENERIC_PATTERN = lazyre.compile(
    # (a tool's own config, `vite.config.ts`, is in many projects; `vite.google-docs.config.ts` names one build)
    r"(?:index|readme)(?:\.[a-z0-9]+)+|tsconfig\.[\w.-]+|[\w-]+\.config\.[a-z]+|"
    r"\.(?:eslintrc|prettierrc|babelrc)(?:\..+)?"
)


_CLONE = lazyre.compile(r"\b(?:git clone|gh repo clone)\b[^\n`]*?\s(?:\S+?[/:])?([\w.-]+?)(?:\.git)?/?(?:\s+([~/.\w-][^\s`;&|]*))?[ \t]*(?:$|[`;&|\n])", re.M)


def cloned_children(body: str) -> frozenset[str]:
    """The directories a file reads inside another repository it clones: after `git clone URL /tmp/mcp-ext-apps`,
    the `src` of "read `/tmp/mcp-ext-apps/src/`". Paths that start with one of them are that checkout's."""
    return _cloned_children(body) if "clone" in body else frozenset()


@lru_cache(maxsize=256)  # (keyed by the text: only the few files that clone something are kept)
def _cloned_children(body: str) -> frozenset[str]:
    out: set[str] = set()
    for m in _CLONE.finditer(body):
        dest = (m.group(2) or m.group(1)).rstrip("/")
        if not dest or dest in (".", ".."):
            continue
        for c in re.finditer(re.escape(dest) + r"/([\w.@-]+)", body):
            out.add(c.group(1))
    return frozenset(out)


def _dotted(name: str) -> bool:
    """`.spec.ts`, `.mise.toml`: a name of one segment that starts with a dot and has another."""
    return name.startswith(".") and name.count(".") >= 2 and "/" not in name.rstrip("/")


def _generic_name(name: str) -> bool:
    """Whether ``name`` is generic (`README.md`, `index.ts`, `jest.config.js`, any case): see _GENERIC_NAMES."""
    low = name.lower()
    return low in _GENERIC_NAMES or _GENERIC_PATTERN.fullmatch(low) is not None


# ----------------------------------------------------------------------------------------------- extraction


# ----------------------------------------------------------------------------------------------- helpers
def _names_the_section(path: str, section: str) -> bool:
    """Whether a directory of ``path`` is what the examples section is named after (`examples/x.py` under
    "Examples"): the section is about the project's own directory of examples, not an illustration."""
    words = {w.lower().rstrip("s") for w in re.findall(r"[A-Za-z]+", section)}
    return any(seg.lower().rstrip("s") in words for seg in path.split("/")[:-1] if seg not in (".", ".."))
