#!/usr/bin/env python3
"""Time `ctxls check` (all rules) against agnix on the synthetic monorepo, in the same run.

    python bench/bench_check.py [--repo DIR --home DIR] [--templated] [--runs 5] [--json]

Without --repo a repository is generated into a temporary directory: the bench monorepo (gen_monorepo.py), or
with --templated 500 templated CLAUDE.md files (gen_templated.py: parallel list items that differ only in
their enumerating names and numbers, and a few real disagreements with the root, issue 15).

Cases, each run N times through the same launcher as bench_budget.py (wall time and peak RSS of the command
alone):
  baseline      python -c pass                      interpreter start-up, for ratios
  agnix         agnix REPO                          the fastest peer linter (PyPI `agnix`, installed into
                                                    .cache/bench-venv on first use; never into the project venv)
  ctxls floor   imports + tokenizer load            what every cold run pays before reading a file
  ctxls count   floor + scan + read + count         what a cold run pays before its first rule: every
                                                    always-loaded file read, rendered and tokenized on two
                                                    processes (bench/count_floor.py)
  ctxls cold    ctxls check REPO, .ctxls/ removed   real token counting, sessions of every directory, all rules
  ctxls tokens  ctxls check, token cache kept       what a CI run with a restored token cache costs
  ctxls warm    ctxls check, nothing changed        the stat-validated result cache
Exit status 1 (findings) counts as success for both linters.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_budget import BenchError, child_env, run_once, summarize  # noqa: E402

AGNIX_VENV = PROJECT / ".cache" / "bench-venv"


def agnix_binary() -> Path:
    exe = AGNIX_VENV / "bin" / "agnix"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(AGNIX_VENV)], check=True)
        subprocess.run([str(AGNIX_VENV / "bin" / "pip"), "install", "-q", "agnix"], check=True)
    return exe


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", type=Path)
    ap.add_argument("--home", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--templated", action="store_true",
                    help="generate the templated monorepo (bench/gen_templated.py) instead of the bench monorepo")
    args = ap.parse_args(argv)

    tmp = None
    repo, home = args.repo, args.home
    if repo is None:
        tmp = Path(tempfile.mkdtemp(prefix="ctxls-bench-check-"))
        repo, home = tmp / "repo", tmp / "home"
        gen = "gen_templated.py" if args.templated else "gen_monorepo.py"
        subprocess.run([sys.executable, str(HERE / gen), str(repo), "--home", str(home)],
                       check=True, stdout=subprocess.DEVNULL)
    home = home or repo.parent / "home"
    env, _ = child_env()
    cache = repo / ".ctxls"
    ctxls = [sys.executable, "-m", "ctxls", "check", str(repo), "--home", str(home), "--format", "json"]
    cases = {
        "baseline": ([sys.executable, "-c", "pass"], None),
        "agnix": ([str(agnix_binary()), str(repo)], None),
        # What any run of ctxls pays before looking at a file: the interpreter, the imports `check` needs and
        # loading the cl100k tokenizer (hash-verified). The floor the cold case cannot go below.
        "ctxls floor": ([sys.executable, "-c", "import ctxls.cli, ctxls.core.check, ctxls.core.rules, "
                         "ctxls.core.formats; ctxls.core.rules.load_all(); "
                         "from ctxls.core.tokens import _encoder; _encoder()"], None),
        # The floor plus what a cold run does before its first rule: scan, read and render every always-loaded
        # instruction file and count their tokens on two processes (bench/count_floor.py). What is left of
        # a cold run above it is sessions, rules and output.
        "ctxls count": ([sys.executable, str(HERE / "count_floor.py"), str(repo), "--home", str(home)], "all"),
        "ctxls cold": (ctxls, "all"),
        "ctxls tokens": (ctxls, "results"),
        "ctxls warm": (ctxls, None),
    }
    results: dict[str, dict] = {}
    runs: dict[str, list] = {k: [] for k in cases}
    try:
        for _ in range(args.runs):
            for name, (cmd, clear) in cases.items():
                if clear == "all":
                    shutil.rmtree(cache, ignore_errors=True)
                elif clear == "results":
                    (cache / "cache" / "check.json").unlink(missing_ok=True)
                r = run_once(cmd, env=env, cwd=repo, timeout=args.timeout)
                if r.returncode not in (0, 1):
                    sys.stderr.write(f"{name} failed ({r.returncode}):\n{r.stderr}\n")
                    return 1
                runs[name].append(r)
                if name == "ctxls cold":
                    found = json.loads(r.stdout)["findings"]
                    results["ctxls_findings"] = len(found)
                    codes: dict[str, int] = {}
                    for f in found:
                        codes[f["code"]] = codes.get(f["code"], 0) + 1
                    results["ctxls_findings_by_code"] = dict(sorted(codes.items()))
    except BenchError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    for name, rs in runs.items():
        results[name] = summarize(rs)
    base = results["baseline"]["median_s"]
    agnix = results["agnix"]["median_s"]
    if args.json:
        json.dump(results, sys.stdout, indent=2)
        print()
        return 0
    by_code = results.get("ctxls_findings_by_code") or {}
    print(f"repo: {repo}  runs: {args.runs}  ctxls findings: {results.get('ctxls_findings')} "
          f"(CTX201 {by_code.get('CTX201', 0)}, CTX202 {by_code.get('CTX202', 0)})")
    print(f"{'case':<14}{'median s':>10}{'min s':>9}{'peak RSS MiB':>14}{'x baseline':>12}{'x agnix':>9}")
    for name in cases:
        r = results[name]
        print(f"{name:<14}{r['median_s']:>10.3f}{r['min_s']:>9.3f}{r['peak_rss_kib'] / 1024:>14.1f}"
              f"{r['median_s'] / base:>12.1f}{r['median_s'] / agnix:>9.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
