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


def client_units(text: str, encoding) -> int:
    """Length of ``text`` in the client's position units (pygls' `PositionCodec` counts one character at a
    time in Python; this counts in C, with the same result: an ASCII string is its length in every encoding)."""
    if text.isascii() or encoding == T.PositionEncodingKind.Utf32:
        return len(text)
    if encoding == T.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2  # pygls falls back to UTF-16 too


def _position(lines: list[str], line: int, col: int, encoding) -> tuple[int, int]:
    """(line, character) in client units of a code-point position, as `PositionCodec.position_to_client_units`
    computes it (a line past the end becomes the start of the line after the last one)."""
    try:
        text = lines[line]
    except IndexError:
        return len(lines), 0
    return line, client_units(text[:col], encoding)


def range_dict(lines: list[str], span: Span, encoding) -> dict:
    """The JSON form of the client-unit `Range` of ``span`` (`_position` for both ends, with the common case,
    both on one ASCII line, inline: publishing converts every diagnostic of every changed file)."""
    sl, sc, el, ec = span
    if sl == el and 0 <= sl < len(lines) and sc >= 0 and ec >= 0:
        text = lines[sl]
        if text.isascii():
            n = len(text)
            return {"start": {"line": sl, "character": sc if sc < n else n},
                    "end": {"line": sl, "character": ec if ec < n else n}}
    sl, sc = _position(lines, sl, sc, encoding)
    el, ec = _position(lines, el, ec, encoding)
    return {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}


def to_range(server, path: Path, span: Span, lines: list[str] | None = None) -> T.Range:
    """UTF-16 (or the negotiated encoding) range of a code-point span of ``path``."""
    if lines is None:
        lines = server.lines_of(path)
    r = range_dict(lines, span, server.workspace.position_codec.encoding)
    s, e = r["start"], r["end"]
    return T.Range(T.Position(s["line"], s["character"]), T.Position(e["line"], e["character"]))


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
    )


def diagnostic_dict(f: Finding, encoding, lines_of, uri_of=path_to_uri) -> dict:
    """The JSON form of `to_diagnostic` (what pygls' converter makes of it), built directly: publishing
    converts hundreds of findings per edit. ``lines_of(path)`` gives a file's current lines."""
    d = {"range": range_dict(lines_of(f.path), f.span, encoding), "message": f.message,
         "severity": int(SEVERITY.get(f.severity, T.DiagnosticSeverity.Warning)), "code": f.code,
         "source": SOURCE}
    if f.related:
        d["relatedInformation"] = [
            {"location": {"uri": uri_of(r.path), "range": range_dict(lines_of(r.path), r.span, encoding)},
             "message": r.message} for r in f.related]
    return d
