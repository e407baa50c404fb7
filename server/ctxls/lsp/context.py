"""`ctxls/context`: the session an agent (Claude Code unless asked for another) started in a file's directory
holds, as JSON, for clients that show it themselves (the VS Code status bar, context view and agent picker);
and `ctxls/contextChanged`, the notification sent after every check, when that context may have changed.

Request params: ``{"uri": str, "agent"?: str}`` (``agent``: a profile of core/profiles, default claude-code; an
unknown one answers ``null``) (a file: its directory, plus what reading that file appends; a directory:
that directory alone; for an agent that runs in the editor, Cursor, the session starts at the workspace folder
and the file is a touch). Result: ``{"root": str, "session_budget_tokens": int, "instruction_tokens": int,
"context": {...}}`` where ``context`` is exactly what ``ctxls context DIR [--touch FILE] --format json``
prints (schema ``ctxls.context/1``; the same `session_to_json`), ``instruction_tokens`` the startup tokens
without the fixed overhead (system prompt and tool schemas) and ``session_budget_tokens`` the budget they are
held to (``check.session_budget_tokens``), ``agent`` the profile answered for, and ``agents`` what an agent picker
offers: ``{"all": [{"id", "name"}...], "targeted": [id...], "targeted_by": "check.agents" | "files"}``. ``null``
for a path outside the workspace.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core import model as M
from ..core.loader import is_within
from ..core.profiles import AGENTS, EDITOR_AGENTS
from ..core.report import session_to_json
from .server import CtxlsServer

CONTEXT = "ctxls/context"
CONTEXT_CHANGED = "ctxls/contextChanged"


def register(server: CtxlsServer) -> None:
    @server.feature(CONTEXT)
    async def context(ls: CtxlsServer, params) -> dict[str, Any] | None:
        await ls.wait_ready()
        uri = _field(params, "uri")
        agent = _field(params, "agent") or "claude-code"  # (an agent picker's choice: lsp/agents.py)
        path = ls.path_of(uri) if isinstance(uri, str) else None
        if path is None or ls.engine is None or not is_within(path, ls.root) or agent not in AGENTS:
            return None
        return await ls.in_thread(context_json, ls, path, agent)


def _field(params, name: str):
    if isinstance(params, dict):
        return params.get(name)
    return getattr(params, name, None)  # pygls hands custom requests' params over as a namedtuple-like object


def context_json(ls: CtxlsServer, path: Path, agent: str = "claude-code") -> dict[str, Any]:
    from .agents import agent_session

    engine = ls.engine
    is_file = path.is_file()
    start = path.parent if is_file or not path.exists() else path
    if agent in EDITOR_AGENTS:  # (Cursor: the workspace folder, whichever file is open)
        start = ls.root
    session = agent_session(ls, start, agent, [path] if is_file else ())
    fixed = sum(b.tokens for b in session.blocks if b.kind in (M.SYSTEM_PROMPT, M.TOOL_SCHEMAS))
    return {"root": str(ls.root), "session_budget_tokens": engine.config.session_budget_tokens,
            "instruction_tokens": session.startup_tokens - fixed, "context": session_to_json(session),
            "agent": agent, "agents": agents_json(ls)}


def agents_json(ls: CtxlsServer) -> dict[str, Any]:
    """What an agent picker offers: every profile (id and name, in table order) and the ones the workspace
    targets (`[check] agents` when set, else those whose files exist: lsp/agents.py `targets`)."""
    from ..core.model import AGENT_NAMES
    from .agents import targets

    return {"all": [{"id": a, "name": AGENT_NAMES[a]} for a in AGENTS], "targeted": list(targets(ls)),
            "targeted_by": "check.agents" if ls.engine.config.agents else "files"}


def checked(ls: CtxlsServer, generation: int) -> None:
    """Tell the client the context may have changed (called after each check)."""
    try:
        ls.protocol.notify(CONTEXT_CHANGED, {"generation": generation})
    except Exception as exc:  # a client gone mid-check is not an error worth more than a log line
        ls.log(f"cannot send {CONTEXT_CHANGED}: {exc}")
