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
