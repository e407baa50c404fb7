"""Shared fixtures. Every test runs against a tmp home and managed dir, never the real ones."""

from __future__ import annotations

import shutil
import threading
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


LSP_WORKSPACE = Path(__file__).resolve().parent.parent / "fixtures" / "lsp" / "workspace"


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    """fixtures/lsp/workspace copied to tmp, with a .ctxls.toml that keeps home, managed dir and auto memory
    inside tmp (for the language-server and Neovim tests)."""
    dst = tmp_path / "ws"
    shutil.copytree(LSP_WORKSPACE, dst, symlinks=True)
    (dst / ".ctxls.toml").write_text('home = "../home"\nceiling = "."\nmanaged_dir = "../managed"\n'
                                     'auto_memory_dir = "../home/mem"\ntoday = "2026-11-29"\n')
    (tmp_path / "home" / "mem").mkdir(parents=True)
    return dst


def _run_with_timeout(fn, seconds: float = 60.0):
    """Run ``fn`` in a daemon thread and return its value; fail instead of hanging (a FIFO opened for reading
    blocks forever, a symlink loop followed would never end)."""
    box: dict = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test thread
            box["error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"did not finish within {seconds}s"
    if "error" in box:
        raise box["error"]
    return box["value"]


@pytest.fixture()
def with_timeout():
    """`with_timeout(fn, seconds=60)`: ``fn()``, failing the test if it has not returned in time."""
    return _run_with_timeout
