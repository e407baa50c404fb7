"""The one gate every tool call passes: schema, sandbox, approval, taint, audit. No other path leads to the
disk or a shell.

Decisions (as audited): `allowed` (no approval needed, or allow-listed), `approved` / `denied` (the user was
asked), `refused` (policy said no without asking: outside the workspace, a secret file, or approval needed where
nobody can give it), `error` (invalid arguments, or the tool failed).

Taint: once a tool result carried untrusted text (read from a dependency or git-ignored directory, or any
result in which the core's prompt-injection detector fires), writes and commands need the user's approval even
when allow-listed, until the user approves one by hand. Without a user (a non-interactive run) that means they
are refused for the rest of the run.
"""

from __future__ import annotations

import asyncio
import fnmatch
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

from ..core.rules.security import scan_text
from . import tools as T
from .executor import Executor, FileChange, Outcome
from .records import Audit, redact_text
from .sandbox import Sandbox, Target


class Host(Protocol):
    """What the front end (terminal or editor) provides to the gate."""

    interactive: bool

    def current_text(self, path: Path) -> str | None:
        """The text the user sees (an editor buffer), or None to read the disk."""

    async def apply_change(self, change: FileChange, ask: str | None) -> tuple[str, str]:
        """Apply ``change``; when ``ask`` is set, only after the user approved it (``ask`` says why approval is
        needed). Returns (decision, reason) with decision `allowed`, `approved`, `denied` or `error`."""

    async def confirm_command(self, command: str, ask: str) -> bool:
        """Whether the user approves running ``command``."""


@dataclass
class Call:
    id: str
    name: str
    input: Any


@dataclass
class Result:
    call: Call
    text: str
    is_error: bool
    decision: str
    reason: str = ""
    touched: Path | None = None
    untrusted: str | None = None
    """Why the text is untrusted because of where it came from (a dependency or git-ignored directory)."""

    def block(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "tool_result", "tool_use_id": self.call.id, "content": self.text}
        if self.is_error:
            out["is_error"] = True
        return out


@dataclass
class Policy:
    yes_to: Sequence[str] = ()
    """Allow-list: `edit_file` (a tool), `run_command:pytest*` (a tool and a glob on its command or path)."""

    def allows(self, name: str, subject: str) -> bool:
        for pat in self.yes_to:
            tool, _, glob = pat.partition(":")
            if fnmatch.fnmatchcase(name, tool) and (not glob or fnmatch.fnmatchcase(subject, glob)):
                return True
        return False


