"""The packaged VS Code extension in a real VS Code: code-server (VS Code 1.139 for the browser) in headless
Chromium, driven by playwright-core, with `ctxls serve` from this checkout as its language server.

tests/vscode/setup.sh installs the tools (cached under .cache/vscode-e2e or $CTXLS_E2E_CACHE); the session
fixture builds, lints, typechecks and packages client-vscode/ into ctxls.vsix and checks what is in it.
Then:
- test_ui: ui_driver.js checks through the UI that the Problems panel shows the duplicate instruction, the
  status bar the token figure, the context view the blocks, that hovering a source file shows the context
  table and that the quick fix removes the duplicate (a screenshot per step in the output directory,
  $CTXLS_E2E_OUT or pytest's tmp dir);
- test_api: api_suite/ runs inside the extension host (code-server's smoke-test driver honours the
  extensionTestsPath payload) and asserts on the extension's API and the vscode API;
- test_server_missing: with no server anywhere, one notification names the install command.
Figures the UI shows are compared with what the CLI (`ctxls context --format json`) says.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .harness import CLIENT, REPO, CodeServer, build_extension, run_driver, setup_tools

HERE = Path(__file__).resolve().parent
CTXLS = Path(sys.executable).with_name("ctxls")  # the venv's entry point (pip install -e .)

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the e2e tools are Linux packages (apt, npm x64)")


@pytest.fixture(scope="session")
def tools():
    return setup_tools()


@pytest.fixture(scope="session")
def extension(tools):
    return build_extension(tools)


@pytest.fixture(scope="session")
def out_root(tmp_path_factory) -> Path:
    env = os.environ.get("CTXLS_E2E_OUT")
    root = Path(env) if env else tmp_path_factory.mktemp("vscode-e2e")
    root.mkdir(parents=True, exist_ok=True)
    return root


def cli_context(ws: Path, start: Path, *touch: Path) -> dict:
    args = [str(CTXLS), "context", str(start), "--format", "json"]
    for t in touch:
        args += ["--touch", str(t)]
    return json.loads(subprocess.run(args, cwd=ws, capture_output=True, text=True, timeout=60, check=True).stdout)


def status_text(ctx: dict) -> str:
    """What the status bar must read for a `ctxls.context/1` result (the extension's formatTokens)."""
    n = ctx["startup_tokens"]
    tokens = str(n) if n < 1000 else f"{n / 1000:.1f}K" if n < 1_000_000 else f"{n / 1_000_000:.1f}M"
    return f"ctx {tokens} · {100 * n / ctx['window']:.1f}%"


def test_package_is_one_bundle(extension) -> None:
    files = extension["files"]
    assert "extension/dist/extension.js" in files
    assert not [f for f in files if "node_modules" in f], files
    assert set(files) <= {"extension.vsixmanifest", "[Content_Types].xml", "extension/package.json",
                          "extension/readme.md", "extension/LICENSE.txt", "extension/dist/extension.js",
                          "extension/dist/extension.js.map"}, files
    manifest = json.loads((CLIENT / "package.json").read_text())
    assert manifest["main"] == "./dist/extension.js"


def test_ui(tools, extension, workspace: Path, tmp_path: Path, out_root: Path) -> None:
    out = out_root / "ui"
    billing = workspace / "services" / "billing"
    src = billing / "src" / "refunds.py"
    # what the CLI says before the UI changes anything (the quick fix deletes a line)
    want = cli_context(workspace, billing, billing / "CLAUDE.md")
    want_src = cli_context(workspace, src.parent)
    cs = CodeServer(tools, tmp_path / "cs", workspace, settings={"ctxls.server.path": str(CTXLS)})
    with cs:
        install_s = cs.install(extension["vsix"])
        ready_s = cs.start()
        res = run_driver(tools, HERE / "ui_driver.js", {"CS_URL": cs.url, "WS_DIR": str(workspace),
                                                       "OUT_DIR": str(out)}, tmp_path / "ui.json")
    cs.keep_logs(out)
    (out / "result.json").write_text(json.dumps(res, indent=2))
    sys.stderr.write(f"vscode ui e2e: install {install_s:.1f}s, code-server ready {ready_s:.1f}s, "
                     f"driver {res['driver_seconds']:.1f}s\n")
    steps = {s["name"]: s for s in res.get("steps", [])}
    assert res["ok"], f"UI driver failed: {res.get('error')}\n{json.dumps(res.get('steps'), indent=1)[-3000:]}\n" \
                      f"{res['stderr_tail']}\ncode-server log:\n{cs.log()[-2000:]}"

    assert any("CTX201" in r and "Duplicate of CLAUDE.md:8" in r for r in steps["problems"]["problems"]), \
        steps["problems"]["problems"]

    assert steps["statusbar"]["text"] == status_text(want)
    assert f"{want['startup_tokens']:,} tokens" in steps["statusbar"]["tooltip"]

    rows = steps["contextview"]["rows"]
    assert rows[0].startswith("Startup in services/billing"), rows
    for block in want["blocks"]:
        if block["startup"] and block["source"]:
            assert any(block["source"] in r and f"{block['tokens']:,} tokens" in r for r in rows), (block, rows)
    # selecting the root CLAUDE.md block opened that file with its loaded lines (1-9) selected
    cv = steps["contextview"]
    assert cv["opened_text"].startswith("# Acme monorepo"), cv
    assert "services" not in cv["opened_breadcrumbs"], cv
    root_block = next(b for b in want["blocks"] if b["source"] == "CLAUDE.md")
    assert cv["opened_selection"].startswith(f"Ln {root_block['lines'][1]}, Col ") and \
        "selected" in cv["opened_selection"], cv

    hover = steps["hover"]["text"]
    assert "Claude Code started in services/billing/src loads" in hover, hover
    assert f"{want_src['startup_tokens']:,} tokens" in hover, hover

    qf = steps["quickfix"]
    assert "Delete this duplicate (CTX201)" in qf["menu"], qf["menu"]
    assert "Use Python 3.11 and type hints everywhere." in qf["before"]
    assert "type hints" not in qf["after"]
    assert not any("CTX201" in r for r in qf["problems_after"])
    assert "type hints" not in (billing / "CLAUDE.md").read_text()  # saved
    assert "type hints" in (workspace / "CLAUDE.md").read_text()  # the original stays


def test_api(tools, extension, workspace: Path, tmp_path: Path, out_root: Path) -> None:
    out = out_root / "api"
    out.mkdir(parents=True, exist_ok=True)
    src = workspace / "services" / "billing" / "src" / "refunds.py"
    want = cli_context(workspace, src.parent, src)
    result = tmp_path / "api.json"
    cs = CodeServer(tools, tmp_path / "cs", workspace, settings={"ctxls.server.path": str(CTXLS)},
                    extra_args=["--vscode-option", "enable-smoke-test-driver"],
                    env_extra={"API_RESULT_JSON": str(result), "WS_DIR": str(workspace)})
    with cs:
        cs.start()
        drv = run_driver(tools, HERE / "api_driver.js", {
            "CS_URL": cs.url, "WS_DIR": str(workspace), "EXT_DEV": str(CLIENT),
            "EXT_TESTS": str(HERE / "api_suite" / "index.js"), "SHOT": str(out / "api.png")}, tmp_path / "drv.json")
    cs.keep_logs(out)
    res = json.loads(result.read_text()) if result.is_file() else {"ok": False, "error": "the suite wrote nothing"}
    (out / "result.json").write_text(json.dumps({"suite": res, "driver": drv}, indent=2))
    assert drv["ok"] and res["ok"], f"{res.get('error')}\nchecks passed: {res.get('checks')}\n" \
                                    f"{json.dumps(drv.get('logs', [])[-30:], indent=1)}"

    assert res["server_origin"] == "setting ctxls.server.path"
    assert res["missing_commands"] == []
    assert res["server_commands"] == ["ctxls.contextReport", "ctxls.budgetReport", "ctxls.refresh", "ctxls.applyFix"]
    assert {"code": "CTX201", "line": 3} in [{k: d[k] for k in ("code", "line")} for d in res["diagnostics"]]
    assert res["md_hovers"] == 1
    assert any(t and "tokens · startup in" in t for t in res["md_lenses"]), res["md_lenses"]
    assert "Claude Code started in `services/billing/src` loads" in res["source_hover"]

    assert res["context"]["context"] == want  # the view and the status bar show the CLI's document
    assert res["context"]["root"] == str(workspace)
    assert res["status_text"] == status_text(want)
    assert res["status_warning"] is None

    startup, touch, *rest = res["view"]
    assert startup["label"] == "Startup in services/billing/src"
    assert len(startup["children"]) == sum(1 for b in want["blocks"] if b["startup"])
    claude = next(c for c in startup["children"] if c["label"] == "CLAUDE.md: services/billing/CLAUDE.md")
    assert claude["command"] == "vscode.open" and claude["target"] == str(workspace / "services/billing/CLAUDE.md")
    assert touch["label"] == "Reading services/billing/src/refunds.py appends"
    appended = [b for b in want["blocks"] if not b["startup"]]
    # only the file itself: the view says so instead of leaving the reader to guess
    assert [b["kind"] for b in appended] == ["read"], appended
    assert [c["label"] for c in touch["children"]] == ["file read: services/billing/src/refunds.py",
                                                        "no instructions appended"], touch["children"]

    # what does not load (the CLI's skipped files, less those that load anyway), in a group of its own
    loaded = {b["source"] for b in want["blocks"] if b["source"]}
    skipped = [k for k in want["skipped"] if k["source"] not in loaded]
    assert [g["label"] for g in rest] == ([f"Not loaded ({len(skipped)})"] if skipped else [])
    if skipped:
        assert [c["label"] for c in rest[0]["children"]] == [f"import: {k['source']}" for k in skipped]
        assert all(c["description"].startswith("not loaded · ") for c in rest[0]["children"])

    # the agent picker's state: the setting's default, a pick, the setting again
    dflt = res["agent_default"]
    assert dflt == {"agent": "claude-code", "origin": "setting", "answered": "claude-code", "targeted": ["claude-code"],
                    "targeted_by": "files", "all": ["claude-code", "codex", "cursor", "copilot", "gemini"],
                    "view_description": "Claude Code"}, dflt
    codex = res["agent_codex"]
    assert res["agent_pick_result"] == "codex"
    assert codex["context"] == cli_agent_context(workspace, src.parent, "codex", src)
    assert codex["origin"] == "picked" and codex["view_description"] == "Codex"
    assert codex["status_text"] == status_text(codex["context"]) + " · Codex"
    # nothing of Codex's here: no AGENTS.md, and its session holds only its wrapper and the file read
    assert codex["context"]["startup_tokens"] == 0 and codex["groups"][0]["children"] == ["nothing loads at startup"]
    assert codex["groups"][1]["children"][-1] == "no instructions appended", codex["groups"]
    assert "windsurf" in res["agent_unknown"] and res["agent_after_unknown"] == "codex"
    assert res["agent_setting"] == {"agent": "copilot", "origin": "setting", "answered": "copilot",
                                    "view_description": "Copilot"}
    assert res["agent_reset"] == {"agent": "claude-code", "status_text": status_text(want)}

    conf = res["configured"]
    assert conf["session_budget_tokens"] == 100 and conf["window"] == 100000
    assert conf["status_warning"] == "statusBarItem.warningBackground"
    assert conf["status_text"] == status_text({**want, "window": 100000})
    assert res["reset_status_text"] == status_text(want)

    assert res["report_uri"].endswith("/.ctxls/reports/context.md") and res["report_visible"]
    assert res["remembered"]["remembered"] is True, res["remembered"]
    memory = "".join(p.read_text() for p in (workspace.parent / "home" / "mem").rglob("*.md"))
    assert "The staging database is on port 5433." in memory
    assert res["restarted"] and "CTX201" in res["diagnostics_after_restart"]
    assert res["restarted_on_setting"]


def test_server_missing(tools, extension, workspace: Path, tmp_path: Path, out_root: Path) -> None:
    out = out_root / "missing"
    path = [d for d in ("/usr/local/bin", "/usr/bin", "/bin") if not (Path(d) / "ctxls").exists()]
    cs = CodeServer(tools, tmp_path / "cs", workspace, path_prefix=path,
                    settings={"ctxls.server.path": str(tmp_path / "no-such-ctxls"),
                              "ctxls.server.pythonPath": str(tmp_path / "no-such-python")})
    with cs:
        cs.install(extension["vsix"])
        cs.start()
        res = run_driver(tools, HERE / "ui_driver.js", {"CS_URL": cs.url, "WS_DIR": str(workspace),
                                                       "OUT_DIR": str(out), "STEPS": "missing"}, tmp_path / "ui.json")
    cs.keep_logs(out)
    (out / "result.json").write_text(json.dumps(res, indent=2))
    assert res["ok"], f"{json.dumps(res.get('steps'), indent=1)[-3000:]}\n{res['stderr_tail']}"
    step = res["steps"][0]
    assert "python3 -m pip install ctxls" in step["text"] and step["toasts"] == 1, step
    assert "Server: Path" in step["settings_text"]
    assert step["status"] == "ctx: no server"
    output = (out / "ctxls-output.log").read_text()
    assert "no-such-ctxls (setting ctxls.server.path) does not run" in output, output
    assert "no-such-python -m ctxls (setting ctxls.server.pythonPath) does not run" in output, output


AGENT_OLD = "- Money is always integer cents; never floats."
AGENT_NEW = "- Store money as integer cents, never as floats."


def test_ask_agent(tools, extension, workspace: Path, tmp_path: Path, out_root: Path) -> None:
    """"ctxls: Ask agent" through the real UI, the server's agent loop against tests/fakeapi.py (the real
    anthropic SDK over HTTP): the edit shows in the refactor preview first and applies once accepted."""
    out = out_root / "agent"
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"steps": [
        {"content": [{"type": "text", "text": "I will reword the money rule."},
                     {"type": "tool_use", "name": "edit_file", "input": {
                         "path": "services/billing/CLAUDE.md", "old_string": AGENT_OLD, "new_string": AGENT_NEW}}]},
        {"content": [{"type": "text", "text": "Reworded the money rule in services/billing/CLAUDE.md."}]},
        {"content": [{"type": "text", "text": "Nothing to change: the root CLAUDE.md loads first."}]},
    ]}))
    record = tmp_path / "requests.jsonl"
    api = subprocess.Popen([sys.executable, str(REPO / "tests" / "fakeapi.py"), "--port", "0", "--scenario",
                            str(scenario), "--record", str(record)], stdout=subprocess.PIPE, text=True)
    try:
        line = api.stdout.readline().strip()
        assert line.startswith("listening http://127.0.0.1:"), line
        base_url = line.split(" ", 1)[1]
        cs = CodeServer(tools, tmp_path / "cs", workspace, settings={"ctxls.server.path": str(CTXLS)},
                        # the extension host, and so the server it starts, inherit code-server's environment
                        env_extra={"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "test-key"})
        with cs:
            cs.install(extension["vsix"])
            cs.start()
            res = run_driver(tools, HERE / "ui_driver.js", {
                "CS_URL": cs.url, "WS_DIR": str(workspace), "OUT_DIR": str(out), "STEPS": "agent",
                "AGENT_PROMPT": "Reword the money rule", "AGENT_EXPECT": AGENT_NEW}, tmp_path / "ui.json")
        cs.keep_logs(out)
    finally:
        api.terminate()
        api.wait(timeout=10)
    (out / "result.json").write_text(json.dumps(res, indent=2))
    assert res["ok"], f"{json.dumps(res.get('steps'), indent=1)[-3000:]}\n{res['stderr_tail']}"
    step = res["steps"][0]
    assert AGENT_OLD in step["before"] and AGENT_OLD in step["during"]  # nothing applied before Apply
    assert any("CLAUDE.md" in r for r in step["preview_rows"]), step["preview_rows"]
    # a change that needs confirmation starts unticked in the preview (Apply alone would reject it); ticked
    assert step["preview_checked_before"] and not any(step["preview_checked_before"])
    assert step["preview_checked_after"] and all(step["preview_checked_after"])
    assert AGENT_NEW in step["after"] and AGENT_OLD not in step["after"]
    assert AGENT_NEW in (workspace / "services" / "billing" / "CLAUDE.md").read_text()  # saved from the editor
    assert "Reworded the money rule" in step["report_text"]
    assert "Session ledger" in step["ledger_text"] and "2 calls" in step["ledger_text"], step["ledger_text"]

    requests = [json.loads(x) for x in record.read_text().splitlines()]
    messages = [r for r in requests if "messages" in r and "max_tokens" in r]
    assert len(messages) == 3, [list(r) for r in requests]
    first_user = json.dumps(messages[0]["messages"][0])
    assert "Reword the money rule" in first_user and "services/billing/CLAUDE.md" in first_user
    results = [b for b in messages[1]["messages"][-1]["content"] if b.get("type") == "tool_result"]
    assert len(results) == 1 and not results[0].get("is_error"), results
    # the fix command: the finding in the prompt, the diagnostic's line as the selection, in the same session
    assert step["fix_prompt"].startswith("Fix this diagnostic: CTX201 Duplicate of CLAUDE.md:8"), step["fix_prompt"]
    fix_task = json.dumps(messages[2]["messages"][-1])
    assert "CTX201" in fix_task and "services/billing/CLAUDE.md, line" in fix_task, fix_task
    assert len(messages[2]["messages"]) > len(messages[1]["messages"])  # the session stays open across asks
    audit = [json.loads(x) for x in (workspace / ".ctxls" / "audit.jsonl").read_text().splitlines()]
    assert [(a["tool"], a["decision"]) for a in audit] == [("edit_file", "approved")]


FIVE_AGENTS = REPO / "fixtures" / "compare" / "five_agents" / "tree"
AGENT_NAMES = {"claude-code": "Claude Code", "codex": "Codex", "cursor": "Cursor", "copilot": "Copilot",
               "gemini": "Gemini CLI"}
PICKER_TARGETS = ["claude-code", "codex", "gemini"]  # `[check] agents` of the workspace below


@pytest.fixture
def agents_workspace(tmp_path: Path) -> Path:
    """fixtures/compare/five_agents (every agent's files) as a git repository (Codex's project root), with a
    100-byte Codex project-doc budget, so AGENTS.md loads in part, and `[check] agents` naming three of them."""
    tree = tmp_path / "five"
    shutil.copytree(FIVE_AGENTS, tree, symlinks=True)
    ws = tree / "repo"
    subprocess.run(["git", "init", "-q", str(ws)], check=True, timeout=30)
    (ws / ".ctxls.toml").write_text(
        'home = "../home"\nceiling = "."\nmanaged_dir = "../managed"\nauto_memory_dir = "../home/mem"\n'
        'today = "2026-11-29"\ncodex_project_doc_max_bytes = 100\n\n'
        f'[check]\nagents = {json.dumps(PICKER_TARGETS)}\n')
    return ws


def cli_agent_context(ws: Path, start: Path, agent: str, *touch: Path) -> dict:
    args = [str(CTXLS), "context", str(start), "--agent", agent, "--format", "json"]
    for t in touch:
        args += ["--touch", str(t)]
    return json.loads(subprocess.run(args, cwd=ws, capture_output=True, text=True, timeout=60, check=True).stdout)


_BLOCK_ROW = re.compile(r"^(?P<label>.*?) (?P<tokens>~?[\d,]+) tokens · (?P<trigger>.+)$")


def view_blocks(rows: list[str]) -> list[tuple]:
    """(source, tokens, trigger) of each block row of the context view, in order (group rows left out)."""
    out = []
    for r in rows:
        m = _BLOCK_ROW.match(r)
        if not m or r.startswith(("Startup in ", "Reading ")):
            continue
        label = m["label"]
        out.append((label.split(": ", 1)[1] if ": " in label else None, int(m["tokens"].lstrip("~").replace(",", "")),
                    m["trigger"]))
    return out


def cli_blocks(ctx: dict) -> list[tuple]:
    """The same for the CLI's document: startup blocks first, then what the touch appends (the view's groups)."""
    blocks = [b for b in ctx["blocks"] if b["startup"]] + [b for b in ctx["blocks"] if not b["startup"]]
    return [(b["source"], b["tokens"], b["trigger"]) for b in blocks]


def loaded_selection(ws: Path, source: str, lines: list[int]) -> str:
    """What VS Code's status bar says for a selection of whole lines ``lines`` of ``source``."""
    text = (ws / source).read_text().split("\n")
    first, last = lines
    chars = sum(len(x) for x in text[first - 1:last]) + (last - first)
    return f"Ln {last}, Col {len(text[last - 1]) + 1} ({chars} selected)"


def check_agent_view(step: dict, ws: Path, ctx: dict, agent: str) -> None:
    """The view of ``step`` shows ``agent`` and exactly the CLI's blocks; the status bar its startup figure; each
    block opened at its loaded lines."""
    name = AGENT_NAMES[agent]
    assert step["header"].lower().startswith("agent context (ctxls)"), step  # (the title is CSS-capitalised)
    assert step["header"].endswith(f" {name}"), step["header"]  # the view's description
    assert view_blocks(step["rows"]) == cli_blocks(ctx), step["rows"]
    start = next(r for r in step["rows"] if r.startswith("Startup in "))
    assert start.startswith(f"Startup in {ctx['start_dir']} "), start
    appended = [b for b in ctx["blocks"] if not b["startup"]]
    assert any(r.startswith(f"Reading {ctx['touched'][0]} appends") for r in step["rows"]), step["rows"]
    if not [b for b in appended if b["kind"] != "read"]:
        assert "no instructions appended" in step["rows"], step["rows"]
    else:
        assert "no instructions appended" not in step["rows"], step["rows"]
    loaded = {b["source"] for b in ctx["blocks"] if b["source"]}
    skipped = [k for k in ctx["skipped"] if k["source"] not in loaded]
    for k in skipped:
        if k["trigger"].startswith("touch:"):  # shown under the touch group, with the reason
            assert any(k["source"] in r and "not loaded" in r for r in step["rows"]), (k, step["rows"])
    others = [k for k in skipped if not k["trigger"].startswith("touch:")]
    assert (f"Not loaded ({len(others)})" in step["rows"]) == bool(others), step["rows"]
    if "status" in step:
        assert step["status"] == status_text(ctx) + ("" if agent == "claude-code" else f" · {name}")
    if "opened" in step:
        sourced = [b for b in ctx["blocks"] if b["source"] and b["lines"]]
        assert [o["source"] for o in step["opened"]] == [b["source"] for b in
                                                        [b for b in sourced if b["startup"]] +
                                                        [b for b in sourced if not b["startup"]]], step["opened"]
        for o in step["opened"]:
            block = next(b for b in sourced if b["source"] == o["source"])
            assert o["tab"].startswith(Path(o["source"]).name), o
            assert ("svc" in o["breadcrumbs"]) == o["source"].startswith("svc/"), o
            assert o["selection"] == loaded_selection(ws, o["source"], block["lines"]), (o, block)


def test_agent_picker(tools, extension, agents_workspace: Path, tmp_path: Path, out_root: Path) -> None:
    """The agent picker through the real UI, on a workspace with every agent's files: the setting's agent
    first; Codex from the view's title button, kept over a window reload and a server restart; then Cursor from
    the palette. Each time the view's blocks are the CLI's (`ctxls context svc --agent A --touch svc/app.py`;
Cursor's from the workspace folder),
    the status bar follows, and every block opens at its loaded lines (Codex's AGENTS.md up to its cut)."""
    ws = agents_workspace
    out = out_root / "agents"
    svc, app = ws / "svc", ws / "svc" / "app.py"
    # Cursor runs in the editor: its session starts at the workspace folder, and the active file is a touch
    want = {a: cli_agent_context(ws, ws if a == "cursor" else svc, a, app) for a in ("gemini", "codex", "cursor")}
    cut = next(b for b in want["codex"]["blocks"] if b["source"] == "AGENTS.md")
    assert cut["cut"] and "100-byte" in cut["cut"]  # the fixture does what the test is about
    assert cut["lines"][1] < len((ws / "AGENTS.md").read_text().splitlines())
    cs = CodeServer(tools, tmp_path / "cs", ws, settings={"ctxls.server.path": str(CTXLS),
                                                          "ctxls.context.agent": "gemini"})
    with cs:
        cs.install(extension["vsix"])
        cs.start()
        res = run_driver(tools, HERE / "ui_driver.js", {
            "CS_URL": cs.url, "WS_DIR": str(ws), "OUT_DIR": str(out), "AGENT_SETTING_NAME": "Gemini CLI",
            "STEPS": "agentsetting,agentpick,agentreload,agentrestart,agentpalette"}, tmp_path / "ui.json",
            timeout=600)
    cs.keep_logs(out)
    (out / "result.json").write_text(json.dumps(res, indent=2))
    assert res["ok"], f"{json.dumps(res.get('steps'), indent=1)[-4000:]}\n{res['stderr_tail']}"
    steps = {s["name"]: s for s in res["steps"]}

    check_agent_view(steps["agentsetting"], ws, want["gemini"], "gemini")  # the setting's default applies
    pick = steps["agentpick"]
    check_agent_view(pick, ws, want["codex"], "codex")
    # the picker: every agent in table order, the targeted ones marked, the current one (the setting's) marked
    rows = pick["picker_rows"]
    assert [next(n for a, n in AGENT_NAMES.items() if r.startswith(n)) for r in rows] == list(AGENT_NAMES.values())
    for agent, row in zip(AGENT_NAMES, rows):
        assert (("targeted ([check] agents)" in row) == (agent in PICKER_TARGETS)), row
        assert ("not in [check] agents" in row) == (agent not in PICKER_TARGETS), row
        assert ("current" in row) == (agent == "gemini"), row
    assert "current (setting ctxls.context.agent)" in rows[-1]
    assert pick["picker_active"] and pick["picker_active"][0].startswith("Gemini CLI"), pick["picker_active"]
    # the cut file opens at the lines that load, not the whole file
    opened = next(o for o in pick["opened"] if o["source"] == "AGENTS.md")
    assert opened["selection"].startswith(f"Ln {cut['lines'][1]}, "), opened

    for name in ("agentreload", "agentrestart"):  # kept for the workspace
        check_agent_view(steps[name], ws, want["codex"], "codex")
    pal = steps["agentpalette"]
    check_agent_view(pal, ws, want["cursor"], "cursor")
    always = next(b for b in want["cursor"]["blocks"] if b["source"] == ".cursor/rules/always.mdc")
    assert always["startup"] and always["lines"][0] > 1  # the body after the frontmatter: opened from there
    assert any(b["source"] == "svc/AGENTS.md" and not b["startup"] for b in want["cursor"]["blocks"])
    cur = [r for r in pal["picker_rows"] if "current" in r]
    assert len(cur) == 1 and cur[0].startswith("Codex") and "current (setting" not in cur[0], pal["picker_rows"]
    # the three agents' views differ (the test would pass on a view that ignored the agent otherwise)
    assert len({tuple(view_blocks(steps[s]["rows"])) for s in ("agentsetting", "agentpick", "agentpalette")}) == 3
