#!/usr/bin/env python3
"""Benchmark ``ctxls budget REPO --format json`` cold and warm against interpreter startup.

    python bench/bench_budget.py [--repo DIR] [--home DIR] [--runs 5] [--json] [--keep]

Without ``--repo`` a monorepo is generated into a temporary directory with
gen_monorepo.py (20,000 sources, 500 CLAUDE.md, 200 skills) and removed afterwards.

Each round runs, in this order:

* baseline:     ``python -c pass`` (interpreter startup, for the ratios)
* import ctxls: ``python -c "import ctxls"`` (skipped when ctxls cannot be imported)
* cold:         the command after deleting the ctxls cache dir (default REPO/.ctxls);
                the OS page cache stays warm, since everything was read just before
* warm:         the command again, using the cache the cold run left behind

Interleaving the cases per round spreads drift (other load, CPU frequency) evenly.
One untimed warm-up of each command comes first, and a failing command stops the
benchmark with its stderr and a non-zero exit status.

Wall time and peak RSS come from ``os.wait4`` in a small launcher process, see
``LAUNCHER``.  Standard library only.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent

# Every measured command is started by this launcher, run as a fresh ``python -I -S``.
# Why not os.wait4 on a Popen child directly: on Linux a child's ru_maxrss starts at
# the RSS of the process it was forked from (the old mm's high-water mark is carried
# into the exec'd process), so a child of this script would report at least this
# script's own RSS, which includes the generated repo's bookkeeping.  The launcher is
# about as small as a Python process gets (~8 MiB; it is measured and reported as
# "rss_floor"), below the peak of any Python command, so Python commands are measured
# exactly.  The launcher also times spawn-to-exit, which excludes its own startup.
LAUNCHER = r"""
import os, sys, time
result_path, argv = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
try:
    pid = os.posix_spawnp(argv[0], argv, os.environ)
except OSError as exc:
    sys.stderr.write(f"bench launcher: cannot start {argv[0]!r}: {exc}\n")
    sys.exit(127)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open(result_path, "w") as fh:
    fh.write(f"{os.waitstatus_to_exitcode(status)} {wall!r} {ru.ru_maxrss} {ru.ru_utime + ru.ru_stime!r}")
"""

# ru_maxrss is KiB on Linux and bytes on macOS.
RSS_UNIT_KIB = 1 / 1024 if sys.platform == "darwin" else 1


class BenchError(Exception):
    pass


@dataclass
class Run:
    returncode: int
    wall_s: float
    maxrss_kib: int
    cpu_s: float
    stdout: bytes
    stderr: str


def run_once(cmd: list[str], *, env: dict[str, str], cwd: Path, timeout: float) -> Run:
    """Run ``cmd`` once through the launcher; stdout/stderr go to temp files (no pipe deadlock)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r", prefix="ctxls-bench-", suffix=".txt") as result:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", LAUNCHER, result.name, *cmd],
            stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=cwd, env=env,
            start_new_session=True,  # one process group: a timeout kills the command too
        )
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise BenchError(f"timed out after {timeout:g}s: {shlex.join(cmd)}") from None
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read().decode("utf-8", "replace")
        fields = result.read().split()
    if len(fields) != 4:  # the launcher itself failed
        return Run(proc.returncode or 1, 0.0, 0, 0.0, stdout, stderr)
    rc, wall, maxrss, cpu = fields
    return Run(int(rc), float(wall), round(int(maxrss) * RSS_UNIT_KIB), float(cpu), stdout, stderr)


def summarize(runs: list[Run]) -> dict:
    walls = [r.wall_s for r in runs]
    rss = [r.maxrss_kib for r in runs]
    return {
        "wall_s": [round(w, 6) for w in walls],
        "median_s": round(statistics.median(walls), 6),
        "min_s": round(min(walls), 6),
        "max_s": round(max(walls), 6),
        "cpu_median_s": round(statistics.median(r.cpu_s for r in runs), 6),
        "rss_kib": rss,
        "peak_rss_kib": max(rss),
        "median_rss_kib": statistics.median(rss),
    }


