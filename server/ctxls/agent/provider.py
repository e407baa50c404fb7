"""Anthropic API access. The only place ctxls talks to the network, and only when the user configures a key.

`Provider.call` streams one Messages request and retries what is worth retrying: 429, 529 and other 5xx answers
(honouring `retry-after`), connection failures, and streams that break or report an error midway. The SDK's own
retries are off, so every attempt is seen (and counted) here, and a broken stream is retried like a refused
request: the partial answer is dropped, never recorded.
"""

from __future__ import annotations

import asyncio
import email.utils
import os
import random
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

DEFAULT_MODEL = "claude-sonnet-5"
"""The current Sonnet (spec D2, D4 list Sonnet 5 as the newest); `[agent] model` or `--model` changes it."""
NO_KEY = ("no Anthropic API key: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a gateway or proxy); "
          "`ctxls context` and `ctxls check` need no key")
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
RETRYABLE_TYPES = frozenset({"overloaded_error", "rate_limit_error", "api_error", "timeout_error"})


class ProviderError(Exception):
    """The provider failed for good (a rejected request, or retries exhausted)."""

    def __init__(self, message: str, attempts: int = 1, retryable: bool = False) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.retryable = retryable


@dataclass
class Response:
    message: dict[str, Any]
    """The assistant message as it goes back into the conversation: {"role": "assistant", "content": [...]}."""
    stop_reason: str | None
    usage: dict[str, int]
    attempts: int
    seconds: float
    """Wall-clock time of the successful attempt, from the request to the last event."""
    retries: list[str] = field(default_factory=list)


def api_key() -> str | None:
    return os.environ.get("ANTHROPIC_API_KEY") or None


@dataclass
class Provider:
    model: str = DEFAULT_MODEL
    max_tokens: int = 8_192
    max_attempts: int = 5
    backoff_base: float = 0.5
    backoff_max: float = 20.0
    timeout_s: float = 600.0
    api_key: str | None = None
    base_url: str | None = None
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep

    def __post_init__(self) -> None:
        import anthropic

        key = self.api_key or api_key()
        if not key:
            raise ProviderError(NO_KEY)
        self._anthropic = anthropic
        # max_retries=0: the loop below retries, so that a broken stream is handled like a refused request
        self.client = anthropic.AsyncAnthropic(api_key=key, base_url=self.base_url or os.environ.get("ANTHROPIC_BASE_URL"),
                                               max_retries=0, timeout=self.timeout_s)

    async def call(self, *, system: Any, tools: list[dict[str, Any]], messages: list[dict[str, Any]],
                   on_text: Callable[[str], None] | None = None, on_retry: Callable[[str], None] | None = None,
                   extra: dict[str, Any] | None = None) -> Response:
        retries: list[str] = []
        for attempt in range(1, self.max_attempts + 1):
            t0 = time.perf_counter()
            try:
                msg = await self._stream(system, tools, messages, on_text, extra or {})
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - classified below; nothing escapes unclassified
                retryable, why, wait = self._classify(exc)
                if not retryable:
                    raise ProviderError(why, attempt) from None
                if attempt == self.max_attempts:
                    raise ProviderError(f"{why} (gave up after {attempt} attempts)", attempt, True) from None
                delay = wait if wait is not None else min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1))
                delay *= 1 if wait is not None else random.uniform(0.8, 1.2)
                note = f"{why}; retrying in {delay:.1f} s (attempt {attempt + 1} of {self.max_attempts})"
                retries.append(note)
                if on_retry:
                    on_retry(note)
                await self.sleep(delay)
                continue
            content = [_block(b) for b in msg.content]
            usage = _usage(msg.usage)
            return Response({"role": "assistant", "content": content}, msg.stop_reason, usage, attempt,
                            time.perf_counter() - t0, retries)
        raise ProviderError("no attempt was made", 0)  # (max_attempts < 1)

    async def _stream(self, system, tools, messages, on_text, extra):
        kwargs = dict(model=self.model, max_tokens=self.max_tokens, system=system, tools=tools, messages=messages)
        kwargs.update(extra)
        betas = kwargs.pop("betas", None)
        api = self.client.beta.messages if betas else self.client.messages
        if betas:
            kwargs["betas"] = betas
        async with api.stream(**kwargs) as stream:
            async for event in stream:
                if on_text and event.type == "content_block_delta" and getattr(event.delta, "type", "") == "text_delta":
                    on_text(event.delta.text)
            return await stream.get_final_message()

    def _classify(self, exc: Exception) -> tuple[bool, str, float | None]:
        """(retry?, what happened in words, seconds the server asked us to wait)."""
        a = self._anthropic
        if isinstance(exc, a.APIStatusError):
            body = exc.body if isinstance(exc.body, dict) else {}
            err = body.get("error") if isinstance(body.get("error"), dict) else body
            etype = err.get("type") if isinstance(err, dict) else None
            emsg = err.get("message") if isinstance(err, dict) else None
            status = exc.status_code
            what = f"the API answered {status if status >= 400 else 'mid-stream'} {etype or ''}".rstrip()
            if emsg:
                what += f": {emsg}"
            if status in (401, 403):
                return False, f"{what} (check ANTHROPIC_API_KEY)", None
            retry = status in RETRYABLE_STATUS or (status < 400 and etype in RETRYABLE_TYPES) or etype in RETRYABLE_TYPES
            return retry, what, _retry_after(exc.response)
        if isinstance(exc, a.APITimeoutError):
            return True, "the request timed out", None
        if isinstance(exc, a.APIConnectionError):
            return True, f"cannot reach the API ({_cause(exc)})", None
        name = type(exc).__name__
        if "Protocol" in name or "Read" in name or "Stream" in name or "Connect" in name or isinstance(exc, OSError):
            return True, f"the stream broke ({name}: {exc})", None
        return False, f"unexpected provider failure: {name}: {exc}", None


