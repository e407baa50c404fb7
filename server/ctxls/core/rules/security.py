"""Rules: security."""

from __future__ import annotations
