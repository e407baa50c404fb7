"""TokenCounter (cl100k estimate, cache, factor, exact mode) and the persistent TokenCache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import ctxls.core.tokens as tokens_mod
from ctxls.core.cache import VERSION, TokenCache, default_cache_path
from ctxls.core.tokens import ENCODING, TokenCounter, content_key, factor_for, raw_count


@pytest.fixture
def encoder_calls(monkeypatch):
    """Count calls into the cl100k encoder made by TokenCounter."""
    calls: list[str] = []
    real = tokens_mod.raw_count

    def counting(text: str) -> int:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(tokens_mod, "raw_count", counting)
    return calls


# ---------------------------------------------------------------------------------------------- cl100k counts
@pytest.mark.parametrize("text, expected", [
    ("hello world", 2),
    ("Hello, world!", 4),
    ("The quick brown fox jumps over the lazy dog.", 10),
])
def test_known_cl100k_counts(text, expected):
    assert raw_count(text) == expected
    assert TokenCounter().count(text) == expected


def test_empty_string_is_zero_tokens_without_touching_the_encoder(encoder_calls):
    c = TokenCounter()
    assert c.count("") == 0
    assert raw_count("") == 0
    assert encoder_calls == [] and c.misses == 0


@pytest.mark.parametrize("a, b", [
    ("Always run the tests", " before you commit."),
    ("# Project rules\n", "Use tabs for indentation.\n"),
    ("def main():", "\n    return 0\n"),
    ("The billing service owns refunds", " and invoices."),
])
def test_counts_are_nearly_additive_across_word_boundaries(a, b):
    c = TokenCounter()
    whole = c.count(a + b)
    assert whole > 0
    assert abs(whole - (c.count(a) + c.count(b))) <= 1


def test_longer_text_counts_more():
    c = TokenCounter()
    assert c.count("word " * 100) > c.count("word " * 10) > 0


@pytest.mark.parametrize("text", ["<|endoftext|>", "<|fim_prefix|>x<|fim_suffix|>", "<|endofprompt|>"])
def test_special_token_text_counts_as_ordinary_text(text):
    n = TokenCounter().count(text)
    assert n > 1  # a special token would be a single id; as text it is several


def test_lone_surrogate_does_not_raise():
    assert TokenCounter().count("abc\ud800def") > 0


# ---------------------------------------------------------------------------------------------- cache
def test_second_count_of_same_text_is_a_cache_hit(encoder_calls):
    c = TokenCounter()
    first = c.count("Keep functions short.")
    second = c.count("Keep functions short.")
    assert first == second > 0
    assert c.misses == 1
    assert encoder_calls == ["Keep functions short."]


def test_prefilled_cache_is_used_without_the_encoder(monkeypatch):
    def boom(text):
        raise AssertionError("encoder called on a cache hit")

    monkeypatch.setattr(tokens_mod, "raw_count", boom)
    c = TokenCounter(cache={content_key("cached text"): 17})
    assert c.count("cached text") == 17
    assert c.misses == 0


def test_distinct_texts_are_distinct_misses(encoder_calls):
    c = TokenCounter()
    c.count_many(["one", "two", "one", "three", "two"])
    assert c.misses == 3
    assert sorted(encoder_calls) == ["one", "three", "two"]


# ---------------------------------------------------------------------------------------------- factor
def test_factor_scales_the_raw_count():
    text = "The quick brown fox jumps over the lazy dog."
    assert TokenCounter(factor=1.5).count(text) == 15
    assert TokenCounter(factor=2.0).count(text) == 20
    assert TokenCounter(factor=1.0).method == "cl100k (estimate)"
    assert "1.5" in TokenCounter(factor=1.5).method


def test_cache_stores_raw_counts_so_factors_can_share_it():
    shared: dict[str, int] = {}
    text = "The quick brown fox jumps over the lazy dog."
    assert TokenCounter(factor=1.0, cache=shared).count(text) == 10
    assert TokenCounter(factor=1.45, cache=shared).count(text) == round(10 * 1.45)
    assert shared == {content_key(text): 10}


def test_factor_for_models():
    assert factor_for(None) == 1.0
    assert factor_for("claude-opus-4-7-20260101") == 1.45
    assert factor_for("claude-sonnet-4-5") == 1.2
    assert factor_for("gpt-4") == 1.0
    assert factor_for("claude-opus-4-7", explicit=1.1) == 1.1  # an explicit factor wins


# ---------------------------------------------------------------------------------------------- exact mode
def test_exact_callable_is_used_cached_and_unscaled(encoder_calls):
    calls: list[str] = []

    def exact(text: str) -> int:
        calls.append(text)
        return 42

    c = TokenCounter(factor=1.45, exact=exact)
    assert c.count("some text") == 42
    assert c.count("some text") == 42
    assert calls == ["some text"]
    assert encoder_calls == []
    assert c.estimated is False
    assert c.method == "anthropic count_tokens"


def test_failing_exact_falls_back_to_the_estimate():
    def exact(text: str) -> int:
        raise ConnectionError("no network")

    c = TokenCounter(exact=exact)
    assert c.count("hello world") == 2
    assert c.estimated is True
    assert c.method == "cl100k (estimate)"


def _exact_failing_on(bad: str, value: int = 100):
    def exact(text: str) -> int:
        if text == bad:
            raise ConnectionError("count_tokens unavailable")
        return value

    return exact


def test_exact_fallback_does_not_store_estimates_in_the_exact_cache():
    # The CLI keeps exact counts in their own cache file (tokens-<model>-exact.json). Once `exact` fails the
    # counter falls back to cl100k, but it keeps writing into that same cache: the estimate is then persisted
    # and served on later runs as if it were an exact count.
    exact_cache: dict[str, int] = {}
    c = TokenCounter(cache=exact_cache, exact=_exact_failing_on("second"))
    assert c.count("first") == 100
    c.count("second")
    assert content_key("second") not in exact_cache


def test_exact_fallback_keeps_earlier_exact_counts_unscaled():
    c = TokenCounter(factor=1.45, exact=_exact_failing_on("second"))
    assert c.count("first") == 100
    c.count("second")  # falls back to the estimate from here on
    assert c.count("first") == 100  # an exact count must not be multiplied by the cl100k calibration factor


# ---------------------------------------------------------------------------------------------- TokenCache on disk
def test_token_cache_round_trips_to_disk(tmp_path):
    path = default_cache_path(tmp_path)
    assert path == tmp_path / ".ctxls" / "cache" / "tokens.json"
    cache = TokenCache(path)
    counter = TokenCounter(cache=cache)
    n = counter.count("The quick brown fox jumps over the lazy dog.")
    assert cache.save() is True
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["version"] == VERSION and data["encoding"] == ENCODING

    again = TokenCache(path)
    assert again.loaded == 1
    c2 = TokenCounter(cache=again)
    assert c2.count("The quick brown fox jumps over the lazy dog.") == n
    assert c2.misses == 0
    assert again.save() is False  # nothing new: no write


def test_token_cache_without_path_never_saves():
    cache = TokenCache(None)
    cache["k"] = 1
    assert cache.save() is False


@pytest.mark.parametrize("content", [
    b"{not json",
    b"\xff\xfe\x00garbage",
    b"[1, 2, 3]",
    b'"just a string"',
    b"",
])
def test_token_cache_ignores_a_corrupt_file(tmp_path, content):
    path = tmp_path / "tokens.json"
    path.write_bytes(content)
    cache = TokenCache(path)
    assert len(cache) == 0 and cache.loaded == 0
    assert TokenCounter(cache=cache).count("hello world") == 2


@pytest.mark.parametrize("payload", [
    {"version": VERSION + 1, "encoding": ENCODING, "tokens": {"k": 1}},
    {"version": VERSION, "encoding": "o200k_base", "tokens": {"k": 1}},
])
def test_token_cache_ignores_other_versions_and_encodings(tmp_path, payload):
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    assert len(TokenCache(path)) == 0


@pytest.mark.parametrize("tokens", [
    [1, 2],
    "abc",
    {content_key("hello world"): "two"},
    {content_key("hello world"): None},
])
def test_token_cache_with_wrongly_typed_tokens_does_not_break_counting(tmp_path, tokens):
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps({"version": VERSION, "encoding": ENCODING, "tokens": tokens}), encoding="utf-8")
    cache = TokenCache(path)  # must not raise
    assert TokenCounter(cache=cache).count("hello world") == 2


def test_token_cache_save_to_unwritable_place_returns_false(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory", encoding="utf-8")
    cache = TokenCache(blocker / "cache" / "tokens.json")
    cache["k"] = 1
    assert cache.save() is False


# ---------------------------------------------------------------------------------------------- offline
OFFLINE_SNIPPET = textwrap.dedent("""
    import socket

    class NetworkDisabled(OSError):
        pass

    def refuse(*args, **kwargs):
        raise NetworkDisabled("network access attempted")

    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.create_connection = refuse
    socket.getaddrinfo = refuse

    import tiktoken
    enc = tiktoken.get_encoding({encoding!r})
    assert enc.encode("hello world") == [15339, 1917], enc.encode("hello world")

    from ctxls.core.tokens import raw_count
    assert raw_count("The quick brown fox jumps over the lazy dog.") == 10
    print("OFFLINE-OK")
