"""Import layering: core is pure (no LSP, asyncio, network, Anthropic SDK) and does not depend on lsp/agent;
agent is network-free at import level too (the Anthropic SDK is its one allowed client)."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "server" / "ctxls"

NETWORK_AND_LSP = {"pygls", "lsprotocol", "asyncio", "socket", "urllib", "http", "requests"}
FORBIDDEN = {
    "core": NETWORK_AND_LSP | {"anthropic"},
    "agent": NETWORK_AND_LSP - {"asyncio"},  # the loop is async (the SDK, subprocesses, cancellation)
}
CORE_MUST_NOT_USE = ("ctxls.lsp", "ctxls.agent")
# Pure string helpers inside otherwise forbidden packages.
ALLOWED = {"urllib.parse", "urllib.parse.unquote", "urllib.parse.urlparse", "urllib.parse.quote"}


def module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(source: str, module: str, is_package: bool) -> set[str]:
    """Absolute names of every module ``source`` imports (relative imports resolved against ``module``),
    including `from X import name` as both X and X.name, since name may be a submodule."""
    package = module if is_package else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__" and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                out.add(arg.value)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args):
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                out.add(arg.value)
    return out


def violations(path: Path, layer: str) -> list[str]:
    mod = module_name(path)
    names = imported_modules(path.read_text(encoding="utf-8"), mod, path.name == "__init__.py")
    bad = []
    for name in sorted(names):
        top = name.split(".")[0]
        if top in FORBIDDEN[layer] and name not in ALLOWED and not (top == "urllib" and name == "urllib"):
            bad.append(f"{mod} imports {name}")
        if layer == "core" and any(name == p or name.startswith(p + ".") for p in CORE_MUST_NOT_USE):
            bad.append(f"{mod} imports {name}")
    return bad


def py_files(layer: str) -> list[Path]:
    return sorted((PKG / layer).rglob("*.py"))


# ---------------------------------------------------------------------------------------------- the scanner itself
def test_scanner_resolves_relative_imports_and_flags_violations():
    src = textwrap.dedent("""
        import os, asyncio.events
        from urllib.request import urlopen
        from ..lsp import server
        from .. import agent
        from . import fs
        import importlib
        importlib.import_module("socket")
        __import__("requests")
    """)
    names = imported_modules(src, "ctxls.core.loader", is_package=False)
    assert {"os", "asyncio.events", "urllib.request", "ctxls.lsp", "ctxls.lsp.server", "ctxls.agent",
            "ctxls.core.fs", "socket", "requests"} <= names
    assert "ctxls.core" in names  # `from . import fs` resolves against the package


def test_scanner_flags_a_violating_file(tmp_path, monkeypatch):
    fake = tmp_path / "ctxls" / "core"
    fake.mkdir(parents=True)
    bad = fake / "bad.py"
    bad.write_text("from ..lsp.server import run\nimport http.client\nimport anthropic\n", encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "PKG", tmp_path / "ctxls")
    assert set(violations(bad, "core")) == {
        "ctxls.core.bad imports anthropic",
        "ctxls.core.bad imports http.client",
        "ctxls.core.bad imports ctxls.lsp.server",
        "ctxls.core.bad imports ctxls.lsp.server.run",
    }
    assert violations(bad, "agent") == ["ctxls.core.bad imports http.client"]


# ---------------------------------------------------------------------------------------------- the real tree
def test_core_has_modules_to_scan():
    names = {p.name for p in py_files("core")}
    assert {"loader.py", "fs.py", "tokens.py", "discovery.py", "budget.py"} <= names


@pytest.mark.parametrize("path", py_files("core"), ids=lambda p: p.name)
def test_core_module_imports_nothing_forbidden(path):
    assert violations(path, "core") == []


@pytest.mark.parametrize("path", py_files("agent"), ids=lambda p: p.name)
def test_agent_module_imports_nothing_forbidden(path):
    assert violations(path, "agent") == []


def test_importing_and_running_core_loads_no_lsp_network_or_agent_modules(tmp_path):
    snippet = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from ctxls.core.budget import compute_budget
        from ctxls.core.settings import Settings
        ws = Path({str(tmp_path / 'ws')!r}); ws.mkdir()
        (ws / "CLAUDE.md").write_text("hello\\n")
        compute_budget(ws, Settings(home=ws.parent / "home", ceiling=ws, managed_dir=ws.parent / "managed",
                                    today="2026-11-29"))
        bad = sorted(m for m in sys.modules
                     if m.split(".")[0] in ("pygls", "lsprotocol", "anthropic", "requests", "httpx")
                     or m.startswith(("ctxls.lsp", "ctxls.agent")))
        print(",".join(bad))
    """)
    proc = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""
