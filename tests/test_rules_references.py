"""Unit tests of the stale-reference rules (CTX401, CTX402) beyond the fixtures in fixtures/check/ref_*."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxls.core import markdown as MD

from ctxls.core.check import CheckConfig, Workspace, run_checks
from ctxls.core.rules import path_index as PI
from ctxls.core.rules.path_refs import extract as _extract, path_shape as _shape
from ctxls.core.settings import Settings


def _ws(tmp_path: Path, files: dict[str, str], select: str = "CTX40") -> Workspace:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    (tmp_path / "home").mkdir(exist_ok=True)
    settings = Settings(home=tmp_path / "home", managed_dir=tmp_path / "managed", ceiling=tmp_path,
                        auto_memory_dir=tmp_path / "home" / "mem")
    return Workspace(tmp_path / "repo", settings, CheckConfig(select=frozenset({select})))


@pytest.mark.parametrize("token,kind,is_path", [
    ("src/app.py", "code", True),
    ("docs/a.md", "link", True),
    ("web.py", "code", True),
    ("README.md", "bare", True),
    ("Node.js", "bare", False),
    ("node.js", "bare", False),
    ("res.json", "code", False),
    ("console.log", "code", False),
    ("pytest.fixture", "at", False),
    ("acme/ui", "at", False),
    ("docs/a.md", "at", True),
    ("src/**/*.py", "code", False),
    ("src/<name>/x.ts", "code", False),
    ("$HOME/x.yaml", "code", False),
    ("/etc/hosts", "code", False),
    ("~/.claude/settings.json", "code", False),
    ("github.com/acme/x", "code", False),
    ("v1.2.3", "code", False),
    ("3.11", "bare", False),
    ("path/to/file.py", "code", False),
    ("docs/adr/NNNN-title.md", "code", False),
    (".env.local", "code", False),
    ("CLAUDE.local.md", "code", False),
    ("dist/app.js", "code", False),
    ("node_modules/x/index.js", "code", False),
    ("and/or", "bare", False),
    ("client/server", "bare", False),
    ("https://x.dev/a.md", "link", False),
    ("mailto:a@b.c", "link", False),
    # library names ending in .js are not file names; a .js path (with a slash) or a link still is
    ("decimal.js", "code", False),
    ("Next.js", "code", False),
    ("chart.js", "at", False),
    ("src/chart.js", "code", True),
    ("./big.js", "code", True),
    ("helpers.js", "link", True),
    ("helpers.ts", "code", True),
])
def test_shape(token: str, kind: str, is_path: bool) -> None:
    assert (_shape(token, kind) is not None) is is_path


def test_extract_columns_and_kinds() -> None:
    text = "# T\n- Use `src/a.py` and [b](docs/b.md), see docs/c.md.\n"
    refs = [(r.line, r.col, r.text, r.kind) for r in _extract(text, set())]
    line = text.split("\n")[1]
    assert (1, line.index("src/a.py"), "src/a.py", "code") in refs
    assert (1, line.index("docs/b.md"), "docs/b.md", "link") in refs
    assert (1, line.index("docs/c.md"), "docs/c.md", "bare") in refs


def test_extract_skips_frontmatter_code_and_comments() -> None:
    text = "---\ndescription: see src/x.py\n---\n```\nsrc/y.py\n```\n<!-- src/z.py -->\nok `src/w.py`\n"
    assert [r.text for r in _extract(text, set())] == ["src/w.py"]


def test_span_points_at_the_path(tmp_path: Path) -> None:
    ws = _ws(tmp_path, {"repo/CLAUDE.md": "# T\n- See `src/gone.py:12` now.\n"}, "CTX401")
    [f] = run_checks(ws).findings
    line = "- See `src/gone.py:12` now."
    assert (f.span.start_line, f.span.start_col, f.span.end_col) == (1, line.index("src"), line.index(":12"))


def test_memory_message_names_the_move(tmp_path: Path) -> None:
    ws = _ws(tmp_path, {
        "repo/CLAUDE.md": "# T\n",
        "repo/app/web.py": "",
        "home/mem/MEMORY.md": "- Endpoints live in `server/web.py`.\n",
    }, "CTX402")
    [f] = run_checks(ws).findings
    assert f.message.startswith("This memory may be stale: `server/web.py` no longer exists")
    assert "did it move to `app/web.py`?" in f.message
    assert [(x.title, x.safe) for x in f.fixes] == [("Replace with `app/web.py`", False)]


def test_several_candidates_give_no_fix(tmp_path: Path) -> None:
    ws = _ws(tmp_path, {
        "repo/CLAUDE.md": "# T\n- Config is `conf/app.yaml`.\n",
        "repo/a/app.yaml": "",
        "repo/b/app.yaml": "",
    }, "CTX401")
    [f] = run_checks(ws).findings
    assert "`app.yaml` exists at `a/app.yaml`, `b/app.yaml`" in f.message and f.fixes == []


@pytest.mark.parametrize("text", [
    "", "\n", "`", "``", "[", "[x](", "[x]()", "](", "@", "@@", "@/", "`@`", "- `a/`", "../../..", "a/../../b.py",
    "---\n", "---\nname: [\n---\n`src/x.py`", "```\nunclosed `src/a.py`", "<!-- unclosed `src/a.py`",
    "[x](<>)", "[x](%zz)", "\x00\x01/\x02.py", "é/ü.py `ö/ä.md` [ß](ç.md)", "a" * 5000 + "/b.py",
])
def test_bad_input_never_raises(tmp_path: Path, text: str) -> None:
    ws = _ws(tmp_path, {"repo/CLAUDE.md": text, "home/mem/MEMORY.md": text})
    assert run_checks(ws).errors == []


# -- fast paths of the extraction and resolution: each must agree with the plain version it stands in for ------
import random
import re

from ctxls.core.markdown import prepare
from ctxls.core.rules import path_refs as P, references as R


def _fuzz(alphabet: str, n: int, max_len: int, seed: int = 7) -> list[str]:
    rnd = random.Random(seed)
    return ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, max_len))) for _ in range(n)]


def test_bare_regex_matches_the_plain_one() -> None:
    plain = re.compile(r"[^\s/.]*[/.]\S*")
    for s in _fuzz("ab/. \t`@\u00a0", 20000, 16):
        assert [(m.start(), m.group()) for m in P._BARE.finditer(s)] == \
            [(m.start(), m.group()) for m in plain.finditer(s)], repr(s)


def test_single_backtick_code_spans_match_the_general_regex() -> None:
    for s in _fuzz("a `\t\n", 20000, 14):
        if "``" in s:
            continue
        # (core/markdown.py's fast path of code_spans, behind the one code-span pattern)
        got = [(m.start(), m.end(), m.group(2), m.start(2)) for m in MD._CODE_SPAN_1.finditer(s)]
        assert got == [(m.start(), m.end(), m.group(2), m.start(2)) for m in MD.CODE_SPAN.finditer(s)], repr(s)


def test_context_words_cover_every_context_match() -> None:
    # (the line-level list of creating/removing/example words is gone: core/mentions.py classifies each mention)
    words = ["saved to", "clones", "cloning",
             "gitignored", "git-ignored", "ignored by git", "(local)", "local-only", "may not exist",
             "if it exists", "if present", "z.b.", "z. b.", "par exemple", "p. ex.",
             "p.ej.", "por ejemplo", "例:", "例：", "例えば", "例如", "比如", "如：", "可能尚不存在", "不存在则",
             "存在しない場合"]
    rnd = random.Random(3)
    for _ in range(5000):
        line = " ".join(rnd.choice(words + ["x", "a.b", "-", "ok"]) for _ in range(rnd.randint(1, 4)))
        low = line.lower()
        if R._CONTEXT_SKIP_MORE.search(low):
            assert any(w in low for w in R._CONTEXT_WORDS_MORE) or \
                (not low.isascii() and any(w in low for w in R._CONTEXT_WORDS_CJK)), line


def test_indented_block_search_matches_the_plain_one() -> None:
    plain = re.compile(r"(?:^|\n)[ \t]*\n(?: {4}|\t)[ \t]*\S")
    for s in _fuzz(" \t\nab", 30000, 14):
        fast = ("\n    " in s or "\n\t" in s) and P._INDENTED_BLOCK.search("\n" + s)
        assert bool(fast) == bool(plain.search(s)), repr(s)


def test_line_prefilter_only_drops_lines_without_paths() -> None:
    """Of the lines with a `/` or a dot (not at the end), _extract skips those with neither a `/`, an extension's
    dot nor a `[`: none of their tokens may be a path."""
    for line in _fuzz("ab./[]()`@ :x1", 30000, 14):
        if "/" in line or "." not in line.rstrip(" \r.:!?") or "[" in line or P._DOT_EXT.search(line):
            continue
        assert all(P.path_shape(t[1], t[2]) is None for t in P._line_tokens.__wrapped__(line)), repr(line)


@pytest.mark.parametrize("text", [
    "# T\n@docs/a.md and `@x/y.md`\n```\n@in/code.md\n```\n",
    "---\nname: x\n---\nsee @a.md\r\n@b/c.md\n",
    "a\rb @c.md\n\u2028@d.md `@e.md`\n",
    "<!-- @hidden.md -->\n    @indented.md\n",
])
def test_import_columns_are_those_prepare_finds(text: str) -> None:
    fm, body = P.split_frontmatter(text)
    prep = prepare(text)
    want = {(r.line - 1, r.col) for r in prep.imports + prep.skipped_imports}
    assert P.import_cols(body, P.structure(body), fm.end_line) == want


def test_ancestor_bases_match_pathlib(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for d in (root, root / "a", root / "a" / "b" / ".c", tmp_path / "elsewhere"):
        want = [root] if not str(d).startswith(str(root)) else [d, *[p for p in d.parents if root in (p, *p.parents)]]
        got = PI.ancestor_bases(str(d), str(root))
        assert [b.abs for b in got] == [str(p) for p in want]
        assert [b.rel for b in got] == ["" if p == root else p.relative_to(root).as_posix() for p in want]


# -- real-world false positives (fixtures/check/stale_refs_realworld*): the unit-level details ------------------
@pytest.mark.parametrize("line", [
    # example markers in other languages
    "設定例: `src/x.ts`", "設定例：`src/x.ts`", "例えば `src/x.ts` など", "（例: `src/x.ts`）", "例如 `src/x.ts`",
    "比如 `src/x.ts`", "目录如：`src/x.ts`", "Seiten, z.B. `src/x.ts`", "Seiten, z. B. `src/x.ts`",
    "pages, par exemple `src/x.ts`", "pages, p. ex. `src/x.ts`", "por ejemplo `src/x.ts`", "p. ej. `src/x.ts`",
    # paths that need not exist
    "Screens are saved to `out2/x.png`.", "Clone it into `vendor/x/README.md`.", "It clones the SDK into `sdk/x.sql`.",
    "Notes in `notes/x.md` (gitignored).", "`notes/x.md` is git-ignored.", "`notes/x.md` is ignored by git.",
    "Overrides: `config/x.yaml` (local).", "`config/x.yaml` is local-only.",
    "`docs/x.md` may not exist.", "Read `docs/x.md` if it exists.",
    "Load `config/x.yaml` if present.", "`config/x.yaml` 可能尚不存在。",
    "`config/x.yaml` 不存在则使用默认值。", "`config/x.yaml` が存在しない場合", "Output goes to `out2/x.json`.",
])
def test_context_lines_are_skipped(tmp_path: Path, line: str) -> None:
    from ctxls.core.mentions import CLAIM, LineContext, classify
    path = line.split("`")[1]
    col = line.index(path)
    assert R._context_more(line) or classify(line, col, col + len(path), LineContext((), (), "")).kind != CLAIM
    ws = _ws(tmp_path, {"repo/CLAUDE.md": f"# T\n- {line}\n", "repo/src/a.ts": "", "repo/notes/a.md": "",
                        "repo/config/a.md": "", "repo/docs/a.md": "", "repo/reports/a.md": ""}, "CTX401")
    assert run_checks(ws).findings == []


@pytest.mark.parametrize("line", [
    # near misses: the same words without the meaning, or inside other words
    "Locally, run `scripts/x.sh`.", "The `docs/x.md` page exists.", "Present the numbers of `docs/x.md`.",
    "Retry logic in circuit breakers: `src/x.ts`.", "The localization files: `src/x.ts`.",
    "Savings are computed in `src/x.ts`.", "Optionally-typed? No: `src/x.ts`.", "The zebra.b file: `src/x.ts`.",
    "Our app.example config: `src/x.ts`.", "例外処理は `src/x.ts` にある。", "Use `src/x.ts` for pex.",
    # too broad to skip: these name real paths
    "Tests run in CI via `scripts/x.sh`.", "An optional `config/x.yaml` overrides colors.",
    "**CI:** `scripts/x.sh` runs lint.", "Clone the fixtures with `scripts/x.sh`.",
])
def test_near_misses_are_still_read(tmp_path: Path, line: str) -> None:
    path = line.split("`")[1]
    assert path in [t[1] for t in P._line_tokens.__wrapped__(line)] and not R._context_more(line)
    ws = _ws(tmp_path, {"repo/CLAUDE.md": f"# T\n- {line}\n", "repo/src/a.ts": "", "repo/docs/a.md": "",
                        "repo/scripts/a.sh": ""}, "CTX401")
    assert [f.data["path"] for f in run_checks(ws).findings] == [path]


def _messages(ws: Workspace) -> dict[str, str]:
    return {f.data["path"]: f.message for f in run_checks(ws).findings}


def test_extensionless_paths_resolve_as_a_file_with_an_extension(tmp_path: Path) -> None:
    ws = _ws(tmp_path, {
        "repo/CLAUDE.md": "# T\n- `src/utils/format`, [fmt](./src/utils/format), `Base/tests/TestCore`.\n"
                          "- `src/app.module`, `utils/format` (a tail), `src/gone.py`, `src/utils/format/`.\n",
        "repo/src/utils/format.ts": "",
        "repo/src/app.module.ts": "",
        "repo/src/gone.py.bak": "",
        "repo/Base/tests/TestCore.dpr": "",
        "repo/utils/keep.txt": "",
        "repo/src/CLAUDE.md": "# S\n- `utils/format` from here.\n",
    }, "CTX401")
    # a name with a known extension is not resolved by a longer one; a trailing slash names a directory; a
    # markdown link must name the file itself (GitHub and the agent's Read open exactly that)
    assert sorted(_messages(ws)) == ["./src/utils/format", "src/gone.py", "src/utils/format/"]


def test_extensionless_tail_resolves_by_stem(tmp_path: Path) -> None:
    ws = _ws(tmp_path, {
        "repo/CLAUDE.md": "# T\n- `web/components/Button` and `web/components/Missing`.\n",
        "repo/apps/web/components/Button.tsx": "",
        "repo/web/README.md": "",
    }, "CTX401")
    assert sorted(_messages(ws)) == ["web/components/Missing"]


def test_bare_js_library_names_are_not_reported(tmp_path: Path) -> None:
    ws = _ws(tmp_path, {
        "repo/CLAUDE.md": "# T\n- Uses `decimal.js`, `Next.js` and @chart.js; `worker.ts` and `src/chart.js`.\n"
                          "- See [the helper](helper.js); start `server.js`.\n",
    }, "CTX401")
    # library names only: a bare `server.js` is a file name
    assert sorted(_messages(ws)) == ["helper.js", "server.js", "src/chart.js", "worker.ts"]


@pytest.mark.parametrize("name,generic", [
    ("CLAUDE.md", True), ("claude.md", True), ("AGENTS.md", True), ("CLAUDE.local.md", True), ("README.md", True),
    ("Readme.rst", True), ("index.ts", True), ("index.d.ts", True), ("__init__.py", True), ("package.json", True),
    ("Makefile", True), ("jest.config.js", True), ("vite.config.mts", True), ("tsconfig.build.json", True),
    (".eslintrc.json", True), ("SKILL.md", True),
    ("refunds.py", False), ("handlers.py", False), ("app.yaml", False), ("indexer.py", False),
    ("config.ts", False), ("readme_gen.py", False),
])
def test_generic_names(name: str, generic: bool) -> None:
    assert R._generic_name(name) is generic


def test_no_move_hint_to_a_generic_name(tmp_path: Path) -> None:
    ws = _ws(tmp_path, {
        "repo/CLAUDE.md": "# T\n- `api/CLAUDE.md`, `docs/style/README.md`, `src/old/index.ts`, `conf/app.yaml`.\n",
        "repo/docs/guides/README.md": "",
        "repo/web/index.ts": "",
        "repo/app/app.yaml": "",
    }, "CTX401")
    found = {f.data["path"]: f for f in run_checks(ws).findings}
    for p in ("api/CLAUDE.md", "docs/style/README.md", "src/old/index.ts"):
        assert found[p].message == f"`{p}` does not exist; point the reference at the right path or remove it"
        assert found[p].fixes == [] and found[p].data["candidates"] == []
    assert "did it move to `app/app.yaml`?" in found["conf/app.yaml"].message  # a specific name still moves


def test_no_move_hint_to_the_file_itself(tmp_path: Path) -> None:
    ws = _ws(tmp_path, {
        "repo/CLAUDE.md": "# T\n",
        "repo/.claude/rules/testing.md": "# Testing\n- See `docs/rules/testing.md`.\n",
        "repo/.claude/rules/other.md": "# Other\n- See `docs/rules/testing.md`.\n",
    }, "CTX401")
    got = {f.path.name: f for f in run_checks(ws).findings}
    assert "did it move" not in got["testing.md"].message and got["testing.md"].fixes == []
    # from another file the same path may well have moved to that rule (the hints are cached per directory)
    assert "did it move to `.claude/rules/testing.md`?" in got["other.md"].message


def test_split_hint_needs_the_directory_at_the_same_place(tmp_path: Path) -> None:
    ws = _ws(tmp_path, {
        "repo/CLAUDE.md": "# T\n- `src/routes.ts`, `app/handlers.ts`, `pkg/web/views.py`.\n",
        "repo/src/keep.ts": "",
        "repo/lib/routes/a.ts": "",
        "repo/app/handlers/users.ts": "",
        "repo/pkg/CLAUDE.md": "# P\n- `web/views.py` from here.\n",
        "repo/pkg/web/views/a.py": "",
    }, "CTX401")
    got = {(f.path.parent.name, f.data["path"]): f.message for f in run_checks(ws).findings}
    assert "split" not in got[("repo", "src/routes.ts")]
    assert "there is now a directory `app/handlers/`: was it split up?" in got[("repo", "app/handlers.ts")]
    assert "there is now a directory `pkg/web/views/`" in got[("repo", "pkg/web/views.py")]
    assert "there is now a directory `pkg/web/views/`" in got[("pkg", "web/views.py")]


def test_the_repository_a_line_names_by_this_ones_name_is_this_one(tmp_path: Path) -> None:
    """Set 22's cloudzero-agent: "fall back to the local copy at `docs/wiki/Guide.md` in the agent repository" names
    this repository by a part of its name, so the path is a claim about this workspace; "in the billing repository"
    stays another's."""
    root = tmp_path / "acme-agent"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "index.md").write_text("# Docs\n")
    (root / "CLAUDE.md").write_text(
        "# Agent\n\n"
        "If the fetch fails, fall back to the local copy at `docs/wiki/Guide.md` in the agent repository.\n"
        "Invoices are described at `docs/invoices/README.md` in the billing repository.\n")
    (tmp_path / "home").mkdir()
    ws = Workspace(root, Settings(home=tmp_path / "home", ceiling=tmp_path), CheckConfig(select=frozenset({"CTX401"})))
    got = {(f.line, f.severity) for f in run_checks(ws).findings}
    assert got == {(3, "warning")}
