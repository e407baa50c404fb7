"""Rules: skills."""

from __future__ import annotations
