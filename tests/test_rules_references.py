"""Unit tests of the stale-reference rules (CTX401, CTX402) beyond the fixtures in fixtures/check/ref_*."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxls.core.check import CheckConfig, Workspace, run_checks
from ctxls.core.rules.references import _extract, _shape
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
from ctxls.core.rules import references as R


def _fuzz(alphabet: str, n: int, max_len: int, seed: int = 7) -> list[str]:
    rnd = random.Random(seed)
    return ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, max_len))) for _ in range(n)]


def test_bare_regex_matches_the_plain_one() -> None:
    plain = re.compile(r"[^\s/.]*[/.]\S*")
    for s in _fuzz("ab/. \t`@\u00a0", 20000, 16):
        assert [(m.start(), m.group()) for m in R._BARE.finditer(s)] == \
            [(m.start(), m.group()) for m in plain.finditer(s)], repr(s)


def test_single_backtick_code_spans_match_the_general_regex() -> None:
    for s in _fuzz("a `\t\n", 20000, 14):
        if "``" in s:
            continue
        got = [(m.start(), m.end(), m.group(2), m.start(2)) for m in R._CODE_SPAN_1.finditer(s)]
        assert got == [(m.start(), m.end(), m.group(2), m.start(2)) for m in R._CODE_SPAN.finditer(s)], repr(s)


def test_context_words_cover_every_context_match() -> None:
    words = ["create", "regenerated", "outputs", "written  to", "writes it to", "emits", "scaffolding", "renamed",
             "moved", "deleting", "removed", "split", "replaced", "deprecated", "formerly", "no\tlonger",
             "used to", "dropped", "for example", "placeholder", "e.g.", "i.e."]
    rnd = random.Random(3)
    for _ in range(5000):
        line = " ".join(rnd.choice(words + ["x", "a.b", "-", "ok"]) for _ in range(rnd.randint(1, 4)))
        low = line.lower()
        if R._CONTEXT_SKIP.search(low):
            assert any(w in low for w in R._CONTEXT_WORDS), line


def test_indented_block_search_matches_the_plain_one() -> None:
    plain = re.compile(r"(?:^|\n)[ \t]*\n(?: {4}|\t)[ \t]*\S")
    for s in _fuzz(" \t\nab", 30000, 14):
        fast = ("\n    " in s or "\n\t" in s) and R._INDENTED_BLOCK.search("\n" + s)
        assert bool(fast) == bool(plain.search(s)), repr(s)


def test_line_prefilter_only_drops_lines_without_paths() -> None:
    """Of the lines with a `/` or a dot (not at the end), _extract skips those with neither a `/`, an extension's
    dot nor a `[`: none of their tokens may be a path."""
    for line in _fuzz("ab./[]()`@ :x1", 30000, 14):
        if "/" in line or "." not in line.rstrip(" \r.:!?") or "[" in line or R._DOT_EXT.search(line):
            continue
        assert all(R._shape(t[1], t[2]) is None for t in R._line_tokens.__wrapped__(line)), repr(line)


@pytest.mark.parametrize("text", [
    "# T\n@docs/a.md and `@x/y.md`\n```\n@in/code.md\n```\n",
    "---\nname: x\n---\nsee @a.md\r\n@b/c.md\n",
    "a\rb @c.md\n\u2028@d.md `@e.md`\n",
    "<!-- @hidden.md -->\n    @indented.md\n",
])
def test_import_columns_are_those_prepare_finds(text: str) -> None:
    fm, body = R.split_frontmatter(text)
    prep = prepare(text)
    want = {(r.line - 1, r.col) for r in prep.imports + prep.skipped_imports}
    assert R._import_cols(body, R.structure(body), fm.end_line) == want


def test_ancestor_bases_match_pathlib(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for d in (root, root / "a", root / "a" / "b" / ".c", tmp_path / "elsewhere"):
        want = [root] if not str(d).startswith(str(root)) else [d, *[p for p in d.parents if root in (p, *p.parents)]]
        got = R._ancestor_bases(str(d), str(root))
        assert [b.abs for b in got] == [str(p) for p in want]
        assert [b.rel for b in got] == ["" if p == root else p.relative_to(root).as_posix() for p in want]
