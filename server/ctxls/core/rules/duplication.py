"""Rules: duplication."""

from __future__ import annotations
