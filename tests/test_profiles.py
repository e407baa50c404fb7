"""Data-driven tests of the other agents' profiles (spec C): one case per directory under fixtures/profiles/.

Same shape as fixtures/sessions/ (see tests/test_sessions.py): a `tree/` and a `case.json` with the `agent`,
start directory, touched files, settings and the expected block sequence (`kind`, `source`, `lines`,
`trigger` of every block except the message wrappers, in order; `tier`, `cut` and `notes` as substrings when
present) and every skipped source (`source`, `reason` substring, `when`). `startup_text`, when present, is the
exact startup message (`{cwd}` = the start directory, `{work}` = the tree).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxls.core import model as M
from ctxls.core.loader import load_session
from ctxls.core.report import session_to_json
from ctxls.core.settings import Settings
from session_cases import run_session_case

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "profiles"
CASES = sorted(p.parent.name for p in FIXTURES.glob("*/case.json"))
WRAPPERS = {M.CONTEXT_HEADER, M.CONTEXT_FOOTER}
PATH_SETTINGS = {"home", "config_dir", "managed_dir", "auto_memory_dir", "ceiling", "codex_home"}


def run_case(name: str, tmp_path: Path):
    case, session, counter, work = run_session_case(FIXTURES / name, tmp_path, PATH_SETTINGS)
    return case, session, counter, work


def test_every_profile_has_cases() -> None:
    agents = {json.loads((FIXTURES / c / "case.json").read_text())["agent"] for c in CASES}
    assert agents == {"codex", "cursor", "copilot", "gemini"}


@pytest.mark.parametrize("name", CASES)
def test_profile_sequence(name: str, tmp_path: Path) -> None:
    case, session, _, work = run_case(name, tmp_path)
    got = session_to_json(session)
    assert got["agent"] == case["agent"]
    exp = case["expected"]
    blocks = [b for b in got["blocks"] if b["kind"] not in WRAPPERS]
    assert [(b["kind"], b["source"], b["lines"], b["trigger"]) for b in blocks] == [
        (e["kind"], e["source"], e["lines"], e["trigger"]) for e in exp["blocks"]
    ]
    for b, e in zip(blocks, exp["blocks"]):
        if "tier" in e:
            assert b["tier"] == e["tier"], b
        if "cut" in e:
            assert e["cut"] in (b.get("cut") or ""), b
        else:
            assert "cut" not in b, b
        if "notes" in e:
            assert any(e["notes"] in n for n in b.get("notes", [])), b
    skipped = [(s["source"], s["reason"], s.get("when")) for s in got["skipped"]]
    assert len(skipped) == len(exp["skipped"]), skipped
    for (src, reason, when), e in zip(skipped, exp["skipped"]):
        assert src == e["source"] and e["reason"] in reason and when == e.get("when"), (src, reason, when)
    if "startup_text" in exp:
        text = "".join(b.text for b in session.blocks if b.startup)
        assert text == exp["startup_text"].format(cwd=session.start_dir, work=work)


@pytest.mark.parametrize("name", CASES)
def test_profile_invariants(name: str, tmp_path: Path) -> None:
    """Running totals add up and each block's tokens count exactly the text it sends."""
    _, session, counter, _ = run_case(name, tmp_path)
    running = 0
    for b in session.blocks:
        running += b.tokens
        assert b.cumulative == running
        assert b.tokens == counter.count(b.text) > 0, b
        assert b.startup == (b.trigger == M.STARTUP or b.trigger.startswith("import:") and b.startup)
    assert session.total_tokens == running
    assert session.agent == json.loads((FIXTURES / name / "case.json").read_text())["agent"]


def test_codex_budget_is_exact_bytes(tmp_path: Path) -> None:
    """The project docs sent are exactly the first 32,768 bytes of the files, root first."""
    _, session, _, work = run_case("codex_byte_budget", tmp_path)
    docs = [b for b in session.blocks if b.kind == M.AGENTS_MD]
    sent = docs[0].text.encode() + docs[1].text.encode()[2:]  # (the second carries the "\n\n" joiner)
    whole = (work / "repo/AGENTS.md").read_bytes() + (work / "repo/pkg/AGENTS.md").read_bytes()
    assert len(sent) == 32_768 and sent == whole[:32_768]


def test_codex_budget_setting(tmp_path: Path) -> None:
    case, _, _, work = run_case("codex_byte_budget", tmp_path)
    settings = Settings(home=work / "home", ceiling=work, codex_project_doc_max_bytes=0)
    s = load_session(work / case["start"], (), settings, root=work, profile="codex")
    assert s.blocks == [] and all("disabled" in k.reason or "not loaded" in k.reason for k in s.skipped)
    small = load_session(work / case["start"], (), settings.replace(codex_project_doc_max_bytes=10), root=work,
                         profile="codex")
    assert [b.text for b in small.blocks if b.kind == M.AGENTS_MD] == ["# Root\n- r"]  # ten bytes


@pytest.mark.parametrize("raw, error", [
    ({"copilot_agent": "review"}, "expected one of coding-agent, code-review"),
    ({"codex_project_root_markers": ".git"}, "expected a list of file names"),
    ({"codex_project_doc_max_bytes": -1}, "non-negative integer"),
    ({"gemini_jit_context": "yes"}, "true or false"),
])
def test_profile_settings_reject_bad_values(raw: dict, error: str) -> None:
    settings, errors = Settings.from_mapping(raw)
    assert len(errors) == 1 and error in errors[0]
    assert settings == Settings(home=settings.home, today=settings.today)


def test_gemini_file_name_may_be_a_string() -> None:
    settings, errors = Settings.from_mapping({"gemini_context_file_names": "CONTEXT.md"})
    assert errors == [] and settings.gemini_context_file_names == ("CONTEXT.md",)
