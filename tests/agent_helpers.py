"""Shared pieces of the agent tests: a workspace copy, the CLI run against the Messages API stand-in, and
readers of what the loop sent and recorded."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

AGENT_WS = Path(__file__).resolve().parent.parent / "fixtures" / "agent" / "ws"


def make_workspace(tmp_path: Path) -> Path:
    """fixtures/agent/ws in tmp, a git repository (so .gitignore counts), with home and memory inside tmp."""
    ws = tmp_path / "ws"
    shutil.copytree(AGENT_WS, ws, symlinks=True)
    (ws / ".ctxls.toml").write_text('home = "../home"\nceiling = "."\nmanaged_dir = "../managed"\n'
                                    'auto_memory_dir = "../home/mem"\ntoday = "2026-11-29"\n\n'
                                    '[agent]\nretry_backoff_s = 0.01\n', encoding="utf-8")
    (ws / ".gitignore").write_text("build/\n", encoding="utf-8")
    (ws / ".git").mkdir()
    (tmp_path / "home" / "mem").mkdir(parents=True)
    return ws


def agent_env(api, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("CLAUDE_CONFIG_DIR", "PYTHONPATH") and not k.startswith("ANTHROPIC_")}
    env.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.base_url, COLUMNS="200")
    env.update(extra)
    return env


def run_agent(api, ws: Path, *args: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxls", "agent", *args], cwd=ws, env=agent_env(api, **env),
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def session_id(proc: subprocess.CompletedProcess) -> str:
    line = next(ln for ln in proc.stderr.splitlines() if ln.startswith("session: "))
    return line.split(": ", 1)[1].strip()


def audit(ws: Path) -> list[dict]:
    path = ws / ".ctxls" / "audit.jsonl"
    return [json.loads(ln) for ln in path.read_text().splitlines()] if path.exists() else []


def transcript(ws: Path, sid: str) -> list[dict]:
    return [json.loads(ln) for ln in (ws / ".ctxls" / "sessions" / f"{sid}.jsonl").read_text().splitlines()]


def tool_results(body: dict) -> list[dict]:
    """The tool_result blocks of the last user message of a request."""
    last = body["messages"][-1]
    return [b for b in last["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


def result_text(block: dict) -> str:
    c = block.get("content")
    if isinstance(c, list):
        return "".join(x.get("text", "") for x in c if isinstance(x, dict))
    return c or ""


def assert_valid_conversation(messages: list[dict]) -> None:
    """Roles alternate from a user message, and every tool_use is answered by a tool_result in the next one."""
    assert messages and messages[0]["role"] == "user"
    for i, m in enumerate(messages):
        assert m["role"] == ("user" if i % 2 == 0 else "assistant"), f"message {i} has role {m['role']}"
        if m["role"] == "assistant":
            ids = [b["id"] for b in m["content"] if b.get("type") == "tool_use"]
            if ids:
                assert i + 1 < len(messages), "tool calls without results at the end"
                got = [b["tool_use_id"] for b in messages[i + 1]["content"] if b.get("type") == "tool_result"]
                assert got == ids


def run_agent_in_pty(api, ws: Path, args: list[str], answers: list[str], timeout: float = 60) -> tuple[int, str]:
    """`ctxls agent` on a pseudo-terminal (so it is interactive), typing ``answers`` at its y/N prompts in order."""
    import pty
    import select
    import time

    env = agent_env(api)
    pid, fd = pty.fork()
    if pid == 0:  # child
        os.chdir(ws)
        os.execve(sys.executable, [sys.executable, "-m", "ctxls", "agent", *args], env)
    out = b""
    answered = 0
    deadline = time.monotonic() + timeout
    status = None
    while time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            out += chunk
            if out.count(b"[y/N] ") > answered and answered < len(answers):
                os.write(fd, answers[answered].encode() + b"\n")
                answered += 1
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
            break
    if status is None:
        try:
            _, status = os.waitpid(pid, 0 if time.monotonic() < deadline else os.WNOHANG)
        except ChildProcessError:
            status = 0
    try:
        while True:
            r, _, _ = select.select([fd], [], [], 0.05)
            if not r:
                break
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            out += chunk
    except OSError:
        pass
    os.close(fd)
    return os.waitstatus_to_exitcode(status) if status is not None else -1, out.decode("utf-8", "replace")


def without_cache_control(value):
    """``value`` with every `cache_control` key removed (breakpoints move to the newest message each call)."""
    if isinstance(value, dict):
        return {k: without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_cache_control(v) for v in value]
    return value