@dataclass
class Gate:
    sandbox: Sandbox
    host: Host
    audit: Audit
    policy: Policy = field(default_factory=Policy)
    skills: Callable[[str], Path | str] | None = None
    """name -> SKILL.md path, or the reason there is none."""
    remember: Callable[[str], str] | None = None
    """fact -> confirmation; raises ValueError with the reason it was refused."""
    extra: dict[str, Callable[[Any], str]] = field(default_factory=dict)
    """Managed tools of other modules (update_handoff): input -> confirmation; ValueError refuses."""
    tainted: str | None = None
    """Why the run is tainted (the first untrusted result), or None."""

    def __post_init__(self) -> None:
        self.executor = Executor(self.sandbox, self.host)

    async def run(self, call: Call, turn: int) -> Result:
        try:
            res = await self._run(call)
        except asyncio.CancelledError:
            self.audit.record(turn, call.name, call.input, "error", "cancelled by the user", self.tainted is not None)
            raise
        if res.decision in ("allowed", "approved"):  # it ran (a failing command's output counts too)
            res.text = redact_text(res.text)  # a secret in an ordinary file never reaches a request
            self._taint(call, res)
        self.audit.record(turn, call.name, call.input, res.decision, res.reason, self.tainted is not None)
        return res

    # ------------------------------------------------------------------ dispatch
    async def _run(self, call: Call) -> Result:
        problem = T.validate(call.name, call.input)
        if problem:
            return Result(call, problem, True, "error", problem)
        a = call.input
        name = call.name
        if name in T.MANAGED or name in self.extra:
            return self._managed(call)
        if name == "load_skill":
            return self._skill(call)
        if name == "run_command":
            return await self._command(call)
        target = self.sandbox.resolve(a.get("path", ".") if name in ("search", "list_dir") else a["path"])
        if isinstance(target, str):
            return Result(call, target, True, "refused", target)
        if name == "read_file":
            return self._done(call, self.executor.read_file(target, a.get("start_line"), a.get("end_line")))
        if name == "list_dir":
            return self._done(call, self.executor.list_dir(target))
        if name == "search":
            return self._done(call, self.executor.search(a["pattern"], target))
        return await self._write(call, target)

    def _done(self, call: Call, out: Outcome, decision: str = "allowed") -> Result:
        return Result(call, out.text, out.is_error, "error" if out.is_error else decision,
                      out.text if out.is_error else "", out.touched, out.untrusted)

    async def _write(self, call: Call, target: Target) -> Result:
        why = self.sandbox.protected(target.rel)
        if why:
            return Result(call, why, True, "refused", why)
        a = call.input
        plan = (self.executor.plan_edit(target, a["old_string"], a["new_string"]) if call.name == "edit_file"
                else self.executor.plan_write(target, a["content"]))
        if isinstance(plan, Outcome):
            return self._done(call, plan)
        ask = self._needs_approval(call.name, target.rel)
        if ask and not self.host.interactive:
            return self._refusal(call, ask)
        decision, reason = await self.host.apply_change(plan, ask)
        if decision == "approved":
            self.tainted = None  # the user looked at this one
        if decision == "denied":
            text = f"denied: the user rejected this change to {target.rel}" + (f" ({reason})" if reason else "")
            return Result(call, text, True, "denied", reason or "rejected by the user")
        if decision == "error":
            return Result(call, f"the change to {target.rel} could not be applied: {reason}", True, "error", reason)
        verb = "created" if plan.before is None else "edited"
        return Result(call, f"{verb} {target.rel}", False, decision, reason or (ask or ""), target.path)

    async def _command(self, call: Call) -> Result:
        command = call.input["command"]
        ask = self._needs_approval("run_command", command)
        decision = "allowed"
        if ask:
            if not self.host.interactive:
                return self._refusal(call, ask)
            if not await self.host.confirm_command(command, ask):
                return Result(call, "denied: the user rejected this command", True, "denied", "rejected by the user")
            decision = "approved"
            self.tainted = None
        out = await self.executor.run_command(command, call.input.get("timeout_s"))
        # (a failing command is still a result: "allowed", with is_error; ordinary output does not taint)
        return Result(call, out.text, out.is_error, decision, ask or "")

    def _needs_approval(self, name: str, subject: str) -> str | None:
        if self.tainted:
            return f"untrusted text was read earlier in this run ({self.tainted})"
        if self.policy.allows(name, subject):
            return None
        return "not allow-listed"

    def _refusal(self, call: Call, ask: str) -> Result:
        text = f"refused: needs approval ({ask}), and this run cannot ask the user"
        return Result(call, text, True, "refused", ask)

    def _skill(self, call: Call) -> Result:
        found = self.skills(call.input["name"]) if self.skills else "no skills are available in this session"
        if isinstance(found, str):
            return Result(call, found, True, "error", found)
        return self._done(call, self.executor.skill_body(found))

    def _managed(self, call: Call) -> Result:
        fn: Callable[[Any], str] | None = self.extra.get(call.name)
        if call.name == "remember" and self.remember is not None:
            fn = lambda a: self.remember(a["fact"])  # noqa: E731
        if fn is None:
            msg = f"{call.name} is not available in this session"
            return Result(call, msg, True, "error", msg)
        secret = next((f for f in scan_text(_text_of(call.input)) if f.code == "CTX701"), None)
        if secret is not None:
            msg = f"refused: the text holds {secret.data.get('secret_kind', 'a secret')}; secrets are never stored"
            return Result(call, msg, True, "refused", msg)
        try:
            return Result(call, fn(call.input), False, "allowed")
        except ValueError as exc:
            return Result(call, f"refused: {exc}", True, "refused", str(exc))

    # ------------------------------------------------------------------ taint
    def _taint(self, call: Call, res: Result) -> None:
        why = res.untrusted
        if not why and call.name not in T.WRITES:
            hit = next((f for f in scan_text(res.text) if f.code == "CTX702"), None)
            if hit is not None:
                why = f"the result of {call.name} looks like a prompt injection: {hit.message.split(';')[0]}"
        if why and self.tainted is None:
            self.tainted = why
            res.reason = f"tainted: {why}"


def _text_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(_text_of(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(_text_of(v) for v in value)
    return ""
