#!/usr/bin/env python3
"""Generate a deterministic synthetic monorepo for benchmarking ctxls.

    python bench/gen_monorepo.py OUT_DIR [--files 20000] [--dirs 400] [--claude 500]
                                         [--skills 200] [--seed 1] [--home DIR] [--force]

Layout (defaults):

* ``--files`` small .py/.ts/.go sources (5-40 lines) spread over ``--dirs`` source
  directories under services/ packages/ apps/ libs/ tools/ infra/, depth 1-6.
* ``--claude`` instruction files: the root CLAUDE.md, CLAUDE.md in most source dirs,
  and the overflow as ``.claude/CLAUDE.md`` or ``CLAUDE.local.md``.  About a third
  contain ``@imports`` (docs/*.md, ../shared/*.md, README.md, ~/...); ~2% of the
  import references point at missing files; there are two import cycles and one
  chain deeper than the 4-hop limit.  Children repeat some parent bullets verbatim
  and some slightly altered.
* ``.claude/rules/`` at the root and in a few service roots, mixing unconditional
  rules and rules with ``paths:`` frontmatter.
* ``--skills`` skills ``.claude/skills/<name>/SKILL.md`` (most at the root, some
  nested, a few ``disable-model-invocation: true``).
* ``node_modules/`` (decoy CLAUDE.md / SKILL.md included: ctxls must skip them),
  ``dist/`` (listed in .gitignore) and a git repository (``git init``).
* A fake home (default ``OUT_DIR/../home``) with ``.claude/CLAUDE.md``, user rules
  and auto memory at ``.claude/projects/<sanitized OUT_DIR>/memory/``.

Everything random comes from one ``random.Random(seed)``, so the same arguments give
byte-identical trees (except the contents of ``.git``, written by the git binary).
Standard library only.  Importable: ``generate(...)`` returns the summary dict.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path, PurePosixPath

# --------------------------------------------------------------------------------------
# Vocabulary
# --------------------------------------------------------------------------------------

NOUNS = (
    "account address alert audit auth batch billing cache cart catalog checkout config "
    "coupon customer dashboard delivery device email event export feature feed gateway "
    "graph identity inventory invoice job ledger limit locale media metric notification "
    "order payment payout permission pipeline plan policy price profile queue quota rate "
    "receipt refund report request review risk route schedule search session settlement "
    "shipment signal sku storage stream subscription tax tenant token transfer upload "
    "usage user vendor webhook workflow"
).split()
VERBS = (
    "build check compute create decode delete encode export fetch filter format load "
    "merge normalize parse publish render resolve retry scan send sync track update "
    "validate verify"
).split()
SUBDIRS = (
    "api internal cmd pkg handlers models storage client src lib utils config core domain "
    "adapters jobs schemas middleware routes components hooks views store workers "
    "migrations proto events rpc cli testing"
).split()
# Top-level groups and the languages their directories are written in.
TOPS = {
    "services": ("go", "py"),
    "packages": ("ts",),
    "apps": ("ts",),
    "libs": ("py", "go", "ts"),
    "tools": ("py",),
    "infra": ("go", "py"),
}
MAX_DEPTH = 6  # services/<svc>/<pkg>/<sub>/<x>/<y>
PY_STDLIB = "json logging dataclasses typing datetime pathlib functools itertools re uuid".split()
PY_TYPES = "str int float bool dict list bytes".split()
TS_TYPES = ("string", "number", "boolean", "Date", "Record<string, unknown>")
GO_TYPES = "string int int64 float64 bool []byte time.Duration".split()
SECTION_TITLES = (
    "Build and test", "Code style", "Architecture", "Conventions", "Gotchas", "Workflow",
    "Security", "Testing", "Deployment", "Review checklist", "Error handling", "Performance",
    "Dependencies", "Observability", "Data model",
)
SKILL_TOOLS = ("Read", "Grep", "Glob", "Edit", "Write", "Bash(make test:*)", "Bash(git diff:*)")
DOC_TOPICS = (
    "style", "testing", "architecture", "api", "release", "onboarding", "security",
    "observability", "migrations", "glossary", "runbook", "decisions",
)


def _camel(*words: str) -> str:
    return words[0] + "".join(w.capitalize() for w in words[1:])


def _pascal(*words: str) -> str:
    return "".join(w.capitalize() for w in words)


# --------------------------------------------------------------------------------------
# Writer: creates parents once and counts what it writes
# --------------------------------------------------------------------------------------


class Writer:
    def __init__(self) -> None:
        self._made: set[Path] = set()
        self.counts: Counter[str] = Counter()
        self.bytes = 0

    def write(self, path: Path, text: str, kind: str) -> None:
        parent = path.parent
        if parent not in self._made:
            parent.mkdir(parents=True, exist_ok=True)
            self._made.add(parent)
        data = text.encode("utf-8")
        with open(path, "wb") as fh:
            fh.write(data)
        self.counts[kind] += 1
        self.bytes += len(data)


# --------------------------------------------------------------------------------------
# Source files
# --------------------------------------------------------------------------------------


def _py_source(rng: random.Random, n_lines: int) -> str:
    noun = rng.choice(NOUNS)
    lines = [f'"""{noun.capitalize()} helpers for the {rng.choice(NOUNS)} flow."""']
    if n_lines >= 10:
        lines += ["", "from __future__ import annotations", "", f"import {rng.choice(PY_STDLIB)}", ""]
    while True:
        verb, obj, typ = rng.choice(VERBS), rng.choice(NOUNS), rng.choice(PY_TYPES)
        block = [
            "",
            f"def {verb}_{obj}({obj}: {typ}, *, strict: bool = False) -> {typ}:",
            f'    """{verb.capitalize()} the {obj} for {noun} processing."""',
            f"    if strict and not {obj}:",
            f'        raise ValueError("{obj} is required")',
            f"    return {obj}",
        ]
        if len(lines) + len(block) > n_lines:
            break
        lines += block
    while len(lines) < n_lines:  # fill the remainder with one-line constants
        lines.append(f"{rng.choice(NOUNS).upper()}_{rng.choice(('LIMIT', 'TIMEOUT', 'RETRIES'))} = {rng.randint(1, 500)}")
    return "\n".join(lines) + "\n"


def _ts_source(rng: random.Random, n_lines: int) -> str:
    noun = rng.choice(NOUNS)
    iface = _pascal(noun, rng.choice(("input", "record", "options", "state")))
    lines = [f"// {noun.capitalize()} module.", f'import type {{ Context }} from "../{rng.choice(SUBDIRS)}/context";']
    if n_lines >= 12:
        fields = [f"  {rng.choice(NOUNS)}Id: string;", f"  {rng.choice(NOUNS)}: {rng.choice(TS_TYPES)};"]
        lines += ["", f"export interface {iface} {{", *fields, "}"]
    while True:
        verb, obj = rng.choice(VERBS), rng.choice(NOUNS)
        block = [
            "",
            f"export function {_camel(verb, obj)}(ctx: Context, {obj}: {rng.choice(TS_TYPES)}) {{",
            f"  if (!{obj}) {{",
            f'    throw new Error("{obj} is required");',
            "  }",
            f'  ctx.log.debug("{verb} {obj}");',
            f"  return {obj};",
            "}",
        ]
        if len(lines) + len(block) > n_lines:
            break
        lines += block
    while len(lines) < n_lines:
        lines.append(f"export const {rng.choice(NOUNS).upper()}_MAX = {rng.randint(1, 900)};")
    return "\n".join(lines) + "\n"


def _go_source(rng: random.Random, n_lines: int, package: str) -> str:
    lines = [f"// Package {package} handles {rng.choice(NOUNS)} {rng.choice(NOUNS)}s.", f"package {package}"]
    while True:
        verb, obj, typ = rng.choice(VERBS), rng.choice(NOUNS), rng.choice(GO_TYPES)
        block = [
            "",
            f"// {_pascal(verb, obj)} {verb}s the {obj}.",
            f"func {_pascal(verb, obj)}({obj} {typ}) ({typ}, error) {{",
            f"\treturn {obj}, nil",
            "}",
        ]
        if len(lines) + len(block) > n_lines:
            break
        lines += block
    while len(lines) < n_lines:
        lines.append(f"const {_camel(rng.choice(NOUNS), 'limit')}{len(lines)} = {rng.randint(1, 900)}")
    return "\n".join(lines) + "\n"


def _source_name(rng: random.Random, lang: str, taken: set[str]) -> str:
    verb, noun = rng.choice(VERBS), rng.choice(NOUNS)
    test = rng.random() < 0.15
    if lang == "py":
        base = f"test_{noun}_{verb}" if test else f"{noun}_{verb}"
        ext = ".py"
    elif lang == "ts":
        base = _camel(noun, verb) + (".test" if test else "")
        ext = ".ts"
    else:
        base = f"{noun}_{verb}" + ("_test" if test else "")
        ext = ".go"
    name, i = base + ext, 2
    while name in taken:
        name, i = f"{base}{i}{ext}", i + 1
    taken.add(name)
    return name


# --------------------------------------------------------------------------------------
# Directory tree
# --------------------------------------------------------------------------------------


def _make_tree(rng: random.Random, n_dirs: int) -> list[PurePosixPath]:
    """Return ``n_dirs`` relative source directories (parents always included)."""
    tops = list(TOPS)[: max(1, min(len(TOPS), n_dirs))]
    dirs = [PurePosixPath(t) for t in tops]
    children: dict[PurePosixPath, set[str]] = {d: set() for d in dirs}
    # Prefer growing at depth 2-3 so the tree is bushy in the middle and thin at the bottom.
    depth_weight = {1: 3.0, 2: 5.0, 3: 3.0, 4: 1.5, 5: 0.7}
    while len(dirs) < n_dirs:
        parents = [d for d in dirs if len(d.parts) < MAX_DEPTH]
        parent = rng.choices(parents, [depth_weight[len(d.parts)] for d in parents])[0]
        pool = NOUNS if len(parent.parts) == 1 else SUBDIRS + NOUNS
        name = rng.choice(pool)
        for _ in range(10):
            if name not in children[parent]:
                break
            name = rng.choice(pool)
        else:
            name = f"{name}{len(children[parent]) + 2}"
        children[parent].add(name)
        child = parent / name
        dirs.append(child)
        children[child] = set()
    return dirs


def _distribute(rng: random.Random, total: int, weights: list[float]) -> list[int]:
    """Split ``total`` into integer counts proportional to ``weights`` (largest remainder)."""
    s = sum(weights) or 1.0
    raw = [total * w / s for w in weights]
    counts = [int(r) for r in raw]
    order = sorted(range(len(raw)), key=lambda i: raw[i] - counts[i], reverse=True)
    for i in order[: total - sum(counts)]:
        counts[i] += 1
    return counts


# --------------------------------------------------------------------------------------
# Markdown instruction content
# --------------------------------------------------------------------------------------

BULLETS = (
    "Run `{test_cmd}` before pushing; CI runs the same command.",
    "MUST keep the public API in `{path}` backwards compatible.",
    "NEVER commit secrets or `.env` files; load credentials from `{env}`.",
    "Use `{logger}` for logging; do not leave print statements behind.",
    "Prefer small, focused commits with messages in the imperative mood.",
    "All new {noun} code needs unit tests under `{testpath}`.",
    "IMPORTANT: regenerate `{gen}` with `{gen_cmd}` after editing schemas.",
    "Do not edit files under `{gendir}`; they are generated.",
    "Keep functions under {n} lines; move helpers into `{path}`.",
    "Timeouts for {noun} calls default to {n}s; never block the event loop.",
    "Use the {noun} fixtures in `{testpath}` instead of ad-hoc mocks.",
    "Feature flags live in `{cfg}`; new flags default to off.",
    "NEVER log full {noun} payloads, they may contain PII.",
    "Database migrations go in `{migdir}` and MUST be reversible.",
    "When you change `{path}`, also update `{docpath}`.",
    "Prefer composition over inheritance for {noun} handlers.",
    "Errors returned to clients MUST use the shared `{err}` type.",
    "Ask before adding a new dependency to `{manifest}`.",
    "YOU MUST run `{lint_cmd}` and fix every warning before committing.",
    "Use ISO-8601 UTC timestamps everywhere; never store local time.",
    "Import shared UI pieces from `@acme/ui`, never through relative paths.",
    "The {noun} cache is eventually consistent; do not read-your-writes from it.",
    "Retry {noun} requests at most {n} times with exponential backoff.",
    "Keep `{path}` free of framework imports; it is pure domain logic.",
    "NEVER call the {noun} service synchronously from a request handler.",
    "Validate every {noun} at the boundary; internal code may assume valid input.",
    "Prefer table-driven tests; name cases after the behaviour, not the input.",
    "Money amounts are integer minor units (cents); never use floats for them.",
    "Page sizes are capped at {n}; reject larger `limit` values with a 400.",
    "Use `{test_cmd} -k {noun}` to run only the {noun} tests while iterating.",
    "Document every new environment variable in `{docpath}`.",
    "Metrics names follow `acme_{noun}_<thing>_total`; add a unit suffix.",
    "Do not rename public {noun} fields; add a new field and deprecate the old one.",
    "Run the formatter (`{fmt_cmd}`) on touched files only.",
    "Contact oncall-{noun}@acme.dev before changing alert thresholds.",
)
INTROS = (
    "This directory holds the {noun} {kind}. Read this before editing anything here.",
    "Notes for agents working on the {noun} {kind}. Keep changes small and tested.",
    "The {noun} {kind} is owned by the {team} team. Follow the repo-wide rules plus the ones below.",
    "Instructions specific to `{dir}`. The root CLAUDE.md still applies.",
)
TEAMS = ("platform", "payments", "growth", "infra", "data", "frontend", "identity")
FENCES = {
    "py": [
        "```python",
        "@pytest.fixture",
        "def {noun}(db):",
        '    return make_{noun}(db, status="active")',
        "```",
    ],
    "ts": [
        "```ts",
        'import {{ Button }} from "@acme/ui";',
        "export const {noun}Handler = async (ctx: Context) => {{",
        "  await ctx.{noun}.{verb}();",
        "}};",
        "```",
    ],
    "go": [
        "```go",
        "func Test{Noun}(t *testing.T) {{",
        "\tt.Parallel()",
        "\trequire.NoError(t, {verb}{Noun}(ctx))",
        "}}",
        "```",
    ],
    "sh": ["```bash", "{test_cmd}", "{lint_cmd}", "```"],
}


class Slots(dict):
    """Template fill values for one directory (an unknown key renders as "config")."""

    def __missing__(self, key: str) -> str:
        return "config"


def _slots(rng: random.Random, d: PurePosixPath, lang: str) -> Slots:
    ds = str(d) if str(d) != "." else ""
    prefix = f"{ds}/" if ds else ""
    noun, verb = rng.choice(NOUNS), rng.choice(VERBS)
    test_cmd = {
        "py": f"pytest {ds or 'tests'} -q",
        "ts": f"pnpm --filter ./{ds or '.'} test",
        "go": f"go test ./{ds + '/' if ds else ''}...",
    }[lang]
    return Slots(
        noun=noun, Noun=noun.capitalize(), verb=verb, dir=ds or ".",
        kind=rng.choice(("service", "package", "module", "library", "component")),
        team=rng.choice(TEAMS),
        test_cmd=test_cmd,
        lint_cmd={"py": "ruff check --fix", "ts": "pnpm lint", "go": "golangci-lint run"}[lang],
        fmt_cmd={"py": "ruff format", "ts": "pnpm prettier --write", "go": "gofmt -w"}[lang],
        path=f"{prefix}{rng.choice(SUBDIRS)}/{noun}.{lang}",
        testpath=f"{prefix}tests/{noun}",
        docpath=f"docs/{rng.choice(DOC_TOPICS)}.md",
        env=f"ACME_{noun.upper()}_SECRET",
        logger=rng.choice(("structlog", "log/slog", "pino", "logging.getLogger(__name__)")),
        gen=f"{prefix}gen/{noun}_pb.{lang}",
        gen_cmd=rng.choice(("make generate", "buf generate", "pnpm codegen")),
        gendir=f"{prefix}gen/",
        cfg=f"{prefix}config/flags.yaml",
        migdir=f"{prefix}migrations/",
        err=rng.choice(("ApiError", "AppError", "problem+json")),
        manifest={"py": "pyproject.toml", "ts": "package.json", "go": "go.mod"}[lang],
        n=str(rng.choice((3, 5, 10, 30, 40, 50, 100, 200))),
    )


def _bullets(rng: random.Random, slots: Slots):
    """Endless stream of bullets for one file: every template once per round, and a
    fresh noun half of the time, so a file rarely repeats itself verbatim."""
    while True:
        for template in rng.sample(BULLETS, len(BULLETS)):
            fill = slots
            if rng.random() < 0.5:
                noun = rng.choice(NOUNS)
                fill = Slots(slots, noun=noun, Noun=noun.capitalize())
            yield template.format_map(fill)


# Small edits used to make "slightly altered" copies of a parent's bullet.
_ALTERATIONS = (
    (re.compile(r"\bMUST\b"), "should"),
    (re.compile(r"\bNEVER\b"), "Do not"),
    (re.compile(r"\bnever\b"), "try not to"),
    (re.compile(r"\bAlways\b"), "Please always"),
    (re.compile(r"\b(\d+)\b"), lambda m: str(int(m.group(1)) * 2)),
    (re.compile(r"\.$"), " (see the root CLAUDE.md)."),
)


def _alter(rng: random.Random, bullet: str) -> str:
    for pattern, repl in rng.sample(_ALTERATIONS, len(_ALTERATIONS)):
        new = pattern.sub(repl, bullet, count=1)
        if new != bullet:
            return new
    return bullet + " Applies here too."


def _render_instructions(
    rng: random.Random,
    *,
    title: str,
    slots: Slots,
    lang: str,
    n_lines: int,
    inherited: list[str],
    import_lines: list[str],
) -> tuple[str, list[str]]:
    """Render one CLAUDE.md-style file of exactly ``n_lines`` lines.

    ``inherited`` bullets (verbatim or altered copies of the parent's) are mixed into
    the sections; ``import_lines`` go in a References section.  Returns the text and
    the bullets it used, so children can copy them in turn.
    """
    lines = [f"# {title}", "", rng.choice(INTROS).format_map(slots), ""]
    if rng.random() < 0.15:  # block-level HTML comment: stripped by the loader
        lines[2:2] = ["<!-- maintainers: keep this file under 150 lines -->", ""]
    tail: list[str] = []
    if import_lines:
        tail = ["## References", "", *import_lines, ""]
    pending = list(inherited)
    rng.shuffle(pending)
    fresh = _bullets(rng, slots)
    bullets_used: list[str] = []
    titles = rng.sample(SECTION_TITLES, len(SECTION_TITLES))
    while True:
        room = n_lines - len(lines) - len(tail)
        if room < 4 or not titles:
            break
        sec = [f"## {titles.pop()}", ""]
        room -= 3  # heading, blank, trailing blank
        fence_kind = rng.choice((lang, "sh")) if rng.random() < 0.3 else None
        fence = [ln.format_map(slots) for ln in FENCES[fence_kind]] if fence_kind else []
        if len(fence) + 2 > room:
            fence = []
        n_bullets = min(rng.randint(2, 9), room - (len(fence) + 1 if fence else 0))
        for _ in range(max(1, n_bullets)):
            b = pending.pop() if pending and rng.random() < 0.5 else next(fresh)
            bullets_used.append(b)
            sec.append(f"- {b}")
        if fence:
            sec += ["", *fence]
        lines += sec + [""]
    while len(lines) + len(tail) < n_lines:  # top up with bullets at the end
        b = next(fresh)
        bullets_used.append(b)
        lines.append(f"- {b}")
    lines += tail
    return "\n".join(lines[:n_lines]) + "\n", bullets_used


def _doc_text(rng: random.Random, topic: str, slots: Slots, n_lines: int, imports: list[str]) -> str:
    """Body of an imported doc (docs/<topic>.md, shared/conventions.md, ...)."""
    text, _ = _render_instructions(
        rng,
        title=f"{topic.replace('-', ' ').capitalize()}",
        slots=slots,
        lang=rng.choice(("py", "ts", "go")),
        n_lines=n_lines,
        inherited=[],
        import_lines=imports,
    )
    return text


# --------------------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------------------


def sanitize_project_path(path: Path) -> str:
    """Claude Code's auto-memory folder name: every char not [A-Za-z0-9] becomes '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(path))


