"""Wiring one agent run: the session context, the sandbox and gate, the provider and the records."""

from __future__ import annotations

from pathlib import Path

from ..core.settings import Settings
from .context import SessionContext
from .gate import Gate, Host, Policy
from .loop import AgentLoop, Events
from .handoff import handoff_path, update_handoff
from .memory import remember
from .provider import Provider, ProviderError
from .records import Audit, Transcript, new_session_id
from .sandbox import Sandbox
from .settings import AgentSettings


class RunError(Exception):
    """The run cannot start (no key, unknown session); the message says what to do."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def open_run(start: Path, root: Path, settings: Settings, agent: AgentSettings, host: Host, *,
             resume: str | None = None, events: Events | None = None, provider: Provider | None = None) -> AgentLoop:
    if resume:
        transcript = Transcript.open(root, resume)
        if transcript is None:
            raise RunError(f"no session {resume!r} in {root / '.ctxls' / 'sessions'}")
        meta = transcript.meta()
        if meta.get("start_dir"):
            start = Path(meta["start_dir"])
        session = resume
    else:
        session = new_session_id()
        transcript = None
    try:
        provider = provider or Provider(model=agent.model, max_tokens=agent.max_tokens, max_attempts=agent.max_attempts,
                                       backoff_base=agent.retry_backoff_s)
    except ProviderError as exc:
        raise RunError(str(exc)) from None
    if transcript is None:
        transcript = Transcript.create(root, session, {"start_dir": str(start), "root": str(root),
                                                        "model": provider.model})
    ctx = SessionContext(start, root, settings)
    gate = Gate(Sandbox(root, agent.deny), host, Audit(root, session), Policy(agent.yes_to),
                skills=ctx.skill_path, remember=lambda fact: remember(ctx.memory_index(), fact, settings.today),
                extra={"update_handoff": lambda a: update_handoff(root, a["content"])})
    return AgentLoop(ctx=ctx, provider=provider, gate=gate, transcript=transcript, settings=agent, events=events,
                     handoff=handoff_path(root))


