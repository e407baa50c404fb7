#!/usr/bin/env python3
"""Benchmark the ctxls language server over stdio, from a client process, on a large monorepo.

    python bench/bench_lsp.py [--repo DIR] [--home DIR] [--hovers 200] [--passes 3]
                              [--rounds 6] [--json] [--breakdown] [--keep]

Without ``--repo`` a monorepo is generated into a temporary directory with
gen_monorepo.py (20,000 sources, 500 CLAUDE.md, 200 skills) and removed afterwards.
Nothing is written into the repo: the fake home (and a ceiling at the repo root, and a
managed dir that does not exist) go to the server as ``initializationOptions``, so the
real ``~/.claude`` and ``/etc/claude-code`` are never read.

One server is started (``python -m ctxls serve``, a pygls ``LanguageClient`` talks to
it) and these phases run in order:

* startup:   spawn -> ``initialize`` result -> ``$/progress`` begin -> first
             ``publishDiagnostics`` -> ``$/progress`` end -> last publish of the initial
             burst (the burst ends after ``--quiet`` seconds without a publish).  The
             client declares ``window.workDoneProgress`` so the server reports progress.
* hover:     ``textDocument/hover`` at 0:0 on ``--hovers`` source files spread round-robin
             over the directories, plus ``--md-hovers`` instruction files; one untimed
             pass warms, then ``--passes`` timed passes.  Each hover is followed by a
             baseline ping, so both see the same conditions.
* baseline:  the ping, ``textDocument/hover`` on a non-file URI (``untitled:``): the
             server's handler returns at once, so this is the JSON-RPC round trip through
             both processes (framing, (de)serialisation, the server's task dispatch).
             Ratios use its median as the denominator.
* rediag:    ``didOpen`` the root CLAUDE.md, wait until the server is idle, then
             ``--rounds`` ``didChange`` notifications (whole document) that alternately
             append a bullet copied verbatim from a child CLAUDE.md and remove it again.
             Measured from sending ``didChange`` to the first and to the last
             ``publishDiagnostics`` of the burst (the burst ends after ``--quiet`` seconds
             without a publish; nothing is subtracted, so the server's debounce is
             included).  Push mode: the client does not declare ``textDocument.diagnostic``.
* busy:      ``--busy-rounds`` rounds of what a user sees while the server re-checks: once
             an edit's check runs, a ping and a hover on a source file; and a ping sent right
             after a further ``didChange`` (the next keystroke) that arrives during a check.

After each burst the benchmark waits until the server is idle (hover probes: a hover
waits for the engine while a check holds it) and counts publishes that arrived after the
quiet period as late; they move "last" to them.

CPU seconds and RSS of the server come from /proc (the whole process group, Linux only).
``--breakdown`` then profiles the same work in-process (``Engine.check()`` cold, unchanged
and after the same edit, the server's way: median of alternating edits with the cyclic GC
deferred, and with it on; every rule on its own; the publish plan the server's worker thread
makes, for the initial publish and after the edit), which attributes the re-diagnosis time;
``--profile-out FILE`` also saves a cProfile of the check after the edit.

Every wait is bounded (``--timeout`` per wait, ``--total-timeout`` for the whole run); on
any failure the server's stderr tail is printed and the exit status is 1.  Needs pygls
and lsprotocol (dependencies of ctxls).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import importlib.util
import io
import json
import math
import os
import platform
import pstats
import re
import shlex
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections import deque
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent

TARGET_HOVER_P99_MS = 10.0
TARGET_REDIAG_MS = 100.0
SOURCE_SUFFIXES = (".py", ".ts", ".go")
SKIP = {".git", "node_modules", "dist", ".ctxls", ".claude", "__pycache__"}
INSTRUCTION_NAMES = ("CLAUDE.md", "CLAUDE.local.md")
PING_URI = "untitled:ctxls-bench-ping"


class BenchError(Exception):
    pass


# ---------------------------------------------------------------------------------------- statistics

def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    if not sorted_values:
        return float("nan")
    k = max(0, min(len(sorted_values) - 1, math.ceil(q / 100 * len(sorted_values)) - 1))
    return sorted_values[k]


def summarize_ms(samples_s: list[float]) -> dict:
    ms = sorted(s * 1000 for s in samples_s)
    if not ms:
        return {"n": 0}
    return {
        "n": len(ms),
        "min": round(ms[0], 3),
        "p50": round(percentile(ms, 50), 3),
        "p95": round(percentile(ms, 95), 3),
        "p99": round(percentile(ms, 99), 3),
        "max": round(ms[-1], 3),
        "mean": round(statistics.fmean(ms), 3),
    }


# ---------------------------------------------------------------------------------------- /proc

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
PAGE_KIB = (os.sysconf("SC_PAGE_SIZE") // 1024) if hasattr(os, "sysconf") else 4


def group_stats(sid: int) -> dict | None:
    """CPU seconds (user+sys, all threads) and RSS of every process in session ``sid``; None off Linux."""
    proc = Path("/proc")
    if not proc.is_dir():
        return None
    cpu = 0.0
    rss_kib = 0
    hwm_kib = 0
    pids = []
    for p in proc.iterdir():
        if not p.name.isdigit():
            continue
        try:
            raw = (p / "stat").read_text()
        except OSError:
            continue
        fields = raw[raw.rfind(")") + 2:].split()  # after "pid (comm) "
        # fields[0] is field 3 (state): session is field 6, utime 14, stime 15, rss 24
        if int(fields[3]) != sid:
            continue
        pids.append(int(p.name))
        cpu += (int(fields[11]) + int(fields[12])) / CLK_TCK
        rss_kib += int(fields[21]) * PAGE_KIB
        try:
            m = re.search(r"VmHWM:\s+(\d+)", (p / "status").read_text())
            hwm_kib += int(m.group(1)) if m else 0
        except OSError:
            pass
    return {"pids": sorted(pids), "cpu_s": round(cpu, 3), "rss_kib": rss_kib, "hwm_kib": hwm_kib}


def cpu_delta(a: dict | None, b: dict | None) -> float | None:
    if a is None or b is None:
        return None
    return round(b["cpu_s"] - a["cpu_s"], 3)


# ---------------------------------------------------------------------------------------- the repo

def walk_repo(repo: Path) -> tuple[dict[Path, list[Path]], list[Path]]:
    """Source files by directory and instruction files, skipping what ctxls skips (sorted, deterministic)."""
    by_dir: dict[Path, list[Path]] = {}
    instr: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(repo):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP)
        d = Path(dirpath)
        srcs = sorted(d / f for f in filenames if f.endswith(SOURCE_SUFFIXES))
        if srcs:
            by_dir[d] = srcs
        instr += sorted(d / f for f in filenames if f in INSTRUCTION_NAMES)
    return by_dir, instr


def hover_targets(repo: Path, n_src: int, n_md: int) -> tuple[list[Path], list[Path]]:
    """``n_src`` source files round-robin over the directories (one per directory first), ``n_md``
    instruction files evenly spaced over the sorted list, the root CLAUDE.md first."""
    by_dir, instr = walk_repo(repo)
    dirs = sorted(by_dir)
    src: list[Path] = []
    depth = 0
    while len(src) < n_src and dirs:
        added = False
        for d in dirs:
            if depth < len(by_dir[d]):
                src.append(by_dir[d][depth])
                added = True
                if len(src) == n_src:
                    break
        if not added:
            break
        depth += 1
    md: list[Path] = []
    if n_md > 0 and instr:
        root_md = repo / "CLAUDE.md"
        rest = [p for p in instr if p != root_md]
        if root_md in instr:
            md.append(root_md)
        k = n_md - len(md)
        if k > 0 and rest:
            step = len(rest) / k
            md += [rest[int(i * step)] for i in range(min(k, len(rest)))]
    return src, md


_BULLET = re.compile(r"^- (?!@)(.+)$")


def duplicate_bullet(repo: Path, root_text: str) -> tuple[Path, str] | None:
    """A bullet of a direct-child-level CLAUDE.md (shallowest first) that the root CLAUDE.md does not have."""
    _, instr = walk_repo(repo)
    children = sorted((p for p in instr if p.name == "CLAUDE.md" and p.parent != repo),
                      key=lambda p: (len(p.relative_to(repo).parts), str(p)))
    have = set(root_text.split("\n"))
    for child in children:
        try:
            lines = child.read_text(encoding="utf-8").split("\n")
        except (OSError, UnicodeDecodeError):
            continue
        for line in lines:
            m = _BULLET.match(line)
            if m and line not in have and len(m.group(1).split()) >= 8:
                return child, line
    return None


def server_debounce() -> float | None:
    """``CtxlsServer().debounce_s`` as the installed code sets it (read in this process)."""
    try:
        from ctxls.lsp.server import CtxlsServer

        return float(CtxlsServer().debounce_s)
    except Exception:
        return None


# ---------------------------------------------------------------------------------------- the client

class Bench:
    """One server process and a pygls LanguageClient; records notifications with timestamps."""

    def __init__(self, cmd: list[str], env: dict[str, str], cwd: Path, timeout: float, quiet: float) -> None:
        from lsprotocol import types as T
        from pygls.lsp.client import LanguageClient

        self.T = T
        self.cmd, self.env, self.cwd = cmd, env, cwd
        self.timeout, self.quiet = timeout, quiet
        self.client = LanguageClient("ctxls-bench", "1")
        self.publishes: list[tuple[float, str, int]] = []  # (perf_counter, uri, number of diagnostics)
        self.progress: list[tuple[float, str, str]] = []  # (perf_counter, kind, message)
        self.messages: list[tuple[float, int, str]] = []
        self.stderr_tail: deque[str] = deque(maxlen=60)
        self.proc = None
        self.sid: int | None = None
        self._tasks: list[asyncio.Task] = []
        self.version = 0
        self.notes: list[str] = []
        self.wake = asyncio.Event()  # set by every notification; waiting never polls
        c = self.client

        @c.feature(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: T.PublishDiagnosticsParams) -> None:
            self.publishes.append((time.perf_counter(), params.uri, len(params.diagnostics)))
            self.wake.set()

        @c.feature(T.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def on_progress_create(params: T.WorkDoneProgressCreateParams) -> None:
            return None

        @c.feature(T.PROGRESS)
        def on_progress(params: T.ProgressParams) -> None:
            v = params.value
            kind = v.get("kind") if isinstance(v, dict) else getattr(v, "kind", None)
            msg = v.get("message") if isinstance(v, dict) else getattr(v, "message", None)
            self.progress.append((time.perf_counter(), str(kind), msg or ""))
            self.wake.set()

        @c.feature(T.WINDOW_LOG_MESSAGE)
        def on_log(params: T.LogMessageParams) -> None:
            self.messages.append((time.perf_counter(), int(params.type), params.message))

        @c.feature(T.WINDOW_SHOW_MESSAGE)
        def on_show(params: T.ShowMessageParams) -> None:
            self.messages.append((time.perf_counter(), int(params.type), params.message))

        @c.feature(T.CLIENT_REGISTER_CAPABILITY)
        def on_register(params) -> None:
            return None

        @c.feature(T.WORKSPACE_APPLY_EDIT)
        def on_apply(params):
            return T.ApplyWorkspaceEditResult(applied=False, failure_reason="benchmark client")

    # ------------------------------------------------------------------ process
    async def spawn(self) -> float:
        t0 = time.perf_counter()
        await self.client.start_io(*self.cmd, env=self.env, cwd=str(self.cwd), start_new_session=True)
        self.proc = self.client._server
        self.sid = self.proc.pid  # start_new_session: the server leads its own session
        self._tasks.append(asyncio.create_task(self._drain_stderr()))
        return t0

    async def _drain_stderr(self) -> None:
        """The server logs to stderr; an unread pipe would fill up and block it."""
        stream = self.proc.stderr
        if stream is None:
            return
        while True:
            line = await stream.readline()
            if not line:
                return
            self.stderr_tail.append(line.decode("utf-8", "replace").rstrip("\n"))

    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def close(self) -> None:
        if self.alive():
            try:
                await asyncio.wait_for(self.client.shutdown_async(None), 5)
                self.client.exit(None)
                await asyncio.wait_for(self.proc.wait(), 5)
            except Exception:
                pass
        if self.alive():
            try:
                os.killpg(self.sid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                await asyncio.wait_for(self.proc.wait(), 5)
            except Exception:
                pass
        try:
            await asyncio.wait_for(self.client.stop(), 5)
        except Exception:
            pass
        for t in self._tasks:
            t.cancel()
        transport = getattr(self.proc, "_transport", None)
        if transport is not None:  # else it is closed by __del__ after the loop, which warns
            transport.close()

    def stats(self) -> dict | None:
        return group_stats(self.sid) if self.sid else None

    # ------------------------------------------------------------------ py-spy
    async def start_spy(self, exe: str, out: Path) -> None:
        """Attach ``py-spy record`` to the server (needs ptrace permission on it)."""
        fmt = {".svg": "flamegraph", ".json": "speedscope"}.get(out.suffix, "raw")
        self.spy = await asyncio.create_subprocess_exec(
            exe, "record", "--pid", str(self.proc.pid), "--threads", "--idle", "--nonblocking", "--rate", "200",
            "--format", fmt, "--output", str(out), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        await asyncio.sleep(1.0)  # attaching takes a moment
        if self.spy.returncode is not None:
            err = (await self.spy.stderr.read()).decode("utf-8", "replace")
            raise BenchError(f"py-spy exited with status {self.spy.returncode}: {err.strip()}")

    async def stop_spy(self) -> str:
        spy, self.spy = getattr(self, "spy", None), None
        if spy is None or spy.returncode is not None:
            return ""
        spy.send_signal(signal.SIGINT)
        try:
            _, err = await asyncio.wait_for(spy.communicate(), 30)
        except asyncio.TimeoutError:
            spy.kill()
            await spy.wait()
            return "py-spy did not stop; killed"
        return err.decode("utf-8", "replace").strip()

    # ------------------------------------------------------------------ requests
    async def request(self, coro, what: str):
        """Await a request with the timeout; a timeout, an error answer or a dead server become BenchError."""
        if not self.alive():
            coro.close()
            raise BenchError(f"server exited (status {self.proc.returncode}) before {what}")
        try:
            return await asyncio.wait_for(coro, self.timeout)
        except asyncio.TimeoutError:
            raise BenchError(f"{what}: no answer within {self.timeout:g}s") from None
        except Exception as exc:
            raise BenchError(f"{what} failed: {type(exc).__name__}: {exc}") from None

    async def hover(self, uri: str, line: int = 0, col: int = 0):
        T = self.T
        return await self.request(self.client.text_document_hover_async(T.HoverParams(
            text_document=T.TextDocumentIdentifier(uri=uri), position=T.Position(line, col))), f"hover {uri}")

    async def timed_hover(self, uri: str) -> tuple[float, object]:
        t = time.perf_counter()
        res = await self.hover(uri)
        return time.perf_counter() - t, res

    async def initialize(self, root: Path, options: dict) -> object:
        T = self.T
        caps = T.ClientCapabilities(
            window=T.WindowClientCapabilities(work_done_progress=True),
            text_document=T.TextDocumentClientCapabilities(
                synchronization=T.TextDocumentSyncClientCapabilities(did_save=True),
                hover=T.HoverClientCapabilities(content_format=[T.MarkupKind.Markdown, T.MarkupKind.PlainText]),
                publish_diagnostics=T.PublishDiagnosticsClientCapabilities(related_information=True),
            ),
            general=T.GeneralClientCapabilities(position_encodings=[T.PositionEncodingKind.Utf16]),
        )
        params = T.InitializeParams(
            process_id=os.getpid(), capabilities=caps, root_uri=root.as_uri(),
            workspace_folders=[T.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options=options,
        )
        res = await self.request(self.client.initialize_async(params), "initialize")
        self.client.initialized(T.InitializedParams())
        return res

    # ------------------------------------------------------------------ waiting
    async def _nap(self, seconds: float) -> None:
        """Sleep until the next notification or ``seconds``, whichever comes first."""
        self.wake.clear()
        try:
            await asyncio.wait_for(self.wake.wait(), max(seconds, 0.0005))
        except asyncio.TimeoutError:
            pass

    async def wait_for(self, cond, what: str, timeout: float | None = None) -> float:
        deadline = time.perf_counter() + (timeout or self.timeout)
        while not cond():
            if not self.alive():
                raise BenchError(f"server exited (status {self.proc.returncode}) while waiting for {what}")
            left = deadline - time.perf_counter()
            if left <= 0:
                raise BenchError(f"timed out after {timeout or self.timeout:g}s waiting for {what}")
            await self._nap(min(left, 0.25))
        return time.perf_counter()

    async def burst(self, since: int, what: str) -> list[tuple[float, str, int]]:
        """Publishes from index ``since`` on, once ``quiet`` seconds pass without a new one."""
        await self.wait_for(lambda: len(self.publishes) > since, f"the first publishDiagnostics of {what}")
        deadline = time.perf_counter() + self.timeout
        while True:
            gap = time.perf_counter() - self.publishes[-1][0]
            if gap >= self.quiet:
                return self.publishes[since:]
            if time.perf_counter() > deadline:
                raise BenchError(f"publishDiagnostics of {what} did not stop within {self.timeout:g}s")
            await self._nap(self.quiet - gap)

    async def settle(self, probe_uri: str, debounce: float, fast: float = 0.2) -> None:
        """Wait until the server is idle.  Push mode offers no request that waits for a pending check, but a
        hover needs the engine, which a running check holds for its whole duration: so past the debounce,
        hover probes separated by a quiet period (no publish) repeat until one answers within ``fast``
        seconds with nothing published since the previous probe."""
        await asyncio.sleep(debounce + 0.1)
        deadline = time.perf_counter() + self.timeout
        quiet_since_probe = False
        while True:
            n = len(self.publishes)
            dt, _ = await self.timed_hover(probe_uri)
            if dt < fast and quiet_since_probe:
                return
            await asyncio.sleep(self.quiet)
            quiet_since_probe = len(self.publishes) == n
            if time.perf_counter() > deadline:
                raise BenchError(f"the server did not go idle within {self.timeout:g}s")

    # ------------------------------------------------------------------ documents
    def did_open(self, path: Path, text: str) -> None:
        T = self.T
        self.version = 1
        self.client.text_document_did_open(T.DidOpenTextDocumentParams(T.TextDocumentItem(
            uri=path.as_uri(), language_id="markdown", version=self.version, text=text)))

    def did_change(self, path: Path, text: str) -> float:
        T = self.T
        self.version += 1
        t = time.perf_counter()
        self.client.text_document_did_change(T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=self.version),
            content_changes=[T.TextDocumentContentChangeWholeDocument(text=text)]))
        return t

    def did_close(self, path: Path) -> None:
        T = self.T
        self.client.text_document_did_close(T.DidCloseTextDocumentParams(
            text_document=T.TextDocumentIdentifier(uri=path.as_uri())))


# ---------------------------------------------------------------------------------------- phases

async def phase_startup(b: Bench, repo: Path, options: dict) -> dict:
    t0 = await b.spawn()
    await b.initialize(repo, options)
    t_init = time.perf_counter()
    # Progress end comes right after the initial publishes; without progress, fall back to the burst.
    try:
        await b.wait_for(lambda: any(k == "end" for _, k, _ in b.progress) or
                         (not b.progress and b.publishes and time.perf_counter() - b.publishes[-1][0] > 5),
                         "the end of the initial scan")
    except BenchError:
        if not b.publishes:
            raise
    burst = await b.burst(0, "the initial scan") if b.publishes else []
    kinds = {k: t for t, k, _ in reversed(b.progress)}
    out = {
        "initialize_s": round(t_init - t0, 4),
        "progress_begin_s": round(kinds["begin"] - t0, 4) if "begin" in kinds else None,
        "progress_end_s": round(kinds["end"] - t0, 4) if "end" in kinds else None,
        "first_publish_s": round(burst[0][0] - t0, 4) if burst else None,
        "last_publish_s": round(burst[-1][0] - t0, 4) if burst else None,
        "published_uris": len({u for _, u, _ in burst}),
        "published_with_diagnostics": len({u for _, u, n in burst if n}),
        "diagnostics": sum(n for _, _, n in burst),
        "progress_messages": [m for _, _, m in b.progress],
    }
    ends = [v for v in (out["progress_end_s"], out["last_publish_s"]) if v is not None]
    out["ready_s"] = max(ends) if ends else None
    return out


async def phase_hover(b: Bench, src: list[Path], md: list[Path], passes: int) -> dict:
    targets = [(p, "source") for p in src] + [(p, "instruction") for p in md]
    empty = 0
    for p, _ in targets:  # untimed warm-up pass
        _, res = await b.timed_hover(p.as_uri())
        empty += res is None
        await b.timed_hover(PING_URI)
    hover: dict[str, list[float]] = {"source": [], "instruction": []}
    ping: list[float] = []
    slowest: list[tuple[float, str]] = []
    for _ in range(passes):
        for p, kind in targets:
            dt, _ = await b.timed_hover(p.as_uri())
            hover[kind].append(dt)
            slowest.append((dt, str(p)))
            dp, _ = await b.timed_hover(PING_URI)
            ping.append(dp)
    slowest.sort(reverse=True)
    every = hover["source"] + hover["instruction"]
    return {
        "files": len(src), "instruction_files": len(md), "passes": passes, "empty_results": empty,
        "all": summarize_ms(every), "source": summarize_ms(hover["source"]),
        "instruction": summarize_ms(hover["instruction"]), "ping": summarize_ms(ping),
        "slowest": [{"ms": round(t * 1000, 3), "path": p} for t, p in slowest[:5]],
    }


def edited_texts(root_text: str, dup: tuple[Path, str] | None, rounds: int) -> list[tuple[str, str]]:
    """(label, text) per round: alternately the root plus a copied child bullet, and the original."""
    if dup is not None:
        added = root_text.rstrip("\n") + "\n" + dup[1] + "\n"
        label = "add duplicate"
    else:
        added = root_text.rstrip("\n") + "\n- Keep the benchmark bullet in this file only, please.\n"
        label = "add bullet"
    return [(label, added) if i % 2 == 0 else ("remove it", root_text) for i in range(rounds)]


async def phase_rediag(b: Bench, repo: Path, rounds: int, debounce: float, probe: Path,
                       spy: tuple[str, Path] | None = None) -> dict:
    root_md = repo / "CLAUDE.md"
    if not root_md.is_file():
        raise BenchError(f"{root_md} does not exist")
    text = root_md.read_text(encoding="utf-8")
    dup = duplicate_bullet(repo, text)
    n0 = len(b.publishes)
    b.did_open(root_md, text)
    await b.settle(probe.as_uri(), debounce)
    open_uris = {u for _, u, _ in b.publishes[n0:]}
    if spy is not None:
        await b.start_spy(*spy)
    results = []
    for label, new_text in edited_texts(text, dup, rounds):
        s0 = b.stats()
        cpu0 = time.process_time()
        since = len(b.publishes)
        t = b.did_change(root_md, new_text)
        burst = await b.burst(since, f"didChange ({label})")
        # Anything published after the burst "ended" (until the server is idle) belongs to this edit too:
        # the quiet period was too short, so the true last publish is later.
        await b.settle(probe.as_uri(), debounce)
        cpu1 = time.process_time()
        s1 = b.stats()
        late = b.publishes[since + len(burst):]
        burst = burst + late
        uris = {u for _, u, _ in burst}
        results.append({
            "edit": label,
            "first_ms": round((burst[0][0] - t) * 1000, 2),
            "last_ms": round((burst[-1][0] - t) * 1000, 2),
            "late_publishes": len(late),
            "publishes": len(burst),
            "uris": len(uris),
            "root_published": root_md.as_uri() in uris,
            "child_published": dup is not None and dup[0].as_uri() in uris,
            "server_cpu_ms": None if cpu_delta(s0, s1) is None else round(cpu_delta(s0, s1) * 1000, 1),
            "client_cpu_ms": round((cpu1 - cpu0) * 1000, 1),
        })
    spy_log = await b.stop_spy() if spy is not None else None
    return {
        "py_spy": None if spy is None else {"output": str(spy[1]), "log": spy_log[-500:]},
        "file": str(root_md), "duplicate_of": str(dup[0]) if dup else None, "bullet": dup[1] if dup else None,
        "debounce_ms": round(debounce * 1000, 1), "quiet_ms": round(b.quiet * 1000, 1),
        "open_publishes": len(open_uris), "rounds": results,
        "to_first": summarize_ms([r["first_ms"] / 1000 for r in results]),
        "to_last": summarize_ms([r["last_ms"] / 1000 for r in results]),
        "server_cpu": summarize_ms([r["server_cpu_ms"] / 1000 for r in results if r["server_cpu_ms"] is not None]),
        "_texts": (root_md, text, dup),
    }


async def phase_busy(b: Bench, root_md: Path, text: str, dup, rounds: int, debounce: float,
                     probe: Path, targets: list[Path]) -> dict:
    """What a user sees while the server re-checks after an edit.  Per round: an edit; once the debounce
    has passed (the check is running) a ping, then a hover on a source file (the hover needs the engine, so
    it measures the rest of the check); another edit, and once its check runs, one more edit (the next
    keystroke) immediately followed by a ping (the didChange handler must update the engine, which the
    check holds)."""
    ping_during, ping_keystroke, hover = [], [], []
    texts = edited_texts(text, dup, rounds)
    wait = debounce + 0.15
    for i, (_, new_text) in enumerate(texts):
        b.did_change(root_md, new_text)
        await asyncio.sleep(wait)
        ping_during.append((await b.timed_hover(PING_URI))[0])
        hover.append((await b.timed_hover(targets[i % len(targets)].as_uri()))[0])
        b.did_change(root_md, new_text + "\n")
        await asyncio.sleep(wait)
        b.did_change(root_md, new_text)
        ping_keystroke.append((await b.timed_hover(PING_URI))[0])
        await b.settle(probe.as_uri(), debounce)
    b.did_change(root_md, text)  # back to the file's text
    await b.settle(probe.as_uri(), debounce)
    return {"rounds": rounds, "ping_during_check": summarize_ms(ping_during),
            "ping_after_keystroke": summarize_ms(ping_keystroke), "hover": summarize_ms(hover)}


async def run_lsp(args, repo: Path, home: Path, cmd: list[str], env: dict, debounce: float) -> dict:
    options = {"home": str(home), "ceiling": str(repo), "managed_dir": str(home / ".ctxls-bench-no-managed")}
    b = Bench(cmd, env, repo.parent, args.timeout, args.quiet)
    out: dict = {"initialization_options": options}
    try:
        print("startup ...", file=sys.stderr)
        out["startup"] = await phase_startup(b, repo, options)
        out["server_after_startup"] = b.stats()
        src, md = hover_targets(repo, args.hovers, args.md_hovers)
        if not src:
            raise BenchError(f"no source files ({', '.join(SOURCE_SUFFIXES)}) in {repo}")
        print(f"hover: {len(src)} source + {len(md)} instruction files, 1 warm-up + {args.passes} timed passes ...",
              file=sys.stderr)
        s0 = b.stats()
        out["hover"] = await phase_hover(b, src, md, args.passes)
        out["hover"]["server_cpu_s"] = cpu_delta(s0, b.stats())
        if args.rounds > 0:
            print(f"re-diagnosis: {args.rounds} edits of the root CLAUDE.md ...", file=sys.stderr)
            spy = (args.py_spy, args.py_spy_out.resolve()) if args.py_spy_out else None
            rd = await phase_rediag(b, repo, args.rounds, debounce, src[0], spy)
            root_md, text, dup = rd.pop("_texts")
            out["rediag"] = rd
            if args.busy_rounds > 0:
                print(f"hover during re-check: {args.busy_rounds} edits ...", file=sys.stderr)
                out["busy"] = await phase_busy(b, root_md, text, dup, args.busy_rounds, debounce, src[0], src)
            b.did_close(root_md)
        out["server_at_end"] = b.stats()
        out["server_messages"] = [m for _, _, m in b.messages][:20]
        out["notes"] = b.notes
        return out
    except BenchError as exc:
        tail = "\n".join(b.stderr_tail)
        raise BenchError(f"{exc}" + (f"\nserver stderr (tail):\n{tail}" if tail else "")) from None
    finally:
        await b.stop_spy()
        await b.close()


# ---------------------------------------------------------------------------------------- in-process breakdown

def breakdown(repo: Path, home: Path, options: dict, profile_out: Path | None, hover_paths: list[Path]) -> dict:
    """Attribute the re-diagnosis time: the same work the server does, timed in this process."""
    from ctxls.core.check import CheckConfig
    from ctxls.core.engine import Engine
    from ctxls.core.rules import load_all
    from ctxls.core.settings import Settings

    settings, errs = Settings.from_mapping(options)
    if errs:
        raise BenchError("; ".join(errs))
    out: dict = {}

    cpu: dict[str, float] = {}

    def timed(fn, name: str | None = None):
        t, c = time.perf_counter(), time.thread_time()
        r = fn()
        if name:
            cpu[name] = round(time.thread_time() - c, 4)
        return r, round(time.perf_counter() - t, 4)

    e = Engine(repo, settings, CheckConfig())
    _, out["index_s"] = timed(lambda: e.index, "index")
    _, out["check_cold_s"] = timed(e.check, "check_cold")
    _, out["check_unchanged_s"] = timed(e.check, "check_unchanged")
    root_md = repo / "CLAUDE.md"
    text = root_md.read_text(encoding="utf-8")
    dup = duplicate_bullet(repo, text)
    edited = edited_texts(text, dup, 1)[0][1]
    # as the server does after its initial check
    gc.collect()
    gc.freeze()
    try:
        out["plan_all_s"] = _time_plan(e, fresh=True)[0]  # the initial publish
    except Exception as exc:
        out["plan_all_s"] = None
        out["plan_error"] = f"{type(exc).__name__}: {exc}"
    gc_cpu = [0.0, 0]

    def on_gc(phase, info, _start=[0.0]):
        if phase == "start":
            _start[0] = time.thread_time()
        else:
            gc_cpu[0] += time.thread_time() - _start[0]
            gc_cpu[1] += 1

    # Alternating edits (append the duplicate, remove it), medians: first the server's way (the collector
    # waits until the diagnostics are out), then with the collector running as usual.
    walls, cpus, plans = [], [], []
    for i in range(8):
        e.set_buffer(root_md, edited if i % 2 == 0 else text)
        gc.disable()
        try:
            t, c = time.perf_counter(), time.thread_time()
            e.check()
            if i:  # the first edit after opening also changes what compares modification times
                walls.append(time.perf_counter() - t)
                cpus.append(time.thread_time() - c)
            if out["plan_all_s"] is not None:
                got = _time_plan(e)
                if i:
                    plans.append(got)
        finally:
            gc.enable()
    out["check_after_edit_s"] = round(statistics.median(walls), 4)
    cpu["check_after_edit"] = round(statistics.median(cpus), 4)
    out["plan_after_edit_s"] = round(statistics.median(p[0] for p in plans), 4) if plans else None
    out["plan_after_edit_files"] = plans[-1][1] if plans else None
    out["plan_after_edit_bytes"] = plans[-1][2] if plans else None
    walls, cpus = [], []
    gc.callbacks.append(on_gc)
    try:
        for i in range(7):
            e.set_buffer(root_md, edited if i % 2 == 0 else text)
            t, c = time.perf_counter(), time.thread_time()
            e.check()
            walls.append(time.perf_counter() - t)
            cpus.append(time.thread_time() - c)
    finally:
        gc.callbacks.remove(on_gc)
    out["check_after_edit_gc_s"] = round(statistics.median(walls), 4)
    cpu["check_after_edit_gc"] = round(statistics.median(cpus), 4)
    out["gc_during_check_after_edit"] = {"cpu_s": round(gc_cpu[0] / len(walls), 4),
                                         "collections": round(gc_cpu[1] / len(walls), 1),
                                         "tracked_objects": len(gc.get_objects())}
    e.set_buffer(root_md, text)
    e.check()
    e.set_buffer(root_md, edited)
    prof = cProfile.Profile()
    prof.enable()
    e.check()
    prof.disable()
    out["findings"] = sum(len(v) for v in e.findings.values())
    out["files_with_findings"] = len(e.findings)
    if profile_out is not None:
        prof.dump_stats(str(profile_out))
        out["profile_out"] = str(profile_out)
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(25)
    out["profile_top_cumulative"] = s.getvalue()
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(15)
    out["profile_top_tottime"] = s.getvalue()

    # Every rule on its own, on a fresh workspace after the same kind of edit.  The startup sessions of
    # every directory and the file -> sessions map are built first, on their own; analyses that several
    # rules share (CTX201/CTX202) are paid by the first of them.
    e.set_buffer(root_md, text)
    e.set_buffer(root_md, edited + "\n")
    ws = e.workspace()
    shared = {}
    for name, fn in (("sessions()", ws.sessions), ("loads_in", lambda: ws.loads_in)):
        _, wall = timed(fn, name)
        shared[name] = {"s": wall, "cpu_s": cpu[name]}
    out["shared"] = shared
    per_rule = {}
    for code, info in load_all().items():
        try:
            res, dt = timed(lambda: list(info.func(ws)), code)
            per_rule[code] = {"s": dt, "cpu_s": cpu[code], "findings": len(res)}
        except Exception as exc:  # report, do not stop
            per_rule[code] = {"s": None, "error": f"{type(exc).__name__}: {exc}"}
    out["rules"] = per_rule
    out["rules_total_s"] = round(sum(r["s"] or 0 for r in per_rule.values()), 4)

    # What publish() does on the event loop: convert every finding to an LSP Diagnostic.
    out["cpu_s"] = {k: v for k, v in cpu.items() if not k.startswith("CTX") and k not in shared}
    try:
        out["hover_markdown"] = _time_hovers(e, repo, hover_paths)
    except Exception as exc:
        out["hover_markdown"] = {"error": f"{type(exc).__name__}: {exc}"}
    gc.unfreeze()
    return out


def _time_hovers(e, repo: Path, paths: list[Path]) -> dict:
    """The hover handler's work (``hover_markdown``) in this process, CPU time per call, warm (second pass)."""
    from types import SimpleNamespace

    from ctxls.lsp.hover import hover_markdown

    e.check()  # fills the startup sessions, as the server's check does
    fake = SimpleNamespace(engine=e, root=e.root, lines_of=lambda p: (e.fs.read(p).text or "").split("\n"))
    for p in paths:
        hover_markdown(fake, p, 0, 0)
    samples = []
    for p in paths:
        t = time.thread_time()
        hover_markdown(fake, p, 0, 0)
        samples.append(time.thread_time() - t)
    return summarize_ms(samples)


