"""Why a markdown file mentions a path: a claim that it exists, or something else.

A path named in an instruction file is not always a claim that the file is there. It may be an example
(`✅ UserProfile.tsx`, "a helper such as `shared/x`"), a counter-example ("not `apps/x/CHANGELOG.md`", `❌ ...`),
a place something is created or written to ("writes the report to `out/report.json`", "`dist/` is generated"),
a file of another repository ("`docs/x.md` in `acme/other`", "owned by the Documentation repo"), or the text
says itself that it need not exist ("gitignored", "if it exists"). Only a claim makes a missing path stale.

The classification looks at the clause around the mention (the words right before and after it, up to the
nearest clause boundary), at the list item it is in (its marker: ✅/❌, Good:/Bad:), at the list item it is
nested under and at the headings above it (an "Examples" section, a "generated directories:" parent). It is
token-level, not line-level: "Use `scripts/create_user.py` to create a test user" names a script that must
exist (the path is the instrument, not the object of *create*), "For example, `src/handlers/user.py` shows..."
states something about an existing file (a verb follows the path), "The output of `tools/report.py` goes to
stdout" names the producer. Pure functions; never raise.
"""

from __future__ import annotations

import re
from . import lazyre
from dataclasses import dataclass, replace
from functools import lru_cache

CLAIM = "claim"
EXAMPLE = "example"
CONTRAST = "contrast"
CREATED = "created"
HISTORY = "history"
EXTERNAL = "external"
OPTIONAL = "optional"


@dataclass(frozen=True)
class Purpose:
    kind: str
    """claim | example | contrast | created | history | external | optional"""
    why: str
    """The heuristic that decided, in words (shown by `ctxls check --explain`)."""
    weak: str = ""
    """A purpose read from a mark that also heads real files, which the rule tests against the workspace:
    "listed", an example ("- ✅ `x.py`") that names real files when the other paths listed with it exist;
    "beside", one ("Real examples: `a`, `b`") that does when a path on its line exists; "moved", a generated
    file or a place to put things, known from a heading, a lead-in or a verb of storing, that git shows was
    moved away: then the text names the old place."""


# -- clause boundaries: a sentence end, a semicolon, a colon, a dash, a table cell, an opening of a list
_BOUNDARY = lazyre.compile(r"(?:[.;!?](?:\s|$)|:\s|\s[—–-]\s|\||\(|\)|\s→\s)")

# Markers of a list item or a table row that is an example of the right or the wrong way.
_GOOD_MARK = lazyre.compile(r"^\s*(?:[-*+]|\d+[.)])?\s*(?:✅|✓|✔|👍|☑|(?:\*\*|__)?(?:good|correct|right|do|yes|preferred)"
                        r"(?:\*\*|__)?\s*[:：])", re.IGNORECASE)
_BAD_MARK = lazyre.compile(r"^\s*(?:[-*+]|\d+[.)])?\s*(?:❌|✗|✘|×|🚫|👎|⛔|(?:\*\*|__)?(?:bad|wrong|incorrect|avoid|don'?t|"
                       r"never|no|anti-?pattern|not\s+allowed|disallowed|forbidden|banned|prohibited)(?:\*\*|__)?\s*[:：])",
                       re.IGNORECASE)
_MARK_IN_ROW = lazyre.compile(r"(✅|✓|✔|❌|✗|✘|🚫)")
_WORD = lazyre.compile(r"[A-Za-z]")

# Words right before the mention (same clause) that make it a counter-example: "not `x`", "instead of `x`".
_NEGATED = lazyre.compile(r"(?:\b(?:not|never|instead\s+of|rather\s+than|avoid|don'?t\s+(?:use|add|create|put)|"
                      r"do\s+not\s+(?:use|add|create|put)|no\s+more|without)[*_]{0,2}\s+(?:\S+\s+){0,2}$"
                      # "Do not create `task_plan.md`, `findings.md`, or `progress.md`": each item of the list
                      r"|\b(?:don'?t|do\s+not|never)\s+(?:use|add|create|put|commit|write)\s+(?:`[^`]+`,?\s+(?:or\s+|and\s+)?)+$"
                      # "Do not create or edit authored prompt files under `plugins/app/agents/`": not the place
                      r"|\b(?:don'?t|do\s+not|never)\s+(?:create|add|put|write|place|store)\b[^.;`]{0,60}\b(?:under|in|into|inside)\s+$"
                      # "There is no native `cpp/engine/`": one describing word may stand between
                      r"|\b(?:ships|has|have|there\s+is|there\s+are|with|contains?)\s+(?:\w+ly\s+|also\s+)?[*_]{0,2}no\s+(?:[\w-]+\s+)?$"
                      # "produces no podspec and no `Package.swift`"
                      r"|\b(?:produc\w*|generat\w*|emits?|creat\w*|ships?|needs?|requires?)\s+no\s+(?:[\w-]+\s+)?"
                      r"(?:(?:and|or|nor)\s+no\s+)?$|\b(?:and|or|nor)\s+[*_]{0,2}no\s+$"
                      # "No separate `__tests__/integration/` or `__tests__/components/` folders": each of the list
                      r"|(?:^|[.;:(]\s*|\*\*\s*)no\s+(?:[\w-]+\s+)?(?:`[^`]+`,?\s+(?:or\s+|and\s+|nor\s+)?)+$"
                      # "(no separate `hooks.ts` or store files)"
                      r"|(?:^|[(,;:]|^\s*(?:[-*+]|\d+[.)]))\s*no\s+(?:separate|other|extra|additional|dedicated|"
                      r"standalone|sibling)?\s*$"
                      # "当前仓库没有 `apps/mobile/` 目录" (this repository has no `apps/mobile/`), "〜は存在しない"
                      r"|(?:没有|沒有|无|無|不存在|不含)\s*$)",
                      re.IGNORECASE)
_ABSENT_AFTER = lazyre.compile(r"^\W{0,3}\(?\s*(?:doesn'?t|does\s+not|do\s+not|don'?t|won'?t)\s+exist|^\W{0,3}\(?\s*"
                           r"(?:removed|deleted|gone|deprecated|obsolete|legacy,\s+removed)\b"
                           r"|^\W{0,3}\s*(?:is|are)\s+not\s+(?:a|an|the|part\s+of)\b|^\W{0,3}\s*(?:isn'?t|aren'?t)\s+(?:a|an)\b"
                           # "`session-data.ts` and `queries.ts` were considered and rejected"
                           r"|^\W{0,3}(?:\s*(?:,|and|or)\s*`[^`]*`\W{0,2})*\s*(?:was|were|is|are|got)\s+"
                           r"(?:considered\s+(?:and|but)\s+)?(?:rejected|dropped|abandoned|ruled\s+out)\b"
                           # "the CLAUDE.md says tests live in `recidiviz/test/` but they're actually in `x`"
                           r"|^\W{0,3}\s*,?\s*but\s+(?:it'?s|they'?re|it\s+is|they\s+are|(?:the\s+)?[\w-]+\s+(?:is|are|lives?))"
                           r"\s+(?:really|actually)\b",
                           re.IGNORECASE)

# Example markers right before the mention ("e.g. `x`", "such as `x`", "like `x`").
_EXAMPLE_BEFORE = lazyre.compile(
    r"(?:\be\.\s?g\.|\bi\.\s?e\.|\bfor\s+(?:example|instance)|\bsuch\s+as|\blike|\bsay|\bpar\s+exemple|"
    r"\bpor\s+ejemplo|\bz\.\s?b\.|(?<![\w./-])(?:examples?|samples?)\b(?![/-])|例[:：]|例えば|例如|比如"
    # a naming convention's name, then a name in it: "Classes use StudlyCase (`ModuleConfig.php`)"
    r"|\b(?:(?:lower|upper)?camel|pascal|studly|kebab|snake|screaming[_-]snake|train|upper|lower)[_-]?case\b)"
    r"\W*(?:\S+\s+){0,3}\W*$", re.IGNORECASE)
# (not "`x.go` for examples of testing ...": the file holds examples)
_EXAMPLE_AFTER = lazyre.compile(r"^\W{0,3}\s*,?\s*(?:e\.\s?g\.|i\.\s?e\.|for\s+(?:example|instance)\b|as\s+an?\s+example\b|"
                            r"or\s+(?:similar|equivalent|the\s+like)\b)",
                            re.IGNORECASE)
_SENTENCE_END = lazyre.compile(r"[.;!?](?:\s|$)|\|")
# After an example marker, a verb after the path makes the sentence a statement about the file ("For example,
# `src/handlers/user.py` shows how ...").
_CLAIM_VERB_AFTER = lazyre.compile(
    r"^\W{0,3}\s*(?:is|are|was|has|have|shows?|contains?|defines?|handles?|implements?|holds?|lives?|exports?|"
    r"uses?|runs?|does|provides?|registers?|configures?|sets?|returns?|calls?|loads?|keeps?|stores?|"
    r"describes?|documents?|explains?|lists?|wires?|owns?|reads?|parses?|builds?|validates?|demonstrates?)\b",
    re.IGNORECASE)

