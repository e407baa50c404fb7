"""Data-driven tests of the rule engine: one case per directory under fixtures/check/.

A case has `tree/repo/` (the workspace root), optionally `tree/home/` (the user's home) and `tree/managed/`,
and `case.json`:

    {"doc": "...", "settings": {...Settings keys; paths relative to tree/...},
     "check": {...CheckConfig keys, usually "select": ["CTX201"]},
     "expected": [{"code": "CTX201", "path": "repo/CLAUDE.md", "line": 3,
                   "message": "optional substring", "related": "optional path", "fix": "optional fix-title substring"}],
     "fix": {"files": {"repo/CLAUDE.md": {"contains": [...], "absent": [...]}}}   # optional: --fix round trip
    }

`expected` must equal the findings exactly (code, path, 1-based line); a case with `"expected": []` is a
must-stay-clean case.  With `fix`, every safe fix is applied to the copy, the check runs again and none of
the fixed findings may remain; the listed files must then contain / not contain the given strings.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ctxls.core.check import CheckConfig, Workspace, run_checks
from ctxls.core.fixes import plan_fixes
from ctxls.core.settings import Settings

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "check"
CASES = sorted(p.parent.name for p in FIXTURES.glob("*/case.json"))
PATH_SETTINGS = {"home", "config_dir", "managed_dir", "auto_memory_dir", "ceiling"}


def make_workspace(name: str, tmp_path: Path):
    case = json.loads((FIXTURES / name / "case.json").read_text())
    work = tmp_path / "w"
    shutil.copytree(FIXTURES / name / "tree", work, symlinks=True)
    (work / "home").mkdir(exist_ok=True)
    base = Settings(home=work / "home", managed_dir=work / "managed", ceiling=work, today="2026-11-29")
    raw = {k: (str(work / v) if k in PATH_SETTINGS else v) for k, v in case.get("settings", {}).items()}
    settings, errors = Settings.from_mapping(raw, base)
    assert errors == []
    config, errors = CheckConfig.from_mapping(case.get("check", {}))
    assert errors == []
    return case, work, Workspace(work / "repo", settings, config)


def rel(path: Path, work: Path) -> str:
    try:
        return path.relative_to(work).as_posix()
    except ValueError:
        return str(path)


@pytest.mark.parametrize("name", CASES)
def test_check_case(name: str, tmp_path: Path) -> None:
    case, work, ws = make_workspace(name, tmp_path)
    result = run_checks(ws)
    assert result.errors == []
    got = sorted((f.code, rel(f.path, work), f.line) for f in result.findings)
    want = sorted((e["code"], e["path"], e["line"]) for e in case["expected"])
    assert got == want, [(f.code, rel(f.path, work), f.line, f.message) for f in result.findings]
    by_key = {(f.code, rel(f.path, work), f.line): f for f in result.findings}
    for e in case["expected"]:
        f = by_key[(e["code"], e["path"], e["line"])]
        assert f.message and "\n" not in f.message
        if "message" in e:
            assert e["message"] in f.message, f.message
        if "severity" in e:
            assert f.severity == e["severity"], (f.severity, f.message)
        if "related" in e:
            assert any(rel(r.path, work) == e["related"] for r in f.related), f.related
        if "fix" in e:
            assert any(e["fix"] in x.title for x in f.fixes), [x.title for x in f.fixes]
    if "fix" in case:
        check_fix_round_trip(case, work, ws, result.findings)


def check_fix_round_trip(case: dict, work: Path, ws: Workspace, findings) -> None:
    def read(p: Path):
        try:
            return p.read_text(encoding="utf-8")
        except OSError:
            return None

    before = {p: read(p) for p in work.rglob("*") if p.is_file()}
    plan = plan_fixes(findings, read)
    assert plan.applied, "no safe fix to apply"
    for path, text in plan.files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    fixed = {(f.code, rel(f.path, work), f.message) for f, _ in plan.applied}
    again = Workspace(ws.root, ws.settings, ws.config)
    after = run_checks(again)
    assert after.errors == []
    remaining = {(f.code, rel(f.path, work), f.message) for f in after.findings}
    assert not fixed & remaining, fixed & remaining
    for p, spec in case["fix"].get("files", {}).items():
        text = read(work / p)
        assert text is not None, f"{p} missing after fix"
        for s in spec.get("contains", []):
            assert s in text, (p, s)
        for s in spec.get("absent", []):
            assert s not in text, (p, s)
    # nothing lost: every non-blank line that existed before still exists somewhere after, unless the fix
    # deliberately removed a duplicate of it
    all_after = "\n".join(read(p) or "" for p in work.rglob("*") if p.is_file())
    allowed = set(case["fix"].get("removed", []))
    for p, text in before.items():
        for line in (text or "").splitlines():
            s = line.strip()
            if s and s not in allowed and s not in all_after:
                raise AssertionError(f"line lost by --fix: {s!r} from {rel(p, work)}")


def test_one_crashing_rule_does_not_stop_the_others(tmp_path: Path, monkeypatch) -> None:
    from ctxls.core import rules

    registry = rules.load_all()
    code = next(iter(registry))
    info = registry[code]

    def boom(ws):
        raise RuntimeError("kaput")

    monkeypatch.setitem(rules.REGISTRY, code, info.__class__(**{**info.__dict__, "func": boom}))
    root = tmp_path / "repo"
    root.mkdir()
    (root / "CLAUDE.md").write_text("# Root\n- Always run the tests.\n- Always run the tests.\n")
    ws = Workspace(root, Settings(home=tmp_path / "home", ceiling=tmp_path, managed_dir=tmp_path / "m"))
    res = run_checks(ws)
    assert len(res.errors) == 1 and code in res.errors[0] and "kaput" in res.errors[0]


def test_registry_is_documented() -> None:
    from ctxls.core.findings import SEVERITIES
    from ctxls.core.rules import load_all

    codes = load_all()
    assert codes, "no rules registered"
    for code, info in codes.items():
        assert code.startswith("CTX") and len(code) == 6
        assert info.severity in SEVERITIES
        for text in (info.summary, info.why, info.example, info.fix):
            assert text.strip(), code
        assert code in CASES_BY_CODE, f"{code} has no fixture that triggers it"
        assert CLEAN_BY_CODE.get(code), f"{code} has no must-stay-clean fixture"


def _index_cases():
    trig: dict[str, list[str]] = {}
    clean: dict[str, list[str]] = {}
    for name in CASES:
        case = json.loads((FIXTURES / name / "case.json").read_text())
        for e in case["expected"]:
            trig.setdefault(e["code"], []).append(name)
        if not case["expected"]:
            for code in case.get("check", {}).get("select", []):
                clean.setdefault(code, []).append(name)
    return trig, clean


CASES_BY_CODE, CLEAN_BY_CODE = _index_cases()


def test_whole_line_spans_end_before_a_crlf(tmp_path) -> None:
    """A finding on a whole line ends at the line's last character, not on the `\r` of a CRLF line end."""
    from ctxls.core.settings import Settings

    repo = tmp_path / "repo"
    repo.mkdir()
    lines = [f"- Keep helper {i} small and typed." for i in range(230)]
    (repo / "CLAUDE.md").write_bytes(("\r\n".join(["# T"] + lines) + "\r\n").encode())
    ws = Workspace(repo, Settings(home=tmp_path / "home", managed_dir=tmp_path / "m", ceiling=tmp_path),
                   CheckConfig(select=frozenset({"CTX104"})))
    [f] = run_checks(ws).findings
    assert f.span.end_col == len(lines[199])
