"""Output formats of `ctxls check` that other tools consume: SARIF 2.1.0 (validated with Microsoft's official
validator, `sarif-multitool validate`, and checked for what GitHub code scanning needs) and the generated rule
documentation (docs/rules.md must equal `ctxls rules`).

The validator is the npm package @microsoft/sarif-multitool (it bundles a native linux binary). A session fixture
installs it into <repo>/.cache/sarif when it is missing (about 20 s, needs npm and the registry once); later runs
reuse it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "fixtures" / "check_cli"
SARIF_DIR = REPO / ".cache" / "sarif"
SARIF_TOOL = SARIF_DIR / "node_modules" / ".bin" / "sarif-multitool"
SARIF_PACKAGE = "@microsoft/sarif-multitool"
SARIF_SCHEMA_URIS = {
    "https://json.schemastore.org/sarif-2.1.0.json",
    "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json",
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/os/schemas/sarif-schema-2.1.0.json",
}


# ------------------------------------------------------------------------------------------------ helpers


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    dst = tmp_path / "t"
    shutil.copytree(FIXTURE, dst)
    (dst / "fakehome").mkdir()
    return dst


def ctxls(cwd: Path, *args: str, home: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "ANTHROPIC_API_KEY")}
    if home is not None:
        env["HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "ctxls", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def sarif_of(ws: Path, *args: str) -> tuple[dict, subprocess.CompletedProcess]:
    p = ctxls(ws, "check", "--format", "sarif", *args, home=ws.parent / "fakehome")
    assert p.returncode in (0, 1), p.stderr
    try:
        return json.loads(p.stdout), p
    except json.JSONDecodeError as exc:
        raise AssertionError(f"--format sarif is not JSON ({exc}):\n{p.stdout}\n{p.stderr}") from None


@pytest.fixture(scope="session")
def sarif_multitool() -> Path:
    """Path of the sarif-multitool binary, installed into <repo>/.cache/sarif on first use."""
    if not SARIF_TOOL.exists():
        npm = shutil.which("npm")
        assert npm, f"npm is needed once to install {SARIF_PACKAGE} into {SARIF_DIR}"
        SARIF_DIR.mkdir(parents=True, exist_ok=True)
        p = subprocess.run([npm, "install", "--prefix", str(SARIF_DIR), "--no-audit", "--no-fund",
                            "--loglevel", "error", SARIF_PACKAGE],
                           capture_output=True, text=True, timeout=900)
        assert p.returncode == 0 and SARIF_TOOL.exists(), \
            f"npm install {SARIF_PACKAGE} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}"
    return SARIF_TOOL


def validate(tool: Path, sarif: dict, tmp_path: Path) -> str:
    """Run the official validator; fail on any error it reports (warnings are allowed)."""
    f = tmp_path / "out.sarif"
    f.write_text(json.dumps(sarif, indent=2), encoding="utf-8")
    p = subprocess.run([str(tool), "validate", str(f)], capture_output=True, text=True, timeout=300)
    out = p.stdout + p.stderr
    errors = [line for line in out.splitlines() if ": error " in line]
    assert not errors, "sarif-multitool validate reported errors:\n" + "\n".join(errors)
    assert p.returncode == 0, out
    assert "1 files scanned" in out or "Analysis completed successfully" in out, out   # it really ran
    return out


def structure_check(sarif: dict, ws: Path) -> list[dict]:
    """What GitHub code scanning and SARIF consumers rely on. Returns the results."""
    assert sarif["version"] == "2.1.0"
    assert sarif["$schema"] in SARIF_SCHEMA_URIS, sarif["$schema"]
    assert len(sarif["runs"]) == 1
    run = sarif["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "ctxls" and driver.get("version")
    rules = driver["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids)), "duplicate rule ids"
    for r in rules:
        assert re.fullmatch(r"CTX\d{3}", r["id"]), r
        assert r["shortDescription"]["text"].strip(), r
        assert r["defaultConfiguration"]["level"] in ("error", "warning", "note"), r
        assert r["help"]["text"].strip(), r
    base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base.startswith("file://") and base.endswith("/"), base
    assert Path(unquote(urlsplit(base).path)) == ws, base

    def check_location(loc: dict) -> None:
        phys = loc["physicalLocation"]
        art = phys["artifactLocation"]
        uri = art["uri"]
        parts = urlsplit(uri)
        if art.get("uriBaseId") is not None:
            assert art["uriBaseId"] == "%SRCROOT%", art
            assert not parts.scheme and not uri.startswith("/") and "\\" not in uri, art
            assert ".." not in uri.split("/"), art
            target = ws / unquote(uri)
            assert target.is_file(), art
        else:  # only files outside the workspace (auto memory in the home) may be absolute
            assert parts.scheme == "file", art
            target = Path(unquote(parts.path))
            assert target.is_file() and not target.is_relative_to(ws), art
        reg = phys["region"]
        assert isinstance(reg["startLine"], int) and reg["startLine"] >= 1, reg
        assert reg.get("startColumn", 1) >= 1 and reg.get("endColumn", 1) >= 1, reg
        assert reg.get("endLine", reg["startLine"]) >= reg["startLine"], reg
        n_lines = len(target.read_text(encoding="utf-8").split("\n"))
        assert reg["startLine"] <= n_lines and reg.get("endLine", 1) <= n_lines, (reg, n_lines)

    results = run["results"]
    for res in results:
        assert res["ruleId"] in ids, res["ruleId"]
        assert "ruleIndex" in res and ids[res["ruleIndex"]] == res["ruleId"], res
        assert res["level"] in ("error", "warning", "note"), res
        assert res["message"]["text"].strip(), res
        assert len(res["locations"]) >= 1
        for loc in res["locations"]:
            check_location(loc)
        for loc in res.get("relatedLocations", []):
            check_location(loc)
    return results


# -------------------------------------------------------------------------------------------------- SARIF


def test_sarif_validates_with_the_official_validator(tree: Path, sarif_multitool: Path, tmp_path: Path) -> None:
    ws = tree / "mixed"
    sarif, p = sarif_of(ws)
    assert p.returncode == 1
    assert sarif["runs"][0]["results"], "the mixed workspace has findings"
    validate(sarif_multitool, sarif, tmp_path)


def test_sarif_without_results_validates(tree: Path, sarif_multitool: Path, tmp_path: Path) -> None:
    sarif, p = sarif_of(tree / "clean")
    assert p.returncode == 0
    assert sarif["runs"][0]["results"] == []
    structure_check(sarif, tree / "clean")
    validate(sarif_multitool, sarif, tmp_path)


def test_sarif_validates_with_unusual_file_names(tree: Path, sarif_multitool: Path, tmp_path: Path) -> None:
    """artifactLocation.uri must be a valid URI reference (RFC 3986): spaces, `%` and `#` in a path must be
    percent-encoded; a comma may stay."""
    ws = tree / "mixed"
    for name in ("notes dir", "100% done", "a,b", "c#d"):
        (ws / name).mkdir()
        (ws / name / "CLAUDE.md").write_text("# Odd\n\nSee @docs/gone.md\n")
    sarif, _ = sarif_of(ws, "--select", "CTX301")
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}
    assert {unquote(u) for u in uris} >= {"notes dir/CLAUDE.md", "100% done/CLAUDE.md", "a,b/CLAUDE.md",
                                          "c#d/CLAUDE.md"}, uris
    structure_check(sarif, ws)
    validate(sarif_multitool, sarif, tmp_path)


def test_sarif_structure(tree: Path) -> None:
    ws = tree / "mixed"
    sarif, _ = sarif_of(ws, "--select", "CTX1,CTX3")
    results = structure_check(sarif, ws)
    j = json.loads(ctxls(ws, "check", "--format", "json", "--select", "CTX1,CTX3",
                         home=tree / "fakehome").stdout)
    assert len(results) == len(j["findings"])
    level = {"error": "error", "warning": "warning", "info": "note", "hint": "note"}
    for res, f in zip(results, j["findings"]):
        assert res["ruleId"] == f["code"]
        assert res["level"] == level[f["severity"]]
        assert res["message"]["text"] == f["message"]
        region = res["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] == f["line"]
        assert region["startColumn"] == f["column"]
        art = res["locations"][0]["physicalLocation"]["artifactLocation"]
        if not Path(f["path"]).is_absolute():
            assert art == {"uri": f["path"], "uriBaseId": "%SRCROOT%"}, art
    # a finding with a related location (CTX305: the first import)
    dup = next(r for r in results if r["ruleId"] == "CTX305")
    rel = dup["relatedLocations"][0]
    assert rel["physicalLocation"]["artifactLocation"]["uri"] == "web/CLAUDE.md"
    assert rel["physicalLocation"]["region"]["startLine"] == 3
    # every registered rule is described, whatever was selected
    rules = ctxls(REPO, "rules").stdout
    ids = [r["id"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]]
    assert ids == sorted(re.findall(r"^## (CTX\d{3})$", rules, re.MULTILINE))


def test_sarif_with_every_rule_is_structurally_valid(tree: Path) -> None:
    ws = tree / "mixed"
    sarif, _ = sarif_of(ws)
    structure_check(sarif, ws)


# ---------------------------------------------------------------------------------------------- rule docs


def test_rules_doc_is_generated_from_the_registry() -> None:
    p = ctxls(REPO, "rules")
    assert p.returncode == 0, p.stderr
    committed = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    assert p.stdout == committed, "docs/rules.md is out of date with the rule registry; run: ctxls rules > docs/rules.md"


def test_rules_doc_describes_every_rule() -> None:
    from ctxls.core.rules import load_all

    text = ctxls(REPO, "rules").stdout
    registry = load_all()
    order = list(registry)
    for i, (code, info) in enumerate(registry.items()):
        head = f"\n## {code}\n"
        assert text.count(head) == 1, f"{code} has no section (or several) in `ctxls rules`"
        start = text.index(head)
        end = text.index(f"\n## {order[i + 1]}\n") if i + 1 < len(order) else len(text)
        body = text[start:end]
        for part in ("**Why it matters.**", "**Example.**", "**Fix.**"):
            assert part in body, (code, part)
        assert info.summary in body and info.why in body and info.example in body and info.fix in body, code
        assert f"| [{code}](#{code.lower()}) |" in text, f"{code} is missing from the index table"


def _reference_check_json(findings, root: Path, errors: list[str], fixed: int) -> str:
    """The check document as the json module writes it: what `formats.check_json` must equal byte for byte."""
    from ctxls.core.rules import REGISTRY

    def rel(p: Path) -> str:
        return p.relative_to(root).as_posix() if p.is_relative_to(root) else str(p)

    items, counts = [], {}
    for f in findings:
        info = REGISTRY.get(f.code)
        items.append({
            "code": f.code, "rule": info.name if info else None, "severity": f.severity, "path": rel(f.path),
            "line": f.span.start_line + 1, "column": f.span.start_col + 1, "end_line": f.span.end_line + 1,
            "end_column": f.span.end_col + 1, "message": f.message,
            "related": [{"path": rel(r.path), "line": r.span.start_line + 1, "message": r.message} for r in f.related],
            "fixes": [{"title": x.title, "safe": x.safe} for x in f.fixes]})
        counts[f.severity] = counts.get(f.severity, 0) + 1
    head = json.dumps({"schema": "ctxls.check/1", "root": str(root), "summary": counts, "fixed": fixed,
                       "errors": errors}, ensure_ascii=False)[:-1]
    body = ",\n  ".join(json.dumps(i, ensure_ascii=False) for i in items)
    return head + (', "findings": [\n  ' + body + "\n]}" if body else ', "findings": []}') + "\n"


def test_check_json_is_what_the_json_module_writes(tmp_path: Path) -> None:
    from ctxls.core.findings import Edit, Finding, Fix, Related, Span
    from ctxls.core.formats import check_json

    root = tmp_path / "repo"
    odd = 'quote " backslash \\ tab \t newline \n cr \r nul \x00 bell \x07 ünïcödé 🎉 \u2028 </script>'
    findings = [
        Finding("CTX201", "warning", root / "CLAUDE.md", Span(0, 0, 0, 5), odd,
                [Related(root / "a b" / "ü.md", Span(3, 0, 3, 1), odd)],
                [Fix(odd, (Edit(root / "x", Span(0, 0, 0, 0), ""),), True), Fix("unsafe", (), False)]),
        Finding("CTX999", "info", tmp_path / "outside.md", Span(9, 8, 10, 2), "unknown code: rule is null"),
        Finding("CTX105", "error", root / "MEMORY.md", Span(200, 0, 200, 0), ""),
    ]
    for errors, fixed in (([], 0), (["CTX1 crashed: \"x\"\n"], 3)):
        for subset in (findings, findings[:1], []):
            got = check_json(subset, root, errors, fixed)
            assert got == _reference_check_json(subset, root, errors, fixed)
            data = json.loads(got)
            assert len(data["findings"]) == len(subset)
            if subset:  # one finding per line
                lines = got.split("\n")[1:-2]
                assert [json.loads(ln.strip().rstrip(",")) for ln in lines] == data["findings"]