# Creation or output with the path as the object: "creates `x`", "writes to `x`", "output to `x`".
_CREATED_BEFORE = lazyre.compile(
    r"(?:\b(?:(?:re)?creat(?:e|es|ed|ing)|(?:re)?generat(?:e|es|ed|ing)|scaffold(?:s|ed|ing)?|emit(?:s|ted|ting)?|"
    # "`federation/` becomes `assets/federation/` in Android assets": what a build turns it into
    r"becom(?:e|es|ing)|turn(?:s|ed)?\s+into|"
    r"produc(?:e|es|ed|ing)|mkdir|touch)\b(?:\s+(?:a|an|the|new|your|its|their|this|that|one|file|files|"
    r"directory|dir|folder|at|in|into|to|under|as|called|named)\b)*\W*$"
    r"|\b(?:writ(?:e|es|ing|ten)|output(?:s|ted|ting)?|sav(?:e|es|ed|ing)|dump(?:s|ed|ing)?|extract(?:s|ed|ing)?|"
    r"download(?:s|ed|ing)?|install(?:s|ed|ing)?|cop(?:y|ies|ied|ying))\b(?:\s+\S+){0,4}?\s+"
    r"(?:to|into|in|under|as)\W*$)", re.IGNORECASE)
# "## `trials_summary.json` schema": the text describes what such a file holds (a run writes it).
_FORMAT_AFTER = lazyre.compile(r"^`?\s*(?:schema|format|file\s+format|structure)\b", re.IGNORECASE)
# "Treat `packages/x-wasm/pkg/` as wasm-pack output": what a build writes.
_OUTPUT_AFTER = lazyre.compile(r"^`?\s*as\s+(?:(?:the|a|an)\s+)?(?:[\w-]+\s+){0,2}(?:output|artifacts?)\b", re.IGNORECASE)
_CREATED_AFTER = lazyre.compile(
    r"^\W{0,3}\s*(?:\((?:auto-?)?(?:generated|created|built|output|produced|written|cached|temporary|runtime|"
    r"gitignored|local)\b|(?:is|are|will\s+be|gets?|get|is\s+being|are\s+being|was|were)\s+(?:auto-?)?"
    r"(?:created|generated|written|produced|emitted|built|output|saved|downloaded|cached|populated|scaffolded)\b"
    r"|(?:once|after|when)\s+(?:it\s+is\s+)?(?:created|generated|built)"
    r"|`?\s*[;,]\s*(?:they|it|these|which)\s+(?:are|is)\s+(?:all\s+)?(?:auto-?)?(?:generated|built|created)\b"
    r"|(?:and\s+`[^`]+`\s+)?(?:is|are)\s+(?:\*\*)?(?:created|managed|maintained|written|kept|updated)"
    r"(?:\s+and\s+(?:created|managed|maintained|written|kept|updated))?\s+(?:entirely\s+|only\s+)?by\s+(?:the\s+)?"
    r"(?:ai|agent|model|assistant|claude|you|tool)\b"
    # "`secret.yml` は `op inject` で生成する", "由脚本自动生成": generated, in Japanese or Chinese
    r"|[^。.]{0,40}?(?:で|により|によって|由|通过|透過)[^。.]{0,30}?(?:生成|作成)(?:する|される|します|されます)?)", re.IGNORECASE)

# A directory as the place things are put: "Capture learnings in `docs/experience/`", "record decisions under
# `docs/adr/`". (Only for a directory: "logging setup is in `lib/logging.ts`" names an existing file.)
# "Write `apps/e2e/tests/adhoc.spec.ts`, importing ...", "3. Create a new `x`": an imperative that makes the file.
_MAKE_IMPERATIVE = lazyre.compile(
    r"^\W*(?:\d+[.)]\s*)?(?:(?:then|now|next|first|finally),?\s+)?(?:write|create)\s+(?:(?:a|an|the|new|temporary|temp|"
    r"separate|dedicated|own|additional|another|"
    r"throwaway|one-?off|ad-?hoc|scratch|small|test|spec|file|script)\s+)*\W*$"
    # "2. Create MCP package: `packages/mcps/x/`": a label names what is made, the colon gives its place
    r"|^\W*(?:\d+[.)]\s*)?(?:write|create)\s+[^`:\n]{1,50}:\s*$"
    # "Create reusable dependencies in `src/api/dependencies.py`": the place new code goes
    r"|^\W*(?:\d+[.)]\s*)?create\s+(?:[\w-]+\s+){1,4}(?:in|inside|under|within|at)\s+$", re.IGNORECASE)
# `rm -rf e2e-tests/shots/` on a command line: the instruction removes it (a temporary place).
_REMOVED_BY = lazyre.compile(r"\brm\s+(?:-\w+\s+)*(?:\S+\s+){0,4}$")

# (Each verb with its own endings: "files live in `docs/x/`" is the noun, and "good" or "stored" no verb "go".)
_DEST_BEFORE = lazyre.compile(
    r"\b(?:captur(?:e|es|ed|ing)|record(?:s|ed|ing)?|stor(?:e|es|ed|ing)|log(?:s|ged|ging)?|put(?:s|ting)?|"
    r"plac(?:e|es|ed|ing)|kept|keep(?:s|ing)?|add(?:s|ed|ing)?|append(?:s|ed|ing)?|collect(?:s|ed|ing)?|"
    r"drop(?:s|ped|ping)?|file|filed|filing|go(?:es|ing)?|went|"
    # "Demo use-case classes MUST live under `x/`": a rule for where new ones go (not "the code lives in `x/`")
    r"(?:must|should|shall)\s+(?:live|reside|belong|be\s+placed|be\s+put|be\s+versioned|be\s+kept|be\s+stored))"
    r"\b(?:\s+\S+){0,4}?\s+"
    r"(?:in|into|to|under)\W*$", re.IGNORECASE)

# "Shared UI should move to `packages/ui` before this grows": a planned place (not "was moved to `x`", history
# that names where it is now)
_WILL_MOVE_TO = lazyre.compile(r"\b(?:should|will|must|could|can|may|would|to)\s+(?:be\s+)?(?:mov(?:e|ed)|migrat(?:e|ed)|"
                           r"extract(?:ed)?)\s+(?:\w+\s+){0,2}(?:in)?to\W*$", re.IGNORECASE)

# "A test for `modules/Chat/CreateChatAction.php` goes in `tests/Unit/Chat/CreateChatActionTest.php`": where one
# new thing of a kind goes, the layout's rule shown on one case
# (and "a new "share" feature would live in `src/ops/files/share`": a made-up one, in the conditional; "a helper
# at `src/x.ts` belongs at `tests/unit/x.test.ts`")
_NEW_ONE_GOES = lazyre.compile(r"(?:^|[.;:]\s|\W)(?:an?|each|every|any|new)\s+(?:[^.;:]|[.:](?=\S)){0,160}?"
                           r"\b(?:go(?:es)?|belongs?|would\s+(?:live|go|be|sit))\s+(?:in|into|under|at)"
                           r"\W*$", re.IGNORECASE)

# "make assumptions, document them (`.gaia/assumptions.md`)", "log the decision (`notes/decisions.md`)": the
# parenthesis says where the record goes, which the first such record creates.
# (An imperative that opens a clause and has an object: not "the design document (`docs/design.md`)".)
_RECORDED_IN = lazyre.compile(r"(?:^|[,;:]|\band|\bthen)\s*(?:\W{0,2})(?:document|record|log)\s+(?:[\w'-]+\s+){0,2}"
                          r"[\w'-]+\s*\(\W*$", re.IGNORECASE)

# A path that is gone by intent: "`x` was renamed", "moved from `x`", "formerly `x`" (but "renamed to `y`" names
# the new path, which must exist).
_HISTORY_BEFORE = lazyre.compile(
    r"\b(?:renam\w*|mov(?:e|ed|ing)|delet\w*|remov\w*|replac\w*|deprecat\w*|formerly|used\s+to\s+be|dropp\w*|"
    r"split|migrat\w*|promot(?:e|ed|ing))(?:\s+(?!to\b|into\b|with\b|by\b|in\b)\S+){0,2}\s*\W*$"
    # "(...; previously at `src/models/heads/next.py`.)": where it was before
    r"|\bpreviously\s+(?:at|in|under|named|called)\W*$"
    r"|\bno\s+longer\s+\w+(?:\s+\w+)?\s+(?:in|at|from|under|to)\W*$"
    # "replaces the legacy Rails `spree/admin` engine": what the text calls legacy or former is gone by intent
    r"|\b(?:replac\w*|supersed\w*)\s+(?:the\s+)?(?:legacy|former|previous|old)\s+(?:\w+\s+){0,2}\W*$"
    # "folded in from the former `CROSS_TARGET_STRATEGY.md`/`scaling.md`": a former file is gone
    r"|\b(?:former|erstwhile|defunct|retired|decommissioned|removed|deleted)\s+(?:[\w-]+\s+){0,3}"
    r"(?:`[^`]+`\s*(?:/|,|and\b|or\b)\s*)*\W*$"
    r"|(?:^|[^\w\s]\s*|\b(?:this|it|which|that)\s+)(?:was|were)\s+(?:(?:once|originally|previously|formerly|"
    r"\w+\s+files?)\s*[—–:-]?\s*)?\W*$", re.IGNORECASE)
