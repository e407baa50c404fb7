#!/usr/bin/env python3
"""What a cold `ctxls check` pays before its first rule, and nothing else: the interpreter, the imports, the
configuration, the workspace scan, reading and rendering every always-loaded instruction file, loading the
cl100k tokenizer and counting those texts on two processes (the split `check` makes).

    python bench/count_floor.py REPO --home DIR

bench_check.py runs it as the "ctxls count" case: everything above it in a cold run is sessions, rules and
output; everything below it is tokenizing and reading, which no rule engine, however fast, avoids while it
counts tokens for real."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main() -> int:
    import argparse
    import gc

    gc.disable()  # as `ctxls check` runs

    from ctxls.cli import _counter, _settings
    from ctxls.core.budget import startup_texts
    from ctxls.core.parallel import _halves
    from ctxls.core.workspace import Workspace
    from ctxls.core.config import check_config_for, find_root
    from ctxls.core.tokens import _encoder

    ap = argparse.ArgumentParser()
    ap.add_argument("repo", type=Path)
    ap.add_argument("--home")
    ap.add_argument("--window", type=int)
    ap.add_argument("--model")
    ap.add_argument("--ceiling")
    ap.add_argument("--exact", action="store_true")
    ap.add_argument("--no-cache", action="store_true", default=True)
    args = ap.parse_args()
    root = find_root(Path(os.path.abspath(args.repo)))
    settings = _settings(args, root)
    counter, _ = _counter(args, root, settings)
    config, _ = check_config_for(root)
    ws = Workspace(root, settings, config, counter=counter)
    todo = counter.missing(startup_texts(ws.index, settings, ws.fs, contents=True))
    _encoder()
    mine, theirs = _halves(todo)
    pid = os.fork()
    if pid == 0:
        counter.encode_missing(theirs)
        os._exit(0)
    counter.encode_missing(mine)
    os.waitpid(pid, 0)
    print(f"{len(todo)} texts, {sum(map(len, todo.values())):,} chars, {len(counter.cache)} counted here",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
