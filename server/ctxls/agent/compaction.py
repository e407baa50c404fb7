"""The context engine: keep every request under the window, clearing before summarising.

Before each call the request size is estimated from what the API reported for the previous request (input +
cache read + cache write) plus the counted size of what was appended since, scaled by the measured ratio of
real to offline counts (the offline cl100k count alone can be 30% low). Past the soft threshold, old tool results
are cleared to a one-line placeholder, in batches big enough to pay for the cache rewrite (every tool_use keeps
its tool_result). Past the hard threshold (the agent's own rule, spec A11: window - min(max output, 20,000) -
13,000), the old middle is replaced by a summary from a model call, and the session continues as spec A10 says
Claude Code's does: the startup instructions and memory head read again from disk, invoked skills re-attached
within their caps, the handoff file added, nested files and path rules back on the next touch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from .conversation import Conversation, request_messages, with_breakpoints

SUMMARY_INSTRUCTION = """\
Summarise this session so far for yourself: the summary replaces everything above, and you will continue the \
work from it. Recall first, in this order, as short bullet lists:
1. Decisions made (and why), with exact names, numbers and commands.
2. Files touched: each path and what changed or what you learned from it.
3. Open bugs and failing checks, with the exact error text.
4. The next step, and the check that proves the task is done.
Then anything else needed to continue. Write only the summary."""
SUMMARY_LEAD = "(summarising the session before it continues)"
CONTINUATION = ("This session is being continued from an earlier conversation that ran out of context. The summary "
                "of the earlier part follows; the instructions above were read again from disk.")


@dataclass(frozen=True)
class ContextPolicy:
    window: int = 200_000
    max_tokens: int = 8_192
    clear_at: int | None = None
    """Soft threshold: clear old tool results past this request size (default: 30% of the window)."""
    clear_keep: int = 3
    """Tool results never cleared: the newest N."""
    clear_at_least: int = 10_000
    """Clear only when this many tokens go at once (a smaller clear costs more in cache rewrites than it saves)."""
    keep_turns: int = 6
    """Turns kept verbatim by a compaction."""
    server_side_clearing: bool = False
    """Use the API's context editing (clear_tool_uses_20250919) instead of clearing here."""
    skill_tokens_each: int = 5_000
    skill_tokens_total: int = 25_000

    @property
    def hard(self) -> int:
        return self.window - min(self.max_tokens, 20_000) - 13_000

    @property
    def soft(self) -> int:
        return min(self.clear_at if self.clear_at is not None else int(self.window * 0.3), self.hard)


class Sizer:
    """Request sizes: offline counts, calibrated by the usage the API reports."""

    def __init__(self, count: Callable[[str], int], first_ratio: float = 1.35) -> None:
        self._count = count
        self._memo: dict[str, int] = {}
        self.ratio = first_ratio
        """Real tokens per offline token; before any usage, spec E's upper bound for the newer tokenizer."""
        self.known: tuple[int, int] | None = None
        """(reported size of the last request, offline count of that request)."""

    def text_tokens(self, text: str) -> int:
        got = self._memo.get(text)
        if got is None:
            got = self._memo[text] = self._count(text)
        return got

    def block_tokens(self, block: Any) -> int:
        if not isinstance(block, dict):
            return self.text_tokens(str(block))
        t = block.get("type")
        if t == "text":
            return self.text_tokens(block["text"])
        if t == "tool_use":
            return self.text_tokens(block["name"] + " " + json.dumps(block.get("input"), sort_keys=True))
        if t == "tool_result":
            c = block.get("content")
            if isinstance(c, list):
                return sum(self.block_tokens(x) for x in c)
            return self.text_tokens(c or "")
        return self.text_tokens(json.dumps(block, sort_keys=True))

    def offline(self, request: dict[str, Any]) -> int:
        n = sum(self.text_tokens(json.dumps({k: v for k, v in t.items() if k != "cache_control"}, sort_keys=True))
                for t in request.get("tools", []))
        n += sum(self.block_tokens(b) for b in request.get("system", []))
        for m in request.get("messages", []):
            n += 3 + sum(self.block_tokens(b) for b in m["content"])
        return n

    def estimate(self, request: dict[str, Any]) -> int:
        off = self.offline(request)
        if self.known is None:
            return int(off * self.ratio)
        reported, counted = self.known
        return reported + int(max(0, off - counted) * self.ratio) if off >= counted else int(off * self.ratio)

    def observe(self, request: dict[str, Any], reported: int) -> None:
        off = self.offline(request)
        if off > 0 and reported > 0:
            self.ratio = max(1.0, reported / off)
        self.known = (reported, off)

    def forget(self) -> None:
        """The view was rewritten (cleared or compacted): the next estimate starts from the ratio alone."""
        self.known = None