# ("`x` (legacy)" marks it; "`x` - Legacy agent architecture" describes what it holds)
_HISTORY_AFTER = lazyre.compile(
    r"^\W{0,3}\s*[*_]{0,2}(?:\(?(?:deprecated|removed|deleted|obsolete|gone)\b|\(?(?:legacy|old)\b(?!\s+[a-z])|"
    r"(?:(?:suite|file|module|package|directory|folder|dir|script|tool|crate|app|service)\s+)?(?:was|were|has\s+been|"
    r"have\s+been|is|are|got)\s+(?:now\s+)?(?:renamed|moved|deleted|removed|replaced|deprecated|split|merged|gone|"
    r"obsolete|cancell?ed|canceled|rejected|retired|decommissioned|dropped|no\s+longer)|"
    r"stays?\s+(?:deleted|removed|gone)|(?:(?:file|directory|folder|dir)\s+)?"
    r"(?:no\s+longer\s+exists?|(?:do|does)\s+not\s+exist\s+anymore)|until\b|[^.;]{0,80}\b(?:both|all|they)\s+"
    r"(?:are|were)\s+(?:now\s+)?gone\b"
    # "`services/cds/` and `services/medication/` used to hold facade modules": what was there
    r"|(?:\s*(?:and|,)\s*`[^`]+`)*\s+used\s+to\s+(?:hold|contain|be|live|house)\b"
    # "之前有 `internal/linalg`，已在 Batch 5 重構移除": removed, in Chinese or Japanese
    r"|[^。.]{0,40}?(?:已|被|を)[^。.]{0,20}?(?:移除|删除|刪除|廢棄|废弃|削除))", re.IGNORECASE)
# "`packages/core`, `workflow-engine` and `x` are deleted": the predicate of the sentence the path opens.
_HISTORY_PREDICATE = lazyre.compile(
    r"^(?:`[^`]*`|[^.;!?`]){0,200}?\b(?:(?:are|were|was|is|have\s+been|has\s+been)\s+(?:now\s+)?(?:all\s+|both\s+)?[*_]{0,2}(?:deleted|removed|"
    r"cancell?ed|canceled|rejected|retired|dropped|gone|deprecated)\b|no\s+longer\s+exists?\b)", re.IGNORECASE)

# A run of code spans ending at the mention ("`a`, `b` (`B`), and "): the list the mention is one item of.
_SPAN_RUN = lazyre.compile(r"(?:`[^`]+`[*_]{0,2}(?:\s*\([^()]{0,40}\))?\s*(?:,|/|\band\b|\bor\b)?\s*)*$")
# The head of such a list, when it denies, buries or generalises every item:
# "- No `init_db.py`, `init_search.py`, ... anywhere in the repo", "None of `a`, `b`";
_LIST_DENIED = lazyre.compile(r"(?:^|[.;:!?]\s)\W*(?:no|none\s+of)\s+(?:[\w-]+\s+){0,2}\W*$", re.IGNORECASE)
# "- Removed in v3.1, do not resurrect: `service_executor.py`, `rules_engine/`", "Deleted: `a`, `b`";
_LIST_GONE = lazyre.compile(r"(?:^|[.;!?]\s)\W*(?:removed|deleted|retired|dropped|deprecated|gone)\b(?:[^.;:]|\.(?=\S)){0,60}:\s*$",
                        re.IGNORECASE)
# "- Manifests per service: `namespace.yaml`, `deployment.yaml`": the files each one of a kind has.
_LIST_PER = lazyre.compile(r"\b(?:per|for\s+each|in\s+each|for\s+every)\s+[\w-]+\s*:\s*$", re.IGNORECASE)
# "The prior doc described a `setup/` directory with `x.py`": what an earlier version of the text said.
_PRIOR_TEXT = lazyre.compile(r"\b(?:prior|previous|earlier|older|old|original)\s+(?:[\w-]+\s+)?(?:docs?|documentation|"
                         r"version|revision|readme|layout|structure|text|notes?)\s+(?:described|listed|said|mentioned|"
                         r"referenced|documented|named|claimed|pointed)\b", re.IGNORECASE)


# "the old two-jest-config setup (`jest.config.cjs` + `x`", "use pre-monorepo paths (`packages/shared`, ...": a
# parenthesis listing what an old setup or an old layout had
_OLD_ASIDE = lazyre.compile(r"(?:\bthe\s+old\s+(?:[\w-]+\s+){0,2}(?:setup|layout|paths|structure|config(?:uration)?s?|"
                        r"approach|system|names|locations|scheme|arrangement)|"
                        r"\b(?:outdated|stale|obsolete|pre-[\w-]+)\s+(?:[\w-]+\s+){0,3}?[\w-]+)\s+\(\s*"
                        r"(?:`[^`]+`\s*(?:/|,|\+|and\b|or\b)\s*)*`$", re.IGNORECASE)


def _list_head(line: str, col: int) -> str:
    """The sentence before the run of code spans the mention at ``col`` ends (its own backtick dropped): the
    head of the list the mention is an item of."""
    before = line[:col]
    if before.endswith("`"):
        before = before[:-1]
    m = _SPAN_RUN.search(before)
    return _sentence_before(line, m.start()) if m else ""


# "**Common Patterns by Technology**:" over "- **R**: `.Rproj.user/`, `.Rhistory`, `*.Rproj`": ignore patterns.
_PATTERNS_LEAD = lazyre.compile(r"\b(?:(?:ignore|glob|file|common|essential|default)\s+patterns?|patterns?\s+(?:by|per|for|to)\b|"
                            r"\.\w*ignore\b)", re.IGNORECASE)

# "**Never commit plan or design documents** (`docs/plans/`, ...)": kept out of the repository, each user's own.
_NOT_COMMITTED = lazyre.compile(r"\b(?:don'?t|do\s+not|never)\s+commit\b[^.;!?]*$", re.IGNORECASE)

# "`apps/ai`, `apps/auth` and `apps/workflow` are env-only placeholders for a future split": nothing is there yet.
_PLACEHOLDER_PREDICATE = lazyre.compile(
    r"^(?:`[^`]*`|[^.;!?`]){0,200}?\b(?:are|is)\s+(?:(?:only|just|empty|[\w-]+-only)\s+)?placeholders?\b",
    re.IGNORECASE)

# "## History note: the rt-oracle registry", "### Retired": what the section names is gone by intent.
_HISTORY_HEADING = lazyre.compile(r"\b(?:history|historical|retired|removed|legacy\s+\(removed\)|changelog|what\s+changed)\b"
                              # "**Detailed worksheets archived externally:**": kept outside the repository now
                              r"|\barchived\s+(?:externally|elsewhere|outside|off-?repo|out\s+of)\b"
                              r"|\bfiles?\s+to\s+(?:rename|remove|delete|move|retire)\b", re.IGNORECASE)

# Package names that end like files: `spectral.js`, `socket.io.js`, `RxInfer.jl`.
_PACKAGE_EXT = lazyre.compile(r"\.(?:js|jl)$")
_DEPENDENCIES = lazyre.compile(r"\b(?:dependenc(?:y|ies)|packages?|librar(?:y|ies)|npm|third[- ]party)\b", re.IGNORECASE)
_RUNS_AS = lazyre.compile(r"^`?\s+(?:runs?\s+)?as\s+an?\b|^`?\s+(?:client|library|package|sdk)\b", re.IGNORECASE)

# Another repository named around the mention: "in `acme/other`", "owned by the Documentation repo".
_OTHER_REPO = lazyre.compile(
    r"\b(?:(?:in|from|at)\s+(?:the\s+)?`?[A-Za-z0-9_-]+/[A-Za-z0-9_-]+`?\s+repo(?:sitory)?\b|"
    r"(?:owned\s+by|lives?\s+in|in|from)\s+the\s+[*_`]*(?!same\b|root\b|main\b|this\b|repo\b)[\w.-]+[*_`]*\s+repo(?:sitory)?\b|"
    r"(?:another|other|separate|sibling|external|upstream|downstream)\s+repo(?:sitor(?:y|ies))?\b|"
    r"\b(?!this\b|the\b|our\b|same\b|each\b)[\w-]+\s+repo(?:sitory)?'s\b|"
    r"\brepo(?:sitory)?\b[^.;]{0,40}`[A-Za-z0-9_-]+/[A-Za-z0-9_-]+`|"
    r"(?:product|contributing|consumer|downstream|application|app|demo|starter|docs|documentation|website)\s+"
    r"repo(?:sitor(?:y|ies))?\b|"
    r"\bat\s+(?:the|a|its)\s+pinned\s+(?:sha|commit|ref|tag|version)\b|"
    r"\b(?:live|lives|living|are|is|kept|found)\s+in\s+\[`?[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+`?\]\(https?://|"
    # "`Sources/MoqFFI/Generated.swift` in the resolved `moq-swift` checkout": a dependency's own tree
    r"`[^`]*`\s+in\s+(?:the\s+)?upstream\b|"
    r"\bin\s+(?:the|a|its|your)\s+(?:resolved\s+|local\s+|installed\s+|vendored\s+)?`[\w.@/-]+`\s+"
    r"(?:checkout|clone|package|crate|gem|module|dependency|sdk)\b)",
    re.IGNORECASE)
# "imported from the former `cloudflare/workerd-cxx` repository": the span is the repository's name.
_REPO_NAMED = lazyre.compile(r"^`?\s*(?:repo(?:sitory)?|fork)\b", re.IGNORECASE)
# "`docs/x.md` in `acme/tools`": the clause after the mention names where it is; the caller checks that
# `acme/tools` is not a path of the workspace (then it is a repository).
IN_OTHER_PLACE = lazyre.compile(r"^`?\s+in\s+`([A-Za-z0-9_-]+)/([A-Za-z0-9_.-]+)`")

