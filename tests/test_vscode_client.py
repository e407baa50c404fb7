"""client-vscode/: the README's settings table is generated from package.json, and stays in sync."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

CLIENT = Path(__file__).resolve().parent.parent / "client-vscode"
SCRIPT = CLIENT / "scripts" / "settings-table.mjs"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([NODE, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def test_readme_settings_table_is_in_sync() -> None:
    proc = run("--check")
    assert proc.returncode == 0, proc.stderr


def test_every_setting_is_a_row() -> None:
    props = json.loads((CLIENT / "package.json").read_text())["contributes"]["configuration"]["properties"]
    readme = (CLIENT / "README.md").read_text()
    for key, p in props.items():
        assert f"| `{key}` |" in readme, key
        assert f"`{json.dumps(p['default'])}`" in readme.split(f"| `{key}` |", 1)[1].split("\n", 1)[0], key


def test_check_fails_when_package_json_changes(tmp_path: Path) -> None:
    pkg = json.loads((CLIENT / "package.json").read_text())
    pkg["contributes"]["configuration"]["properties"]["ctxls.window"]["default"] = 1_000_000
    (tmp_path / "package.json").write_text(json.dumps(pkg))
    shutil.copyfile(CLIENT / "README.md", tmp_path / "README.md")
    args = ("--package", str(tmp_path / "package.json"), "--readme", str(tmp_path / "README.md"))
    proc = run("--check", *args)
    assert proc.returncode == 1 and "out of date" in proc.stderr
    assert run("--write", *args).returncode == 0
    assert "| `ctxls.window` | integer | `1000000` |" in (tmp_path / "README.md").read_text()
    assert run("--check", *args).returncode == 0
