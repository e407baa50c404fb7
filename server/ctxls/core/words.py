"""Wording helpers shared by every message ctxls prints."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 error``, ``2 errors``, ``0 directories`` (``many`` for irregular plurals; ``y`` → ``ies``)."""
    if n == 1:
        return f"{n} {word}"
    if many is None:
        many = word[:-1] + "ies" if word.endswith("y") and word[-2:-1] not in "aeiou" else word + "s"
    return f"{n} {many}"