_PLAN_STATE: dict = {}


def _time_plan(e, fresh: bool = False) -> tuple[float, int, int]:
    """What the server's worker thread does after a check to publish: find the files whose diagnostics changed
    since the last publish and encode them (`plan_publish`). ``fresh``: from nothing published (the initial
    publish). Returns CPU seconds, files and bytes."""
    from types import SimpleNamespace

    from lsprotocol import types as T
    from pygls.workspace.position_codec import PositionCodec

    from ctxls.lsp.diagnostics import plan_publish

    if fresh or "ls" not in _PLAN_STATE:
        _PLAN_STATE["ls"] = SimpleNamespace(
            engine=e, published={}, uris={},
            workspace=SimpleNamespace(position_codec=PositionCodec(T.PositionEncodingKind.Utf16)))
    ls = _PLAN_STATE["ls"]
    t = time.thread_time()
    plan = plan_publish(ls, e)
    dt = time.thread_time() - t
    for uri, got in plan.updates.items():  # as if sent
        if got is None:
            ls.published.pop(uri, None)
        else:
            ls.published[uri] = got
    return round(dt, 4), len(plan.bodies), sum(len(b) for b in plan.bodies)


# ---------------------------------------------------------------------------------------- output

def ratios(res: dict) -> dict:
    ping = res["hover"]["ping"]["p50"]
    out = {"ping_p50_ms": ping}
    if not ping:
        return out
    h = res["hover"]["all"]
    out["hover_p50_x"] = round(h["p50"] / ping, 2)
    out["hover_p99_x"] = round(h["p99"] / ping, 2)
    if "rediag" in res:
        out["rediag_last_p50_x"] = round(res["rediag"]["to_last"]["p50"] / ping, 1)
    if "busy" in res:
        out["busy_hover_p50_x"] = round(res["busy"]["hover"]["p50"] / ping, 1)
    return out