def _git_init(root: Path) -> str:
    try:
        subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
        return "git init"
    except (OSError, subprocess.CalledProcessError):
        # No git binary: a minimal structure that `git rev-parse` still recognises.
        for sub in ("objects", "refs/heads", "refs/tags"):
            (root / ".git" / sub).mkdir(parents=True, exist_ok=True)
        (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        (root / ".git" / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n")
        return "minimal .git"


ROOT = PurePosixPath(".")  # the repository root as a relative directory
KIND_ORDER = {"CLAUDE.md": 0, ".claude/CLAUDE.md": 1, "CLAUDE.local.md": 2}


class _Generator:
    """One generation run; each ``_phase`` method writes one part of the tree."""

    def __init__(self, root: Path, home: Path, seed: int) -> None:
        self.root = root
        self.home_claude = home / ".claude"
        self.rng = random.Random(seed)
        self.w = Writer()
        self.stats: Counter[str] = Counter()
        self.tree: list[PurePosixPath] = []
        self.dir_lang: dict[PurePosixPath, str] = {ROOT: "py"}
        self.placements: list[tuple[PurePosixPath, str]] = []  # (dir, CLAUDE.md | .claude/CLAUDE.md | CLAUDE.local.md)
        # (dir, kind) -> import refs [text after '@', target relative to root (None = in home), topic]
        self.plans: dict[tuple[PurePosixPath, str], list[list]] = {}
        self.memory_dir = self.home_claude  # set by _home()

    # ---- repository skeleton and sources ---------------------------------------------

    def _skeleton(self) -> None:
        self.stats["git"] = _git_init(self.root)  # type: ignore[assignment]
        w, root = self.w, self.root
        w.write(root / ".gitignore", "dist/\n*.log\n.ctxls/\n", "other")
        w.write(root / "README.md", "# acme monorepo\n\nSynthetic repository generated by ctxls bench.\n", "other")
        package_json = '{\n  "name": "acme",\n  "private": true,\n  "workspaces": ["packages/*", "apps/*"]\n}\n'
        w.write(root / "package.json", package_json, "other")

    def _sources(self, n_files: int, n_dirs: int) -> None:
        rng = self.rng
        self.tree = _make_tree(rng, n_dirs)
        self.dir_lang.update({d: rng.choice(TOPS[d.parts[0]]) for d in self.tree})
        # Group dirs (depth 1) hold no sources and service roots few; deeper dirs get
        # exponentially distributed shares, so a few dirs are big and many are small.
        weights = [0.0 if len(d.parts) == 1 else rng.expovariate(1.0) * (0.3 if len(d.parts) == 2 else 1.0) for d in self.tree]
        if not any(weights):
            weights = [1.0] * len(self.tree)
        for d, count in zip(self.tree, _distribute(rng, n_files, weights)):
            taken: set[str] = set()
            for _ in range(count):
                lang = self.dir_lang[d] if rng.random() < 0.85 else rng.choice(("py", "ts", "go"))
                n_lines = rng.randint(5, 40)
                if lang == "py":
                    text = _py_source(rng, n_lines)
                elif lang == "ts":
                    text = _ts_source(rng, n_lines)
                else:
                    text = _go_source(rng, n_lines, re.sub(r"\d+", "", d.name))
                self.w.write(self.root / d / _source_name(rng, lang, taken), text, "source")

    # ---- instruction files -----------------------------------------------------------

    def _place_instructions(self, n: int) -> None:
        """Root CLAUDE.md, CLAUDE.md in ~85% of the dirs (all when needed), the rest as
        .claude/CLAUDE.md or CLAUDE.local.md.  The root CLAUDE.md is always written."""
        rng, tree = self.rng, self.tree
        n_rest = max(0, n - 1)
        n_spare = 2 * (len(tree) + 1)  # .claude/CLAUDE.md + CLAUDE.local.md slots
        n_main = min(n_rest, len(tree), max(int(len(tree) * 0.85), n_rest - n_spare))
        main_dirs = set(rng.sample(tree, n_main))
        free = [(d, k) for d in [ROOT, *tree] for k in (".claude/CLAUDE.md", "CLAUDE.local.md")]
        free.remove((ROOT, "CLAUDE.local.md"))  # always the first overflow file
        n_overflow = min(n_rest - n_main, len(free) + 1)
        if n_rest - n_main > n_overflow:
            print(f"warning: only room for {1 + n_main + n_overflow} instruction files", file=sys.stderr)
        placements = [(ROOT, "CLAUDE.md")] + [(d, "CLAUDE.md") for d in tree if d in main_dirs]
        if n_overflow:
            placements.append((ROOT, "CLAUDE.local.md"))
            placements += rng.sample(free, n_overflow - 1)
        # Parents before children (CLAUDE.md before its siblings) so bullets can be inherited.
        placements.sort(key=lambda p: (len(p[0].parts), str(p[0]), KIND_ORDER[p[1]]))
        self.placements = placements

    def _plan_imports(self) -> dict[PurePosixPath, str]:
        """Choose @imports for ~1/3 of the files; return the docs to create (target -> topic)."""
        rng = self.rng
        for d, kind in self.placements:
            if not (d == ROOT or rng.random() < 1 / 3):  # the root files always import
                continue
            in_dot_claude = kind == ".claude/CLAUDE.md"  # imports resolve from the importing file's dir
            up = "../" if in_dot_claude else ""
            refs: list[list] = []
            for _ in range(rng.randint(1, 3)):
                choice, topic = rng.random(), rng.choice(DOC_TOPICS)
                if choice < 0.55 or d == ROOT:
                    text, target = f"{up}docs/{topic}.md", d / "docs" / f"{topic}.md"
                elif choice < 0.85:  # shared by all siblings: the loader must dedup it
                    text, target, topic = f"{up}../shared/conventions.md", d.parent / "shared" / "conventions.md", "conventions"
                else:
                    text, target, topic = f"{up or './'}README.md", d / "README.md", "readme"
                if all(r[0] != text for r in refs):
                    refs.append([text, target, topic])
            if (d, kind) == (ROOT, "CLAUDE.local.md"):
                refs.append(["~/.claude/personal-prefs.md", None, "home"])
            self.plans[(d, kind)] = refs
        # ~2% of the references (at least two) point at files that are never created.
        in_repo = [r for refs in self.plans.values() for r in refs if r[1] is not None]
        n_missing = min(len(in_repo), max(2, round(0.02 * len(in_repo))))
        for ref in rng.sample(in_repo, n_missing):
            ref[0] = ref[0][: -len(".md")] + "-old.md"
            ref[1] = ref[1].with_name(ref[1].stem + "-old.md")
            ref[2] = "missing"
        self.stats["import_refs_in_instruction_files"] = sum(len(r) for r in self.plans.values())
        self.stats["import_refs_missing"] = n_missing
        self.stats["instruction_files_with_imports"] = len(self.plans)
        docs: dict[PurePosixPath, str] = {}
        for refs in self.plans.values():
            for _, target, topic in refs:
                if target is not None and topic != "missing":
                    docs.setdefault(target, topic)
        return docs

    def _render_instruction_files(self) -> None:
        rng, stats = self.rng, self.stats
        bullets_of: dict[PurePosixPath, list[str]] = {}  # dir -> bullets of its CLAUDE.md
        for d, kind in self.placements:
            lang = self.dir_lang[d]
            slots = _slots(rng, d, lang)
            # Copy from this dir's CLAUDE.md (for its siblings) or the nearest ancestor's.
            anc: PurePosixPath | None = d if kind != "CLAUDE.md" else None
            if anc not in bullets_of:
                anc = d.parent if d != ROOT else None
                while anc is not None and anc not in bullets_of:
                    anc = anc.parent if anc != ROOT else None
            inherited: list[str] = []
            if anc is not None:
                parent = bullets_of[anc]
                for b in rng.sample(parent, min(len(parent), rng.randint(1, 4))):
                    inherited.append(b)
                    stats["bullets_copied_verbatim"] += 1
                for b in rng.sample(parent, min(len(parent), rng.randint(0, 2))):
                    inherited.append(_alter(rng, b))
                    stats["bullets_copied_altered"] += 1
            import_lines = []
            for text, _, topic in self.plans.get((d, kind), []):
                style = rng.random()
                if style < 0.4:
                    import_lines.append(f"@{text}")
                elif style < 0.8:
                    import_lines.append(f"- {topic.capitalize()}: @{text}")
                else:
                    import_lines.append(f"See @{text} for details.")
            if kind == "CLAUDE.local.md":
                n_lines, title = rng.randint(20, 50), "Local notes (not checked in)"
            elif d == ROOT:
                n_lines, title = 140, "acme monorepo"
            else:  # <= 148: a few files get an import line appended by _cycles_and_chain()
                n_lines, title = int(rng.triangular(20, 148, 45)), f"{d.name} ({d})"
            text, used = _render_instructions(
                rng, title=title, slots=slots, lang=lang, n_lines=n_lines,
                inherited=inherited, import_lines=import_lines,
            )
            if kind == "CLAUDE.md":
                bullets_of[d] = used
            self.w.write(self.root / d / kind, text, "instruction:" + kind)

    def _imported_docs(self, docs: dict[PurePosixPath, str]) -> None:
        rng, root = self.rng, self.root
        for target, topic in sorted(docs.items(), key=lambda kv: str(kv[0])):
            if (root / target).exists():  # already created as some other doc's sibling
                continue
            slots = _slots(rng, target.parent, rng.choice(("py", "ts", "go")))
            imports = []
            sib = rng.choice(DOC_TOPICS)
            if rng.random() < 0.2 and sib != target.stem:  # nested import of a sibling doc
                imports = [f"- Related: @{sib}.md"]
                sib_target = target.with_name(f"{sib}.md")
                if sib_target not in docs and not (root / sib_target).exists():
                    self.w.write(root / sib_target, _doc_text(rng, sib, slots, rng.randint(15, 40), []), "imported_doc")
                self.stats["nested_doc_imports"] += 1
            self.w.write(root / target, _doc_text(rng, topic, slots, rng.randint(20, 60), imports), "imported_doc")

    def _cycles_and_chain(self) -> None:
        """Two import cycles and one chain deeper than the 4-hop limit, reachable from the root."""
        rng, root, w = self.rng, self.root, self.w
        s = _slots(rng, ROOT, "py")
        w.write(root / "docs/cycle/a.md", _doc_text(rng, "cycle a", s, 20, ["@b.md"]), "imported_doc")
        w.write(root / "docs/cycle/b.md", _doc_text(rng, "cycle b", s, 20, ["@a.md"]), "imported_doc")
        for i in range(1, 8):
            nxt = [f"@hop{i + 1}.md"] if i < 7 else []
            w.write(root / f"docs/chain/hop{i}.md", _doc_text(rng, f"hop {i}", s, 20, nxt), "imported_doc")
        appends = [(ROOT / "CLAUDE.md", "- Design notes: @docs/cycle/a.md")]
        host = "CLAUDE.local.md" if (ROOT, "CLAUDE.local.md") in self.placements else "CLAUDE.md"
        appends.append((ROOT / host, "@docs/chain/hop1.md"))
        # Second cycle: a service doc that imports its own CLAUDE.md back.
        svc = next((d for d, k in self.placements if k == "CLAUDE.md" and len(d.parts) == 2), None)
        if svc is not None:
            w.write(root / svc / "docs/loop.md", _doc_text(rng, "loop", s, 20, ["@../CLAUDE.md"]), "imported_doc")
            appends.append((svc / "CLAUDE.md", "@docs/loop.md"))
        for rel, line in appends:
            with open(root / rel, "a", encoding="utf-8") as fh:
                fh.write(line + "\n")
        self.stats["import_refs_in_instruction_files"] += len(appends)
        self.stats["import_cycles"] = 2 if svc is not None else 1

    # ---- rules and skills ------------------------------------------------------------

    def _rules(self) -> None:
        rng = self.rng
        root_specs: list[tuple[str, list[str] | str | None]] = [
            ("security.md", None),
            ("git-workflow.md", None),
            ("python.md", ["**/*.py"]),
            ("go.md", ["services/**/*.go", "infra/**/*.go"]),
            ("typescript.md", ["packages/**/*.ts", "apps/**/*.ts"]),
            ("testing.md", ["**/test_*.py", "**/*_test.go", "**/*.test.ts"]),
            ("api-design.md", ["services/*/api/**", "services/*/handlers/**"]),
            ("docs.md", ["*.md"]),  # ambiguous: root only (docs) or any depth (gitignore)
            ("migrations.md", ["**/migrations/**"]),
            ("frontend/components.md", ["apps/**/components/**/*.ts"]),
            ("legacy-string.md", "libs/**/*.py, tools/**/*.py"),  # comma-separated string form
        ]
        rule_dirs = [(ROOT, root_specs)]
        service_roots = sorted((d for d in self.tree if len(d.parts) == 2), key=str)
        optional = [
            ("handlers.md", ["handlers/**"]),
            ("python.md", ["**/*.py"]),
            ("storage.md", ["storage/**/*.go", "storage/**/*.py"]),
            ("ui.md", ["components/**/*.ts"]),
        ]
        for d in rng.sample(service_roots, min(6, len(service_roots))):
            rule_dirs.append((d, [("local-conventions.md", None)] + rng.sample(optional, rng.randint(0, 2))))
        for d, specs in rule_dirs:
            for name, paths in specs:
                lang = self.dir_lang[d]
                body, _ = _render_instructions(
                    rng, title=name[:-3].replace("-", " ").capitalize(), slots=_slots(rng, d, lang), lang=lang,
                    n_lines=rng.randint(10, 60), inherited=[], import_lines=[],
                )
                if paths is None:
                    front = ""
                    self.stats["rules_unconditional"] += 1
                else:
                    if isinstance(paths, str):
                        front = f'---\npaths: "{paths}"\n---\n'
                    else:  # globs are quoted: a leading '*' is a YAML alias
                        front = "---\npaths:\n" + "".join(f'  - "{p}"\n' for p in paths) + "---\n"
                    self.stats["rules_conditional"] += 1
                self.w.write(self.root / d / ".claude/rules" / name, front + body, "rule")

    def _skills(self, n: int) -> None:
        rng, stats = self.rng, self.stats
        names: list[str] = []
        while len(names) < n:
            name = "-".join([rng.choice(VERBS), rng.choice(NOUNS)] + ([rng.choice(NOUNS)] if rng.random() < 0.3 else []))
            if name not in names:
                names.append(name)
        hosts = [d for d in self.tree if 2 <= len(d.parts) <= 3]
        n_nested = n // 7 if hosts else 0
        disabled = set(rng.sample(range(n), min(n, max(1, n // 40))))
        with_paths = set(rng.sample(range(n), n // 40))
        root_names = names[: n - n_nested]
        placed: set[tuple[PurePosixPath, str]] = set()
        for i, name in enumerate(names):
            host = ROOT
            if i >= n - n_nested:
                host = rng.choice(hosts)
                clash = rng.choice(root_names) if root_names and rng.random() < 0.15 else None
                if clash and (host, clash) not in placed:  # same name as a root skill
                    name = clash
                    stats["skills_nested_name_clash"] += 1
                stats["skills_nested"] += 1
            else:
                stats["skills_root"] += 1
            placed.add((host, name))
            slots = _slots(rng, host, self.dir_lang[host])
            front = [f"name: {name}", f"description: {_skill_description(rng, name, slots)}"]
            if rng.random() < 0.1:
                front.append(f"when_to_use: When the user asks to {rng.choice(VERBS)} {slots['noun']} records.")
            if i in disabled:
                front.append("disable-model-invocation: true")
                stats["skills_disable_model_invocation"] += 1
            if i in with_paths:
                front += ["paths:", f'  - "**/*{slots["noun"]}*"']
                stats["skills_with_paths"] += 1
            if rng.random() < 0.3:
                front.append("allowed-tools: " + ", ".join(rng.sample(SKILL_TOOLS, rng.randint(1, 3))))
            if rng.random() < 0.15:
                front.append(f'argument-hint: "<{slots["noun"]}-id>"')
            body = _skill_body(rng, name, slots, int(rng.triangular(20, 300, 60)))
            skill_dir = self.root / host / ".claude/skills" / name
            self.w.write(skill_dir / "SKILL.md", "---\n" + "\n".join(front) + "\n---\n\n" + body, "skill")
            if rng.random() < 0.15:  # level-3 resources, read only on demand
                ref = _doc_text(rng, f"{name} reference", slots, rng.randint(20, 80), [])
                self.w.write(skill_dir / "reference.md", ref, "skill_resource")
                self.w.write(skill_dir / "scripts/run.sh", f"#!/bin/sh\nset -eu\n{slots['test_cmd']}\n", "skill_resource")

    # ---- junk ctxls must skip or ignore ----------------------------------------------

    def _node_modules_and_dist(self) -> None:
        rng, w = self.rng, self.w
        pkgs = dict.fromkeys(f"{rng.choice(NOUNS)}-{rng.choice(('utils', 'core', 'js', 'lite', 'kit'))}" for _ in range(45))
        for j, pkg in enumerate(pkgs):
            base = self.root / "node_modules" / pkg
            w.write(base / "package.json", f'{{"name": "{pkg}", "version": "1.{j}.0", "main": "index.js"}}\n', "node_modules")
            w.write(base / "index.js", f"module.exports = require('./lib/part0');\n", "node_modules")
            w.write(base / "README.md", f"# {pkg}\n\nNothing to see here.\n", "node_modules")
            for k in range(rng.randint(2, 6)):
                w.write(base / "lib" / f"part{k}.js", f"exports.part{k} = () => {k};\n", "node_modules")
            # Decoys: packages do ship CLAUDE.md and skills; none of them may be loaded.
            if j % 9 == 0:
                decoy = "# decoy\n\n- NEVER load this file: it lives in node_modules.\n"
                w.write(base / "CLAUDE.md", decoy, "node_modules_decoy")
            if j % 15 == 0:
                decoy = f"---\nname: decoy-{j}\ndescription: Decoy skill in node_modules, never listed.\n---\n\nDecoy.\n"
                w.write(base / f".claude/skills/decoy-{j}/SKILL.md", decoy, "node_modules_decoy")
        ts_pkg = next((d for d in self.tree if d.parts[0] == "packages" and len(d.parts) == 2), None)
        if ts_pkg is not None:  # a nested node_modules as well
            base = self.root / ts_pkg / "node_modules/left-pad"
            for k in range(20):
                w.write(base / f"f{k}.js", "module.exports = 1;\n", "node_modules")
            w.write(base / "CLAUDE.md", "# decoy\n", "node_modules_decoy")
        for k in range(30):
            w.write(self.root / f"dist/bundle{k}.js", f"/* built */ var b{k} = {k};\n", "dist")
            w.write(self.root / f"dist/bundle{k}.js.map", '{"version":3,"sources":[]}\n', "dist")

    # ---- fake home -------------------------------------------------------------------

    def _home(self) -> None:
        rng, w, hc = self.rng, self.w, self.home_claude
        s = _slots(rng, ROOT, "py")
        user_md, _ = _render_instructions(rng, title="Personal preferences", slots=s, lang="py", n_lines=60,
                                          inherited=[], import_lines=[])
        w.write(hc / "CLAUDE.md", user_md, "home")
        w.write(hc / "personal-prefs.md", _doc_text(rng, "personal prefs", s, 25, []), "home")  # imported by root CLAUDE.local.md
        w.write(hc / "rules/tone.md", _doc_text(rng, "tone", s, 15, []), "home")
        w.write(hc / "rules/python.md", '---\npaths:\n  - "**/*.py"\n---\n' + _doc_text(rng, "python", s, 15, []), "home")
        sanitized = sanitize_project_path(self.root)
        if len(sanitized) > 200:
            print("warning: repo path > 200 chars; Claude Code would hash-suffix the memory dir name", file=sys.stderr)
        self.memory_dir = mem = hc / "projects" / sanitized / "memory"
        topics = [("billing-quirks.md", "project"), ("review-feedback.md", "feedback"), ("links.md", "reference")]
        for fname, mtype in topics:
            stem = fname[:-3]
            front = (f"---\nname: {stem}\ndescription: Notes about {stem.replace('-', ' ')}.\ntype: {mtype}\n"
                     f"modified: 2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}\n---\n\n")
            w.write(mem / fname, front + _doc_text(rng, stem, s, rng.randint(20, 60), []), "memory")
        # 250 lines: Claude Code loads only the first 200 (and at most 25,000 bytes).
        lines = ["# Memory index", "", "## Topics", ""]
        lines += [f"- [{f[:-3].replace('-', ' ')}]({f}) ({t})" for f, t in topics]
        lines += ["", "## Notes", ""]
        while len(lines) < 250:
            bullet = rng.choice(BULLETS).format_map(_slots(rng, rng.choice(self.tree), "py"))
            lines.append(f"- {bullet} (learned 2026-0{rng.randint(1, 9)}-2{rng.randint(0, 8)})")
        w.write(mem / "MEMORY.md", "\n".join(lines) + "\n", "memory")

    def run(self, *, files: int, dirs: int, claude: int, skills: int) -> None:
        self._skeleton()
        self._sources(files, dirs)
        self._place_instructions(claude)
        docs = self._plan_imports()
        self._render_instruction_files()
        self._imported_docs(docs)
        self._cycles_and_chain()
        self._rules()
        self._skills(skills)
        self._node_modules_and_dist()
        self._home()


def _prepare_targets(paths: list[Path], force: bool) -> None:
    """Refuse a non-empty target without --force (and a few paths ever); then clear them.

    Every path is checked before any is deleted.
    """
    for path in paths:
        if path in (Path("/"), Path.home(), Path.home() / ".claude") or path in Path(__file__).resolve().parents:
            raise SystemExit(f"error: refusing to write into {path}")
        if path.exists() and any(path.iterdir()) and not force:
            raise SystemExit(f"error: {path} exists and is not empty (use --force to replace it)")
    for path in paths:
        if path.exists():
            shutil.rmtree(path)


def generate(
    out_dir: Path,
    *,
    files: int = 20000,
    dirs: int = 400,
    claude: int = 500,
    skills: int = 200,
    seed: int = 1,
    home: Path | None = None,
    force: bool = False,
) -> dict:
    """Generate the monorepo at ``out_dir`` (and the fake home); return a summary dict."""
    root = out_dir.resolve()
    home = (home or root.parent / "home").resolve()
    _prepare_targets([root, home / ".claude"], force)  # only HOME/.claude is ever replaced
    t0 = time.perf_counter()
    root.mkdir(parents=True, exist_ok=True)
    g = _Generator(root, home, seed)
    g.run(files=files, dirs=dirs, claude=claude, skills=skills)
    c, stats = g.w.counts, dict(g.stats)
    return {
        "repo": str(root),
        "home": str(home),
        "memory_dir": str(g.memory_dir),
        "seed": seed,
        "git": stats.pop("git"),
        "source_dirs": len(g.tree),
        "max_depth": max(len(d.parts) for d in g.tree),
        "source_files": c["source"],
        "instruction_files": sum(v for k, v in c.items() if k.startswith("instruction:")),
        "instruction_files_by_kind": {k.split(":", 1)[1]: v for k, v in sorted(c.items()) if k.startswith("instruction:")},
        "imported_docs": c["imported_doc"],
        "rules_files": c["rule"],
        "skills": c["skill"],
        "skill_resource_files": c["skill_resource"],
        "node_modules_files": c["node_modules"] + c["node_modules_decoy"],
        "node_modules_decoys": c["node_modules_decoy"],
        "dist_files": c["dist"],
        "home_files": c["home"],
        "memory_files": c["memory"],
        "total_files_written": sum(c.values()),
        "total_bytes_written": g.w.bytes,
        **dict(sorted(stats.items())),
        "seconds": round(time.perf_counter() - t0, 3),
    }


def _skill_description(rng: random.Random, name: str, slots: Slots) -> str:
    """A 40-400 char description; plain YAML scalar (no ': ' or ' #'), sometimes quoted."""
    target = rng.choice((rng.randint(40, 120), rng.randint(80, 250), rng.randint(200, 400)))
    clauses = [
        f"{name.replace('-', ' ').capitalize()} for the {slots['noun']} {slots['kind']}.",
        f"Use when the user asks to {rng.choice(VERBS)} or {rng.choice(VERBS)} {slots['noun']} data.",
        f"Runs {slots['test_cmd']} and summarises failures.",
        f"Knows the conventions in {slots['docpath']} and the {slots['team']} team's review checklist.",
        f"Handles edge cases such as empty {rng.choice(NOUNS)} lists, retries and partial {rng.choice(NOUNS)} updates.",
        f"Do not use it for {rng.choice(NOUNS)} migrations or production incidents.",
    ]
    out = clauses[0]
    for cl in clauses[1:]:
        if len(out) >= target:
            break
        out += " " + cl
    while len(out) < 40:
        out += " Covers the common cases."
    if len(out) > 400:
        out = out[:397].rsplit(" ", 1)[0] + "..."
    return f'"{out}"' if rng.random() < 0.2 else out


def _skill_body(rng: random.Random, name: str, slots: Slots, n_lines: int) -> str:
    title = name.replace("-", " ").capitalize()
    lines = [f"# {title}", "", "## Steps", ""]
    fresh = _bullets(rng, slots)
    step = 1
    while len(lines) < n_lines - 8:
        lines.append(f"{step}. {next(fresh)}")
        step += 1
        if rng.random() < 0.08:
            lines += ["", "```bash", slots["test_cmd"], f"git diff --stat -- {slots['dir']}", "```", ""]
        if rng.random() < 0.05:
            lines += ["", f"## {rng.choice(SECTION_TITLES)}", ""]
    lines += ["", "## Output", "", f"Report what changed in `{slots['path']}` and which tests ran.",
              "Keep the summary under ten lines."]
    while len(lines) < n_lines:
        lines.append(f"- {next(fresh)}")
    return "\n".join(lines[:n_lines]) + "\n"


def print_summary(summary: dict, *, as_json: bool) -> None:
    """A generator's summary: JSON, or one aligned ``key  value`` line each."""
    if as_json:
        print(json.dumps(summary, indent=2))
    else:
        width = max(map(len, summary))
        for key, value in summary.items():
            print(f"{key:<{width}}  {value}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir", type=Path, help="repository to create (must be empty unless --force)")
    ap.add_argument("--files", type=int, default=20000, help="source files (default 20000)")
    ap.add_argument("--dirs", type=int, default=400, help="source directories (default 400)")
    ap.add_argument("--claude", type=int, default=500, help="CLAUDE.md / .claude/CLAUDE.md / CLAUDE.local.md files (default 500)")
    ap.add_argument("--skills", type=int, default=200, help="skills (default 200)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--home", type=Path, default=None, help="fake home dir (default OUT_DIR/../home)")
    ap.add_argument("--force", action="store_true", help="replace OUT_DIR and HOME/.claude if they exist")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = ap.parse_args(argv)
    summary = generate(
        args.out_dir, files=args.files, dirs=args.dirs, claude=args.claude, skills=args.skills,
        seed=args.seed, home=args.home, force=args.force,
    )
    print_summary(summary, as_json=args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
