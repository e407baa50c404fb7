"""Data-driven tests of the session model: one case per directory under fixtures/sessions/.

Each case holds a `tree/` (copied to a temporary directory, symlinks kept) and a `case.json` with the start
directory, the touched files, settings, and the expected block sequence.  Paths in `case.json` are relative
to the tree.  The tree's `home/` is the user's home and `managed/` the managed-policy directory, so no test
reads the real ones.  Expected blocks list `kind`, `source`, `lines` and `trigger` for every block except
the fixed ones (tool schemas, system prompt, claudeMd header and footer), in order; `tier`, `cut` and `notes`
are checked when present (`cut`/`notes` as substrings).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxls.core import model as M
from ctxls.core.report import session_to_json
from session_cases import run_session_case

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sessions"
CASES = sorted(p.parent.name for p in FIXTURES.glob("*/case.json"))
FIXED = {M.TOOL_SCHEMAS, M.SYSTEM_PROMPT, M.CONTEXT_HEADER, M.CONTEXT_FOOTER}
PATH_SETTINGS = {"home", "config_dir", "managed_dir", "auto_memory_dir", "ceiling"}


def run_case(name: str, tmp_path: Path):
    case, session, counter, work = run_session_case(FIXTURES / name, tmp_path, PATH_SETTINGS)
    return case, session, counter


@pytest.mark.parametrize("name", CASES)
def test_session_sequence(name: str, tmp_path: Path) -> None:
    case, session, _ = run_case(name, tmp_path)
    got = session_to_json(session)
    exp = case["expected"]
    blocks = [b for b in got["blocks"] if b["kind"] not in FIXED]
    assert [(b["kind"], b["source"], b["lines"], b["trigger"]) for b in blocks] == [
        (e["kind"], e["source"], e["lines"], e["trigger"]) for e in exp["blocks"]
    ]
    for b, e in zip(blocks, exp["blocks"]):
        if "tier" in e:
            assert b["tier"] == e["tier"], b
        if "cut" in e:
            assert e["cut"] in (b.get("cut") or ""), b
        else:
            assert b["kind"] == M.CLAUDE_MD or "cut" not in b or "stripped" in b["cut"], b
        if "notes" in e:
            assert any(e["notes"] in n for n in b.get("notes", [])), b
    skipped = [(s["source"], s["reason"]) for s in got["skipped"]]
    assert len(skipped) == len(exp["skipped"]), skipped
    for (src, reason), e in zip(skipped, exp["skipped"]):
        assert src == e["source"] and e["reason"] in reason, (src, reason)
    if "skills" in exp:
        check_skills(got["skills"], exp["skills"], session)


def check_skills(got: dict, exp: dict, session) -> None:
    entries = got["entries"]
    assert [e["name"] for e in entries if e["listed"]] == exp["listed"]
    assert [e["name"] for e in entries if e["description_dropped"]] == exp["dropped"]
    assert [e["name"] for e in entries if not e["listed"]] == exp["hidden"]
    for key in ("budget_chars", "full_chars"):
        if key in exp:
            assert got[key] == exp[key]
    if exp["dropped"]:
        assert got["sent_chars"] <= got["budget_chars"]
    by_name = {s.name: s for s in session.skills.skills}
    for name, want in exp.get("entries", {}).items():
        if "chars" in want:
            assert len(by_name[name].entry) == want["chars"]
        if "text" in want:
            assert by_name[name].entry == want["text"]
    listing_text = "".join(b.text for b in session.blocks if b.kind == M.SKILL_LISTING)
    for name in exp["hidden"]:
        assert f"- {name}" not in listing_text
    for name in exp["dropped"]:
        assert f"- {name}\n" in listing_text or listing_text.rstrip().endswith(f"- {name}\n</system-reminder>") or \
            f"- {name}\n</system-reminder>" in listing_text


@pytest.mark.parametrize("name", CASES)
def test_session_invariants(name: str, tmp_path: Path) -> None:
    """Totals add up, each file block's tokens are the count of exactly the text it sends."""
    _, session, counter = run_case(name, tmp_path)
    running = 0
    for b in session.blocks:
        running += b.tokens
        assert b.cumulative == running
        if b.kind not in (M.TOOL_SCHEMAS, M.SYSTEM_PROMPT):
            assert b.tokens == counter.count(b.text) > 0
        if b.source is not None and b.kind != M.READ:
            assert str(b.source) in b.text  # "Contents of <abs path>" as the agent sends it
    assert session.total_tokens == running
    assert session.startup_tokens == sum(b.tokens for b in session.blocks if b.trigger == M.STARTUP
                                         or b.trigger.startswith("import:") and b.startup)
    # the startup message is wrapped exactly once when any file loaded
    kinds = [b.kind for b in session.blocks]
    if any(b.startup and b.source is not None for b in session.blocks):
        assert kinds.count(M.CONTEXT_HEADER) == kinds.count(M.CONTEXT_FOOTER) == 1
        assert kinds.index(M.CONTEXT_HEADER) < kinds.index(M.CONTEXT_FOOTER)
