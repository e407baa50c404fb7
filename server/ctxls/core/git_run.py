"""Running git for the rules: locally, never fatal, never reaching the network.

Each call runs `git` in a process group of its own with a time limit (on a timeout the group is killed, so
whatever git started ends too). Lazy fetching of missing objects (partial clones) is off, so git never reaches
the network; the file-system monitor hook, signature checks and `log.follow` a configuration may set are
overridden. No git binary, a path it cannot take, a non-zero exit or a timeout gives None.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess

log = logging.getLogger("ctxls.history")

TIMEOUT_S = 10.0
"""Time for all the blames of one batch."""

_ENV = {
    "GIT_NO_LAZY_FETCH": "1",  # a partial clone must not fetch objects (no network at run time)
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "LC_ALL": "C",
}
_SAFE = ("-c", "core.fsmonitor=false", "-c", "blame.ignoreRevsFile=", "-c", "log.showSignature=false",
         "-c", "log.follow=false", "-c", "core.quotePath=false")


def spawn(args: list[str], cwd: str, stdin: bool = False) -> subprocess.Popen:
    """``git args`` in a process group of its own, so that a timeout ends whatever it started too."""
    return subprocess.Popen(["git", *_SAFE, *args], cwd=cwd, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={**os.environ, **_ENV},
                            start_new_session=True)


def kill(proc: subprocess.Popen) -> None:
    """End ``proc`` and whatever it started (its process group; the process alone where there are none)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except Exception:
        try:
            proc.kill()
        except Exception:
            pass


def run_bytes(args: list[str], cwd: str, stdin: bytes | None = None, timeout: float = TIMEOUT_S
               ) -> tuple[int, bytes] | None:
    """(exit status, stdout) of ``git args``; None when it cannot run or times out."""
    try:
        proc = spawn(args, cwd, stdin is not None)
    except Exception as exc:  # no git, a path it cannot take: no answer
        log.debug("git %s failed: %s", args[0], exc)
        return None
    try:
        out, _ = proc.communicate(stdin, timeout=max(0.1, timeout))
    except Exception as exc:  # a timeout (or a broken pipe): end it and everything it started
        log.debug("git %s failed: %s", args[0], exc)
        kill(proc)
        try:
            proc.communicate(timeout=5)
        except Exception:
            pass
        return None
    return proc.returncode, out


def run(args: list[str], cwd: str, stdin: str | None = None, timeout: float = TIMEOUT_S
         ) -> tuple[int, str] | None:
    got = run_bytes(args, cwd, stdin.encode("utf-8", "surrogateescape") if stdin is not None else None, timeout)
    return None if got is None else (got[0], got[1].decode("utf-8", "surrogateescape"))


def git(args: list[str], cwd: str, stdin: str | None = None, timeout: float = TIMEOUT_S) -> str | None:
    got = run(args, cwd, stdin, timeout)
    return got[1] if got is not None and got[0] == 0 else None
