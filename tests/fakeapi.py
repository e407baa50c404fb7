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
- ``api.cache_stats()`` -> {entries (live), hits (requests that read), misses (requests with breakpoints
  that read nothing), writes (new entries), read_tokens, creation_tokens}. ``api.reset_cache()``.
  Counting, caching, context editing and validation live in ``fakeapi_prompt.PromptModel`` (``api.prompt``).

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
SDK's attempt number. Also observed with 2.15.0: the key arrives as ``authorization: Bearer <key>`` (not
``x-api-key``), and the SDK's event iterators drop ``ping`` events.

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

# The prompt model (counting, prefix cache, context editing, validation) lives next door; re-exported here.
from fakeapi_prompt import (CLEARED_PLACEHOLDER, CONTEXT_BETA, LOOKBACK, MAX_BREAKPOINTS,  # noqa: F401
                            MESSAGE_OVERHEAD, ApiError, PromptModel, _bad)

__all__ = ["FakeMessagesAPI", "Reply", "Fault", "Recorded", "text", "tool_use", "tool_use_raw", "thinking",
           "load_scenario", "CLEARED_PLACEHOLDER", "CONTEXT_BETA", "LOOKBACK", "MAX_BREAKPOINTS",
           "MESSAGE_OVERHEAD"]

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


class VirtualClock:
    def __init__(self) -> None:
        self.now = 0.0
        self._lock = threading.Lock()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds


# ----------------------------------------------------------------------------------------------- the fake

class FakeMessagesAPI:
    def __init__(self, window: int = 200_000, token_scale: float = 1.0, min_cacheable: int = 1024,
                 clock: Callable[[], float] | str | None = None, host: str = "127.0.0.1", port: int = 0,
                 record_file: str | Path | None = None) -> None:
        self.window = window
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
        self.prompt = PromptModel(token_scale, min_cacheable, self.clock)
        self._msg_ids = itertools.count(1)
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

    # -- the prompt model's public face
    def count(self, body: dict) -> int:
        """Input tokens of a request as this fake's "real tokenizer" counts them (before context edits)."""
        return self.prompt.count(body)

    def cache_stats(self) -> dict:
        return self.prompt.cache_stats()

    def reset_cache(self) -> None:
        self.prompt.reset_cache()

    @property
    def token_scale(self) -> float:
        return self.prompt.token_scale

    @token_scale.setter
    def token_scale(self, value: float) -> None:
        self.prompt.token_scale = value

    @property
    def min_cacheable(self) -> int:
        return self.prompt.min_cacheable

    @min_cacheable.setter
    def min_cacheable(self, value: int) -> None:
        self.prompt.min_cacheable = value

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
            out_tokens = max(1, sum(self.prompt.block_tokens(b) for b in blocks))
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
    # Headers and body go out in separate writes; with Nagle on, the client's delayed ACK added ~40 ms a call.
    disable_nagle_algorithm = True
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
                edited, _ = fake.prompt.apply_edits(body, rec.headers)
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
        fake.prompt.validate(body)
        edited, applied = fake.prompt.apply_edits(body, rec.headers)
        total = fake.count(edited)
        if total > fake.window:  # before _usage: a rejected request reads and writes no cache entry
            raise _bad(f"prompt is too long: {total} tokens > {fake.window} maximum")
        usage = fake.prompt.usage(edited)
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
