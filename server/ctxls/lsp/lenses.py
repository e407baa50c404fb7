"""Code lenses (what a file costs and where it loads), document links and go-to-definition for @imports and
path references."""

from __future__ import annotations

import os
import re
from pathlib import Path

from lsprotocol import types as T

from ..core import discovery as D
from ..core.findings import Span
from ..core.words import plural
from ..core.loader import resolve_import
from ..core.markdown import prepare
from .convert import from_position, path_to_uri, to_range
from .server import CtxlsServer

_LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")
_BACKTICK = re.compile(r"`([^`\s]+/[^`\s]*|[^`\s]+\.[A-Za-z0-9]{1,6})`")


def register(server: CtxlsServer) -> None:
    @server.feature(T.TEXT_DOCUMENT_CODE_LENS, T.CodeLensOptions(resolve_provider=False))
    async def code_lens(ls: CtxlsServer, params: T.CodeLensParams):
        await ls.wait_ready()
        path = ls.path_of(params.text_document.uri)
        if path is None or ls.engine is None:
            return []
        title = await ls.in_thread(lens_title, ls, path)
        if not title:
            return []
        return [T.CodeLens(range=T.Range(T.Position(0, 0), T.Position(0, 0)),
                           command=T.Command(title=title, command="ctxls.contextReport",
                                             arguments=[params.text_document.uri]))]

    @server.feature(T.TEXT_DOCUMENT_DOCUMENT_LINK)
    async def document_link(ls: CtxlsServer, params: T.DocumentLinkParams):
        await ls.wait_ready()
        path = ls.path_of(params.text_document.uri)
        if path is None or ls.engine is None:
            return []
        return [T.DocumentLink(range=to_range(ls, path, span), target=path_to_uri(target))
                for span, target in links_of(ls, path)]

    @server.feature(T.TEXT_DOCUMENT_DEFINITION)
    async def definition(ls: CtxlsServer, params: T.DefinitionParams):
        await ls.wait_ready()
        path = ls.path_of(params.text_document.uri)
        if path is None or ls.engine is None:
            return None
        line, col = from_position(ls, path, params.position)
        for span, target in links_of(ls, path):
            if span.start_line == line and span.start_col <= col <= span.end_col:
                return T.Location(uri=path_to_uri(target), range=T.Range(T.Position(0, 0), T.Position(0, 0)))
        return None


def lens_title(ls: CtxlsServer, path: Path) -> str | None:
    engine = ls.engine
    kind = engine.workspace().kind_of(path)
    if kind == D.SKILL:
        listing = engine.session(ls.root).skills
        src = engine.fs.read(path)
        body = engine.counter.count(prepare(src.text or "").content)
        entry = next((s for s in (listing.skills if listing else []) if s.source == path), None)
        if entry is None:
            return f"skill body {body:,} tokens (on invocation)"
        state = "not listed" if not entry.listed else ("description dropped" if entry.description_dropped else "listed")
        return (f"listing {len(entry.entry):,} chars (~{engine.counter.count(entry.entry):,} tokens, {state}) · "
                f"body {body:,} tokens on invocation")
    if kind not in (D.CLAUDE_MD, D.CLAUDE_LOCAL_MD, D.AGENTS_MD, D.RULE, D.MEMORY_INDEX, D.COMMAND):
        return None
    lens = engine.lens(path)
    if lens is None:
        return None
    # As sent (the figure hover and `ctxls context` show); the file's own text is labelled as such.
    return (f"{lens.tokens:,} tokens · startup in {plural(lens.startup_dirs, 'dir')} · on touch in "
            f"{lens.touch_dirs} (as sent; {lens.raw_tokens:,} in the file alone)")


def links_of(ls: CtxlsServer, path: Path) -> list[tuple[Span, Path]]:
    """(code-point span, target) of every @import and path reference in ``path`` that resolves to a file."""
    engine = ls.engine
    src = engine.fs.read(path)
    if not src.ok:
        return []
    prep = prepare(src.text or "")
    out: list[tuple[Span, Path]] = []
    for ref in prep.imports:
        target = resolve_import(path, ref.path, engine.settings.home)
        if engine.fs.is_file(target):
            out.append((Span(ref.line - 1, ref.col, ref.line - 1, ref.col + 1 + len(ref.raw)), target))
    for i, line in enumerate((src.text or "").split("\n")):
        for m, ref in path_refs_in_line(line):
            if "://" in ref or ref.startswith(("mailto:", "@")):
                continue
            cand = resolve_ref(ls, path, ref)
            if cand is not None:
                out.append((Span(i, m.start(1), i, m.end(1)), cand))
    return out


def path_refs_in_line(line: str):
    """(match, ref) for each path-like reference of one line: markdown link targets and backticked paths."""
    for rx in (_LINK, _BACKTICK):
        for m in rx.finditer(line):
            yield m, m.group(1)


def resolve_ref(ls: CtxlsServer, path: Path, ref: str) -> Path | None:
    """A path written in ``path``: relative to its directory, else to the workspace root; None if neither exists."""
    for base in (path.parent, ls.root):
        cand = Path(os.path.normpath(base / ref))
        if ls.engine.fs.exists(cand):
            return cand
    return None
