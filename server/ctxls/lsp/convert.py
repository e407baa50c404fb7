"""The one place where core data (code-point spans, paths) becomes LSP data (UTF-16 ranges, URIs)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types as T

from ..core.findings import Finding, Span

SEVERITY = {
    "error": T.DiagnosticSeverity.Error,
    "warning": T.DiagnosticSeverity.Warning,
    "info": T.DiagnosticSeverity.Information,
    "hint": T.DiagnosticSeverity.Hint,
}
SOURCE = "ctxls"


def uri_to_path(uri: str) -> Path | None:
    """Filesystem path of a `file:` URI; None for other schemes or garbage."""
    try:
        u = urlparse(uri)
    except (ValueError, TypeError):
        return None
    if u.scheme != "file":
        return None
    p = unquote(u.path)
    return Path(p) if p.startswith("/") else None


def path_to_uri(path: Path) -> str:
    return path.as_uri()


def to_range(server, path: Path, span: Span, lines: list[str] | None = None) -> T.Range:
    """UTF-16 (or the negotiated encoding) range of a code-point span of ``path``."""
    codec = server.workspace.position_codec
    if lines is None:
        lines = server.lines_of(path)
    r = T.Range(T.Position(span.start_line, span.start_col), T.Position(span.end_line, span.end_col))
    try:
        return codec.range_to_client_units(lines, r)
    except Exception:  # a stale span past the end of a shorter buffer: clamp rather than fail
        last = max(0, len(lines) - 1)
        s = T.Position(min(span.start_line, last), 0)
        return T.Range(s, s)


def from_position(server, path: Path, pos: T.Position) -> tuple[int, int]:
    """Code-point (line, col) of a client position."""
    lines = server.lines_of(path)
    try:
        p = server.workspace.position_codec.position_from_client_units(lines, pos)
        return p.line, p.character
    except Exception:
        return pos.line, pos.character


def to_diagnostic(server, f: Finding, lines: list[str] | None = None) -> T.Diagnostic:
    related = []
    for r in f.related:
        related.append(T.DiagnosticRelatedInformation(
            location=T.Location(uri=path_to_uri(r.path), range=to_range(server, r.path, r.span)),
            message=r.message))
    return T.Diagnostic(
        range=to_range(server, f.path, f.span, lines),
        message=f.message,
        severity=SEVERITY.get(f.severity, T.DiagnosticSeverity.Warning),
        code=f.code,
        source=SOURCE,
        related_information=related or None,
        data={"code": f.code, "message": f.message},
    )
