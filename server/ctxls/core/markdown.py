"""Markdown preprocessing exactly as Claude Code does it before sending a file (spec A3, A4).

- YAML frontmatter is stripped (and parsed, for rules and skills);
- block-level HTML comments are stripped (not inside code; an unclosed comment is kept);
- `@path` imports are found outside code blocks, code spans and HTML comments;
- the result is trimmed.

All functions here are pure and never raise.  Line numbers are 1-based and refer to the original file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterator

import yaml

from . import lazyre
from .words import plural

# libyaml's C loader when PyYAML was built with it (same safe semantics, ~10x faster).
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Spec A4: `(?:^|\s)@((?:[^\s\\]|\\ )+)`
_IMPORT_RE = lazyre.compile(r"(?:^|(?<=\s))@((?:[^\s\\]|\\ )+)")
_IMPORT_START_OK = lazyre.compile(r"^(?:\./|~/|/.|[A-Za-z0-9._-])")
CODE_SPAN = lazyre.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
"""A backtick code span: a run of backticks, the content (group 2), the same run again, not part of a longer
one. The one code-span pattern of ctxls (the rules use it through `code_spans` and `in_code_span`)."""
_CODE_SPAN_1 = lazyre.compile(r"(`)([^`\n]+)`")  # the same matches on a line without a double backtick, faster
_INLINE_COMMENT_RE = lazyre.compile(r"<!--.*?-->")


@dataclass(frozen=True)
class Frontmatter:
    data: dict[str, Any] | None
    """Parsed mapping, or None when absent or unparseable."""
    error: str | None
    """Why the frontmatter does not parse, with its line."""
    end_line: int
    """Last line of the frontmatter block (the closing ---), 0 when there is none."""
    present: bool
    strict_error: str | None = None
    """Set when the block is not valid YAML but Claude Code still reads it: its second attempt, with the values
    that hold YAML-special characters quoted (`quote_problem_values`), parses. ``data`` is what that attempt
    gives; other agents and YAML tools drop the fields."""


def split_frontmatter(text: str) -> tuple[Frontmatter, str]:
    """Return (frontmatter, body). The body keeps its original line numbering offset by ``end_line``."""
    if not (text.startswith("---\n") or text.startswith("---\r\n")):
        return Frontmatter(None, None, 0, False), text
    lines = text.splitlines(keepends=True)
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r\n").rstrip() == "---":
            raw = "".join(lines[1:i])
            body = "".join(lines[i + 1:])
            data, error = _parse_yaml(raw)
            strict = None
            if error is not None and error.startswith("invalid YAML"):
                # Claude Code's parseFrontmatter tries again with the problem values quoted (frontmatterParser.ts)
                # (line ends normalised first: a file checked out with CRLF must read as the same file)
                retried, again = _parse_yaml(quote_problem_values(raw.replace("\r\n", "\n")))
                if again is None and retried is not None:
                    data, error, strict = retried, None, error
            return Frontmatter(data, error, i + 1, True, strict), body
    # No closing fence: Claude Code does not treat it as frontmatter.
    return Frontmatter(None, "frontmatter has no closing '---' line", 0, False), text


# Claude Code's frontmatterParser.ts: YAML_SPECIAL_CHARS, and the `key: value` lines its retry looks at (top
# level, plain scalar on the same line).
_YAML_SPECIAL_RE = lazyre.compile(r"[{}\[\]*&#!|>%@`]|: ")
_TOP_KEY_VALUE_RE = lazyre.compile(r"^([a-zA-Z_-]+):\s+([^\r\n\u2028\u2029]+)$")  # JavaScript's `.` stops at \r


def quote_problem_values(raw: str) -> str:
    """Claude Code's `quoteProblematicValues`, run when a frontmatter block does not parse: every top-level
    `key: value` line whose value is not quoted and holds a YAML-special character gets the value double-quoted
    (backslashes and quotes escaped). A value that is a valid flow list (`[a, b]`) is left as it is (2.1.214)."""
    out = []
    for line in raw.split("\n"):
        m = _TOP_KEY_VALUE_RE.match(line)
        if m is not None:
            value = m.group(2)
            if not (value[0] == value[-1] == '"' or value[0] == value[-1] == "'") and not _flow_list(value) \
                    and _YAML_SPECIAL_RE.search(value):
                value = value.replace("\\", "\\\\").replace('"', '\\"')
                line = f'{m.group(1)}: "{value}"'
        out.append(line)
    return "\n".join(out)


def _flow_list(value: str) -> bool:
    if not (value.startswith("[") and value.endswith("]")):
        return False
    try:
        return isinstance(yaml.load(value, Loader=_YAML_LOADER), list)
    except Exception:
        return False


def _parse_yaml(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    try:
        data = yaml.load(raw, Loader=_YAML_LOADER) if raw.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at frontmatter line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return None, f"invalid YAML{where}: {problem}"
    except Exception as exc:  # pragma: no cover - yaml can raise odd things on odd input
        return None, f"invalid YAML: {exc}"
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return None, f"frontmatter is a {type(data).__name__}, not a mapping"
    return data, None


@lru_cache(maxsize=1)
def _md():
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    md.disable("inline")  # block structure is all we need; code spans are handled per line below
    return md


@dataclass(frozen=True)
class Structure:
    code_lines: frozenset[int]
    """0-based body lines inside fenced or indented code blocks."""
    comment_lines: frozenset[int]
    """0-based body lines of closed block-level HTML comments."""


_FENCE_RE = lazyre.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_INDENTED_AT_RE = lazyre.compile(r"^(?: {4}|\t).*@", re.MULTILINE)


@lru_cache(maxsize=4096)
def structure(body: str) -> Structure:
    """Code and comment lines of a markdown body (cached by content, like `prepare`: the loader and several
    rules ask for the same bodies; a `Structure` is immutable).

    Most instruction files need no full parse: a line scanner finds fences and block comments exactly as
    CommonMark does for top-level blocks.  Indented code blocks and blocks nested in lists are where the two
    can differ, so the CommonMark lexer (markdown-it) runs whenever an indented line holds an `@`.
    """
    if "```" not in body and "~~~" not in body and "<!--" not in body and not _INDENTED_AT_RE.search(body):
        return Structure(frozenset(), frozenset())
    if _INDENTED_AT_RE.search(body):
        return _structure_commonmark(body)
    return _structure_fast(body)


def _structure_fast(body: str) -> Structure:
    code: set[int] = set()
    comments: set[int] = set()
    lines = body.split("\n")
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        m = _FENCE_RE.match(line)
        if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            ch, size = m.group(1)[0], len(m.group(1))
            j = i + 1
            while j < n:
                c = _FENCE_RE.match(lines[j])
                if c and c.group(1)[0] == ch and len(c.group(1)) >= size and not c.group(2).strip():
                    break
                j += 1
            code.update(range(i, min(j, n - 1) + 1))
            i = j + 1
            continue
        stripped = line.lstrip(" ")
        if len(line) - len(stripped) <= 3 and stripped.startswith("<!--"):
            j = i
            while j < n and "-->" not in lines[j][(line.index("<!--") + 4) if j == i else 0:]:
                j += 1
            if j < n:  # closed: the whole block is a comment; unclosed comments are kept
                comments.update(range(i, j + 1))
                i = j + 1
                continue
        i += 1
    return Structure(frozenset(code), frozenset(comments))


def _structure_commonmark(body: str) -> Structure:
    try:
        tokens = _md().parse(body)
    except Exception:  # markdown-it is robust, but a lexer bug must not take the loader down
        return Structure(frozenset(), frozenset())
    code: set[int] = set()
    comments: set[int] = set()
    for tok in tokens:
        if tok.map is None:
            continue
        if tok.type in ("fence", "code_block"):
            code.update(range(tok.map[0], tok.map[1]))
        elif tok.type == "html_block":
            content = tok.content.strip()
            if content.startswith("<!--") and content.endswith("-->"):
                comments.update(range(tok.map[0], tok.map[1]))
    return Structure(frozenset(code), frozenset(comments))


@dataclass(frozen=True)
class ImportRef:
    raw: str
    """The text after `@`, as written."""
    path: str
    """Unescaped path with any `#fragment` dropped."""
    line: int
    """1-based line in the original file."""
    col: int
    """0-based code-point column of the `@`."""
    in_code: bool = False
    """True when the reference sits in code or an HTML comment: it is shown but never loaded."""


@dataclass(frozen=True)
class Prepared:
    """A file as the agent sends it, plus where that text came from."""

    content: str
    first_line: int
    """1-based first and last line of the original file that are loaded (0, 0 when nothing is)."""
    last_line: int
    frontmatter: Frontmatter
    imports: tuple[ImportRef, ...]
    skipped_imports: tuple[ImportRef, ...] = ()
    removed: tuple[str, ...] = field(default=())
    """Human notes on what preprocessing removed (frontmatter, comments)."""


def split_lines(text: str) -> list[str]:
    """Lines as Claude Code, editors and every line number of ctxls count them: split at `\n` only, a `\r`
    before it dropped. (`str.splitlines` also breaks at U+2028, form feeds and other separators, which would
    shift every line after one.)"""
    lines = text.split("\n")
    if "\r" in text:
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    return lines


def line_count(text: str) -> int:
    """Lines of ``text`` as `split_lines` counts them, a final newline ending the last line rather than starting
    an empty one."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