def child_env() -> tuple[dict[str, str], str | None]:
    """Environment for the measured commands; makes ``ctxls`` importable if it is not installed.

    Also writes ctxls' bytecode first, as installing a wheel does: an editable install under
    PYTHONDONTWRITEBYTECODE=1 (set on some machines, this one included) would otherwise compile every module
    from source on every run, ~50 ms that no installed copy pays."""
    import compileall

    env = dict(os.environ)
    spec = importlib.util.find_spec("ctxls")
    pkg = Path(spec.origin).parent if spec is not None and spec.origin else PROJECT / "server" / "ctxls"
    if pkg.is_dir():
        compileall.compile_dir(str(pkg), quiet=1)
    if importlib.util.find_spec("ctxls") is None and (PROJECT / "server" / "ctxls").is_dir():
        src = str(PROJECT / "server")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
        return env, src
    return env, None


def fail(case: str, cmd: list[str], run: Run) -> None:
    sys.stderr.write(f"error: {case} command failed with exit status {run.returncode}: {shlex.join(cmd)}\n")
    if run.stderr.strip():
        sys.stderr.write(run.stderr if run.stderr.endswith("\n") else run.stderr + "\n")
    raise SystemExit(1)


def print_table(res: dict) -> None:
    gen = res.get("generated")
    head = f"repo: {res['repo']}"
    if gen:
        head += (f"  (generated, seed {gen['seed']}: {gen['source_files']} source files in {gen['source_dirs']} dirs, "
                 f"{gen['instruction_files']} instruction files, {gen['skills']} skills; {gen['seconds']:.1f}s)")
    print(head)
    print(f"home: {res['home']}")
    print(f"command: {shlex.join(res['command'])}")
    print(f"runs: {res['runs']} per case; cold = {res['cache_dir']} removed before each run "
          f"(OS page cache stays warm); warm = cache left by the previous cold run")
    print()
    cols = ("case", "median s", "min s", "max s", "cpu s", "peak RSS MiB", "x time", "x RSS")
    print(f"{cols[0]:<13}" + "".join(f"{c:>13}" for c in cols[1:]))
    for name, c in res["cases"].items():
        ratio = res["ratios"].get(name, {})
        cells = (
            f"{c['median_s']:.4f}", f"{c['min_s']:.4f}", f"{c['max_s']:.4f}", f"{c['cpu_median_s']:.4f}",
            f"{c['peak_rss_kib'] / 1024:.1f}", f"{ratio.get('time', 1.0):.2f}", f"{ratio.get('rss', 1.0):.2f}",
        )
        print(f"{name:<13}" + "".join(f"{x:>13}" for x in cells))
    print()
    notes = [
        "x time = median wall / baseline median wall; x RSS = peak RSS / baseline peak RSS",
        "RSS floor (launcher size, see bench_budget.py): "
        + (f"{res['rss_floor_kib'] / 1024:.1f} MiB" if res["rss_floor_kib"] else "unknown"),
        f"output: {res['output_bytes']} bytes" + ("" if res["output_valid_json"] is None
                                                  else f", valid JSON: {res['output_valid_json']}"),
        f"cache dir created by a cold run: {res['cache_created']}",
    ]
    if res.get("pythonpath_added"):
        notes.append(f"ctxls not installed: PYTHONPATH={res['pythonpath_added']} for all cases")
    for n in notes:
        print(n)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Time `ctxls budget REPO --format json` cold and warm.")
    ap.add_argument("--repo", type=Path, help="existing repo (default: generate one into a temp dir)")
    ap.add_argument("--home", type=Path, help="fake home for --home (default: REPO/../home, else an empty temp dir)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per case (default 5)")
    ap.add_argument("--json", action="store_true", help="print machine-readable results instead of the table")
    ap.add_argument("--cache-dir", type=Path, help="ctxls cache dir to delete for cold runs (default REPO/.ctxls)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per run (default 600)")
    ap.add_argument("--keep", action="store_true", help="keep the generated temp dir")
    ap.add_argument("--files", type=int, default=20000, help="when generating: source files (default 20000)")
    ap.add_argument("--seed", type=int, default=1, help="when generating: random seed (default 1)")
    # Hidden: replace the measured command, e.g. --cmd "{python} -c pass".  {python},
    # {repo} and {home} are substituted; the string is split with shlex.
    ap.add_argument("--cmd", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error("--runs must be >= 1")

    tmp: Path | None = None
    try:
        generated = None
        if args.repo is None:
            sys.path.insert(0, str(HERE))
            import gen_monorepo

            tmp = Path(tempfile.mkdtemp(prefix="ctxls-bench-"))
            print(f"generating monorepo in {tmp} ...", file=sys.stderr)
            generated = gen_monorepo.generate(tmp / "repo", files=args.files, seed=args.seed, home=tmp / "home")
            repo, home = Path(generated["repo"]), Path(generated["home"])
        else:
            repo = args.repo.resolve()
            if not repo.is_dir():
                ap.error(f"--repo {repo} is not a directory")
            home = args.home.resolve() if args.home else repo.parent / "home"
            if not home.is_dir():
                # An empty home, so the real ~/.claude never leaks into the measurement.
                tmp = Path(tempfile.mkdtemp(prefix="ctxls-bench-home-"))
                home = tmp
        if args.home and args.repo is None:
            print("note: --home is ignored when the repo is generated", file=sys.stderr)
        cache_dir = (args.cache_dir or repo / ".ctxls").resolve()
        if cache_dir in (repo, home, Path.home()) or cache_dir in repo.parents:
            ap.error(f"refusing to delete cache dir {cache_dir}")

        py = sys.executable
        if args.cmd:
            cmd_str = args.cmd.replace("{python}", shlex.quote(py))
            cmd_str = cmd_str.replace("{repo}", shlex.quote(str(repo))).replace("{home}", shlex.quote(str(home)))
            cmd = shlex.split(cmd_str)
        else:
            cmd = [py, "-m", "ctxls", "budget", str(repo), "--format", "json", "--home", str(home)]
        env, pythonpath_added = child_env()
        cwd = repo.parent  # "anywhere": neither the repo nor this project
        cases = {
            "baseline": [py, "-c", "pass"],
            "import ctxls": [py, "-c", "import ctxls"],
            "cold": cmd,
            "warm": cmd,
        }

        def measure(case: str) -> Run:
            if case == "cold" and cache_dir.exists():
                shutil.rmtree(cache_dir)
            r = run_once(cases[case], env=env, cwd=cwd, timeout=args.timeout)
            if r.returncode != 0:
                fail(case, cases[case], r)
            return r

        # Untimed warm-up: fills the page cache and __pycache__, checks the commands.
        print("warm-up ...", file=sys.stderr)
        measure("baseline")
        if run_once(cases["import ctxls"], env=env, cwd=cwd, timeout=args.timeout).returncode != 0:
            print("note: `import ctxls` fails; skipping that case", file=sys.stderr)
            del cases["import ctxls"]
        else:
            measure("import ctxls")
        first = measure("cold")
        cache_created = cache_dir.exists()
        valid_json = None
        if not args.cmd:
            try:
                json.loads(first.stdout)
                valid_json = True
            except ValueError:
                valid_json = False
                print("warning: the command's stdout is not valid JSON", file=sys.stderr)
        floor = run_once(["true"], env=env, cwd=cwd, timeout=args.timeout)

        results: dict[str, list[Run]] = {case: [] for case in cases}
        for i in range(args.runs):
            print(f"round {i + 1}/{args.runs} ...", file=sys.stderr)
            for case in cases:  # order: baseline, import, cold, warm (warm reuses cold's cache)
                results[case].append(measure(case))

        summary = {case: summarize(runs) for case, runs in results.items()}
        base = summary["baseline"]
        ratios = {
            case: {
                "time": round(s["median_s"] / base["median_s"], 3),
                "rss": round(s["peak_rss_kib"] / base["peak_rss_kib"], 3),
            }
            for case, s in summary.items()
        }
        res = {
            "repo": str(repo),
            "home": str(home),
            "cache_dir": str(cache_dir),
            "command": cmd,
            "custom_command": bool(args.cmd),
            "runs": args.runs,
            "cases": summary,
            "ratios": ratios,
            "rss_floor_kib": floor.maxrss_kib if floor.returncode == 0 else None,
            "output_bytes": len(first.stdout),
            "output_valid_json": valid_json,
            "cache_created": cache_created,
            "pythonpath_added": pythonpath_added,
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "cpu_count": os.cpu_count(),
            "generated": generated,
        }
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
