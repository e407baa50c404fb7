"""Preprocessing: the fast line scanner must agree with the CommonMark lexer on the lines that matter."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxls.core.markdown import _structure_commonmark, _structure_fast, find_imports, prepare, split_frontmatter

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
    fm, body = split_frontmatter("---\npaths: [unclosed\n---\nx\n")
    assert fm.data is None and "invalid YAML" in (fm.error or "") and body == "x\n"
    fm, _ = split_frontmatter("---\n- a list\n---\n")
    assert fm.data is None and "not a mapping" in (fm.error or "")
