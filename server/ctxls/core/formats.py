"""Output formats of `ctxls check`: JSON (stable schema), SARIF 2.1.0, GitHub workflow commands, and the
rule documentation generated from the registry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import quote

from .. import __version__
from .findings import Finding
from .paths import rel_path

CHECK_SCHEMA = "ctxls.check/1"
_ENCODER = json.JSONEncoder(ensure_ascii=False)
_escape = json.encoder.encode_basestring  # a JSON string literal, non-ASCII kept (as ensure_ascii=False)
SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note", "hint": "note"}


def _rel(path: Path, root: Path) -> str:
    got = _REL.get((path, root))
    if got is None:
        if len(_REL) > 50_000:
            _REL.clear()
        got = _REL[(path, root)] = rel_path(path, root)
    return got


_REL: dict[tuple[Path, Path], str] = {}


def check_json(findings: Iterable[Finding], root: Path, errors: list[str] | None = None, fixed: int = 0) -> str:
    """The `ctxls check --format json` document (schema ``ctxls.check/1``, see the README), one finding per
    line. Written directly with the C string escaper: tens of thousands of findings through `json.dumps`, one
    call each, cost several times more (each call sets up an encoder)."""
    from .rules import REGISTRY

    esc = _escape
    rules: dict[str, str] = {}
    counts: dict[str, int] = {}
    paths: dict[str, str] = {}  # path string -> its escaped relative path: findings share few files
    base = str(root)

    def path_json(p: Path) -> str:
        k = str(p)
        got = paths.get(k)
        if got is None:
            got = paths[k] = esc(rel_path(k, base))
        return got

    lines = []
    for f in findings:
        code = f.code
        rule = rules.get(code)
        if rule is None:
            info = REGISTRY.get(code)
            rule = rules[code] = esc(info.name) if info else "null"
        s = f.span
        related = ", ".join(f'{{"path": {path_json(r.path)}, "line": {r.span.start_line + 1}, '
                            f'"message": {esc(r.message)}}}' for r in f.related) if f.related else ""
        fixes = ", ".join(f'{{"title": {esc(x.title)}, "safe": {"true" if x.safe else "false"}}}'
                          for x in f.fixes) if f.fixes else ""
        lines.append(f'{{"code": {esc(code)}, "rule": {rule}, "severity": {esc(f.severity)}, '
                     f'"path": {path_json(f.path)}, "line": {s.start_line + 1}, "column": {s.start_col + 1}, '
                     f'"end_line": {s.end_line + 1}, "end_column": {s.end_col + 1}, "message": {esc(f.message)}, '
                     f'"related": [{related}], "fixes": [{fixes}]}}')
        counts[f.severity] = counts.get(f.severity, 0) + 1
    head = _ENCODER.encode({"schema": CHECK_SCHEMA, "root": str(root), "summary": counts, "fixed": fixed,
                            "errors": errors or []})[:-1]
    items = ",\n  ".join(lines)
    return head + (', "findings": [\n  ' + items + "\n]}" if items else ', "findings": []}') + "\n"


def findings_to_sarif(findings: list[Finding], root: Path) -> dict[str, Any]:
    from .rules import load_all

    registry = load_all()
    codes = sorted(registry)
    index = {c: i for i, c in enumerate(codes)}
    rules = []
    for c in codes:
        info = registry[c]
        rules.append({
            "id": c,
            "name": info.name,
            "shortDescription": {"text": info.summary},
            "fullDescription": {"text": info.why},
            "help": {"text": info.fix, "markdown": f"{info.why}\n\n**Fix:** {info.fix}\n\n**Example:**\n\n{info.example}"},
            "defaultConfiguration": {"level": SARIF_LEVEL[info.severity]},
            "properties": {"tags": [info.family]},
        })

    def location(path: Path, span) -> dict[str, Any]:
        rel = _rel(path, root)
        art: dict[str, Any] = ({"uri": quote(rel), "uriBaseId": "%SRCROOT%"} if not Path(rel).is_absolute()
                               else {"uri": path.as_uri()})
        return {"physicalLocation": {"artifactLocation": art, "region": {
            "startLine": span.start_line + 1, "startColumn": span.start_col + 1,
            "endLine": span.end_line + 1, "endColumn": max(span.end_col + 1, 1)}}}

    results = []
    for f in findings:
        r: dict[str, Any] = {
            "ruleId": f.code,
            "level": SARIF_LEVEL.get(f.severity, "warning"),
            "message": {"text": f.message},
            "locations": [location(f.path, f.span)],
            "partialFingerprints": {"ctxlsFinding/v1": f"{f.code}:{_rel(f.path, root)}:{f.message}"},
        }
        if f.code in index:
            r["ruleIndex"] = index[f.code]
        if f.related:
            r["relatedLocations"] = [{**location(x.path, x.span), "id": i, "message": {"text": x.message}}
                                     for i, x in enumerate(f.related)]
        results.append(r)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "ctxls", "version": __version__, "semanticVersion": __version__,
                                "rules": rules}},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": root.as_uri() + "/"}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def _gh_escape(s: str, prop: bool = False) -> str:
    s = s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        s = s.replace(":", "%3A").replace(",", "%2C")
    return s


def findings_to_github(findings: Iterable[Finding], root: Path) -> str:
    """GitHub Actions workflow commands (`::warning file=...::message`)."""
    lines = []
    for f in findings:
        level = {"error": "error", "warning": "warning"}.get(f.severity, "notice")
        props = (f"file={_gh_escape(_rel(f.path, root), True)},line={f.line},col={f.span.start_col + 1},"
                 f"endLine={f.span.end_line + 1},title={_gh_escape(f.code, True)}")
        lines.append(f"::{level} {props}::{_gh_escape(f'{f.code} {f.message}')}")
    return "\n".join(lines) + ("\n" if lines else "")


def findings_to_text(findings: Iterable[Finding], root: Path) -> str:
    lines = []
    for f in findings:
        lines.append(f"{_rel(f.path, root)}:{f.line}:{f.span.start_col + 1}: {f.code} [{f.severity}] {f.message}")
        for r in f.related:
            lines.append(f"    related: {_rel(r.path, root)}:{r.span.start_line + 1}: {r.message}")
        for x in f.fixes:
            lines.append(f"    fix{'' if x.safe else ' (unsafe, editor only)'}: {x.title}")
    return "\n".join(lines) + ("\n" if lines else "")


def rules_markdown() -> str:
    """docs/rules.md, generated from the registry (`ctxls rules > docs/rules.md`)."""
    from .rules import load_all

    out = ["# ctxls rules", "",
           "Generated from the rule registry by `ctxls rules`; do not edit by hand.", "",
           "Select or ignore codes (or prefixes such as `CTX2`) with `--select/--ignore` or `[check] select/ignore` "
           "in `.ctxls.toml`; override severities with `[check.severity]`; silence one finding with "
           "`<!-- ctxls-ignore CTX201 -->` on its line or the line above, or a whole file with "
           "`<!-- ctxls-ignore-file CTX201 -->`. Every rule reports at most info on a test fixture of agent "
           "configuration: an agent's folder or a `pass/` / `fail/` case under a test directory "
           "(`tests/fail/.claude/rules/x.md`), which is broken on purpose.", "",
           "| code | name | family | default severity | summary |", "|---|---|---|---|---|"]
    registry = load_all()
    for c, info in registry.items():
        out.append(f"| [{c}](#{c.lower()}) | `{info.name}` | {info.family} | {info.severity} | {info.summary} |")
    for c, info in registry.items():
        out += ["", f"## {c}", "", f"**{info.name}** ({info.family}, {info.severity}): {info.summary}", "",
                f"**Why it matters.** {info.why}", "", "**Example.**", "", info.example, "",
                f"**Fix.** {info.fix}"]
    return "\n".join(out) + "\n"
