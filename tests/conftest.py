"""Shared fixtures. Every test runs against a tmp home and managed dir, never the real ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxls.core.settings import Settings


@pytest.fixture
def hermetic_settings(tmp_path):
    """Factory: Settings rooted in tmp_path (home, managed dir) with the upward walk stopped at ``ceiling``."""

    def make(ceiling: Path, **changes) -> Settings:
        return Settings(home=tmp_path / "home", ceiling=ceiling, managed_dir=tmp_path / "managed",
                        today="2026-11-29", **changes)

    return make
