"""Anthropic API access. The only place ctxls talks to the network, and only when the user configures a key."""

from __future__ import annotations

import os
from typing import Callable

DEFAULT_MODEL = "claude-sonnet-4-5"


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
