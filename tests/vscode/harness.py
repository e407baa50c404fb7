"""Running a real VS Code for the end-to-end tests: the tools from setup.sh, the packaged extension, and
code-server with a fresh profile per run, its own process group and nothing written outside its data dir."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CLIENT = REPO / "client-vscode"
SETUP = HERE / "setup.sh"

# Quiet, deterministic workbench (no welcome page, trust prompt, AI panel, update or telemetry traffic).
BASE_SETTINGS = {
    "workbench.startupEditor": "none",
    "security.workspace.trust.enabled": False,
    "telemetry.telemetryLevel": "off",
    "extensions.autoUpdate": False,
    "extensions.autoCheckUpdates": False,
    "update.mode": "none",
    "chat.disableAIFeatures": True,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "workbench.tips.enabled": False,
    "files.autoSave": "off",
    "editor.hover.delay": 200,
}


@dataclass
class Tools:
    cache: Path
    node24_bin: Path
    code_server: Path
    chromium: Path
    node_path: Path
    seconds: float

    @property
    def node(self) -> str:
        return str(self.node24_bin / "node")

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PATH"] = f"{self.node24_bin}{os.pathsep}{env.get('PATH', '')}"
        return env


def setup_tools() -> Tools:
    t = time.monotonic()
    proc = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, timeout=1500)
    sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        raise RuntimeError(f"tests/vscode/setup.sh failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    return Tools(cache=Path(info["cache"]), node24_bin=Path(info["node24_bin"]),
                 code_server=Path(info["code_server"]), chromium=Path(info["chromium"]),
                 node_path=Path(info["node_path"]), seconds=time.monotonic() - t)


def _npm(tools: Tools, *args: str, timeout: float = 600) -> str:
    proc = subprocess.run(["npm", *args], cwd=CLIENT, env=tools.env(), capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"npm {' '.join(args)} failed in client-vscode/:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return proc.stdout


def build_extension(tools: Tools) -> dict:
    """`npm ci` (skipped while node_modules was installed from the same package-lock.json), typecheck, lint,
    build, package. Returns the .vsix path, its file list and the seconds of each step."""
    times: dict[str, float] = {}
    lock = hashlib.sha256((CLIENT / "package-lock.json").read_bytes()).hexdigest()
    stamp = CLIENT / "node_modules" / ".ctxls-lock-sha256"
    t = time.monotonic()
    if not stamp.is_file() or stamp.read_text() != lock:
        _npm(tools, "ci", "--no-audit", "--no-fund")
        stamp.write_text(lock)
    times["npm ci"] = time.monotonic() - t
    for script in ("typecheck", "lint", "build", "package"):
        t = time.monotonic()
        _npm(tools, "run", "-s", script)
        times[script] = time.monotonic() - t
    vsix = CLIENT / "ctxls.vsix"
    with zipfile.ZipFile(vsix) as z:
        names = sorted(z.namelist())
    return {"vsix": vsix, "files": names, "seconds": times}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class CodeServer:
    """One code-server run: fresh user-data and extensions dirs under ``data``, XDG and TMPDIR redirected
    there (code-server, VS Code and Chromium otherwise write to ~/.config, ~/.cache and /tmp)."""

    tools: Tools
    data: Path
    workspace: Path
    settings: dict = field(default_factory=dict)
    extra_args: list[str] = field(default_factory=list)
    env_extra: dict[str, str] = field(default_factory=dict)
    path_prefix: list[str] | None = None
    port: int = 0
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        env = self.tools.env()
        if self.path_prefix is not None:  # a PATH of our choosing (node 24 first), e.g. without ctxls on it
            env["PATH"] = os.pathsep.join([str(self.tools.node24_bin), *self.path_prefix])
        for name in ("config", "data", "cache"):
            env[f"XDG_{name.upper()}_HOME"] = str(self.data / f"xdg-{name}")
        env["TMPDIR"] = str(self.data / "tmp")
        env.update(self.env_extra)
        return env

    def _dirs(self) -> list[str]:
        return ["--user-data-dir", str(self.data / "user"), "--extensions-dir", str(self.data / "extensions")]

    def install(self, vsix: Path) -> float:
        t = time.monotonic()
        proc = subprocess.run([str(self.tools.code_server), *self._dirs(), "--install-extension", str(vsix)],
                              env=self.env(), capture_output=True, text=True, timeout=180)
        if proc.returncode != 0:
            raise RuntimeError(f"code-server --install-extension failed:\n{proc.stdout}{proc.stderr}")
        return time.monotonic() - t

    def start(self) -> float:
        (self.data / "tmp").mkdir(parents=True, exist_ok=True)
        user = self.data / "user" / "User"
        user.mkdir(parents=True, exist_ok=True)
        (user / "settings.json").write_text(json.dumps({**BASE_SETTINGS, **self.settings}, indent=2))
        # The same as the remote machine's settings: the extension host (on the server side) has these from its
        # start, while the user settings reach it from the browser, sometimes after the extension activated.
        machine = self.data / "user" / "Machine"
        machine.mkdir(parents=True, exist_ok=True)
        (machine / "settings.json").write_text(json.dumps(self.settings, indent=2))
        self.port = self.port or free_port()
        log = open(self.data / "code-server.log", "w")
        t = time.monotonic()
        # its own session: the extension host, the file watcher and our language server are in its process
        # group, and outlive code-server by seconds unless the group is killed
        self.proc = subprocess.Popen(
            [str(self.tools.code_server), "--bind-addr", f"127.0.0.1:{self.port}", "--auth", "none", *self._dirs(),
             "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
             "--disable-getting-started-override", *self.extra_args, str(self.workspace)],
            env=self.env(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"code-server exited {self.proc.returncode}:\n{self.log()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2):
                    return time.monotonic() - t
            except OSError:
                time.sleep(0.25)
        raise RuntimeError(f"code-server not ready after 60 s:\n{self.log()[-3000:]}")

    def log(self) -> str:
        try:
            return (self.data / "code-server.log").read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is None:
            return
        pgid = self.proc.pid
        for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
            if not _group_alive(pgid):
                break
            os.killpg(pgid, sig)
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                self.proc.poll()  # reap code-server itself: a zombie still counts as a member of the group
                if not _group_alive(pgid):
                    break
                time.sleep(0.2)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.proc = None

    def keep_logs(self, out: Path) -> None:
        """Copy code-server's log and the extension's output channel next to the screenshots."""
        out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(self.data / "code-server.log", out / "code-server.log")
        for f in sorted((self.data / "user" / "logs").glob("*/exthost*/output_logging_*/*ctxls*.log")):
            shutil.copyfile(f, out / "ctxls-output.log")
        for f in sorted((self.data / "user" / "logs").glob("*/exthost*/remoteexthost.log")):
            shutil.copyfile(f, out / "exthost.log")

    def __enter__(self) -> "CodeServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def run_driver(tools: Tools, script: Path, env: dict[str, str], result: Path, timeout: float = 300) -> dict:
    """Run a Playwright driver (node 24, playwright-core from the cache) and return the JSON it wrote."""
    full = tools.env()
    full.update(env)
    full["NODE_PATH"] = str(tools.node_path)
    full["CHROMIUM"] = str(tools.chromium)
    full["RESULT_JSON"] = str(result)
    t = time.monotonic()
    proc = subprocess.run([tools.node, str(script)], env=full, capture_output=True, text=True, timeout=timeout)
    try:
        data = json.loads(result.read_text())
    except (OSError, ValueError):
        data = {"ok": False, "error": f"no result from {script.name}"}
    data["rc"] = proc.returncode
    data["driver_seconds"] = time.monotonic() - t
    data["stderr_tail"] = proc.stderr[-4000:]
    return data
