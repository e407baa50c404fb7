"""Findings, fixes and edits: what rules return. Spans are 0-based code points; the LSP converts to UTF-16."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

SEVERITIES = ("error", "warning", "info", "hint")
SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}


class Span(NamedTuple):
    """A range of 0-based lines and code-point columns. A named tuple: rules build tens of thousands of these,
    and a tuple is several times cheaper to make than a frozen dataclass; it orders and hashes the same way."""

    start_line: int
    start_col: int
    end_line: int
    end_col: int

    @classmethod
    def line(cls, line: int, text: str | None = None) -> "Span":
        """The whole of 0-based ``line`` (``text`` = that line's text, for the end column; the `\r` of a CRLF
        line end is not part of the line)."""
        return cls(line, 0, line, _width(text) if text is not None else 0)

    @classmethod
    def lines(cls, first: int, last: int, last_text: str = "") -> "Span":
        return cls(first, 0, last, _width(last_text))


def _width(text: str) -> int:
    return len(text) - 1 if text.endswith("\r") else len(text)


@dataclass(frozen=True)
class Edit:
    """Replace ``span`` of ``path`` by ``new_text``; with ``create``, write a new file (``span`` unused)."""

    path: Path
    span: Span | None
    new_text: str
    create: bool = False


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    safe: bool = True
    """Safe fixes are applied by `ctxls check --fix`; unsafe ones are offered as code actions only."""


@dataclass(frozen=True)
class Related:
    path: Path
    span: Span
    message: str


@dataclass
class Finding:
    """What a rule reports. Never modified once reported, except for the severity override `run_checks`
    applies: rules keep and hand back the same findings from one check to the next, and the language server
    compares them by identity to know what to publish again."""

    code: str
    severity: str
    path: Path
    span: Span
    message: str
    related: list[Related] = field(default_factory=list)
    fixes: list[Fix] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def line(self) -> int:
        """1-based line, as the CLI reports it."""
        return self.span.start_line + 1

    def key(self) -> tuple:
        return (str(self.path), self.span, self.code, self.message)


def order_key(f: Finding) -> tuple:
    """The order findings are reported in: path, span, code (the span's fields inlined: comparing them as plain
    integers is several times faster than comparing `Span` objects, for the same order)."""
    s = f.span
    return (str(f.path), s.start_line, s.start_col, s.end_line, s.end_col, f.code)
