"""Runs one data-driven session case (fixtures/sessions/, fixtures/profiles/): copy its tree, apply its settings
(path settings relative to the copy), load the session its case.json describes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ctxls.core.loader import load_session
from ctxls.core.settings import Settings
from ctxls.core.tokens import TokenCounter


def run_session_case(case_dir: Path, tmp_path: Path, path_settings: set[str]):
    case = json.loads((case_dir / "case.json").read_text())
    work = tmp_path / "w"
    shutil.copytree(case_dir / "tree", work, symlinks=True)
    if case.get("git_root"):
        (work / case["git_root"] / ".git").mkdir(parents=True)
    base = Settings(home=work / "home", managed_dir=work / "managed", ceiling=work, today="2026-11-29")
    raw = {k: (str(work / v) if k in path_settings else v) for k, v in case.get("settings", {}).items()}
    settings, errors = Settings.from_mapping(raw, base)
    assert errors == []
    counter = TokenCounter()
    session = load_session(work / case["start"], [work / t for t in case.get("touch", [])], settings,
                           root=work, counter=counter, profile=case.get("agent", "claude-code"))
    return case, session, counter, work