# "if branch-context files exist (`x`)", "`x` (if any)": present only sometimes.
_CONDITIONAL_BEFORE = lazyre.compile(r"\b(?:if|when|where|unless|whether)\b[^.;]{0,60}?\b(?:exists?|present|available|any)\b"
                                 r"[^.;]{0,20}$|\bif\s+(?:you(?:'re|\s+are)\s+)?(?:not\s+)?using\b(?:[^.;]|\.(?=\w)){0,80}$"
                                 # "If a README lists `x`, it must exist": a case made up with an indefinite article
                                 r"|\bif\s+(?:a|an|any|some)\s+\w+(?:\s+\w+){0,3}\s*$"
                                 # "If your issue number is `1238`, you read `issue-1238.md`": a case made up
                                 r"|\bif\s+your\s+\w+(?:\s+\w+){0,2}\s+(?:is|are)\s+[^.;]{0,40}$",
                                 re.IGNORECASE)
_EXISTS_IN = lazyre.compile(r"\b\w+\s+(?:exists?|is\s+present|are\s+present)\s+(?:in|under|inside|within)\s+`?$",
                         re.IGNORECASE)
# "check for `x`", "look for `x`": whether it is there is the question.
_CHECKED_BEFORE = lazyre.compile(r"\b(?:check(?:s|ing)?\s+(?:for|whether|if)|look(?:s|ing)?\s+for|search(?:es|ing)?\s+for)\b"
                             r"(?:(?!\.\s)[^;:]){0,60}$", re.IGNORECASE)
# "Past exploration of Y", "the handler for X": a template line, with placeholder letters for nouns.
_PLACEHOLDER_NOUN = lazyre.compile(r"\b(?:of|for|about|on|with|from)\s+[XYZ]\b(?![\w.-])")
# "For projects using Pino, see `x`": written for some projects, not necessarily this one.
_FOR_PROJECTS = lazyre.compile(r"\b(?:for|in)\s+(?:projects?|repos?|repositories|apps?|codebases?|services?)\s+"
                           r"(?:that\s+use|using|with|which\s+use)\b", re.IGNORECASE)
_CONDITIONAL_AFTER = lazyre.compile(r"^\W{0,3}\s*\(?\s*(?:if|when)\s+(?:it\s+|one\s+|they\s+)?(?:exists?|is\s+present|present|any|"
                                r"available)\b|^\W{0,3}\s*\(optional\)", re.IGNORECASE)

# Headings or parent items announcing examples, conventions, or generated things.
_EXAMPLE_HEADING = lazyre.compile(
    r"\b(?:examples?|samples?|illustrat\w*|naming|conventions?|good\s+vs\.?\s+bad|do'?s\s+and\s+don'?ts|"
    r"anti-?patterns?|correct|incorrect|templates?|placeholders?)\b", re.IGNORECASE)
# (and a heading or lead-in that lists what a step outputs: "### Output Products", "Outputs:", "Output files")
_GENERATED_PARENT = lazyre.compile(
    r"\b(?:(?:auto-?)?generated|build\s+outputs?|artifacts|temporary|gitignored|auto-?created)\b"
    r"|^\W*(?:\d+[.)]\s*)?(?:outputs|output\s+(?:products?|files?|artifacts?|locations?))\W*$", re.IGNORECASE)
# "**Save the document:**", "Write the completed review to local files:", "Export the results to:": an imperative
# lead-in that stores what the step produced; the list under it names the files it writes.
_STORE_LEAD = lazyre.compile(r"^\W*(?:\d+[.)]\s*)?(?:save|write|store|export|persist|dump)\b[^.:]{0,60}:\W*$",
                         re.IGNORECASE)
# "### Where to Extract To", "## Where to put new code": a section of destinations for code not written yet.
# (Not "## Where To Look", "Where to find things": a section of what is there.)
_WHERE_TO_HEADING = lazyre.compile(r"^\W*where\s+(?:to\s+(?:extract|put|place|add|create|move|save|store|write)\b|"
                               r"(?:do(?:es)?\s+)?new\s+\w+\s+go(?:es)?\b)", re.IGNORECASE)
# "## Affected Files (Expected)", "### Planned files", "## Files to Create": what a change will touch or make
_PLANNED_HEADING = lazyre.compile(r"\((?:expected|planned|proposed|tentative)\)|^\W*(?:planned|proposed|expected|new)\s+files?\b|"
                              r"\bfiles?\s+to\s+(?:create|add|write)\b", re.IGNORECASE)
# "This generates reports in `jscpd-report/`:": a lead-in saying a tool writes what the list names.
_PRODUCES_LEAD = lazyre.compile(r"^\W*(?:this|it|the\s+(?:command|tool|script|build|run|task))\s+(?:generates|produces|"
                            r"writes|outputs|emits|creates)\b", re.IGNORECASE)
# "You may create additional files in `x/` as needed:", "You maintain these files:": a list or table under it
# names files the agent makes.
_AGENT_MAKES = lazyre.compile(r"\b(?:you|agents?|claude|the\s+(?:ai|agent|assistant|model))\b[^.;:]{0,30}?\b"
                          r"(?:create|generate|write|maintain|keep)s?\b", re.IGNORECASE)
# "- **Examples**: `references/finance.md` for ..., `references/api_docs.md` for ...": every path of the item.
_EXAMPLES_LABEL = lazyre.compile(r"^\s*(?:[-*+]|\d+[.)])?\s*(?:\*\*|__)?(?:e\.\s?g\.|examples?|for\s+example|samples?)"
                             r"(?:\*\*|__)?\s*[:：]", re.IGNORECASE)
# "A `scripts/rotate_pdf.py` script would be helpful to store in the skill": hypothetical.
_WOULD_BE = lazyre.compile(r"^`?\W{0,3}(?:[\w-]+\s+){0,6}would\s+be\s+(?:helpful|useful|good|nice|handy|valuable)\b",
                       re.IGNORECASE)
# "... then run focused validation such as:": the list below it holds examples.
_EXAMPLES_LEAD = lazyre.compile(r"\b(?:such\s+as|for\s+(?:example|instance)|e\.\s?g\.|examples?|like)\W*:\s*$",
                            re.IGNORECASE)
# "| `archive.md` | Older entries | Created during daily housekeeping |": another cell of its row says so.
_MADE_CELL = lazyre.compile(r"^\W*(?:auto-?)?(?:created|generated|written|produced)\b", re.IGNORECASE)

# "Toolchain is pre-installed in the VM: ... (`apps/x/bin/`)": put there by an install step.
_INSTALLED_BEFORE = lazyre.compile(r"\b(?:pre-?installed|installed|downloaded|fetched)\b|"
                               r"\bthe\s+(?:built|compiled|bundled|generated)\s+\w+", re.IGNORECASE)

_HEADING = lazyre.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_BOLD_LABEL = lazyre.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*|__)(.+?)(?:\*\*|__)\s*[:：]?\s*$")
_LIST_ITEM = lazyre.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+")


@dataclass(frozen=True)
class LineContext:
    headings: tuple[str, ...]
    """The headings above the line, outermost first (the nearest are the last)."""
    parents: tuple[str, ...]
    """The first lines of the list items the line is nested under, outermost first."""
    item: str
    """The line's list item's first line (the line itself when it starts an item), or ""."""
    table_header: str = ""
    """For a row of a table, the table's header row, else ""."""
    lead: str = ""
    """For a list item or table row, the paragraph line ending in ":" right above its list or table, else ""."""
    contrast: bool = False
    """Whether the section the line is in (down to the next heading) marks something as wrong (❌, Bad:): only
    then is a bare tick (✅) a mark of the right way rather than of work done."""


# A line that opens a block of its own rather than continuing the paragraph above: a list item, heading, table
# row, quote, fence, HTML or a thematic break.
_BLOCK_START = lazyre.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|#{1,6}(?:\s|$)|\||>|```|~~~|<|(?:[-*_]\s*){3,}$)")
_FENCE = lazyre.compile(r"^\s*(?:```|~~~)")
_QUOTED = lazyre.compile(r"^\s{0,3}>\s?")


def _unquoted(line: str) -> str:
    """A wrapped line's text without its indent or a block quote's marker."""
    m = _QUOTED.match(line)
    return (line[m.end():] if m else line).strip()
_WRAP_LINES = 3
"""How many soft-wrapped lines a sentence may span before and after the mention's line."""


# The markers of a block a tool manages in a hand-written file: an HTML comment with BEGIN / START and one with
# END, as a word of their own or after a colon or underscore (`<!-- OPENSPEC:START -->`, `<!-- BEGIN_NX -->`).
_BLOCK_MARK = lazyre.compile(r"<!--[^>]*?(?<![A-Za-z])(BEGIN|START|END)(?![a-z])[^>]*-->", re.IGNORECASE)


# A custom element's own line (`<claude-mem-context>`, `<laravel-boost-guidelines>`): a tool wraps its text so.
_TAG_OPEN = lazyre.compile(r"^\s*<([a-z][a-z0-9]*(?:-[a-z0-9]+)+)(?:\s[^>]*)?>\s*$")
# "<!-- This section is auto-generated by claude-mem. -->", "<!-- AUTO-GENERATED from x. DO NOT EDIT -->"
_GENERATED_NOTE = lazyre.compile(r"<!--[^>]*\b(?:auto-?generated|generated\s+by|do\s+not\s+edit)\b", re.IGNORECASE)