def _retry_after(response) -> float | None:
    try:
        raw = response.headers.get("retry-after")
    except Exception:  # noqa: BLE001 - a stream error has no useful response
        return None
    if not raw:
        return None
    try:
        return min(60.0, max(0.0, float(raw)))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
        return min(60.0, max(0.0, when.timestamp() - time.time()))
    except (TypeError, ValueError):
        return None


def _cause(exc: BaseException) -> str:
    c = exc.__cause__ or exc.__context__
    return f"{type(c).__name__}: {c}" if c else str(exc)


def _block(b) -> dict[str, Any]:
    """A content block as plain JSON in a fixed key order (what goes back into the conversation)."""
    if b.type == "text":
        return {"type": "text", "text": b.text}
    if b.type == "tool_use":
        return {"type": "tool_use", "id": b.id, "name": b.name, "input": b.input}
    if b.type == "thinking":
        return {"type": "thinking", "thinking": b.thinking, "signature": b.signature}
    return b.model_dump(exclude_none=True)


def _usage(u) -> dict[str, int]:
    return {"input_tokens": int(getattr(u, "input_tokens", 0) or 0),
            "cache_creation_input_tokens": int(getattr(u, "cache_creation_input_tokens", 0) or 0),
            "cache_read_input_tokens": int(getattr(u, "cache_read_input_tokens", 0) or 0),
            "output_tokens": int(getattr(u, "output_tokens", 0) or 0)}


def exact_token_counter(model: str | None = None, api_key: str | None = None,
                        base_url: str | None = None) -> Callable[[str], int] | None:
    """A text -> tokens function backed by `messages.count_tokens`, or None without a key.

    count_tokens measures a whole request, so the cost of an empty one-message request is measured once and
    subtracted: what remains is the text itself, in the model's own tokenizer (spec D1: still documented as an
    estimate, "might differ by a small amount").
    """
    key = api_key or os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        return None
    import anthropic

    client = anthropic.Anthropic(api_key=key, base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL"))
    model = model or DEFAULT_MODEL

    def measure(text: str) -> int:
        res = client.messages.count_tokens(model=model, messages=[{"role": "user", "content": text}])
        return int(res.input_tokens)

    base = measure(".") - 1

    def count(text: str) -> int:
        return max(0, measure(text) - base)

    return count