class ContextEngine:
    def __init__(self, conv: Conversation, policy: ContextPolicy, sizer: Sizer) -> None:
        self.conv = conv
        self.policy = policy
        self.sizer = sizer

    # ------------------------------------------------------------------ clearing
    def clear(self, needed: int, force: bool = False) -> dict[str, str]:
        """Placeholders for the oldest tool results (all but the newest `clear_keep`), enough to free ``needed``
        tokens; nothing when the batch would be under `clear_at_least` (unless ``force``)."""
        results = self.conv.results_in_view()
        keep = self.policy.clear_keep if not force else 1
        candidates = results[:-keep] if keep and len(results) > keep else ([] if keep else results)
        if not candidates:
            return {}
        uses = self.conv.tool_uses()
        chosen: dict[str, str] = {}
        freed = 0
        for _, block in candidates:
            tokens = self.sizer.block_tokens(block)
            if tokens < 50:
                continue  # a placeholder would save nothing
            use = uses.get(block["tool_use_id"], {})
            chosen[block["tool_use_id"]] = placeholder(use, tokens)
            freed += tokens
        if not chosen or (freed < self.policy.clear_at_least and not force):
            return {}
        del needed  # (every old result goes at once: one cache rewrite instead of many)
        return chosen

    def context_management(self) -> dict[str, Any]:
        """The server-side equivalent (spec D3), for `server_side_clearing`."""
        p = self.policy
        return {"edits": [{"type": "clear_tool_uses_20250919",
                           "trigger": {"type": "input_tokens", "value": p.soft},
                           "keep": {"type": "tool_uses", "value": p.clear_keep},
                           "clear_at_least": {"type": "input_tokens", "value": p.clear_at_least}}]}

    # ------------------------------------------------------------------ compaction
    def split(self, manual: bool = False) -> int | None:
        """Stored index of the first kept message (an assistant message starting one of the last K turns), or
        None when there is no middle to summarise. Asked for by the user (``manual``), the first message alone
        (the instructions and the task) is enough to summarise: the instructions are read again either way."""
        starts = self.conv.turn_starts()
        k = self.policy.keep_turns
        least = self.conv.start + (0 if self.conv.head is not None or manual else 1)
        while k >= 1:
            if len(starts) >= k + (0 if manual else 1):
                cut = starts[-k]
                if cut > least:
                    return cut
            k -= 1
        return None

    def summary_request(self, cut: int, tools: list, system: list) -> dict[str, Any]:
        """A request of its own: the conversation's prefix up to the cut (so that it reads from the cache), then
        the summary instruction alone in the last user message (a short assistant line between them keeps the
        roles alternating; it exists only in this request)."""
        prefix = Conversation(self.conv.messages[:cut], self.conv.start, self.conv.head, self.conv.cleared).view()
        tools, system = with_breakpoints(tools, system)
        messages = request_messages(prefix) + [
            {"role": "assistant", "content": [{"type": "text", "text": SUMMARY_LEAD}]},
            {"role": "user", "content": [{"type": "text", "text": SUMMARY_INSTRUCTION}]}]
        return {"system": system, "tools": tools, "messages": messages}

    def head(self, startup: str, summary: str, handoff: str | None, skills: list[tuple[str, str]]) -> dict[str, Any]:
        content = [{"type": "text", "text": startup}]
        if handoff:
            content.append({"type": "text", "text": f"<handoff file=\".ctxls/handoff.md\">\n{handoff.strip()}\n</handoff>"})
        budget = self.policy.skill_tokens_total
        for name, body in skills:
            body = _cap(body, self.policy.skill_tokens_each, self.sizer)
            cost = self.sizer.text_tokens(body)
            if cost > budget:
                break
            budget -= cost
            content.append({"type": "text", "text": f"<skill name=\"{name}\">\n{body}\n</skill>"})
        content.append({"type": "text", "text": f"{CONTINUATION}\n\n<summary>\n{summary.strip()}\n</summary>"})
        return {"role": "user", "content": content}


def placeholder(use: dict[str, Any], tokens: int) -> str:
    name = use.get("name", "tool")
    args = use.get("input") if isinstance(use.get("input"), dict) else {}
    subject = args.get("path") or args.get("command") or args.get("pattern") or args.get("name") or ""
    again = {"read_file": "read it again if needed", "run_command": "run it again if needed"}.get(
        name, "call the tool again if needed")
    return f"[cleared: {name} {subject}, {tokens:,} tokens; {again}]".replace("  ", " ")


def _cap(text: str, tokens: int, sizer: Sizer) -> str:
    if sizer.text_tokens(text) <= tokens:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # the longest head within the cap
        mid = (lo + hi + 1) // 2
        if sizer.text_tokens(text[:mid]) <= tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] + "\n[... cut at the re-attachment cap]"