def generated_regions(lines: list[str]) -> list[tuple[int, int, str]]:
    """(first, last, marker) of the runs of lines a tool writes into a hand-written file and rewrites on its next
    update (lines strictly between first and last): a block between HTML comments that say BEGIN or START and
    END (`<!-- BEGIN BEADS INTEGRATION -->`, `<!-- OPENSPEC:START -->`), a custom element holding a comment that
    says it is generated (`<claude-mem-context>` ... `<!-- auto-generated by claude-mem -->` ...
    `</claude-mem-context>`)."""
    out: list[tuple[int, int, str]] = []
    opened: tuple[int, str] | None = None
    tag: tuple[int, str] | None = None
    noted = False
    for n, line in enumerate(lines):
        if "<" not in line:
            continue
        if "<!--" in line:
            m = _BLOCK_MARK.search(line)
            if m is not None:
                if m.group(1).upper() in ("BEGIN", "START"):
                    opened = (n, m.group(0).strip())
                elif opened is not None:
                    out.append((opened[0], n, opened[1]))
                    opened = None
                continue
            if _GENERATED_NOTE.search(line):
                # (outside an element the note speaks of the whole file, which the repository often generates
                # from its own sources, `<!-- AUTO-GENERATED from docs/ai-setup/x.md -->`: its text is still the
                # repository's to fix, there)
                noted = noted or tag is not None
                continue
        t = _TAG_OPEN.match(line)
        if t is not None and tag is None:
            tag, noted = (n, t.group(1)), False
        elif tag is not None and line.strip() == f"</{tag[1]}>":
            if noted:
                out.append((tag[0], n, f"<{tag[1]}>"))
            tag = None
    return out


def in_region(regions: list[tuple[int, int, str]], i: int) -> str | None:
    for start, stop, marker in regions:
        if start < i < stop:
            return marker
    return None


