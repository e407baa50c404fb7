"""The other agents in the editor: a hover line per targeted agent, the compare report, and the sessions of
any agent for the `ctxls/context` request's `agent` parameter (lsp/context.py), for a client's agent picker."""

from __future__ import annotations

from pathlib import Path

from ..core import model as M
from ..core.loader import is_within, load_session
from ..core.model import Session
from ..core.profiles import AGENTS, EDITOR_AGENTS
from ..core.profiles.common import agent_files_in, targeted_agents
from .server import CtxlsServer

COMPARE_REPORT = "ctxls.compareReport"
_SHORT = {"claude-code": "Claude", "codex": "Codex", "cursor": "Cursor", "copilot": "Copilot", "gemini": "Gemini"}


def register(server: CtxlsServer) -> None:
    @server.command(COMPARE_REPORT)
    async def compare_report(ls: CtxlsServer, *args):
        """The compare table (markdown) for the directory of ``args[0]`` (a URI; default the workspace root)."""
        await ls.wait_ready()
        if ls.engine is None or ls.root is None:
            return None
        uri = args[0] if args and isinstance(args[0], str) else None
        path = ls.path_of(uri) if uri else ls.root
        if path is None:
            return None
        start = path if path.is_dir() else path.parent
        if not is_within(start, ls.root):
            start = ls.root
        from .actions import show_report

        text = await ls.in_thread(compare_markdown_for, ls, start)
        return await show_report(ls, "compare.md", text)


def agent_session(ls: CtxlsServer, start: Path, agent: str, touched: list[Path] | tuple = ()) -> Session:
    eng = ls.engine
    if agent == "claude-code":
        return eng.session(start, touched)
    return load_session(start, list(touched), eng.settings, root=ls.root, fs=eng.fs, counter=eng.counter,
                        profile=agent)


def targets(ls: CtxlsServer) -> tuple[str, ...]:
    eng = ls.engine
    key = ("lsp-agent-files", ls.root)
    files = eng.fs.memo.get(key)
    if files is None:  # from the engine's one walk (both go when a file appears or disappears)
        files = eng.fs.memo[key] = agent_files_in(ls.root, eng.index.rel_files, eng.settings)
    return targeted_agents(ls.root, files, eng.settings, eng.config.agents)


def _k(n: int) -> str:
    return f"{n / 1000:.1f}K" if n >= 1000 else str(n)


def agents_line(ls: CtxlsServer, start: Path) -> str | None:
    """`Claude 4.1K · Codex 2.3K (AGENTS.md truncated) · Cursor 1.2K`: each targeted agent's instruction tokens
    at startup in ``start`` (Cursor's at the workspace folder, where an editor agent starts); None when the
    workspace targets Claude Code alone."""
    agents = targets(ls)
    if not agents or agents == ("claude-code",):
        return None
    parts = []
    for a in agents:
        s = agent_session(ls, ls.root if a in EDITOR_AGENTS else start, a)  # (Cursor: the workspace folder)
        tokens = sum(b.tokens for b in s.blocks if b.startup and b.kind not in (M.SYSTEM_PROMPT, M.TOOL_SCHEMAS))
        cuts = [b for b in s.blocks if b.startup and b.source is not None and b.cut and "stripped" not in b.cut]
        note = ""
        if a == "codex" and cuts:
            note = f" ({cuts[0].source.name} truncated)"
        elif cuts:
            note = f" ({cuts[0].source.name} cut)"
        parts.append(f"{_SHORT[a]} {_k(tokens)}{note}")
    return "**Agents** (instruction tokens at startup here): " + " · ".join(parts)


def compare_markdown_for(ls: CtxlsServer, start: Path) -> str:
    from ..core.compare import compare, compare_markdown

    eng = ls.engine
    cmp = compare(start, (), eng.settings, root=ls.root, fs=eng.fs, counter=eng.counter, agents=AGENTS)
    return compare_markdown(cmp)
