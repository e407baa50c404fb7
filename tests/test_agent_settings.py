"""Claude Code's own settings files, read for what they change about loading (spec A6, A7)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ctxls.core.config import apply_agent_settings
from ctxls.core.settings import Settings


def _settings(tmp: Path, **kw) -> Settings:
    return Settings(home=tmp / "home", managed_dir=tmp / "managed", ceiling=tmp, **kw)


def _json(p: Path, data) -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")


def test_excludes_merge_across_every_file_and_ctxls_own(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _json(tmp_path / "managed" / "managed-settings.json", {"claudeMdExcludes": ["/m/**"]})
    _json(tmp_path / "home" / ".claude" / "settings.json", {"claudeMdExcludes": ["**/user/CLAUDE.md"]})
    _json(root / ".claude" / "settings.json", {"claudeMdExcludes": ["**/old/CLAUDE.md"]})
    _json(root / ".claude" / "settings.local.json", {"claudeMdExcludes": ["**/old/CLAUDE.md", "/abs/x.md"]})
    got, problems = apply_agent_settings(_settings(tmp_path, claude_md_excludes=("mine",)), root)
    assert problems == []
    assert got.claude_md_excludes == ("mine", "/m/**", "**/old/CLAUDE.md", "/abs/x.md", "**/user/CLAUDE.md")


def test_auto_memory_switch_and_directory_follow_precedence(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _json(tmp_path / "home" / ".claude" / "settings.json", {"autoMemoryEnabled": True,
                                                             "autoMemoryDirectory": "~/mem"})
    _json(root / ".claude" / "settings.local.json", {"autoMemoryEnabled": False})
    got, _ = apply_agent_settings(_settings(tmp_path), root)
    assert got.auto_memory_enabled is False  # local project settings outrank user settings
    assert got.auto_memory_dir == tmp_path / "home" / "mem"
    # a directory ctxls is told explicitly wins
    got, _ = apply_agent_settings(_settings(tmp_path, auto_memory_dir=tmp_path / "x"), root)
    assert got.auto_memory_dir == tmp_path / "x"


def test_bad_files_are_problems_not_errors(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _json(root / ".claude" / "settings.json", "{not json")
    _json(root / ".claude" / "settings.local.json", {"claudeMdExcludes": "**/x", "autoMemoryDirectory": "rel/dir"})
    got, problems = apply_agent_settings(_settings(tmp_path), root)
    assert got == _settings(tmp_path)
    assert len(problems) == 3
    assert [any(w in p for p in problems) for w in ("not valid JSON", "list of globs", "absolute")] == [True] * 3


def test_context_shows_a_file_excluded_by_project_settings(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "CLAUDE.md").write_text("# Root\n")
    (root / "old").mkdir()
    (root / "old" / "CLAUDE.md").write_text("# Old\n")
    (root / "old" / "a.ts").write_text("")
    _json(root / ".claude" / "settings.json", {"claudeMdExcludes": ["**/old/CLAUDE.md"]})
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "PYTHONPATH")}
    env["HOME"] = str(tmp_path / "home")
    proc = subprocess.run([sys.executable, "-m", "ctxls", "context", str(root / "old"), "--format", "json",
                           "--no-cache", "--home", str(tmp_path / "home")], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert not any((b.get("source") or "").endswith("old/CLAUDE.md") for b in data["blocks"])
    assert any(s["reason"] == "excluded by claudeMdExcludes" for s in data["skipped"])


def test_an_empty_settings_file_sets_nothing_and_says_nothing(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _json(root / ".claude" / "settings.json", "")
    _json(root / ".claude" / "settings.local.json", "  \n")
    assert apply_agent_settings(_settings(tmp_path), root) == (_settings(tmp_path), [])
