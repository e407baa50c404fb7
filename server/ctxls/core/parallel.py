"""The parallel rule runner: the selected rules over two processes (`run_split`), for the CLI. The engine
(core/check.py) calls it and reads as rules over a workspace; a long-lived server, which has threads, never
forks."""

from __future__ import annotations

import logging
import os
from typing import Callable

from .findings import Finding
from .workspace import Workspace

log = logging.getLogger("ctxls.check")

Results = dict[str, tuple[list[Finding], "str | None"]]


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity, so a container pinned to one CPU says 1)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# The rules that read the startup sessions (budgets, duplication, the subdirectory-placement rule) run in
# this process, which builds the sessions while the forked one runs every other rule from the scan alone. On
# the bench monorepo that is ~1.2 s of work here against ~0.9 s there.
_SESSION_RULES = ("CTX1", "CTX2", "CTX602")
# Those of them that build every directory's session (and so count every startup rendering).
_ALL_SESSIONS = ("CTX101", "CTX102", "CTX2", "CTX602")


def run_split(ws: Workspace, selected: list[str],
              run_rule: Callable[[Workspace, str], tuple[list[Finding], str | None]]) -> Results | None:
    """Run the selected rules on two cores: fork right after the scan (the child inherits the index, the
    file cache and, when there is anything to count, the tokenizer), let the child run the rules that need no
    sessions and send back their findings, what it read (so a result cache built from this workspace still
    sees every file the analysis depended on) and the token counts it made, while this process builds the
    sessions and runs `_SESSION_RULES`. A rule in the child that does ask for sessions still gets them (computed there), so the
    split never changes a result. None when forking is unavailable or unsafe; on any failure of the child its
    rules run here, so the result is always the serial one."""
    import pickle

    from .tokens import prepare

    if not hasattr(os, "fork") or usable_cpus() < 2 or ws.counter.exact is not None:
        return None
    ours = [c for c in selected if c.startswith(_SESSION_RULES)]
    theirs = [c for c in selected if c not in ours]
    if not theirs or not ours:
        return None
    ws.index  # shared by both sides: scan before the fork
    # The sessions this side builds first ask for the startup renderings of every instruction file, and the
    # file budget (CTX101) for each one's content: the child counts half of them (by size) and sends the
    # counts back before it starts on its rules.
    mine: dict[str, str] = {}
    given: dict[str, str] = {}
    if ws.needs_prefetch and any(c.startswith(_ALL_SESSIONS) for c in ours):
        from .budget import startup_texts

        try:
            todo = ws.counter.missing(startup_texts(ws.index, ws.settings, ws.fs, contents="CTX101" in ours))
        except Exception:  # left to the rules, which report it as in a serial run
            todo = {}
        else:
            if not todo:
                ws.mark_prefetched()  # all counted already (a kept token cache)
        if todo:
            # Loaded once, here, for both sides. With every count cached it is never loaded before the fork:
            # a side that meets an uncounted text later loads it then (0.1 s).
            try:
                prepare(sum(map(len, todo.values())))
            except Exception:  # the rules that count tokens report it, one by one, as in a serial run
                todo = {}
        if todo and sum(map(len, todo.values())) >= _SPLIT_TOKENIZE_CHARS:
            mine, given = _halves(todo)
        else:
            mine = todo
    fds: list[int] = []
    try:
        fds += os.pipe()
        fds += os.pipe()
        rfd, wfd, tfd_r, tfd_w = fds
        pid = os.fork()
    except OSError:
        for fd in fds:
            os.close(fd)
        return None
    if pid == 0:  # child: never returns
        status = 1
        try:
            os.close(rfd)
            os.close(tfd_r)
            # Always closed before the rules run: the parent waits for its end before reading their results.
            with os.fdopen(tfd_w, "wb") as out:
                if given:
                    try:
                        ws.counter.encode_missing(given)
                        out.write(pickle.dumps({k: ws.counter.cache[k] for k in given},
                                               protocol=pickle.HIGHEST_PROTOCOL))
                    except Exception:  # the parent counts them itself
                        log.exception("the forked token counter failed")
            known = set(ws.counter.cache)
            ws.walked_dirs = []
            results = {c: run_rule(ws, c) for c in theirs}
            payload = pickle.dumps({
                "results": results,
                "reads": ws.fs.read_stats(),
                "walked": ws.walked_dirs,
                "tokens": {k: v for k, v in ws.counter.cache.items() if k not in known},
            }, protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(wfd, "wb") as out:
                out.write(payload)
            status = 0
        except KeyboardInterrupt:
            pass  # interrupted with the parent: nothing to say
        except BaseException:
            log.exception("the forked rule runner failed")
        finally:
            os._exit(status)
    os.close(wfd)
    os.close(tfd_w)
    if mine or given:
        counting = True
        try:
            ws.counter.encode_missing(mine)
        except Exception:  # the rules that count tokens report it, as in a serial run
            counting = False
        counted = {}
        try:
            with os.fdopen(tfd_r, "rb") as inp:
                raw = inp.read()
            if raw:
                counted = pickle.loads(raw)
        except (OSError, pickle.UnpicklingError, EOFError, ValueError):
            pass
        cache = ws.counter.cache
        for k, v in counted.items():
            if k in given and type(v) is int:
                cache[k] = v
        if counting:
            ws.counter.encode_missing({k: t for k, t in given.items() if k not in cache})  # the child's gaps
            ws.mark_prefetched()
    else:
        os.close(tfd_r)
    out: dict[str, tuple[list[Finding], str | None]] = {c: run_rule(ws, c) for c in ours}
    data = None
    try:
        with os.fdopen(rfd, "rb") as inp:
            raw = inp.read()
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) == 0:
            data = pickle.loads(raw)
    except (OSError, pickle.UnpicklingError, EOFError, ValueError):
        data = None
    if data is None:
        log.warning("the forked rule runner failed; running its rules here")
        out.update({c: run_rule(ws, c) for c in theirs})
        return out
    out.update(data["results"])
    ws.fs.absorb_reads(data["reads"])
    ws.walked_dirs = list(dict.fromkeys(ws.walked_dirs + data["walked"]))
    for k, v in data["tokens"].items():
        ws.counter.cache[k] = v
    return out


# Below this many characters to count, splitting the count between the two processes saves less than the
# child's pickled answer costs.
_SPLIT_TOKENIZE_CHARS = 200_000


def _halves(todo: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """Split texts to count into two halves of about the same size (largest first, each to the lighter)."""
    a: dict[str, str] = {}
    b: dict[str, str] = {}
    size_a = size_b = 0
    for k, t in sorted(todo.items(), key=lambda kv: -len(kv[1])):
        if size_a <= size_b:
            a[k] = t
            size_a += len(t)
        else:
            b[k] = t
            size_b += len(t)
    return a, b
