"""fakeapi: a local stand-in of the Anthropic Messages API for tests and bench scripts.

Tests drive the REAL ``anthropic`` SDK against it over HTTP on 127.0.0.1 (no real API is reachable here):

    from fakeapi import FakeMessagesAPI, Reply, text, tool_use, Fault
    api = FakeMessagesAPI(window=200_000, token_scale=1.0, min_cacheable=1024, clock=None)
    with api:                                   # ThreadingHTTPServer on a free port, daemon thread
        client = anthropic.Anthropic(api_key="test", base_url=api.base_url)   # or ANTHROPIC_BASE_URL
        api.script([Reply(tool_use("read_file", path="a.py")), Reply(text("done"))])
        ...
        api.messages_requests()[0].body        # what the loop sent

Interface
- ``api.script(steps)`` appends steps to the queue answering successive ``POST /v1/messages``. A step is a
  ``Reply`` or a callable ``(body: dict) -> Reply``. ``api.remaining()`` = steps not yet consumed. When the
  script is exhausted the answer is 500 ``api_error`` "fakeapi: script exhausted" with ``x-should-retry: false``
  (so the SDK does not hide the mistake behind retries); it is recorded like any other request.
- ``api.add_handler(predicate, responder)``: ``predicate(body) -> bool`` is checked (in order of adding) before
  the script; a match is answered by ``responder(body) -> Reply`` and consumes no step (e.g. compaction-summary
  requests). ``api.clear_handlers()``.
- ``api.fail_next(*faults)``: faults consumed in order by the next ``/v1/messages`` requests (before validation,
  handlers and the script). A faulted request consumes NO script step. ``Fault.slow`` is a modifier: it delays,
  then the request is served normally (and consumes its step). ``Reply(..., faults=[...])`` queues faults that
  fire on the first requests reaching that step (the scenario file's ``"fault"``).
- ``api.requests``: every request, in arrival order, as ``Recorded`` (.path without query, .query, .method,
  .headers with lower-case keys, .body parsed JSON (None if unparseable), .t = clock() at arrival,
  .status, .usage (the usage dict answered, None for errors), .fault (kind name or None), .error (message)).
  ``api.messages_requests()`` = the ``POST /v1/messages`` records only (``?beta=true`` included), any status.
- ``api.count(body) -> int``: the fake's "real tokenizer": cl100k (``ctxls.core.tokens``, memoised by content
  hash) over each prompt block's text, ``round(raw * token_scale)`` per block, + 3 tokens per message.
  Block texts: a tool definition = its JSON (sort_keys, no cache_control); system/text = the text; tool_use =
  name + " " + JSON input; tool_result = its text content (image/document blocks: 1,000 tokens flat);
  thinking = its text. ``POST /v1/messages/count_tokens`` answers ``{"input_tokens": N}`` with the same count
  (after context edits if the request has ``context_management``; then also ``context_management:
  {original_input_tokens}``). The usage of a Messages response sums to exactly the same N.
- ``clock``: None -> time.monotonic; a callable -> seconds; ``"virtual"`` -> a virtual clock starting at 0
  moved only by ``api.advance(seconds)`` (cache TTLs are judged on this clock).
- ``api.cache_stats()`` -> {entries (live), hits, misses, writes, read_tokens, creation_tokens}.
  ``api.reset_cache()``.

Blocks and replies
- ``text(s)``; ``tool_use(name, id=None, **input)`` (auto id ``toolu_fake_<n>``); ``tool_use_raw(name, raw,
  id=None)`` sends ``raw`` verbatim as the tool input JSON (wrong types / missing fields are just
  ``tool_use("read_file", path=5)`` / ``tool_use("read_file")``). ``Reply.raw_input(name, raw)`` = a Reply
  with one such block. ``thinking(s)``.
- ``Reply(*blocks, stop_reason=None, output_tokens=None, faults=())``: stop_reason defaults to "tool_use" if
  any tool_use block else "end_turn"; output_tokens defaults to the count of the blocks' text.

Validation (400 ``invalid_request_error``, recorded, never consumes a step): model / max_tokens / messages
present; roles alternate starting with user; every assistant tool_use is answered by a tool_result with its
id in the next user message, tool_result blocks come first in that message and name a tool_use of the
previous message; non-empty text blocks; more than 4 cache_control breakpoints (top-level automatic caching
counts as one); a 1h breakpoint after a 5m one; ``context_management`` without the beta header
``context-management-2025-06-27``; input tokens (after context edits) > window -> "prompt is too long: N tokens
> W maximum". input + max_tokens > window is NOT checked (newer models stop with model_context_window_exceeded).

Prefix caching (spec D2): the prompt is the ordered block list tools -> system -> message content blocks.
A block with ``cache_control {"type": "ephemeral", "ttl": "5m"|"1h"}`` is a breakpoint; top-level
``cache_control`` puts one on the last block. Entries are keyed by a hash of the model and the prefix up to and
including a block (cache_control itself is not part of the key) and written only at breakpoints whose prefix is
at least ``min_cacheable`` tokens. Lookup: for each breakpoint, the prefix at the breakpoint and then the 20
blocks before it (21 positions); the longest live hit wins. usage: cache_read_input_tokens = tokens of the hit
prefix; cache_creation_input_tokens = from the hit (or 0) to the last written breakpoint (split into
``cache_creation.ephemeral_5m/1h_input_tokens``); input_tokens = the rest. An entry lives ``ttl`` after its last
write or read (a read refreshes it).

Context editing (spec D3, ``client.beta.messages.create(..., betas=["context-management-2025-06-27"],
context_management={"edits": [...]})``): ``clear_tool_uses_20250919`` fires when the unedited count >= trigger
(input_tokens, default 100,000) or the number of tool uses >= trigger (tool_uses); it clears the results of all
tool uses (not in ``exclude_tools``) but the last ``keep`` (default 3) to ``CLEARED_PLACEHOLDER``, also their
inputs to {} with ``clear_tool_inputs`` (true, or a list of names); it is skipped when it clears less than
``clear_at_least``. ``clear_thinking_20251015`` drops thinking blocks of all but the last ``keep`` assistant
turns. Counting, the window check and caching all see the edited prompt; the response carries
``context_management.applied_edits`` ([] when nothing applied), streamed in the final message_delta.

Streaming: ``"stream": true`` answers SSE with chunked transfer encoding: message_start (usage with
output_tokens 1), ping, per block content_block_start / content_block_delta (text_delta in up to 3 chunks,
input_json_delta partial_json in up to 3 chunks, thinking_delta + signature_delta) / content_block_stop,
message_delta (stop_reason, usage incl. output_tokens, context_management), message_stop.

Faults and what anthropic 2.15.0 does with them (measured by tests/test_fakeapi.py, sync and async clients):
- ``Fault.rate_limit(retry_after=0.05)`` 429 rate_limit_error + ``retry-after``: the SDK RETRIES by itself
  (up to max_retries, default 2), sleeping exactly retry-after (it honours any positive value, and
  ``retry-after-ms``); after the last attempt it raises ``anthropic.RateLimitError``.
- ``Fault.overloaded(retry_after=None)`` 529 overloaded_error and ``Fault.server_error(retry_after=None)`` 500
  api_error: RETRIED by the SDK (backoff 0.5 s x 2^n, jitter, unless retry-after is given), then
  ``anthropic.OverloadedError`` / ``anthropic.InternalServerError``.
- ``Fault.overloaded_mid_stream(after_blocks=1)``: HTTP 200, message_start and ``after_blocks`` full content
  blocks of the next reply, then ``event: error`` overloaded_error (how the real API reports 529 mid-stream).
  NOT retried: the SDK raises ``anthropic.APIStatusError`` (status_code 200; body["error"]["type"] ==
  "overloaded_error") while iterating (also from ``get_final_message()``). The CALLER must retry. On a
  non-streaming request this fault is a plain 529 (retried by the SDK).
- ``Fault.cut_stream(after_events=3)``: the SSE response starts, then the connection is closed abruptly after
  ``after_events`` events (no final chunk). NOT retried, and NOT wrapped in an anthropic exception: iterating
  raises ``httpx2.RemoteProtocolError`` (the SDK's bundled httpx fork; catch ``httpx2.TransportError``) "peer
  closed connection without sending complete message body". The CALLER must retry. On a non-streaming request the JSON
  body is cut short: the SDK RETRIES that itself (read failures inside the request are connection errors).
- ``Fault.slow(seconds)``: sleeps (real time, also advancing a virtual clock), then serves normally; with a
  client timeout below ``seconds`` the SDK raises APITimeoutError after its retries (each retry is a new
  request that is served normally, since slow consumed itself).
- ``Fault.status(code, error_type, message, headers)``: any other error answer.
Faulted requests are recorded with ``.fault`` set; ``x-stainless-retry-count`` in ``.headers`` shows the
SDK's attempt number.

Standalone (editor e2e tests): ``python tests/fakeapi.py --port 0 --scenario scenario.json
[--record requests.jsonl] [--window N] [--token-scale F] [--min-cacheable N]`` prints
``listening http://127.0.0.1:PORT`` (flushed) and serves until SIGTERM/SIGINT. The scenario is a JSON list of
steps (or ``{"steps": [...]}``), each ``{"content": [blocks], "stop_reason"?: str, "output_tokens"?: int,
"fault"?: {"kind": "rate_limit"|"overloaded"|"server_error"|"overloaded_mid_stream"|"cut_stream"|"slow",
...the kind's arguments, e.g. "retry_after": 0.1, "after_blocks": 1, "after_events": 3, "seconds": 2},
"faults"?: [several]}``. Blocks are API blocks (``{"type": "text", "text": ...}``, ``{"type": "tool_use",
"name": ..., "input": {...}, "id"?: ...}``). A step's fault hits the first request that reaches the step; the
retry gets the content. ``--record`` appends every POST request body as one JSON line (count_tokens bodies
too: they have no ``max_tokens``), flushed per line.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import itertools
import json
import math
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterable

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

_tool_ids = itertools.count(1)


# ----------------------------------------------------------------------------------------------- blocks

def text(s: str) -> dict:
    return {"type": "text", "text": s}


def tool_use(name: str, id: str | None = None, **input: Any) -> dict:
    return {"type": "tool_use", "id": id or f"toolu_fake_{next(_tool_ids)}", "name": name, "input": input}


def tool_use_raw(name: str, raw: str, id: str | None = None) -> dict:
    """A tool_use whose input JSON is sent exactly as ``raw`` (may be malformed: see the module docstring)."""
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = raw
    return {"type": "tool_use", "id": id or f"toolu_fake_{next(_tool_ids)}", "name": name, "input": parsed,
            "_raw_input": raw}


def thinking(s: str, signature: str = "fake-signature") -> dict:
    return {"type": "thinking", "thinking": s, "signature": signature}


class Reply:
    def __init__(self, *blocks: dict | str, stop_reason: str | None = None, output_tokens: int | None = None,
                 faults: Iterable["Fault"] = ()) -> None:
        self.blocks = [text(b) if isinstance(b, str) else b for b in blocks]
        self.stop_reason = stop_reason or (
            "tool_use" if any(b.get("type") == "tool_use" for b in self.blocks) else "end_turn")
        self.output_tokens = output_tokens
        self.faults = list(faults)

    @classmethod
    def raw_input(cls, name: str, raw: str, id: str | None = None, **kw: Any) -> "Reply":
        return cls(tool_use_raw(name, raw, id), **kw)

    def __repr__(self) -> str:
        return f"Reply({self.blocks!r}, stop_reason={self.stop_reason!r})"


@dataclass
class Fault:
    kind: str
    code: int = 500
    error_type: str = "api_error"
    message: str = "Internal server error"
    headers: dict = field(default_factory=dict)
    after: int = 0          # blocks (mid-stream) or events (cut)
    seconds: float = 0.0    # slow

    @classmethod
    def rate_limit(cls, retry_after: float | None = 0.05) -> "Fault":
        h = {} if retry_after is None else {"retry-after": f"{retry_after:g}"}
        return cls("rate_limit", 429, "rate_limit_error", "Number of request tokens has exceeded your rate limit",
                   h)

    @classmethod
    def overloaded(cls, retry_after: float | None = None) -> "Fault":
        h = {} if retry_after is None else {"retry-after": f"{retry_after:g}"}
        return cls("overloaded", 529, "overloaded_error", "Overloaded", h)

    @classmethod
    def server_error(cls, retry_after: float | None = None) -> "Fault":
        h = {} if retry_after is None else {"retry-after": f"{retry_after:g}"}
        return cls("server_error", 500, "api_error", "Internal server error", h)

    @classmethod
    def overloaded_mid_stream(cls, after_blocks: int = 1) -> "Fault":
        return cls("overloaded_mid_stream", 529, "overloaded_error", "Overloaded", after=after_blocks)

    @classmethod
    def cut_stream(cls, after_events: int = 3) -> "Fault":
        return cls("cut_stream", after=after_events)

    @classmethod
    def slow(cls, seconds: float) -> "Fault":
        return cls("slow", seconds=seconds)

    @classmethod
    def status(cls, code: int, error_type: str, message: str, headers: dict | None = None) -> "Fault":
        return cls("status", code, error_type, message, dict(headers or {}))

    @classmethod
    def from_json(cls, d: dict) -> "Fault":
        kind = d.get("kind")
        makers = {
            "rate_limit": lambda: cls.rate_limit(d.get("retry_after", 0.05)),
            "overloaded": lambda: cls.overloaded(d.get("retry_after")),
            "server_error": lambda: cls.server_error(d.get("retry_after")),
            "overloaded_mid_stream": lambda: cls.overloaded_mid_stream(d.get("after_blocks", 1)),
            "cut_stream": lambda: cls.cut_stream(d.get("after_events", 3)),
            "slow": lambda: cls.slow(d.get("seconds", 1.0)),
        }
        if kind not in makers:
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {', '.join(makers)}")
        return makers[kind]()


@dataclass
class Recorded:
    path: str
    method: str
    headers: dict
    body: Any
    t: float
    query: str = ""
    status: int | None = None
    usage: dict | None = None
    fault: str | None = None
    error: str | None = None


class ApiError(Exception):
    def __init__(self, status: int, error_type: str, message: str, headers: dict | None = None) -> None:
        super().__init__(message)
        self.status, self.error_type, self.message, self.headers = status, error_type, message, headers or {}


def _bad(message: str) -> ApiError:
    return ApiError(400, "invalid_request_error", message)


class VirtualClock:
    def __init__(self) -> None:
        self.now = 0.0
        self._lock = threading.Lock()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds


# ----------------------------------------------------------------------------------------------- prompt

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


# ----------------------------------------------------------------------------------------------- the fake

class FakeMessagesAPI:
    def __init__(self, window: int = 200_000, token_scale: float = 1.0, min_cacheable: int = 1024,
                 clock: Callable[[], float] | str | None = None, host: str = "127.0.0.1", port: int = 0,
                 record_file: str | Path | None = None) -> None:
        self.window = window
        self.token_scale = token_scale
        self.min_cacheable = min_cacheable
        if clock == "virtual":
            self._virtual: VirtualClock | None = VirtualClock()
            self.clock: Callable[[], float] = self._virtual
        else:
            self._virtual = None
            self.clock = clock or time.monotonic  # type: ignore[assignment]
        self.host, self.port = host, port
        self.requests: list[Recorded] = []
        self._steps: list = []
        self._faults: list[Fault] = []
        self._handlers: list[tuple[Callable, Callable]] = []
        self._lock = threading.RLock()
        self._counter = TokenCounter(factor=1.0)
        self._msg_ids = itertools.count(1)
        self._cache: dict[str, list] = {}   # prefix key -> [expires_at, ttl]
        self._stats = {"hits": 0, "misses": 0, "writes": 0, "read_tokens": 0, "creation_tokens": 0}
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._record_file = Path(record_file) if record_file else None

    # -- lifecycle
    def start(self) -> "FakeMessagesAPI":
        api = self

        class Handler(_Handler):
            fake = api

        self._server = ThreadingHTTPServer((self.host, self.port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="fakeapi", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "FakeMessagesAPI":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # -- scripting
    def script(self, steps: Iterable) -> None:
        with self._lock:
            self._steps.extend(steps)

    def remaining(self) -> int:
        return len(self._steps)

    def add_handler(self, predicate: Callable[[dict], bool], responder: Callable[[dict], Reply]) -> None:
        with self._lock:
            self._handlers.append((predicate, responder))

    def clear_handlers(self) -> None:
        with self._lock:
            self._handlers.clear()

    def fail_next(self, *faults: Fault) -> None:
        with self._lock:
            self._faults.extend(faults)

    def messages_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.method == "POST" and r.path == "/v1/messages"]

    def advance(self, seconds: float) -> None:
        if self._virtual is None:
            raise RuntimeError('advance() needs the virtual clock: FakeMessagesAPI(clock="virtual")')
        self._virtual.advance(seconds)

    # -- tokens
    def _tok(self, block: Any) -> int:
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
                out.append((_strip_cc(b), self._tok(b), b.get("cache_control")))
        for i, m in enumerate(body.get("messages") or []):
            if not isinstance(m, dict):
                continue
            for j, b in enumerate(_content_blocks(m.get("content"))):
                if not isinstance(b, dict):
                    continue
                tag = {"role": m.get("role"), "msg": i, **_strip_cc(b)}
                out.append((tag, self._tok(b) + (MESSAGE_OVERHEAD if j == 0 else 0), b.get("cache_control")))
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

    def _usage(self, body: dict) -> dict:
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
    def _apply_edits(self, body: dict, headers: dict) -> tuple[dict, list | None]:
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
    def _validate(self, body: Any) -> None:
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

    # -- request handling (called by the HTTP handler)
    def _record(self, rec: Recorded) -> None:
        with self._lock:
            self.requests.append(rec)
            if self._record_file is not None and rec.method == "POST" and rec.body is not None:
                with self._record_file.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(rec.body, ensure_ascii=False) + "\n")
                    f.flush()

    def _next_fault(self) -> Fault | None:
        with self._lock:
            if not self._faults and self._steps and isinstance(self._steps[0], Reply) and self._steps[0].faults:
                self._faults.extend(self._steps[0].faults)
                self._steps[0].faults = []
            return self._faults.pop(0) if self._faults else None

    def _peek_blocks(self) -> list[dict]:
        with self._lock:
            if self._steps and isinstance(self._steps[0], Reply):
                return self._steps[0].blocks
        return [text("(partial answer from fakeapi before the fault)")]

    def _answer(self, body: dict) -> Reply:
        with self._lock:
            for pred, responder in self._handlers:
                if pred(body):
                    break
            else:
                if not self._steps:
                    raise ApiError(500, "api_error", "fakeapi: script exhausted (no step left for this request)",
                                   {"x-should-retry": "false"})
                step = self._steps.pop(0)
                responder = None
        reply = responder(body) if responder else (step if isinstance(step, Reply) else step(body))
        if not isinstance(reply, Reply):
            raise ApiError(500, "api_error", f"fakeapi: a step returned {type(reply).__name__}, not a Reply",
                           {"x-should-retry": "false"})
        return reply

    def _message(self, body: dict, reply: Reply, usage: dict, applied: list | None) -> dict:
        blocks = []
        for b in reply.blocks:
            b = {k: v for k, v in b.items() if k != "_raw_input"}
            blocks.append(b)
        out_tokens = reply.output_tokens
        if out_tokens is None:
            out_tokens = max(1, sum(self._tok(b) for b in blocks))
        usage = {**usage, "output_tokens": out_tokens}
        msg = {"id": f"msg_fake_{next(self._msg_ids)}", "type": "message", "role": "assistant",
               "model": body.get("model"), "content": blocks, "stop_reason": reply.stop_reason,
               "stop_sequence": None, "usage": usage}
        if applied is not None:
            msg["context_management"] = {"applied_edits": applied}
        return msg


# ----------------------------------------------------------------------------------------------- SSE

def _chunks(s: str, n: int = 3) -> list[str]:
    if not s:
        return [""]
    size = max(1, math.ceil(len(s) / n))
    return [s[i:i + size] for i in range(0, len(s), size)]


def _block_events(index: int, block: dict) -> list[tuple[str, dict]]:
    kind = block.get("type")
    ev: list[tuple[str, dict]] = []
    if kind == "text":
        ev.append(("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}}))
        for c in _chunks(block.get("text", "")):
            ev.append(("content_block_delta", {"index": index, "delta": {"type": "text_delta", "text": c}}))
    elif kind == "tool_use":
        ev.append(("content_block_start", {"index": index, "content_block": {
            "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}))
        raw = block.get("_raw_input")
        if raw is None:
            raw = json.dumps(block.get("input", {}), ensure_ascii=False)
        for c in _chunks(raw):
            ev.append(("content_block_delta", {"index": index, "delta": {"type": "input_json_delta",
                                                                          "partial_json": c}}))
    elif kind == "thinking":
        ev.append(("content_block_start", {"index": index, "content_block": {
            "type": "thinking", "thinking": "", "signature": ""}}))
        for c in _chunks(block.get("thinking", "")):
            ev.append(("content_block_delta", {"index": index, "delta": {"type": "thinking_delta", "thinking": c}}))
        ev.append(("content_block_delta", {"index": index, "delta": {"type": "signature_delta",
                                                                      "signature": block.get("signature", "")}}))
    else:
        ev.append(("content_block_start", {"index": index, "content_block": block}))
    ev.append(("content_block_stop", {"index": index}))
    return ev


def _stream_events(msg: dict) -> tuple[list[tuple[str, dict]], list[int]]:
    """All SSE events of a message, and the event count after each content block (for mid-stream faults)."""
    usage = msg["usage"]
    start = {**msg, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    start.pop("context_management", None)
    events = [("message_start", {"message": start}), ("ping", {})]
    ends = [len(events)]
    for i, b in enumerate(msg["content"]):
        events += _block_events(i, b)
        ends.append(len(events))
    delta: dict = {"delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                   "usage": {k: usage[k] for k in ("input_tokens", "cache_creation_input_tokens",
                                                   "cache_read_input_tokens", "output_tokens")}}
    if "context_management" in msg:
        delta["context_management"] = msg["context_management"]
    events += [("message_delta", delta), ("message_stop", {})]
    return events, ends


# ----------------------------------------------------------------------------------------------- HTTP

class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeMessagesAPI

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    # -- plumbing
    def _send_json(self, status: int, obj: dict, headers: dict | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", f"req_fake_{id(obj):x}")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_error(self, rec: Recorded, err: ApiError) -> None:
        rec.status, rec.error = err.status, err.message
        self._send_json(err.status, {"type": "error", "error": {"type": err.error_type, "message": err.message}},
                        err.headers)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _sse(self, name: str, data: dict) -> None:
        self._chunk(f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode())

    def _start_sse(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", "req_fake_stream")
        self.end_headers()

    def _abort(self) -> None:
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # -- routing
    def _handle(self) -> None:
        fake = self.fake
        path, _, query = self.path.partition("?")
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        rec = Recorded(path=path, method=self.command, query=query,
                       headers={k.lower(): v for k, v in self.headers.items()}, body=body, t=fake.clock())
        fake._record(rec)
        try:
            if self.command == "POST" and path == "/v1/messages":
                self._messages(rec)
            elif self.command == "POST" and path == "/v1/messages/count_tokens":
                if not isinstance(body, dict) or "messages" not in body:
                    raise _bad("messages: Field required")
                edited, _ = fake._apply_edits(body, rec.headers)
                out: dict = {"input_tokens": fake.count(edited)}
                if "context_management" in body:
                    out["context_management"] = {"original_input_tokens": fake.count(body)}
                rec.status = 200
                self._send_json(200, out)
            else:
                raise ApiError(404, "not_found_error", f"fakeapi: no route {self.command} {path}")
        except ApiError as err:
            self._send_error(rec, err)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _messages(self, rec: Recorded) -> None:
        fake, body = self.fake, rec.body
        if body is None:
            raise _bad("body: could not parse the request body as JSON")
        streaming = isinstance(body, dict) and bool(body.get("stream"))
        fault = fake._next_fault()
        if fault is not None and fault.kind == "slow":  # a modifier: delay, then serve this request normally
            rec.fault = "slow"
            if fake._virtual is not None:
                fake._virtual.advance(fault.seconds)
            time.sleep(fault.seconds)
            fault = None
        if fault is not None:
            rec.fault = fault.kind
            if fault.kind in ("overloaded_mid_stream", "cut_stream"):
                self._partial(rec, fault, streaming)
                return
            raise ApiError(fault.code, fault.error_type, fault.message, fault.headers)
        fake._validate(body)
        edited, applied = fake._apply_edits(body, rec.headers)
        usage = fake._usage(edited)
        total = usage["input_tokens"] + usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"]
        if total > fake.window:
            raise _bad(f"prompt is too long: {total} tokens > {fake.window} maximum")
        reply = fake._answer(body)
        msg = fake._message(body, reply, usage, applied)
        rec.usage = msg["usage"]
        rec.status = 200
        if not streaming:
            self._send_json(200, msg)
            return
        self._start_sse()
        for name, data in _stream_events(msg)[0]:
            self._sse(name, data)
        self._chunk(b"")

    def _partial(self, rec: Recorded, fault: Fault, streaming: bool) -> None:
        """Mid-stream overload or a cut connection, answered from the next step's blocks without consuming it."""
        fake = self.fake
        body = rec.body
        msg = fake._message(body, Reply(*fake._peek_blocks()), {
            "input_tokens": fake.count(body) if isinstance(body, dict) else 0, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0, "output_tokens": 0}, None)
        if fault.kind == "overloaded_mid_stream" and not streaming:
            raise ApiError(529, "overloaded_error", "Overloaded")
        rec.status = 200
        if not streaming:  # cut: promise the whole body, send half, close
            data = json.dumps(msg).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[:len(data) // 2])
            self._abort()
            return
        events, ends = _stream_events(msg)
        self._start_sse()
        if fault.kind == "cut_stream":
            for name, data in events[:fault.after]:
                self._sse(name, data)
            self._abort()
            return
        for name, data in events[:ends[min(fault.after, len(ends) - 1)]]:
            self._sse(name, data)
        self._sse("error", {"error": {"type": "overloaded_error", "message": "Overloaded"}})
        self._chunk(b"")


# ----------------------------------------------------------------------------------------------- CLI

def load_scenario(path: str | Path) -> list[Reply]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    steps = data.get("steps") if isinstance(data, dict) else data
    if not isinstance(steps, list):
        raise ValueError("a scenario is a JSON list of steps (or {\"steps\": [...]})")
    out = []
    for n, s in enumerate(steps):
        if not isinstance(s, dict) or not isinstance(s.get("content"), list):
            raise ValueError(f"step {n}: expected an object with a \"content\" list of blocks")
        blocks = []
        for b in s["content"]:
            if isinstance(b, dict) and b.get("type") == "tool_use" and not b.get("id"):
                b = {**b, "id": f"toolu_fake_{next(_tool_ids)}"}
            blocks.append(b)
        faults = [Fault.from_json(f) for f in ([s["fault"]] if s.get("fault") else []) + list(s.get("faults", []))]
        out.append(Reply(*blocks, stop_reason=s.get("stop_reason"), output_tokens=s.get("output_tokens"),
                         faults=faults))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="fakeapi", description="Local stand-in of the Anthropic Messages API.")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--scenario", required=True)
    p.add_argument("--record")
    p.add_argument("--window", type=int, default=200_000)
    p.add_argument("--token-scale", type=float, default=1.0)
    p.add_argument("--min-cacheable", type=int, default=1024)
    a = p.parse_args(argv)
    try:
        steps = load_scenario(a.scenario)
    except (OSError, ValueError) as e:
        print(f"fakeapi: bad scenario {a.scenario}: {e}", file=sys.stderr)
        return 2
    api = FakeMessagesAPI(window=a.window, token_scale=a.token_scale, min_cacheable=a.min_cacheable, port=a.port,
                          record_file=a.record)
    api.script(steps)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with api:
        print(f"listening {api.base_url}", flush=True)
        stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
