"""Preprocessing: the fast line scanner must agree with the CommonMark lexer on the lines that matter."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxls.core.markdown import (_structure_commonmark, _structure_fast, find_imports, prepare, quote_problem_values,
                                 split_frontmatter)

ROOT = Path(__file__).resolve().parent.parent

EDGE_CASES = [
    "a\n```\n@x.md\n```\n@y.md\n",
    "~~~~\n```\n@in.md\n~~~~\n@out.md\n",
    "```python\nunclosed fence\n@in.md\n",
    "<!-- one line -->\n@a.md\n",
    "<!--\nmulti\n@c.md\n-->\n@d.md\n",
    "<!-- unclosed\n@e.md\n",
    "   ```\n   @f.md\n   ```\n",
    "- item\n\n  ```\n  @g.md\n  ```\n",
    "text ```not a fence``` @h.md\n",
    "``` `x`\n@i.md\n",
]


def _corpus() -> list[str]:
    texts = list(EDGE_CASES)
    for p in sorted((ROOT / "fixtures").rglob("*.md")):
        texts.append(p.read_text(encoding="utf-8", errors="replace"))
    return texts


@pytest.mark.parametrize("text", _corpus())
def test_fast_scanner_agrees_with_commonmark_on_imports(text: str) -> None:
    fm, body = split_frontmatter(text)
    lines = body.splitlines()
    fast = find_imports(lines, _structure_fast(body))
    full = find_imports(lines, _structure_commonmark(body))
    assert fast == full


def test_prepare_strips_and_reports() -> None:
    p = prepare("---\na: 1\n---\n\n<!-- c -->\nbody\n")
    assert p.content == "body" and (p.first_line, p.last_line) == (6, 6)
    assert p.frontmatter.data == {"a": 1} and any("frontmatter" in r for r in p.removed)


def test_broken_frontmatter_is_data() -> None:
    fm, body = split_frontmatter("---\npaths:\n  - \"unclosed\n---\nx\n")
    assert fm.data is None and "invalid YAML" in (fm.error or "") and body == "x\n" and fm.strict_error is None
    fm, _ = split_frontmatter("---\n- a list\n---\n")
    assert fm.data is None and "not a mapping" in (fm.error or "")


@pytest.mark.parametrize("raw, data", [
    # Claude Code's second attempt (frontmatterParser.ts quoteProblematicValues) reads what strict YAML cannot
    ("paths: **/*.ts", {"paths": "**/*.ts"}),
    ("paths: {src,lib}/**/*.ts, *.md", {"paths": "{src,lib}/**/*.ts, *.md"}),
    ("paths: [unclosed", {"paths": "[unclosed"}),
    ("name: x\ndescription: Deploy: runs it", {"name": "x", "description": "Deploy: runs it"}),
    # a valid flow list and an already quoted value stay as they are; only the broken line is quoted
    ("tags: [a, b]\ntitle: 'x: y'\nwhen: a: b", {"tags": ["a", "b"], "title": "x: y", "when": "a: b"}),
    # backslashes and double quotes are escaped inside the new quotes
    ('note: say "hi": C:\\dir *', {"note": 'say "hi": C:\\dir *'}),
    # a file checked out with CRLF line ends reads as the same file
    ("paths: **/*.ts\r\nname: x\r", {"paths": "**/*.ts", "name": "x"}),
])
def test_frontmatter_claude_code_reads_after_quoting(raw: str, data: dict) -> None:
    fm, body = split_frontmatter(f"---\n{raw}\n---\nbody\n")
    assert fm.data == data and fm.error is None and body == "body\n"
    assert fm.strict_error and fm.strict_error.startswith("invalid YAML")


def test_quote_problem_values_leaves_nested_and_clean_lines() -> None:
    raw = "a: plain\nlist:\n  - *alias\n  key: v: w\nb: *x"
    assert quote_problem_values(raw) == 'a: plain\nlist:\n  - *alias\n  key: v: w\nb: "*x"'
    fm, _ = split_frontmatter(f"---\n{raw}\n---\n")  # the indented lines are not retried: still broken
    assert fm.data is None and fm.error and fm.strict_error is None


@pytest.mark.parametrize("sep", ["\u2028", "\x0c", "\x85", "\x1e", "\x0b"])
def test_lines_split_at_newlines_only(sep: str) -> None:
    """U+2028, form feeds and other separators `str.splitlines` breaks at are characters inside a line for Claude
    Code and editors: an import after one is on the line every other line number says."""
    text = f"# Title\nSome text with a separator{sep}here.\n@missing.md\nSee `nope/file.md`.\n"
    prep = prepare(text)
    assert [r.line for r in prep.imports] == [3]
    assert sep in prep.content and prep.last_line == 4