@lru_cache(maxsize=4096)
def prepare(text: str) -> Prepared:
    """Preprocess a file's text (cached by content: the loader asks for the same files many times)."""
    fm, body = split_frontmatter(text)
    offset = fm.end_line
    st = structure(body)
    lines = split_lines(body)
    removed: list[str] = []
    if fm.present:
        removed.append(f"frontmatter (lines 1-{fm.end_line})")
    kept_idx: list[int] = []
    for i in range(len(lines)):
        if i in st.comment_lines:
            continue
        kept_idx.append(i)
    if st.comment_lines:
        n = len(st.comment_lines)
        removed.append(f"{plural(n, 'line')} of HTML comments")
    # trim: first and last non-blank kept line
    nonblank = [i for i in kept_idx if lines[i].strip()]
    if not nonblank:
        return Prepared("", 0, 0, fm, (), (), tuple(removed))
    lo, hi = nonblank[0], nonblank[-1]
    kept = [lines[i] for i in kept_idx if lo <= i <= hi]
    content = "\n".join(kept).strip()
    imports, skipped = find_imports(lines, st, offset)
    return Prepared(content, lo + 1 + offset, hi + 1 + offset, fm, imports, skipped, tuple(removed))


def find_imports(lines: list[str], st: Structure, offset: int = 0) -> tuple[tuple[ImportRef, ...], tuple[ImportRef, ...]]:
    """Imports that load, and `@` references that do not because they sit in code or comments."""
    live: list[ImportRef] = []
    dead: list[ImportRef] = []
    for i, line in enumerate(lines):
        if "@" not in line:
            continue
        blocked = i in st.code_lines or i in st.comment_lines
        masked = line if blocked else _mask(line)
        for m in _IMPORT_RE.finditer(line):
            raw = m.group(1)
            if not _IMPORT_START_OK.match(raw) or raw.startswith("@") or raw.startswith("#"):
                continue
            path = raw.split("#", 1)[0].replace("\\ ", " ")
            if not path or path == "/":
                continue
            in_code = blocked or masked[m.start(1) - 1] != "@"
            ref = ImportRef(raw, path, i + 1 + offset, m.start(1) - 1, in_code)
            (dead if in_code else live).append(ref)
    return tuple(live), tuple(dead)


def code_spans(line: str) -> Iterator[re.Match]:
    """The code spans of ``line`` (`CODE_SPAN` matches), left to right."""
    if "`" not in line:
        return iter(())
    return (CODE_SPAN if "``" in line else _CODE_SPAN_1).finditer(line)


def in_code_span(line: str, col: int) -> bool:
    """Whether column ``col`` of ``line`` lies inside a backtick code span (the span's backticks included)."""
    return any(m.start() <= col < m.end() for m in code_spans(line))


def _mask(line: str) -> str:
    """Replace code spans and inline HTML comments by spaces, keeping columns."""
    if "`" in line:
        line = CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
    if "<!--" in line:
        line = _INLINE_COMMENT_RE.sub(lambda m: " " * len(m.group(0)), line)
    return line


def first_paragraph(body: str) -> str:
    """First paragraph of a markdown body (the skill description fallback, spec B2)."""
    para: list[str] = []
    for line in split_lines(body):
        s = line.strip()
        if not s:
            if para:
                break
            continue
        if s.startswith("#") and not para:
            continue
        para.append(s)
    return " ".join(para)
