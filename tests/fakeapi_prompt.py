"""fakeapi's prompt model: what the stand-in Messages API does with a request's prompt, apart from HTTP.

Token counting (cl100k through ctxls.core.tokens, times token_scale, + a per-message overhead), the prefix
cache of spec D2 (breakpoints, 20-block lookback, TTLs refreshed on use), server-side context editing of spec D3
(clear_tool_uses_20250919, clear_thinking_20251015) and the request validation the real API does. The module
docstring of ``fakeapi`` documents the semantics; this module only holds them so that fakeapi.py stays about
scripting, faults and HTTP.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

try:
    from ctxls.core.tokens import TokenCounter
except ImportError:  # run as a script from a checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))
    from ctxls.core.tokens import TokenCounter

MESSAGE_OVERHEAD = 3
MEDIA_TOKENS = 1_000
LOOKBACK = 20
MAX_BREAKPOINTS = 4
CLEARED_PLACEHOLDER = "[tool result cleared by context management]"
CONTEXT_BETA = "context-management-2025-06-27"
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


class ApiError(Exception):
    def __init__(self, status: int, error_type: str, message: str, headers: dict | None = None) -> None:
        super().__init__(message)
        self.status, self.error_type, self.message, self.headers = status, error_type, message, headers or {}


def _bad(message: str) -> ApiError:
    return ApiError(400, "invalid_request_error", message)


@dataclass
class _Block:
    key: str            # hash of the prefix through this block
    tokens: int
    ttl: str | None     # breakpoint ttl, None if not a breakpoint


def _strip_cc(block: dict) -> dict:
    return {k: v for k, v in block.items() if k != "cache_control"}


def _canon(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _content_blocks(content: Any) -> list:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _block_text(block: Any) -> tuple[str, int]:
    """(text to tokenize, flat extra tokens) of one prompt block."""
    if not isinstance(block, dict):
        return _canon(block), 0
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", "")), 0
    if kind == "tool_use":
        return f"{block.get('name', '')} {_canon(block.get('input', {}))}", 0
    if kind == "tool_result":
        parts, flat = [], 0
        for inner in _content_blocks(block.get("content", "")):
            t, f = _block_text(inner)
            parts.append(t)
            flat += f
        return "\n".join(parts), flat
    if kind == "thinking":
        return str(block.get("thinking", "")), 0
    if kind == "redacted_thinking":
        return str(block.get("data", "")), 0
    if kind in ("image", "document"):
        return "", MEDIA_TOKENS
    return _canon(_strip_cc(block)), 0


def _ttl_of(cc: Any) -> str | None:
    if not isinstance(cc, dict):
        return None
    ttl = cc.get("ttl", "5m")
    if ttl not in TTL_SECONDS:
        raise _bad(f"cache_control.ttl: Input should be '5m' or '1h', got {ttl!r}")
    return ttl


class PromptModel:
    """Counting, caching and context editing; thread-safe (one lock around the cache)."""

    def __init__(self, token_scale: float = 1.0, min_cacheable: int = 1024,
                 clock: Callable[[], float] | None = None) -> None:
        import time

        self.token_scale = token_scale
        self.min_cacheable = min_cacheable
        self.clock = clock or time.monotonic
        self._lock = threading.RLock()
        self._counter = TokenCounter(factor=1.0)
        self._cache: dict[str, list] = {}   # prefix key -> [expires_at, ttl]
        self._stats = {"hits": 0, "misses": 0, "writes": 0, "read_tokens": 0, "creation_tokens": 0}

    # -- tokens
    def block_tokens(self, block: Any) -> int:
        t, flat = _block_text(block)
        return round(self._counter.count(t) * self.token_scale) + flat

    def _prompt(self, body: dict) -> list[tuple[dict, int, Any]]:
        """(block, tokens, cache_control) in prefix order tools -> system -> messages."""
        out: list[tuple[dict, int, Any]] = []
        for tool in body.get("tools") or []:
            if isinstance(tool, dict):
                out.append((_strip_cc(tool), round(self._counter.count(_canon(_strip_cc(tool))) * self.token_scale),
                            tool.get("cache_control")))
        for b in _content_blocks(body.get("system") or []):
            if isinstance(b, dict):
                out.append((_strip_cc(b), self.block_tokens(b), b.get("cache_control")))
        for i, m in enumerate(body.get("messages") or []):
            if not isinstance(m, dict):
                continue
            for j, b in enumerate(_content_blocks(m.get("content"))):
                if not isinstance(b, dict):
                    continue
                tag = {"role": m.get("role"), "msg": i, **_strip_cc(b)}
                out.append((tag, self.block_tokens(b) + (MESSAGE_OVERHEAD if j == 0 else 0), b.get("cache_control")))
        return out

    def count(self, body: dict) -> int:
        """Input tokens of a request as this fake's "real tokenizer" counts them (before context edits)."""
        return sum(t for _, t, _ in self._prompt(body))

    # -- caching
    def cache_stats(self) -> dict:
        with self._lock:
            now = self.clock()
            live = sum(1 for exp, _ in self._cache.values() if exp > now)
            return {"entries": live, **self._stats}

    def reset_cache(self) -> None:
        with self._lock:
            self._cache.clear()
            for k in self._stats:
                self._stats[k] = 0

    def usage(self, body: dict) -> dict:
        prompt = self._prompt(body)
        auto = body.get("cache_control")
        blocks: list[_Block] = []
        h = hashlib.blake2b(str(body.get("model", "")).encode(), digest_size=16)
        n_bp = 0
        for idx, (tag, tokens, cc) in enumerate(prompt):
            h.update(_canon(tag).encode("utf-8", "surrogatepass"))
            ttl = _ttl_of(cc)
            if ttl is None and auto is not None and idx == len(prompt) - 1:
                ttl = _ttl_of(auto)
            n_bp += cc is not None
            blocks.append(_Block(h.copy().hexdigest(), tokens, ttl))
        n_bp += auto is not None
        if n_bp > MAX_BREAKPOINTS:
            raise _bad(f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {n_bp}.")
        ttls = [b.ttl for b in blocks if b.ttl]
        if "5m" in ttls and "1h" in ttls[ttls.index("5m"):]:
            raise _bad("cache_control: a ttl='1h' cache_control block must not come after a ttl='5m' one")
        cum, total = [], 0
        for b in blocks:
            total += b.tokens
            cum.append(total)
        bps = [i for i, b in enumerate(blocks) if b.ttl]
        with self._lock:
            now = self.clock()
            for k in [k for k, (exp, _) in self._cache.items() if exp <= now]:
                del self._cache[k]
            hit = -1
            for i in bps:
                for j in range(i, max(-1, i - LOOKBACK - 1), -1):
                    if blocks[j].key in self._cache:
                        hit = max(hit, j)
                        break
            read = cum[hit] if hit >= 0 else 0
            written = [i for i in bps if cum[i] >= self.min_cacheable]
            creation = {"5m": 0, "1h": 0}
            prev = hit
            for i in written:
                if i > prev:
                    creation[blocks[i].ttl] += cum[i] - (cum[prev] if prev >= 0 else 0)  # type: ignore[index]
                    prev = i
            end = max([hit] + written)
            if hit >= 0:
                entry = self._cache[blocks[hit].key]
                entry[0] = now + TTL_SECONDS[entry[1]]
                self._stats["hits"] += 1
            elif bps:
                self._stats["misses"] += 1
            for i in written:
                if blocks[i].key not in self._cache:
                    self._stats["writes"] += 1
                ttl = blocks[i].ttl
                self._cache[blocks[i].key] = [now + TTL_SECONDS[ttl], ttl]  # type: ignore[index]
            self._stats["read_tokens"] += read
            self._stats["creation_tokens"] += creation["5m"] + creation["1h"]
        return {
            "input_tokens": total - (cum[end] if end >= 0 else 0),
            "cache_creation_input_tokens": creation["5m"] + creation["1h"],
            "cache_read_input_tokens": read,
            "cache_creation": {"ephemeral_5m_input_tokens": creation["5m"],
                               "ephemeral_1h_input_tokens": creation["1h"]},
            "output_tokens": 0,
            "service_tier": "standard",
        }

    # -- context editing
    def apply_edits(self, body: dict, headers: dict) -> tuple[dict, list | None]:
        cm = body.get("context_management")
        if cm is None:
            return body, None
        betas = [b.strip() for b in headers.get("anthropic-beta", "").split(",")]
        if CONTEXT_BETA not in betas:
            raise _bad(f"context_management: requires the beta header anthropic-beta: {CONTEXT_BETA}")
        edits = cm.get("edits", []) if isinstance(cm, dict) else None
        if not isinstance(edits, list):
            raise _bad("context_management.edits: Input should be a valid list")
        body = copy.deepcopy(body)
        applied: list[dict] = []
        for n, edit in enumerate(edits):
            kind = edit.get("type") if isinstance(edit, dict) else None
            if kind == "clear_tool_uses_20250919":
                got = self._clear_tool_uses(body, edit)
            elif kind == "clear_thinking_20251015":
                if n != 0:
                    raise _bad("context_management.edits: clear_thinking_20251015 must be the first edit")
                got = self._clear_thinking(body, edit)
            else:
                raise _bad(f"context_management.edits.{n}.type: unknown edit type {kind!r}")
            if got:
                applied.append(got)
        return body, applied

    def _clear_tool_uses(self, body: dict, edit: dict) -> dict | None:
        msgs = body.get("messages") or []
        uses, results = [], {}
        for m in msgs:
            for b in _content_blocks(m.get("content")):
                if isinstance(b, dict) and b.get("type") == "tool_use" and m.get("role") == "assistant":
                    uses.append(b)
                elif isinstance(b, dict) and b.get("type") == "tool_result":
                    results[b.get("tool_use_id")] = b
        trigger = edit.get("trigger") or {"type": "input_tokens", "value": 100_000}
        before = self.count(body)
        measure = before if trigger.get("type") == "input_tokens" else len(uses)
        if measure < trigger.get("value", 0):
            return None
        keep = (edit.get("keep") or {"value": 3}).get("value", 3)
        excluded = set(edit.get("exclude_tools") or [])
        candidates = [u for u in uses if u.get("name") not in excluded and u.get("id") in results
                      and results[u["id"]].get("content") != CLEARED_PLACEHOLDER]
        to_clear = candidates[:max(0, len(candidates) - keep)]
        if not to_clear:
            return None
        saved = copy.deepcopy(msgs)
        cti = edit.get("clear_tool_inputs", False)
        for u in to_clear:
            r = results[u["id"]]
            r["content"] = CLEARED_PLACEHOLDER
            if cti is True or (isinstance(cti, list) and u.get("name") in cti):
                u["input"] = {}
        cleared = before - self.count(body)
        least = (edit.get("clear_at_least") or {}).get("value")
        if least is not None and cleared < least:
            body["messages"] = saved
            return None
        return {"type": "clear_tool_uses_20250919", "cleared_tool_uses": len(to_clear),
                "cleared_input_tokens": cleared}

    def _clear_thinking(self, body: dict, edit: dict) -> dict | None:
        keep = edit.get("keep") or {"type": "thinking_turns", "value": 1}
        if keep == "all" or (isinstance(keep, dict) and keep.get("type") == "all"):
            return None
        turns = [m for m in body.get("messages") or [] if m.get("role") == "assistant" and any(
            isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking")
            for b in _content_blocks(m.get("content")))]
        drop = turns[:max(0, len(turns) - keep.get("value", 1))]
        if not drop:
            return None
        before = self.count(body)
        for m in drop:
            m["content"] = [b for b in _content_blocks(m["content"])
                            if not (isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking"))]
        return {"type": "clear_thinking_20251015", "cleared_thinking_turns": len(drop),
                "cleared_input_tokens": before - self.count(body)}

    # -- validation
    def validate(self, body: Any) -> None:
        if not isinstance(body, dict):
            raise _bad("body: Input should be a valid JSON object")
        for key in ("model", "max_tokens", "messages"):
            if key not in body:
                raise _bad(f"{key}: Field required")
        msgs = body["messages"]
        if not isinstance(msgs, list) or not msgs:
            raise _bad("messages: at least one message is required")
        prev_uses: set = set()
        for i, m in enumerate(msgs):
            role = m.get("role") if isinstance(m, dict) else None
            want = "user" if i % 2 == 0 else "assistant"
            if role != want:
                raise _bad(f"messages.{i}.role: roles must alternate between \"user\" and \"assistant\", "
                           f"starting with \"user\"; expected {want!r}, got {role!r}")
            content = _content_blocks(m.get("content"))
            if not content and m.get("content") != []:
                raise _bad(f"messages.{i}.content: Input should be a valid string or list of blocks")
            if role == "user":
                seen_other = False
                found = set()
                for j, b in enumerate(content):
                    if b.get("type") == "tool_result":
                        if seen_other:
                            raise _bad(f"messages.{i}.content.{j}: tool_result blocks must come first in the "
                                       "content array; any text must come after all tool results")
                        if b.get("tool_use_id") not in prev_uses:
                            raise _bad(f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                                       f"`tool_result` blocks: {b.get('tool_use_id')}. Each `tool_result` block "
                                       "must have a corresponding `tool_use` block in the previous message.")
                        found.add(b.get("tool_use_id"))
                    else:
                        seen_other = True
                missing = prev_uses - found
                if missing:
                    raise _bad(f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
                               f"after: {', '.join(sorted(missing))}. Each `tool_use` block must have a "
                               "corresponding `tool_result` block in the next message.")
                prev_uses = set()
            else:
                prev_uses = {b.get("id") for b in content if b.get("type") == "tool_use"}
            for j, b in enumerate(content):
                if b.get("type") == "text" and not b.get("text"):
                    raise _bad(f"messages.{i}.content.{j}.text: text content blocks must be non-empty")
        if prev_uses and msgs[-1].get("role") == "assistant":
            raise _bad(f"messages.{len(msgs) - 1}: `tool_use` ids were found without `tool_result` blocks "
                       f"immediately after: {', '.join(sorted(prev_uses))}. Each `tool_use` block must have a "
                       "corresponding `tool_result` block in the next message.")
