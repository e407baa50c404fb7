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
from pathlib import Path
from typing import Any, Callable

from ..core.model import KIND_LABELS
from . import tools as T
from .compaction import ContextEngine, Sizer
from .context import SessionContext, startup_text, system_prompt
from .conversation import Conversation, request_messages, with_breakpoints
from .ledger import Entry, alarms_for, from_records, request_size
from .gate import Call, Gate, Result
from .provider import Provider, ProviderError
from .records import Transcript
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
                 settings: AgentSettings, events: Events | None = None, clock: Callable[[], float] = time.time,
                 handoff: Path | None = None) -> None:
        self.ctx = ctx
        self.provider = provider
        self.gate = gate
        self.transcript = transcript
        self.settings = settings
        self.events = events or Events()
        self.clock = clock
        self.handoff = handoff
        self.conv = Conversation()
        self.ledger: list[Entry] = []
        self.skills_loaded: dict[str, str] = {}
        """Skills the model loaded, in order (re-attached after a compaction)."""
        records = transcript.records()
        for r in records:
            self.conv.apply(r)
            if r.get("type") == "skill":
                self.skills_loaded.pop(r["name"], None)
                self.skills_loaded[r["name"]] = r["body"]
        self.ledger = from_records(records)
        self.turn_no = transcript.turns()
        self.system = system_prompt(ctx.root)
        self.tools = T.definitions()
        self.policy = settings.policy(ctx.settings.window)
        self.sizer = Sizer(ctx.counter.count)
        self.engine = ContextEngine(self.conv, self.policy, self.sizer)
        self.prices = settings.prices()
        self.billed = 0
        self.answer = ""
        self.turns: list[Turn] = []

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.conv.messages

    # ------------------------------------------------------------------ conversation
    def _append(self, message: dict[str, Any]) -> None:
        self.transcript.append_message(message, self.turn_no)  # on disk (synced) before it is sent
        self.conv.append(message)

    def start(self, task: str | None) -> str | None:
        """Add the task to the conversation; None when ready to call, else why there is nothing to do."""
        if not self.messages:
            if not task:
                return "no task: say what the agent should do"
            session = self.ctx.load(self.turn_no)
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
                try:
                    request, summary_s = await self.fit()
                    prep = time.perf_counter() - t0 - summary_s
                    call = self.provider.call(**request, on_text=self._text, on_retry=self.events.on_retry)
                    resp = await (asyncio.wait_for(call, remaining) if remaining is not None else call)
                except asyncio.TimeoutError:
                    return self._outcome(LIMIT, f"stopped at the {self.settings.timeout_s:g} s time limit")
                except ProviderError as exc:
                    return self._outcome(PROVIDER_ERROR, str(exc))
                calls += 1
                self.turn_no += 1
                turn = Turn(self.turn_no, resp.usage, resp.attempts, resp.seconds, stop_reason=resp.stop_reason)
                self._account("turn", request, resp.usage)
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
                self.transcript.append({"type": "turn", **turn.__dict__, "at": self.ledger[-1].at,
                                        "alarms": self.ledger[-1].alarms})
                if self.events.on_turn:
                    self.events.on_turn(turn)
                self.turns.append(turn)
                if not uses:
                    return self._outcome(FINISHED, resp.stop_reason or "end_turn")
        except asyncio.CancelledError:
            return self._outcome(CANCELLED, "cancelled by the user")

    def request(self) -> dict[str, Any]:
        system = [{"type": "text", "text": self.system}]
        marks = self.settings.cache_breakpoints
        tools, system = with_breakpoints(self.tools, system) if marks else (self.tools, system)
        req: dict[str, Any] = {"system": system, "tools": tools,
                               "messages": request_messages(self.conv.view(), marks)}
        if self.policy.server_side_clearing:
            req["extra"] = {"betas": ["context-management-2025-06-27"],
                            "context_management": self.engine.context_management()}
        return req

    async def fit(self) -> tuple[dict[str, Any], float]:
        """The next request, cleared and compacted as needed to stay under the thresholds; and the seconds
        spent in a summary call."""
        p = self.policy
        req = self.request()
        est = self.sizer.estimate(req)
        if est > p.soft and not p.server_side_clearing:
            self._clear(self.engine.clear(est - p.soft))
            req = self.request()
            est = self.sizer.estimate(req)
        spent = 0.0
        if est > p.hard:
            t0 = time.perf_counter()
            await self.compact()
            spent = time.perf_counter() - t0
            req = self.request()
            est = self.sizer.estimate(req)
            if est > p.hard:  # the kept turns alone are too big: clear all but the newest result
                self._clear(self.engine.clear(est - p.hard, force=True))
                req = self.request()
        return req, spent

    def _clear(self, placeholders: dict[str, str]) -> None:
        if not placeholders:
            return
        self.transcript.append({"type": "clear", "placeholders": placeholders})
        self.conv.cleared.update(placeholders)
        self.sizer.forget()

    async def compact(self, manual: bool = False) -> bool:
        """Replace the old middle with a summary (spec A10). False when there is nothing to summarise."""
        cut = self.engine.split(manual)
        if cut is None:
            self._clear(self.engine.clear(0, force=True))
            return False
        req = self.engine.summary_request(cut, self.tools, [{"type": "text", "text": self.system}])
        if self.events.on_retry:
            self.events.on_retry("compacting: summarising the session so far")
        resp = await self.provider.call(**req, on_retry=self.events.on_retry)
        self._account("summary", req, resp.usage, observe=False)
        self.transcript.append({"type": "summary", "turn": self.turn_no, "usage": resp.usage,
                                "at": self.ledger[-1].at, "alarms": self.ledger[-1].alarms})
        summary = "\n".join(b["text"] for b in resp.message["content"] if b.get("type") == "text")
        self.ctx.forget_touches()  # nested files and path rules come back on the next touch
        session = self.ctx.load(self.turn_no)  # the instructions and the memory head as they are on disk now
        handoff = self._handoff_text()
        skills = list(reversed(self.skills_loaded.items()))
        head = self.engine.head(startup_text(session), summary, handoff, skills)
        self.transcript.append({"type": "compaction", "start": cut, "head": head})
        self.conv.apply({"type": "compaction", "start": cut, "head": head})
        self.sizer.forget()
        return True

    def _handoff_text(self) -> str | None:
        if self.handoff is None:
            return None
        try:
            return self.handoff.read_text(encoding="utf-8") or None
        except (OSError, UnicodeDecodeError):
            return None

    def _account(self, kind: str, request: dict[str, Any], usage: dict[str, int], observe: bool = True) -> None:
        entry = Entry(self.turn_no, kind, usage, self.clock())
        entry.alarms = alarms_for(entry, self.ledger[-1] if self.ledger else None)
        self.ledger.append(entry)
        self.billed += sum(usage.values())
        if observe:
            self.sizer.observe(request, request_size(usage))
        if self.events.on_retry:
            for a in entry.alarms:
                self.events.on_retry(f"cache alarm: {a}")

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
            if call.name == "load_skill" and not res.is_error:
                name = call.input["name"]
                self.skills_loaded.pop(name, None)
                self.skills_loaded[name] = res.text
                self.transcript.append({"type": "skill", "name": name, "body": res.text})
            if self.events.on_tool:
                self.events.on_tool(res)
            if res.touched is not None and not res.is_error:
                for b in self.ctx.touch(res.touched, self.turn_no):
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
