"""The agent tool loop: call the model, pass every tool call through the gate, append the results (and the
instructions the touched files bring), call again.

The message array is append-only. Every message is in the transcript before the next call, so a kill loses
nothing and `--resume` continues with the full history. Limits (model calls, billed tokens, wall clock) and
cancellation stop the run between a call and its tool results only after every tool call of the last answer
was executed or refused, so the transcript always holds a valid conversation.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ..core.model import KIND_LABELS
from . import tools as T
from .context import SessionContext, system_prompt
from .gate import Call, Gate, Result
from .provider import Provider, ProviderError
from .records import Transcript, merge_into
from .settings import AgentSettings

FINISHED, LIMIT, CANCELLED, PROVIDER_ERROR = "finished", "limit", "cancelled", "provider_error"
EXIT_CODES = {FINISHED: 0, LIMIT: 1, CANCELLED: 1, PROVIDER_ERROR: 3}
NOT_RUN = "not executed: the previous run stopped before this call ran; call it again if it is still needed"
CANCELLED_RESULT = "not executed: the user cancelled the run"


@dataclass
class Turn:
    """One model call: what it cost and how long each side took."""

    turn: int
    usage: dict[str, int]
    attempts: int
    provider_s: float
    """The model call, from request to last streamed event (the successful attempt)."""
    loop_s: float = 0.0
    """ctxls's own time in this turn: building the request, the gate, reading files, on-demand context (tool
    commands excluded)."""
    tools: int = 0
    stop_reason: str | None = None


@dataclass
class Events:
    on_text: Callable[[str], None] | None = None
    on_retry: Callable[[str], None] | None = None
    on_tool: Callable[[Result], None] | None = None
    on_turn: Callable[[Turn], None] | None = None


@dataclass
class Outcome:
    status: str
    detail: str
    session: str
    answer: str = ""
    turns: list[Turn] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]


class AgentLoop:
    def __init__(self, *, ctx: SessionContext, provider: Provider, gate: Gate, transcript: Transcript,
                 settings: AgentSettings, events: Events | None = None) -> None:
        self.ctx = ctx
        self.provider = provider
        self.gate = gate
        self.transcript = transcript
        self.settings = settings
        self.events = events or Events()
        self.messages: list[dict[str, Any]] = transcript.messages()
        self.turn_no = transcript.turns()
        self.system = system_prompt(ctx.root)
        self.tools = T.definitions()
        self.billed = 0
        self.answer = ""
        self.turns: list[Turn] = []

    # ------------------------------------------------------------------ conversation
    def _append(self, message: dict[str, Any]) -> None:
        self.transcript.append_message(message, self.turn_no)  # on disk (synced) before it is sent
        merge_into(self.messages, message)

    def start(self, task: str | None) -> str | None:
        """Add the task to the conversation; None when ready to call, else why there is nothing to do."""
        if not self.messages:
            if not task:
                return "no task: say what the agent should do"
            session = self.ctx.load()
            self._append({"role": "user", "content": [{"type": "text", "text": self.ctx.startup_text(session)},
                                                      {"type": "text", "text": task}]})
            return None
        self._close_dangling()
        last = self.messages[-1]
        if task:  # (after tool results, the task joins their user message: roles keep alternating)
            self._append({"role": "user", "content": [{"type": "text", "text": task}]})
            return None
        if last["role"] == "user":
            return None
        return "the session is finished; give a new task to continue it"

    def _close_dangling(self) -> None:
        """A transcript that ends with tool calls (the run was killed before their results were stored) gets
        results saying they did not run, so the conversation is valid again."""
        last = self.messages[-1] if self.messages else None
        if last and last["role"] == "assistant":
            calls = [b for b in last["content"] if b.get("type") == "tool_use"]
            if calls:
                self._append({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": b["id"], "content": NOT_RUN, "is_error": True}
                    for b in calls]})

    # ------------------------------------------------------------------ the loop
    async def run(self, task: str | None = None) -> Outcome:
        why = self.start(task)
        if why:
            return self._outcome(FINISHED, why)
        deadline = time.monotonic() + self.settings.timeout_s if self.settings.timeout_s else None
        calls = 0
        try:
            while True:
                if calls >= self.settings.max_turns:
                    return self._outcome(LIMIT, f"stopped after {calls} model calls (--max-turns)")
                if self.settings.max_run_tokens and self.billed >= self.settings.max_run_tokens:
                    return self._outcome(LIMIT, f"stopped at {self.billed:,} billed tokens (max run tokens)")
                remaining = deadline - time.monotonic() if deadline else None
                if remaining is not None and remaining <= 0:
                    return self._outcome(LIMIT, f"stopped at the {self.settings.timeout_s:g} s time limit")
                t0 = time.perf_counter()
                request = self.request()
                prep = time.perf_counter() - t0
                try:
                    call = self.provider.call(**request, on_text=self._text, on_retry=self.events.on_retry)
                    resp = await (asyncio.wait_for(call, remaining) if remaining is not None else call)
                except asyncio.TimeoutError:
                    return self._outcome(LIMIT, f"stopped at the {self.settings.timeout_s:g} s time limit")
                except ProviderError as exc:
                    return self._outcome(PROVIDER_ERROR, str(exc))
                calls += 1
                self.turn_no += 1
                turn = Turn(self.turn_no, resp.usage, resp.attempts, resp.seconds, stop_reason=resp.stop_reason)
                self.billed += sum(resp.usage.values())
                t1 = time.perf_counter()
                self._append(resp.message)
                texts = [b["text"] for b in resp.message["content"] if b.get("type") == "text"]
                if texts:
                    self.answer = "\n".join(texts)
                uses = [b for b in resp.message["content"] if b.get("type") == "tool_use"]
                tool_s = 0.0
                if uses:
                    blocks, tool_s = await self._tools(uses)
                    self._append({"role": "user", "content": blocks})
                turn.tools = len(uses)
                turn.loop_s = prep + (time.perf_counter() - t1) - tool_s
                self.transcript.append({"type": "turn", **turn.__dict__})
                if self.events.on_turn:
                    self.events.on_turn(turn)
                self.turns.append(turn)
                if not uses:
                    return self._outcome(FINISHED, resp.stop_reason or "end_turn")
        except asyncio.CancelledError:
            return self._outcome(CANCELLED, "cancelled by the user")

    def request(self) -> dict[str, Any]:
        return {"system": [{"type": "text", "text": self.system}], "tools": self.tools, "messages": self.messages}

    async def _tools(self, uses: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], float]:
        """Results of every call (in order), each followed by the instructions its touch brings, once."""
        blocks: list[dict[str, Any]] = []
        command_s = 0.0
        for i, use in enumerate(uses):
            call = Call(use["id"], use["name"], use.get("input"))
            t0 = time.perf_counter()
            try:
                res = await self.gate.run(call, self.turn_no)
            except asyncio.CancelledError:
                blocks += [{"type": "tool_result", "tool_use_id": u["id"], "content": CANCELLED_RESULT,
                            "is_error": True} for u in uses[i:]]
                self._append({"role": "user", "content": blocks})
                raise
            if call.name == "run_command":
                command_s += time.perf_counter() - t0
            blocks.append(res.block())
            if self.events.on_tool:
                self.events.on_tool(res)
            if res.touched is not None and not res.is_error:
                for b in self.ctx.touch(res.touched):
                    blocks.append({"type": "text", "text": b.text})
                    if self.events.on_text:
                        self.events.on_text(f"\n[context: {KIND_LABELS.get(b.kind, b.kind)} "
                                            f"{self.ctx.session.display_source(b.source)} joined]\n")
        return blocks, command_s

    def _text(self, delta: str) -> None:
        if self.events.on_text:
            self.events.on_text(delta)

    def _outcome(self, status: str, detail: str) -> Outcome:
        self.transcript.append({"type": "end", "status": status, "detail": detail})
        return Outcome(status, detail, self.transcript.session, self.answer, list(self.turns))
