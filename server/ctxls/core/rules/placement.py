"""Rules: placement."""

from __future__ import annotations