def verdicts(res: dict) -> dict:
    v = {"hover_p99_ms": {"target": TARGET_HOVER_P99_MS, "value": res["hover"]["all"]["p99"]}}
    if "rediag" in res:
        v["rediag_last_p50_ms"] = {"target": TARGET_REDIAG_MS, "value": res["rediag"]["to_last"]["p50"]}
    for x in v.values():
        x["met"] = x["value"] < x["target"]
    return v


def print_table(res: dict) -> None:
    gen = res.get("generated")
    head = f"repo: {res['repo']}"
    if gen:
        head += (f"  (generated, seed {gen['seed']}: {gen['source_files']} source files in {gen['source_dirs']} dirs, "
                 f"{gen['instruction_files']} instruction files, {gen['skills']} skills; {gen['seconds']:.1f}s)")
    print(head)
    print(f"home: {res['home']}")
    print(f"server: {shlex.join(res['command'])}")
    print(f"machine: {res['platform']}, {res['cpu_count']} CPUs, Python {res['python']}; load average "
          f"{res['loadavg_before'][0]:.2f} before, {res['loadavg_after'][0]:.2f} after")
    if res["loadavg_before"][0] > 0.5 * (res["cpu_count"] or 1):
        print("warning: the machine was busy before the run; wall times include waiting for a CPU "
              "(the server CPU columns do not)")
    print()
    st = res["startup"]

    def s(v):
        return "-" if v is None else f"{v:.3f}"

    print("startup (seconds from spawn)")
    print(f"  initialize result {s(st['initialize_s'])}   progress begin {s(st['progress_begin_s'])}   "
          f"first publish {s(st['first_publish_s'])}   progress end {s(st['progress_end_s'])}   "
          f"last publish {s(st['last_publish_s'])}")
    print(f"  initial burst: {st['published_uris']} URIs published, {st['published_with_diagnostics']} with "
          f"diagnostics, {st['diagnostics']} diagnostics")
    srv = res.get("server_after_startup")
    if srv:
        print(f"  server after startup: {srv['cpu_s']:.2f} CPU s, RSS {srv['rss_kib'] / 1024:.0f} MiB "
              f"(peak {srv['hwm_kib'] / 1024:.0f} MiB)")
    print()
    cols = ("case", "n", "p50 ms", "p95 ms", "p99 ms", "max ms", "x ping p50")
    print(f"{cols[0]:<30}" + "".join(f"{c:>11}" for c in cols[1:]))
    ping = res["hover"]["ping"]["p50"]

    def row(name, sm):
        if not sm or not sm.get("n"):
            return
        x = f"{sm['p50'] / ping:.1f}" if ping else "-"
        print(f"{name:<30}" + "".join(f"{v:>11}" for v in (
            sm["n"], f"{sm['p50']:.2f}", f"{sm['p95']:.2f}", f"{sm['p99']:.2f}", f"{sm['max']:.2f}", x)))

    h = res["hover"]
    row("baseline ping (hover untitled:)", h["ping"])
    row("hover, all", h["all"])
    row("  hover, source files", h["source"])
    row("  hover, CLAUDE.md files", h["instruction"])
    if "rediag" in res:
        rd = res["rediag"]
        row("didChange -> first publish", rd["to_first"])
        row("didChange -> last publish", rd["to_last"])
        row("  server CPU per edit", rd["server_cpu"])
    if "busy" in res:
        row("during a re-check: ping", res["busy"]["ping_during_check"])
        row("  hover (waits for the check)", res["busy"]["hover"])
        row("  ping after a keystroke", res["busy"]["ping_after_keystroke"])
    print()
    if "rediag" in res:
        rd = res["rediag"]
        print(f"re-diagnosis of {rd['file']}: server debounce {rd['debounce_ms']:.0f} ms (included), "
              f"quiet period {rd['quiet_ms']:.0f} ms (not included: the last publish is the end)")
        if rd["duplicate_of"]:
            print(f"  edit: append a bullet copied from {rd['duplicate_of']}, then remove it again")
        print(f"  didOpen of the unchanged file republished {rd['open_publishes']} URIs")
        print(f"  {'edit':<16}{'first ms':>10}{'last ms':>10}{'publishes':>11}{'late':>6}{'URIs':>7}{'child?':>8}"
              f"{'srv CPU ms':>12}{'cli CPU ms':>12}")
        for r in rd["rounds"]:
            print(f"  {r['edit']:<16}{r['first_ms']:>10.1f}{r['last_ms']:>10.1f}{r['publishes']:>11}"
                  f"{r['late_publishes']:>6}{r['uris']:>7}{'yes' if r['child_published'] else 'no':>8}"
                  f"{r['server_cpu_ms'] or 0:>12.0f}{r['client_cpu_ms']:>12.0f}")
        print("  late = publishes after the quiet period ended the burst (counted in 'last ms'); "
              "srv CPU = server CPU from didChange until idle")
        print()
    for name, v in res["targets"].items():
        print(f"target {name}: {v['value']:.2f} < {v['target']:g} ms: {'met' if v['met'] else 'MISSED'}")
    if h["empty_results"]:
        print(f"warning: {h['empty_results']} hovers returned no result")
    for n in res.get("notes", []):
        print(f"note: {n}")
    if res.get("server_messages"):
        print("server messages: " + " | ".join(res["server_messages"][:5]))
    bd = res.get("breakdown")
    if bd:
        print()
        c = bd["cpu_s"]
        print("in-process breakdown (same settings, in this process; wall s / CPU s)")
        for key, label in (("index", "index"), ("check_cold", "check, cold"), ("check_unchanged", "check, unchanged"),
                           ("check_after_edit", "check after the edit"), ("check_after_edit_gc", "  with GC on")):
            print(f"  {label:<22}{bd[key + '_s']:>9.3f}{c.get(key, float('nan')):>9.3f}")
        g = bd["gc_during_check_after_edit"]
        print(f"  {'    of which cyclic GC':<22}{'':>9}{g['cpu_s']:>9.3f}   ({g['collections']} collections, "
              f"{g['tracked_objects']:,} tracked objects, per check; the server defers it until the diagnostics "
              f"are out)")
        for name, v in bd["shared"].items():
            print(f"  {'shared: ' + name:<22}{v['s']:>9.3f}{v['cpu_s']:>9.3f}")
        print(f"  {'rules one by one':<22}{bd['rules_total_s']:>9.3f}"
              f"{sum(r.get('cpu_s') or 0 for r in bd['rules'].values()):>9.3f}")
        if bd.get("plan_all_s") is not None:
            print(f"  {'publish plan, initial':<22}{'':>9}{bd['plan_all_s']:>9.3f}   (all {bd['findings']} findings "
                  f"in {bd['files_with_findings']} files, converted and encoded in the worker thread)")
            print(f"  {'publish plan, edit':<22}{'':>9}{bd['plan_after_edit_s']:>9.3f}   "
                  f"({bd['plan_after_edit_files']} changed files, {bd['plan_after_edit_bytes']:,} bytes)")
        hm = bd.get("hover_markdown", {})
        if hm.get("n"):
            print(f"  hover_markdown() CPU ms per call, warm: p50 {hm['p50']:.2f}  p99 {hm['p99']:.2f}  "
                  f"max {hm['max']:.2f}  (n={hm['n']})")
        rules = sorted(bd["rules"].items(), key=lambda kv: -(kv[1].get("cpu_s") or 0))
        print("  rules by CPU s, slowest first: " + ", ".join(
            f"{code} {r['cpu_s']:.3f}" if r.get("cpu_s") is not None else f"{code} ERROR" for code, r in rules[:12]))
        print()
        print(bd["profile_top_cumulative"])