class FileContext:
    """Line contexts of one markdown body (0-based lines of the body), computed in one pass on first use."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self._ctx: list[LineContext] | None = None
        self._joins: list[bool] | None = None
        self._blocks: list[tuple[int, int, str]] | None = None

    def _continues(self) -> list[bool]:
        """For each line, whether it soft-wraps the paragraph of the line above (markdown joins the two)."""
        if self._joins is None:
            out = []
            fenced = False
            prev_open = False  # the line above is paragraph text that a next line may continue
            prev_quote = False  # the same, inside a block quote
            for line in self.lines:
                text = line.rstrip("\r")
                if _FENCE.match(text):
                    fenced = not fenced
                    out.append(False)
                    prev_open = False
                    continue
                blank = not text.strip()
                quoted = _QUOTED.match(text)
                if quoted:
                    # "> `a` **and** `b` are both\n> **deleted**": a quote's lines wrap its paragraph too
                    body = text[quoted.end():]
                    out.append(not fenced and prev_quote and bool(body.strip()) and not _BLOCK_START.match(body))
                    prev_quote = not fenced and bool(body.strip()) and body.lstrip()[:1] not in ("#", "|", "<")
                    prev_open = False
                    continue
                prev_quote = False
                starts = _BLOCK_START.match(text) is not None
                out.append(not fenced and prev_open and not blank and not starts)
                prev_open = not fenced and not blank and text.lstrip()[:1] not in ("#", "|", ">", "<")
            self._joins = out
        return self._joins

    def sentence(self, i: int, line: str) -> tuple[str, int]:
        """The sentence ``line`` (body line ``i``) is part of, when markdown soft-wraps it over several lines
        ("`packages/core` and\n`workflow-ui` are **deleted**"), and where ``line`` starts in it: (``line``, 0)
        when the line holds its sentences whole."""
        joins = self._continues()
        if not 0 <= i < len(joins) or self.lines[i].rstrip("\r") != line:
            return line, 0
        start = i
        while start > 0 and joins[start] and i - start < _WRAP_LINES:
            start -= 1
        stop = i
        while stop + 1 < len(joins) and joins[stop + 1] and stop - i < _WRAP_LINES:
            stop += 1
        if start == i and stop == i:
            return line, 0
        before = " ".join(_unquoted(t) for t in self.lines[start:i])
        cut = 0
        for m in _SENTENCE_END.finditer(before):
            if not (before[m.start()] == "." and _ABBREV.search(before[:m.start() + 1])):
                cut = m.end()
        before = before[cut:]
        after = " ".join(_unquoted(t) for t in self.lines[i + 1:stop + 1])
        if after and not re.search(r"[.;!?:]\s*$", line):
            m = _SENTENCE_END.search(after)
            after = " " + (after[:m.end()].rstrip() if m else after)
        else:
            after = ""
        lead = before + " " if before else ""
        return lead + line + after, len(lead)

    def generated_block(self, i: int) -> str | None:
        """The opening marker of the tool-written block body line ``i`` is in (see `generated_regions`), if any."""
        if self._blocks is None:
            self._blocks = generated_regions(self.lines)
        return in_region(self._blocks, i)

    def at(self, i: int) -> LineContext:
        if self._ctx is None:
            self._ctx = _contexts(self.lines)
        if 0 <= i < len(self._ctx):
            return self._ctx[i]
        return LineContext((), (), "")


def _contexts(lines: list[str]) -> list[LineContext]:
    out: list[LineContext] = []
    heads: list[tuple[int, str]] = []
    items: list[tuple[int, str]] = []  # (indent, first line) of the open list items
    label = ""  # a bold label line (`**Generated directories:**`) heads what follows until a blank line
    lead = ""  # a paragraph line ending in ":" heads the list or table right below it ("You may create ...:")
    lead_indent = 0
    current = ""
    header = ""  # the header row of the table being read
    prev = ""
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("|"):
            if _TABLE_RULE.match(stripped) and prev.strip().startswith("|"):
                header = prev
        else:
            header = ""
        prev = line
        h = _HEADING.match(line)
        if h:
            level = len(h.group(1))
            while heads and heads[-1][0] >= level:
                heads.pop()
            heads.append((level, h.group(2)))
            items.clear()
            label = current = lead = ""
            lead_indent = 0
            out.append(LineContext(tuple(t for _, t in heads), (), ""))
            continue
        if not line.strip():
            label = ""
            out.append(LineContext(tuple(t for _, t in heads), tuple(t for _, t in items), current))
            continue
        m = _LIST_ITEM.match(line)
        if m:
            indent = len(m.group(1).expandtabs(4))
            if indent < lead_indent:
                lead, lead_indent = "", 0  # (out of the list a nested lead-in heads)
            while items and items[-1][0] >= indent:
                items.pop()
            parents = tuple(t for _, t in items)
            items.append((indent, line))
            current = line
        else:
            indent = len(line) - len(line.lstrip())
            if indent == 0 and not line.lstrip().startswith("|"):
                items.clear()
                current = ""
                b = _BOLD_LABEL.match(line)
                if b:
                    label = line
                lead = line if not b and line.rstrip().endswith(":") else ""
                lead_indent = 0
            elif current and line.rstrip().endswith(":") and not line.lstrip().startswith("|"):
                # a paragraph of a list item that heads a nested list ("   **Common Patterns by Technology**:")
                lead, lead_indent = line, indent
            parents = tuple(t for _, t in items[:-1]) if current else ()
        heads_t = tuple(t for _, t in heads) + ((label,) if label else ())
        under = lead if lead is not line and (m or stripped.startswith("|") or current) else ""
        out.append(LineContext(heads_t, parents, current, header if stripped.startswith("|") else "", under))
    return _mark_contrast(lines, out)


_WRONG_TICK = lazyre.compile(r"[❌✗✘🚫⛔👎]")


def _mark_contrast(lines: list[str], out: list[LineContext]) -> list[LineContext]:
    """Sets `contrast` on the lines of each section (heading to heading) that marks something as wrong."""
    start = 0
    for i in range(len(lines) + 1):
        if i == len(lines) or (i > start and _HEADING.match(lines[i])):
            if any(_WRONG_TICK.search(x) or _BAD_MARK.match(x) for x in lines[start:i]):
                for k in range(start, i):
                    out[k] = replace(out[k], contrast=True)
            start = i
    return out


_TABLE_RULE = lazyre.compile(r"^\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?$")
# Header cells of a table of examples: "Bad (User-Specific) | Good (Portable)", "Wrong | Right", "Avoid | Prefer".
# (Not "Old | New" or "Before | After": a table of moves names paths that must exist in its new column.)
_BAD_HEADER = lazyre.compile(r"^\W*(?:bad|wrong|incorrect|avoid|don'?t|anti-?pattern)\b", re.IGNORECASE)
_GOOD_HEADER = lazyre.compile(r"^\W*(?:good|right|correct|do|prefer(?:red)?|examples?)\b", re.IGNORECASE)


_EXAMPLE_CELL = lazyre.compile(r"\|\s*(?:\*\*|__)?(?:e\.g\.|examples?)\s*(?:\*\*|__)?\s*[:：]", re.IGNORECASE)
_BRANCH_BEFORE = lazyre.compile(r"\bbranch(?:es)?\s+(?:names?|naming|prefix(?:es)?|patterns?|like|such\s+as)\b[^.;]{0,30}$"
                            r"|\bbranch\b[^.;]{0,40}?\b(?:named|called)\s*`?$"
                            r"|\bgit\s+(?:checkout\s+-b|switch\s+-c|branch)\s*$", re.IGNORECASE)
# "Build project configuration is loaded from:" over a list: where a tool looks for its file, the first found wins
_LOOKUP_LEAD = lazyre.compile(r"\b(?:is|are)\s+(?:loaded|read|resolved|looked\s+up|searched)\s+(?:from|in)\b[^.]*:\s*$|"
                          r"\b(?:looks?|searches)\s+for\b[^.]*\bin\s+(?:this\s+)?order\b[^.]*:\s*$", re.IGNORECASE)
_IMPORTED_AS = lazyre.compile(r"\bimported\s+as\s*$", re.IGNORECASE)
_MODULE_FROM = lazyre.compile(r"\b(?:import\w*|use|uses|using|require)\b[^.;]{0,40}\bfrom\s*$", re.IGNORECASE)


def _is_dir_mention(text: str) -> bool:
    """A path written as a directory: a trailing `/`, or a last segment without an extension."""
    return text.endswith("/") or ("/" in text and "." not in text.rsplit("/", 1)[-1])


def _table_column(line: str, col: int) -> int:
    """The 0-based cell of a table row that column ``col`` is in."""
    body = line.strip()
    lead = len(line) - len(line.lstrip()) + (1 if body.startswith("|") else 0)
    return line[lead:col].count("|")


# "Examples", "Example Filename", "Sample output": a column of examples (not "Example app", which names one)
# "Destination (in `android/app/src/main/assets/`)", "Output", "Generated file": a column of what a build writes
_MADE_COLUMN = lazyre.compile(r"^\W*(?:destinations?|outputs?|generated(?:\s+files?)?|copied\s+to|written\s+to)\b",
                          re.IGNORECASE)
_EXAMPLES_COLUMN = lazyre.compile(r"^\W*(?:examples?|e\.g\.|samples?)(?:\s+[\w-]+){0,2}\W*$", re.IGNORECASE)


def _example_column(row: str, col: int, header: str) -> str | None:
    """CONTRAST or EXAMPLE when the mention is in a column of a table of examples (its header cell says Bad /
    Good, Wrong / Right, Avoid / Prefer), else None."""
    cells = [c.strip() for c in header.strip().strip("|").split("|")]
    i = _table_column(row, col)
    cell = cells[i] if i < len(cells) else ""
    if _EXAMPLES_COLUMN.match(cell):
        return EXAMPLE  # a column headed "Examples"
    if _MADE_COLUMN.match(cell):
        return CREATED  # a column headed "Destination": where a build copies or writes things
    if not any(_BAD_HEADER.match(c) for c in cells) or not any(_GOOD_HEADER.match(c) for c in cells):
        return None  # otherwise a table of examples names both sides
    if _BAD_HEADER.match(cell):
        return CONTRAST
    if _GOOD_HEADER.match(cell):
        return EXAMPLE
    return None


_ABBREV = lazyre.compile(r"(?:\b[eE]\.\s?[gG]|\b[iI]\.\s?[eE]|\b[zZ]\.\s?[bB]|\bp\.\s?ex|\betc|\bvs|\bcf)\.$")


def _clause_before(line: str, col: int) -> str:
    """The words before the mention back to the nearest clause boundary (abbreviations like "e.g." are not
    boundaries; the mention's own backtick or bracket is dropped)."""
    before = line[:col]
    last = 0
    for m in _BOUNDARY.finditer(before):
        if before[m.start()] == "." and _ABBREV.search(before[:m.start() + 1]):
            continue
        last = m.end()
    return before[last:].rstrip("`[*_")


def _sentence_before(line: str, col: int) -> str:
    before = line[:col]
    last = 0
    for m in _SENTENCE_END.finditer(before):
        if before[m.start()] == "." and _ABBREV.search(before[:m.start() + 1]):
            continue
        last = m.end()
    return before[last:].rstrip("`[*_")


def _clause_after(line: str, end: int) -> str:
    after = line[end:].lstrip("`]*_")
    if after.startswith("("):  # a link target's closing paren, or "(generated)"
        pass
    return after


def classify(line: str, col: int, end: int, ctx: LineContext) -> Purpose:
    """Why ``line`` mentions the path at [col, end) (code points; the path as written, without its backticks or
    link brackets)."""
    return _classify(line, col, end, ctx)


@lru_cache(maxsize=16384)
def _classify(line: str, col: int, end: int, ctx: LineContext) -> Purpose:
    before = _clause_before(line, col)
    after = _clause_after(line, end)
    item = ctx.item or line
    # 1. counter-examples: the author says it is not there, or not the way to do it
    if _BAD_MARK.match(item) or (line.lstrip().startswith("|") and _MARK_IN_ROW.search(line)
                                 and _MARK_IN_ROW.search(line).group(1) in "❌✗✘🚫"):
        return Purpose(CONTRAST, "a counter-example (its list item or table row is marked wrong: ❌, Bad:, Don't:)")
    if line.lstrip().startswith("|") and _EXAMPLE_CELL.search(line):
        return Purpose(EXAMPLE, "its table row is marked as an example (a cell starting with Example:)")
    if ctx.lead and _PATTERNS_LEAD.search(ctx.lead):
        return Purpose(EXAMPLE, f"in a list of patterns (its lead-in says {_quote(ctx.lead)}): what an ignore file "
                                "or a glob matches, not a file")
    if ctx.table_header:
        got = _example_column(line, col, ctx.table_header)
        if got is not None:
            if got == CREATED:
                return Purpose(got, "in a column of what a build writes or copies (its header says "
                                    f"{_quote(ctx.table_header)})")
            return Purpose(got, "in the "
                           + ("wrong" if got == CONTRAST else "right") + " column of a table of examples (its header "
                           f"says {_quote(ctx.table_header)})")
    if ctx.headings and NEGATIVE_HEADING.search(ctx.headings[-1]):
        return Purpose(CONTRAST, f"under {_quote(ctx.headings[-1])}, which lists what not to do")
    if _NEGATED.search(before):
        return Purpose(CONTRAST, "negated right before the path (not / never / instead of / rather than)")
    if _NOT_COMMITTED.search(_sentence_before(line, col)):
        return Purpose(CREATED, "the sentence says it is never committed: a local file of each user's")
    if _ABSENT_AFTER.match(after):
        return Purpose(CONTRAST, "the text after the path says it does not exist or was removed")
    head = _list_head(line, col)
    if _LIST_DENIED.search(head):
        return Purpose(CONTRAST, "one of a list the sentence denies (No `a`, `b` ...)")
    # 2. examples (a bare tick, "- ✅ `x.py` - currency types", is work done unless the section also marks
    # what is wrong: a list of deliverables names real files)
    good = _GOOD_MARK.match(item)
    worded = good is not None and _WORD.search(good.group(0)) is not None  # "Good:", not a bare tick
    if good is not None and not ctx.contrast and not worded:
        good = None
    if good is not None or (line.lstrip().startswith("|") and _MARK_IN_ROW.search(line) and ctx.contrast):
        return Purpose(EXAMPLE, "an example of the right way (its list item or table row is marked ✅, Good:)",
                       "" if worded else "listed")
    if _EXAMPLE_BEFORE.search(_sentence_before(line, col)) and not _CLAIM_VERB_AFTER.match(after):
        return Purpose(EXAMPLE, "introduced as an example (e.g., for example, such as, like) and nothing is said "
                                "about the file itself", "beside")
    if _EXAMPLE_AFTER.match(after):
        return Purpose(EXAMPLE, "followed by an example marker (`x`, e.g. ...)")
    if _in_example_aside(line, col):
        return Purpose(EXAMPLE, "inside a parenthesis that opens with an example marker ((e.g. if the branch is "
                                "`x`, the file is `y`))")
    if _FORMAT_AS.search(before):
        return Purpose(EXAMPLE, "the form to write something in (\"Reference specs as `specs/auth/spec.md`\")")
    if _TO_PATTERN.match(line, end):
        return Purpose(EXAMPLE, "mapped by an arrow to a pattern with a placeholder (`docs/topic.md` → "
                                "`docs/topic/<subtopic>.md`): both sides show a layout rule")
    if _LIST_PER.search(head):
        return Purpose(EXAMPLE, "one of the files each one of a kind has (Manifests per service: `x`, `y`): a "
                                "convention, not one file")
    if _EXAMPLES_LABEL.match(item):
        return Purpose(EXAMPLE, "its line or list item is labelled as examples (**Examples**: ...)")
    if _WOULD_BE.match(after):
        return Purpose(EXAMPLE, "the text says it would be useful: a file one could make, not one that is there")
    if ctx.lead and _EXAMPLES_LEAD.search(ctx.lead):
        return Purpose(EXAMPLE, f"listed under {_quote(ctx.lead)}, which introduces examples")
    # 3. something created, written or generated there
    if _CREATED_BEFORE.search(before):
        return Purpose(CREATED, "the object of a verb that creates or writes it (create, generate, write to, "
                                "output to, save to)")
    if _RECORDED_IN.search(line, 0, col):
        return Purpose(CREATED, "in parentheses after a verb that records something (document them (`x`)): where "
                                "the record goes")
    if _FORMAT_AFTER.match(after):
        return Purpose(EXAMPLE, "the text describes the format of such a file (`x.json` schema)")
    if _OUTPUT_AFTER.match(after):
        return Purpose(CREATED, "the text after the path calls it output (`x/` as wasm-pack output)")
    if _CREATED_AFTER.match(after):
        return Purpose(CREATED, "the text after the path says it is created, generated or written")
    if _MAKE_IMPERATIVE.match(_sentence_before(line, col)) or _MAKE_IMPERATIVE.match(before):
        return Purpose(CREATED, "the object of an imperative that makes it (Write `x`, Create a new `x`)")
    if _PLANNED_BEFORE.search(line, 0, col) or (ctx.lead and _PLANNED_LEAD.search(ctx.lead)
                                                   and _open_paren(line, col) >= 0):
        return Purpose(CREATED, "a planned file: the text calls it a target (target `router.rs`), or its table's "
                                "lead-in says the names in parentheses are targets")
    if _LOG_NAME.search(line[col:end]):
        return Purpose(CREATED, "a log, lock, pid or socket file or a log directory (`backend/log`, `app.log`, "
                                "`app.lock`): written at run time")
    if _REMOVED_BY.search(line[:col]):
        return Purpose(CREATED, "a command on the line removes it (rm): a temporary path")
    if _WILL_MOVE_TO.search(before):
        return Purpose(CREATED, "where something should or will move (\"Shared UI should move to `packages/ui`\"): "
                                "a place to come")
    if _NEW_ONE_GOES.search(_sentence_before(line, col)):
        return Purpose(CREATED, "where a new one goes (\"A test for `x` goes in `y`\"): a convention shown on one "
                                "case")
    if _is_dir_mention(line[col:end]) and _DEST_BEFORE.search(before):
        return Purpose(CREATED, "a directory named as where things are put (capture, record, store, add ... in)",
                       "moved")
    # (a link is written to be followed: "- Doc: [backend-services.md](Doc-services-usage)" under an item about a
    # generated client is the client's documentation, not a generated file)
    link = line[max(0, col - 2):col] == "]("
    for p in ctx.parents[-1:] + ctx.headings[-1:] + ((ctx.lead,) if ctx.lead else ()):
        if link:
            break
        if _GENERATED_PARENT.search(p) and not _EXAMPLE_HEADING.search(p):
            return Purpose(CREATED, f"listed under {_quote(p)}, which is about generated or runtime files", "moved")
        if _AGENT_MAKES.search(p) and p.rstrip().endswith(":"):
            return Purpose(CREATED, f"listed under {_quote(p)}, which says the agent makes these files")
        if _STORE_LEAD.match(p):
            return Purpose(CREATED, f"listed under {_quote(p)}, which says the step writes these files")
        if _PRODUCES_LEAD.search(p) and p.rstrip().endswith(":"):
            return Purpose(CREATED, f"listed under {_quote(p)}, which says a tool writes these files")
    for h in ctx.headings[-2:]:  # (a bold label, "**Rust**:", may head the lines below the section's heading)
        if _WHERE_TO_HEADING.match(h):
            return Purpose(CREATED, f"under {_quote(h)}, which says where new code goes")
        if _PLANNED_HEADING.search(h):
            return Purpose(CREATED, f"under {_quote(h)}, which lists files a change expects to touch or make")
    if line.lstrip().startswith("|"):
        cells = line.strip().strip("|").split("|")
        here = _table_column(line, col)
        if any(_MADE_CELL.match(c) for i, c in enumerate(cells) if i != here):
            return Purpose(CREATED, "another cell of its table row says it is created or generated")
    if _INSTALLED_BEFORE.search(_sentence_before(line, col)):
        return Purpose(CREATED, "the sentence says it is installed, downloaded or built there (the built frontend)")
    # 4. history: renamed, moved, removed
    if _HISTORY_BEFORE.search(before) or _HISTORY_AFTER.match(after) or _HISTORY_PREDICATE.match(after):
        return Purpose(HISTORY, "the clause says it was renamed, moved, removed or replaced")
    if _LIST_GONE.search(head):
        return Purpose(HISTORY, "one of a list its lead says was removed (Removed in v3: `a`, `b`)")
    if _OLD_ASIDE.search(line, 0, col):
        return Purpose(HISTORY, "in a parenthesis naming the old setup or the old paths (the old two-config setup "
                                "(`x` + `y`), pre-monorepo paths (`x`, ...))")
    if _PRIOR_TEXT.search(_sentence_before(line, col)):
        return Purpose(HISTORY, "the sentence tells what an earlier version of the text said")
    if ctx.headings and _HISTORY_HEADING.search(ctx.headings[-1]):
        return Purpose(HISTORY, f"under {_quote(ctx.headings[-1])}, which tells the history")
    if _PLACEHOLDER_PREDICATE.match(after):
        return Purpose(CREATED, "the sentence calls it a placeholder: a place for what is to come")
    # 5. present only sometimes
    sentence = _sentence_before(line, col)
    # ("check if a corresponding mock exists in `backend/mock/`": what may exist is something else, and the path is
    # the place it is looked for in)
    place = _EXISTS_IN.search(line, 0, col) is not None
    if not place and (_CONDITIONAL_BEFORE.search(sentence) or _CONDITIONAL_AFTER.match(after)):
        return Purpose(OPTIONAL, "the sentence makes it conditional (if it exists, when present, if any)")
    if not place and _CHECKED_BEFORE.search(before):
        return Purpose(OPTIONAL, "the text checks whether it is there (check for, look for)")
    if ctx.lead and _LOOKUP_LEAD.search(ctx.lead):
        return Purpose(OPTIONAL, f"listed under {_quote(ctx.lead)}: the places a tool looks for its file, in order")
    if _FOR_PROJECTS.search(line[:col]):
        return Purpose(OPTIONAL, "the sentence is written for some projects (for projects using ...), not this one")
    if _PLACEHOLDER_NOUN.search(line):
        return Purpose(EXAMPLE, "the line is a template: it has placeholder letters for nouns (of X, for Y)")
    # not a path at all: a git branch ("Branch naming: `ui-v2/x`"), a module specifier ("`fn` from `pkg/test`")
    if _BRANCH_BEFORE.search(sentence):
        return Purpose(EXAMPLE, "the sentence is about git branch names")
    if _HTTP_METHOD_BEFORE.search(line, 0, col):
        return Purpose(EXTERNAL, "an HTTP request's path (GET `sitemap.xml`): a route the server answers, not a file")
    if _IMPORTED_AS.search(before):
        return Purpose(EXTERNAL, "an import path (imported as `pkg/assert`): the name code imports, not a path")
    if "." not in line[col:end].rsplit("/", 1)[-1] and _MODULE_FROM.search(before):
        return Purpose(EXTERNAL, "an import's module specifier (use `x` from `pkg/sub`)")
    if "/" not in line[col:end] and _PACKAGE_EXT.search(line[col:end]) and any(
            _DEPENDENCIES.search(t) for t in (ctx.table_header, *ctx.headings[-1:], ctx.lead) if t):
        return Purpose(EXTERNAL, "a package's name in a list or table of dependencies (`spectral.js`)")
    if "/" not in line[col:end] and _PACKAGE_EXT.search(line[col:end]) and _RUNS_AS.match(after):
        return Purpose(EXTERNAL, "a library the text says runs as something (`revolt.js` as a client)")
    # Claude Code's auto memory (~/.claude/projects/<project>/memory/): `MEMORY.md`, and the topic files a line, its
    # list's lead-in or heading places in the memory directory ("Read all topic files in the auto memory directory:")
    name = line[col:end]
    if "/" not in name.rstrip("/") and (name == "MEMORY.md" or any(
            _MEMORY_PLACE.search(t) for t in (line, ctx.lead, *ctx.parents[-1:], *ctx.headings[-1:]) if t)):
        return Purpose(EXTERNAL, "a file of Claude Code's auto memory (MEMORY.md, or a file the text places in the "
                                 "memory directory): each user's own, outside the repository")
    # 6. another repository
    if _REPO_NAMED.match(after) and line[col:end].count("/") == 1:
        return Purpose(EXTERNAL, "the name of a repository (`owner/name` repository)")
    if _OTHER_REPO.search(line):
        return Purpose(EXTERNAL, "the line names another repository")
    return Purpose(CLAIM, "named as a file of this workspace")


# A parenthesis that opens with an example marker: everything in it illustrates, up to its closing paren
# ("(e.g. if the branch is `x-0912`, the changeset file is `.changeset/x-0912.md`)"). Not a sentence that opens
# with "For example," outside parentheses: that one may point at a real file ("For example, `src/a.py` shows").
_EXAMPLE_ASIDE = lazyre.compile(r"\(\s*(?:e\.\s?g\.|for\s+(?:example|instance)\b|such\s+as\b|say\b)", re.IGNORECASE)


# "Reference specs as `specs/auth/spec.md`", "cite files as `x`": the form a reference takes
_FORMAT_AS = lazyre.compile(r"\b(?:reference|refer\s+to|cite|format|spell|write\s+(?:paths|references|links))\b[^.;:`]{0,40}"
                        r"\bas\W*$", re.IGNORECASE)

# "`docs/topic.md` → `docs/topic/<subtopic>.md`": the other side of the arrow is a pattern with a placeholder
_TO_PATTERN = lazyre.compile(r"`?\s*(?:→|->|=>|⇒)\s*`[^`]*(?:<[\w-]+>|\{[\w-]+\}|\[[\w-]+\])[^`]*`")

# The auto memory's directory or its files named as such ("auto memory directory", "MEMORY topic files", "its own
# memory directory (NOT in this repo)").
_MEMORY_PLACE = lazyre.compile(r"\bauto[- ]?memory\b|\bmemory\s+(?:dir(?:ectory)?|folder|topic\s+files?)\b|"
                           r"\bMEMORY\s+topic\b", re.IGNORECASE)

# "naming files with the feature under test (`manager_failover.rs`, ...)": a parenthesis that shows the naming
_NAMING_BEFORE = lazyre.compile(r"\b(?:nam(?:e|es|ed|ing)|call(?:ed|ing)?)\b[^.;()]{0,60}$", re.IGNORECASE)


def _in_example_aside(line: str, col: int) -> bool:
    start = _open_paren(line, col)
    return start >= 0 and (_EXAMPLE_ASIDE.match(line, start) is not None
                           or _NAMING_BEFORE.search(line, 0, start) is not None)


def _open_paren(line: str, col: int) -> int:
    """Where the parenthesis that is still open at ``col`` opens, or -1."""
    start = line.rfind("(", 0, col)
    return start if start >= 0 and ")" not in line[start:col] else -1


# "(target `router.rs`/`routes.rs`)", "planned modules `x.rs`": files the text plans, not files there
_PLANNED_BEFORE = lazyre.compile(r"\b(?:target|planned|proposed|future|upcoming)\s+(?:(?:modules?|files?|layout|names?)\s+)?"
                             r"(?:`[^`]*`\s*[/,]\s*)*`?$", re.IGNORECASE)
# "Current groups (target modules in parens):" over a table: what is in parentheses is planned
_PLANNED_LEAD = lazyre.compile(r"\b(?:target|planned|proposed|future)\b[^.:]{0,30}\bin\s+(?:parens|parentheses|brackets)\b",
                           re.IGNORECASE)


# A log file or a log directory as the path's last segment (`backend/log`, `logs/`, `server.log`), or a lock, pid
# or socket file (`ecchronos.lock`, `app.pid`): the program writes it at run time. Not a directory below it
# (`internal/log/logger.go` is source code), nor a package manager's lockfile (`Cargo.lock`), which is committed.
_LOG_NAME = lazyre.compile(r"(?:^|/)(?:logs?/?|[^/]+\.(?:log|pid|sock)|(?!(?:cargo|poetry|gemfile|composer|flake|uv|pipfile|"
                       r"mix|pubspec|podfile|cartfile|yarn|bun|package|deno|pdm|conda-lock|gradle|manifest|"
                       r"packages|paket|project\.assets|renv|pixi|shard|stack\.yaml|bundle|pnpm)\.lock$)[^/]+\.lock)$",
                       re.IGNORECASE)


# "## What Not To Add", "### Don't", "## Anti-patterns": a section of what not to do
NEGATIVE_HEADING = lazyre.compile(r"^\W*(?:(?:what|things|files)\s+not\s+to\s+(?:add|create|include|write|do|use)\b|"
                               r"don'?ts?\b|do\s+not\b|avoid\b|anti-?patterns?\b)", re.IGNORECASE)


# "GET `sitemap.xml`", "`POST /api/v1/items`": the path of an HTTP request (right before the path, upper case).
_HTTP_METHOD_BEFORE = lazyre.compile(r"\b(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+[`\"']?/?$")
# "Imagine we're implementing a new `commit3` command", "Suppose a `billing` service": a name made up for a
# walkthrough; the paths built from it later are illustrations.
# ("A new entity (say `Widget`) is built bottom-up": `say` right before the name too.)
_IMAGINE = lazyre.compile(r"\b(?:imagine|suppose|let'?s\s+say|say\s+(?:we|you)(?:'re|\s+are|\s+want)|hypothetical(?:ly)?|"
                      r"pretend)\b|[(,]\s*say\s+(?=`)", re.IGNORECASE)
_SPAN_NAME = lazyre.compile(r"`([A-Za-z_][\w-]{1,40})`")


def imagined_names(lines: list[str]) -> frozenset[str]:
    """The names a text introduces as made up ("Imagine we're implementing a new `commit3` command"), lower case."""
    out = set()
    for line in lines:
        said = _IMAGINE.search(line) if "`" in line else None
        if said:
            out.update(m.group(1).lower() for m in _SPAN_NAME.finditer(line, said.start()))
    return frozenset(out)


def built_from(segment: str, names: frozenset[str]) -> bool:
    """Whether a path segment is built from one of the made-up ``names`` (lower case): the name itself, its
    plural, or the name opening a compound (`Widget` -> `widgets.ex`, `widget_types.ex`, `WidgetList.tsx`)."""
    stem = segment.split(".")[0].lower()
    return any(stem == n or stem.startswith((n + "s", n + "_", n + "-")) or (len(n) > 3 and stem.startswith(n))
               for n in names)


# "## Adding a New Effect", "### Creating a new endpoint", "How to add a provider": a recipe whose steps name the
# files the reader is about to make (`myeffect_classes.dart`) beside the existing ones to edit.
_RECIPE_HEADING = lazyre.compile(r"^\W*(?:\d+[.)]\s*)?(?:adding|creating|add|create|writing|write)\s+(?:a\s+|an\s+)?new\b"
                             r"|\bhow\s+to\s+(?:add|create|write)\s+(?:a\s+|an\s+)?(?:new\s+)?\w", re.IGNORECASE)


def example_section(ctx: LineContext) -> str | None:
    """The heading or parent list item that puts the line in a section about examples or conventions, or in a
    recipe for making a new thing, if any: a path there may be an illustration or a file to create (the caller
    reports it as info, not as a warning)."""
    for p in ctx.parents[-1:] + ctx.headings[-2:]:
        if _EXAMPLE_HEADING.search(p):
            return _quote(p)
    if ctx.headings and _RECIPE_HEADING.search(ctx.headings[-1]):
        return _quote(ctx.headings[-1]) + ", a recipe for making a new one"
    return None


def _quote(text: str) -> str:
    t = text.strip().lstrip("#-*+ ").strip()
    return f"'{t[:60]}…'" if len(t) > 60 else f"'{t}'"


# -- confidence of a claim ---------------------------------------------------------------------------------
_SUBJECT_ITEM = lazyre.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\*\*)?`?$")
_DESCRIBED_AFTER = lazyre.compile(r"^`?(?:\*\*)?\s*(?:[:：—–]|-\s|\(|\s+-\s)")
_LABEL_BEFORE = lazyre.compile(r"(?:\*\*[^*]+\*\*|__[^_]+__)\s*\(`?$|^\s*#{1,6}\s+[^`]*`?$|^\s*\|\s*`?$")


def is_subject(line: str, col: int, end: int) -> bool:
    """Whether the mention is what its list item, table row or labelled parenthesis is about: `- `x.py`: does
    y`, `**Search** (`x.py`):`, `| `x.py` | ... |`, `## `x.py``: the author describes a file of the layout."""
    before = line[:col]
    after = line[end:]
    if _SUBJECT_ITEM.match(before) and _DESCRIBED_AFTER.match(after):
        return True
    return _LABEL_BEFORE.search(before) is not None


# -- paths another line says are another repository's ---------------------------------------------------------
_SPAN_PATH = lazyre.compile(r"`(?:\./)?([A-Za-z0-9_@.-]+(?:/[A-Za-z0-9_@.-]+)+)/?`")
# "`Documentation/web` is owned by the Documentation repo": the path, then what owns it.
_OWNED_AFTER = lazyre.compile(
    r"^\s*(?:\([^)]*\)\s*)?(?:is|are)?\s*(?:owned\s+by|maintained\s+in|lives?\s+in|belongs?\s+to|comes?\s+from)"
    r"\s+(?:the\s+)?[*_`]*[\w.-]+[*_`]*(?:\s+[*_`]*[\w.-]+[*_`]*)?\s+(?:mono)?repo(?:sitory)?\b"
    # "`packages/runtime/src/cloudflare/` in the flue monorepo" (not "in this monorepo", "in our repo")
    r"|^\s*(?:\([^)]*\)\s*)?in\s+(?:the\s+)?(?!(?:this|our|same|your|each|every)\b)[*_`]*[\w.-]+[*_`]*"
    r"\s+(?:mono)?repo(?:sitory)?\b", re.IGNORECASE)
# "the Documentation repo's `web/src/`", "(in the **`Documentation` repo**, at `Documentation/web/`)": a named
# repository, then the path in it ("that repo's `x`" may be this one: not taken).
_REPO_BEFORE = lazyre.compile(
    # (not "the repo's `docs/results/` tree": a repository unnamed is this one)
    r"(?<!\bthis\s)(?<!\bthat\s)(?<!\bour\s)(?<!\bsame\s)(?<!\beach\s)(?<!\byour\s)(?<!\bevery\s)(?<!\bthe\s)"
    r"\brepo(?:sitory)?(?:[*_`]*(?:'s|’s)\s+(?:own\s+)?|[*_`]*,?\s+(?:at|under)\s+)$", re.IGNORECASE)


def declared_external(line: str) -> list[str]:
    """The paths (code spans with a `/`) a line says belong to another repository: "Site-level pages in
    `Documentation/web` are owned by the Documentation repo", "a page belongs in the Documentation repo's
    `web/src/content/docs/`". Another line's mention of such a path, or of a path under it, is not a claim about
    this workspace (`ctxls check` reads every instruction file's lines for these)."""
    if "repo" not in line.lower() or "`" not in line:
        return []
    out = []
    for m in _SPAN_PATH.finditer(line):
        if _OWNED_AFTER.match(line[m.end():]) or _REPO_BEFORE.search(line[:m.start()]):
            out.append(m.group(1))
    return out
