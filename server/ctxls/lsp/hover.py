"""Hover: what a session started here loads, what reading this file appends; imports, paths and skills."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as T

from ..core import model as M
from ..core.loader import is_within, resolve_import
from ..core.markdown import prepare, split_frontmatter
from ..core.model import KIND_LABELS, Session
from ..core.paths import rel_path
from .convert import from_position
from .server import CtxlsServer



def register(server: CtxlsServer) -> None:
    @server.feature(T.TEXT_DOCUMENT_HOVER)
    async def hover(ls: CtxlsServer, params: T.HoverParams):
        await ls.wait_ready()
        path = ls.path_of(params.text_document.uri)
        if path is None or ls.engine is None or ls.root is None:
            return None
        line, col = from_position(ls, path, params.position)
        text = await ls.in_thread(hover_markdown, ls, path, line, col)
        if not text:
            return None
        return T.Hover(contents=T.MarkupContent(kind=T.MarkupKind.Markdown, value=text))


def hover_markdown(ls: CtxlsServer, path: Path, line: int, col: int) -> str | None:
    engine = ls.engine
    if not is_within(path, ls.root) and not is_within(path, engine.settings.claude_dir):
        return None
    lines = ls.lines_of(path)
    cur = lines[line] if 0 <= line < len(lines) else ""
    if path.suffix.lower() == ".md":
        specific = _import_hover(ls, path, line, col) or _path_hover(ls, path, cur, col) or \
            _skill_hover(ls, path, line)
        if specific:
            return specific
    if path.is_dir():
        start = path
    else:
        start = path.parent
    if not is_within(start, ls.root):
        return None
    from .agents import agents_line  # the other agents (lsp/agents.py)

    line = agents_line(ls, start)
    text = session_markdown(ls, start, path)
    return text if line is None else f"{line}\n\n{text}"


def _pct(n: int, w: int) -> str:
    return f"{100 * n / w:.1f}%"


def _row(s: Session, b: M.Block, i: int) -> str:
    src = s.display_source(b.source) or ""
    lines = f":{b.lines[0]}-{b.lines[1]}" if b.lines and b.kind != M.READ else ""
    trig = b.trigger if len(b.trigger) < 40 else b.trigger[:37] + "..."
    cut = " ✂" if b.cut and "stripped" not in b.cut else ""
    return f"| {i} | {KIND_LABELS.get(b.kind, b.kind)} | `{src}{lines}`{cut} | {trig} | {b.tokens:,} | {_pct(b.cumulative, s.window)} |"


def session_markdown(ls: CtxlsServer, start: Path, touched: Path | None, agent: str = "claude-code") -> str:
    """The session table of ``agent`` (a profile of core/profiles) started in ``start``, and what reading
    ``touched`` appends (the hover, and the context report of the VS Code agent picker's agent)."""
    from .agents import agent_session

    s = agent_session(ls, start, agent)
    rel = s.display_source(start) or "."
    w = s.window
    fixed = sum(b.tokens for b in s.blocks if b.kind in (M.SYSTEM_PROMPT, M.TOOL_SCHEMAS))
    est = "~" if any(b.estimated for b in s.blocks) else ""
    name = M.AGENT_NAMES.get(agent, agent)
    # the other profiles model the instruction files only, not their agent's own system prompt and tools
    overhead = f"fixed overhead {fixed:,} (system prompt + tools)" if agent == "claude-code" else \
        f"instruction files only: ctxls does not count {name}'s own system prompt and tools"
    out = [f"**ctxls** · {name} started in `{rel}` loads **{est}{s.startup_tokens:,} tokens** before the "
           f"first prompt ({_pct(s.startup_tokens, w)} of {w:,}); {overhead}.",
           "", "| # | block | source | trigger | tokens | cum % |", "|---|---|---|---|---|---|"]
    i = 0
    for b in s.blocks:
        if b.kind in (M.SYSTEM_PROMPT, M.TOOL_SCHEMAS, M.CONTEXT_HEADER, M.CONTEXT_FOOTER):
            continue
        i += 1
        out.append(_row(s, b, i))
    if i == 0:
        out.append("| - | no instruction files load here | | | | |")
    if touched is not None and touched.is_file() and is_within(touched, ls.root):
        t = agent_session(ls, ls.root, agent, [touched])
        added = [b for b in t.blocks if not b.startup]
        extra = sum(b.tokens for b in added if b.kind != M.READ)
        read = sum(b.tokens for b in added if b.kind == M.READ)
        out += ["", f"**Reading `{t.display_source(touched)}`** in a session started at the workspace root adds "
                    f"{read:,} tokens of file content"
                + (f" and {extra:,} tokens of instructions:" if extra else " and no instructions.")]
        for b in added:
            if b.kind != M.READ:
                out.append(f"- {KIND_LABELS.get(b.kind, b.kind)} `{t.display_source(b.source) or ''}` ({b.tokens:,})")
    if s.skipped:
        out += ["", "Not loaded: " + "; ".join(f"`{s.display_source(k.source)}` ({k.reason})" for k in s.skipped[:5])]
    out += ["", f"_Tokens: {s.token_method}._"]
    return "\n".join(out)


def _import_hover(ls: CtxlsServer, path: Path, line: int, col: int) -> str | None:
    engine = ls.engine
    prep = prepare(engine.fs.read(path).text or "")
    for ref in prep.imports + prep.skipped_imports:
        if ref.line - 1 == line and ref.col <= col <= ref.col + len(ref.raw):
            target = resolve_import(path, ref.path, engine.settings.home)
            if ref.in_code:
                return f"`@{ref.raw}` is inside code or a comment: **not imported**."
            got = engine.fs.read(target)
            if not got.ok:
                return f"`@{ref.raw}` → `{target}`: **{got.error}**, so nothing loads."
            tokens = engine.counter.count(prepare(got.text or "").content)
            return (f"`@{ref.raw}` → `{_rel(ls, target)}`: **{tokens:,} tokens** (estimate), loaded right after this "
                    f"file in every session that loads it.")
    return None


def _rel(ls: CtxlsServer, p: Path) -> str:
    return rel_path(p, ls.root)


def _path_hover(ls: CtxlsServer, path: Path, cur: str, col: int) -> str | None:
    from .lenses import path_refs_in_line, resolve_ref

    for m, ref in path_refs_in_line(cur):
        if m.start(1) <= col <= m.end(1):
            if "://" in ref or ref.startswith("mailto:"):
                return None
            found = resolve_ref(ls, path, ref)
            if found is not None:
                return f"`{ref}` exists: `{_rel(ls, found)}`."
            return f"`{ref}` **does not exist** (relative to this file or the workspace root)."
    return None


def _skill_hover(ls: CtxlsServer, path: Path, line: int) -> str | None:
    if path.name != "SKILL.md":
        return None
    src = ls.engine.fs.read(path)
    fm, _ = split_frontmatter(src.text or "")
    if not fm.present or line >= fm.end_line:
        return None
    listing = ls.engine.session(ls.root).skills
    if listing is None:
        return None
    for sk in listing.skills:
        if sk.source == path:
            tokens = ls.engine.counter.count(sk.entry)
            if not sk.listed:
                state = f"**not in the listing**: {sk.hidden_reason}"
            elif sk.description_dropped:
                state = (f"**description dropped**: the listing needs {listing.full_chars:,} chars, budget "
                         f"{listing.budget_chars:,}; the model sees only the name")
            else:
                state = f"listed with its description (listing {listing.full_chars:,} / {listing.budget_chars:,} chars)"
            return f"Skill `{sk.name}`: listing entry {len(sk.entry):,} chars (~{tokens:,} tokens) · {state}."
    return None