# ---------------------------------------------------------------------------------------- main

def child_env() -> tuple[dict[str, str], str | None]:
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    if importlib.util.find_spec("ctxls") is None and (PROJECT / "server" / "ctxls").is_dir():
        src = str(PROJECT / "server")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
        sys.path.insert(0, src)
        return env, src
    return env, None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Time the ctxls language server over stdio: startup, hover, "
                                             "re-diagnosis after an edit.")
    ap.add_argument("--repo", type=Path, help="existing repo (default: generate one into a temp dir)")
    ap.add_argument("--home", type=Path, help="fake home (default: REPO/../home, else an empty temp dir)")
    ap.add_argument("--hovers", type=int, default=200, help="source files to hover (default 200)")
    ap.add_argument("--md-hovers", type=int, default=10, help="instruction files to hover too (default 10)")
    ap.add_argument("--passes", type=int, default=3, help="timed hover passes after the warm-up (default 3)")
    ap.add_argument("--rounds", type=int, default=6, help="didChange rounds on the root CLAUDE.md (default 6; 0 skips)")
    ap.add_argument("--busy-rounds", type=int, default=3, help="hovers sent during a re-check (default 3; 0 skips)")
    ap.add_argument("--quiet", type=float, default=0.3,
                    help="seconds without a publish that end a burst (default 0.3)")
    ap.add_argument("--timeout", type=float, default=120, help="seconds for any single wait (default 120)")
    ap.add_argument("--total-timeout", type=float, default=1800, help="seconds for the LSP phases (default 1800)")
    ap.add_argument("--breakdown", action="store_true",
                    help="also time Engine.check() and every rule in-process, with a cProfile")
    ap.add_argument("--profile-out", type=Path, help="with --breakdown: save the cProfile of the check after the edit")
    ap.add_argument("--py-spy-out", type=Path,
                    help="attach `py-spy record` to the server during the re-diagnosis rounds and write its profile "
                         "here (.svg flamegraph, .json speedscope, else raw collapsed stacks); perturbs the timings")
    ap.add_argument("--py-spy", default=shutil.which("py-spy") or "py-spy", help="py-spy executable")
    ap.add_argument("--json", action="store_true", help="print machine-readable results instead of the table")
    ap.add_argument("--keep", action="store_true", help="keep the generated temp dir")
    ap.add_argument("--files", type=int, default=20000, help="when generating: source files (default 20000)")
    ap.add_argument("--seed", type=int, default=1, help="when generating: random seed (default 1)")
    ap.add_argument("--server-cmd", help="server command instead of `{python} -m ctxls serve` (shlex-split; "
                                         "{python} is substituted); it must keep stdout for the protocol")
    args = ap.parse_args(argv)
    if args.passes < 1 or args.hovers < 1 or args.rounds < 0 or args.busy_rounds < 0 or args.quiet <= 0:
        ap.error("--passes and --hovers must be >= 1, --rounds/--busy-rounds >= 0, --quiet > 0")
    if args.profile_out and not args.breakdown:
        ap.error("--profile-out needs --breakdown")

    env, pythonpath_added = child_env()
    tmp: Path | None = None
    try:
        generated = None
        if args.repo is None:
            sys.path.insert(0, str(HERE))
            import gen_monorepo

            tmp = Path(tempfile.mkdtemp(prefix="ctxls-bench-lsp-"))
            print(f"generating monorepo in {tmp} ...", file=sys.stderr)
            generated = gen_monorepo.generate(tmp / "repo", files=args.files, seed=args.seed, home=tmp / "home")
            repo, home = Path(generated["repo"]), Path(generated["home"])
            if args.home:
                print("note: --home is ignored when the repo is generated", file=sys.stderr)
        else:
            repo = args.repo.resolve()
            if not repo.is_dir():
                ap.error(f"--repo {repo} is not a directory")
            home = args.home.resolve() if args.home else repo.parent / "home"
            if not home.is_dir():
                tmp = Path(tempfile.mkdtemp(prefix="ctxls-bench-home-"))  # never the real ~/.claude
                home = tmp

        py = sys.executable
        if args.server_cmd:
            cmd = shlex.split(args.server_cmd.replace("{python}", shlex.quote(py)))
        else:
            cmd = [py, "-m", "ctxls", "serve"]
        debounce = server_debounce()

        async def lsp():
            return await asyncio.wait_for(
                run_lsp(args, repo, home, cmd, env, debounce if debounce is not None else 0.05),
                args.total_timeout)

        load_before = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
        try:
            res = asyncio.run(lsp())
        except asyncio.TimeoutError:
            raise BenchError(f"the LSP phases took longer than --total-timeout {args.total_timeout:g}s") from None
        res.update({
            "repo": str(repo), "home": str(home), "command": cmd, "debounce_s": debounce,
            "python": sys.version.split()[0], "platform": platform.platform(), "cpu_count": os.cpu_count(),
            "pythonpath_added": pythonpath_added, "generated": generated,
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in (os.getloadavg() if hasattr(os, "getloadavg") else (0, 0, 0))],
        })
        res["ratios"] = ratios(res)
        res["targets"] = verdicts(res)
        if args.breakdown:
            print("in-process breakdown ...", file=sys.stderr)
            src, md = hover_targets(repo, args.hovers, args.md_hovers)
            res["breakdown"] = breakdown(repo, home, res["initialization_options"], args.profile_out, src + md)
        if args.json:
            print(json.dumps(res, indent=2))
        else:
            print_table(res)
        return 0
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        if tmp is not None:
            if args.keep:
                print(f"kept {tmp}", file=sys.stderr)
            else:
                shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