""")


def test_offline_encoding_loads_with_network_disabled(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TIKTOKEN", "PYTHON"))}
    env["TIKTOKEN_CACHE_DIR"] = str(tmp_path / "empty-tiktoken-cache")  # no pre-downloaded files to lean on
    env["HOME"] = str(tmp_path / "home")
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        env[var] = "http://127.0.0.1:9"  # any HTTP attempt that slipped past the socket patch fails too
    proc = subprocess.run(
        [sys.executable, "-I", "-c", OFFLINE_SNIPPET.format(encoding=ENCODING)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "OFFLINE-OK" in proc.stdout


def test_prefetch_counts_like_count() -> None:
    from ctxls.core.tokens import TokenCounter, raw_count

    texts = ["plain words here", "<|endoftext|> special strings are ordinary text <|fim_prefix|>",
             "ünïcödé — and emoji 🎉", "x" * 5000, "line\n" * 300, "surrogate \udcff escape"]
    warm = TokenCounter()
    assert warm.prefetch(texts + texts) == len(texts)
    assert warm.prefetch(texts) == 0  # all cached now
    cold = TokenCounter()
    assert [warm.count(t) for t in texts] == [cold.count(t) for t in texts] == [raw_count(t) for t in texts]
    assert warm.misses == len(texts)
