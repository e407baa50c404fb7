#!/usr/bin/env python3
"""Benchmark ``ctxls compare`` (all five agents) against ``ctxls context`` (one agent) on the bench monorepo.

    python bench/bench_compare.py [--repo DIR] [--home DIR] [--runs 5] [--agents-files] [--json] [--keep]

Without ``--repo`` the monorepo of gen_monorepo.py is generated into a temporary directory (20,000 sources,
500 CLAUDE.md, 200 skills) and removed afterwards. ``--agents-files`` also writes the other agents' files
into it (an AGENTS.md beside every third CLAUDE.md, a GEMINI.md beside every fifth, a `.cursor/rules/` and
`.github/` instructions at the root) so that every profile has files to load.

Each round runs, interleaved, in the repository root:

* baseline: ``python -c pass`` (interpreter startup)
* context:  ``python -m ctxls context REPO --format json --home HOME``  (Claude Code, the default agent)
* compare:  ``python -m ctxls compare REPO --format json --home HOME``  (all five agents and the file scan)

Both commands use the token cache a first untimed run of each left behind (the normal case for a repeated
command). The target of issue 14: compare's median at most 2x context's. Wall time and peak RSS come from
bench_budget.py's launcher (``os.wait4``). Standard library only.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_budget import BenchError, child_env, run_once, summarize  # noqa: E402
from gen_monorepo import generate  # noqa: E402

TARGET_RATIO = 2.0


def add_agent_files(repo: Path) -> dict:
    """Other agents' files beside the generated CLAUDE.md files (deterministic: sorted order)."""
    claude = sorted(p for p in repo.rglob("CLAUDE.md") if "node_modules" not in p.parts and ".claude" not in p.parts)
    n_agents = n_gemini = 0
    for i, p in enumerate(claude):
        text = p.read_text(encoding="utf-8")
        if i % 3 == 0:
            (p.parent / "AGENTS.md").write_text(text.replace("CLAUDE", "AGENTS"), encoding="utf-8")
            n_agents += 1
        if i % 5 == 0:
            (p.parent / "GEMINI.md").write_text(text, encoding="utf-8")
            n_gemini += 1
    rules = repo / ".cursor" / "rules"
    rules.mkdir(parents=True, exist_ok=True)
    (rules / "style.mdc").write_text("---\nalwaysApply: true\n---\nPrefer small pure functions.\n")
    (rules / "ts.mdc").write_text("---\nglobs: \"**/*.ts\"\n---\nTypeScript: no any.\n")
    (rules / "release.mdc").write_text("---\ndescription: Release checklist\n---\nTag, changelog, publish.\n")
    gh = repo / ".github" / "instructions"
    gh.mkdir(parents=True, exist_ok=True)
    (repo / ".github" / "copilot-instructions.md").write_text("Answer in English; run the tests.\n")
    (gh / "py.instructions.md").write_text("---\napplyTo: \"**/*.py\"\n---\nType hints everywhere.\n")
    return {"agents_md": n_agents, "gemini_md": n_gemini, "cursor_rules": 3, "copilot_files": 2}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path)
    ap.add_argument("--home", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--agents-files", action="store_true", help="add the other agents' files to the repo")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the generated repo")
    args = ap.parse_args(argv)

    tmp = None
    extra: dict = {}
    if args.repo is None:
        tmp = Path(tempfile.mkdtemp(prefix="ctxls-bench-compare-"))
        repo, home = tmp / "repo", tmp / "home"
        generate(repo, home=home)
        if args.agents_files:
            extra = add_agent_files(repo)
    else:
        repo = args.repo.resolve()
        home = (args.home or repo.parent / "home").resolve()
    try:
        env, _ = child_env()
        py = sys.executable
        cases = {
            "baseline": [py, "-c", "pass"],
            "context": [py, "-m", "ctxls", "context", str(repo), "--format", "json", "--home", str(home)],
            "compare": [py, "-m", "ctxls", "compare", str(repo), "--format", "json", "--home", str(home)],
        }
        for name, cmd in cases.items():  # warm-up: page cache, bytecode, the token cache
            r = run_once(cmd, env=env, cwd=repo, timeout=600)
            if r.returncode != 0:
                raise BenchError(f"{name} failed ({r.returncode}): {r.stderr[-2000:]}")
        runs: dict[str, list] = {k: [] for k in cases}
        for _ in range(args.runs):
            for name, cmd in cases.items():
                r = run_once(cmd, env=env, cwd=repo, timeout=600)
                if r.returncode != 0:
                    raise BenchError(f"{name} failed ({r.returncode}): {r.stderr[-2000:]}")
                runs[name].append(r)
        out = json.loads(runs["compare"][-1].stdout)
        summary = {k: summarize(v) for k, v in runs.items()}
        ratio = summary["compare"]["median_s"] / summary["context"]["median_s"]
        over_base = ((summary["compare"]["median_s"] - summary["baseline"]["median_s"])
                     / max(1e-9, summary["context"]["median_s"] - summary["baseline"]["median_s"]))
        report = {"repo": str(repo), "runs": args.runs, "agents_files": extra or None,
                  "compare_rows": len(out["files"]), "agents": out["agents"], "cases": summary,
                  "ratio_compare_to_context": round(ratio, 3),
                  "ratio_above_interpreter": round(over_base, 3), "target_ratio": TARGET_RATIO,
                  "ok": ratio <= TARGET_RATIO}
        if args.json:
            json.dump(report, sys.stdout, indent=2)
            sys.stdout.write("\n")
        else:
            print(f"repo {repo} ({len(out['files']):,} instruction files in the compare table"
                  + (f"; added {extra}" if extra else "") + f"), {args.runs} runs, median wall / peak RSS:")
            for name, s in summary.items():
                print(f"  {name:<9} {s['median_s'] * 1000:8.1f} ms  (min {s['min_s'] * 1000:.1f}, "
                      f"max {s['max_s'] * 1000:.1f})  {s['peak_rss_kib'] / 1024:6.1f} MiB")
            print(f"compare / context = {ratio:.2f}x (target <= {TARGET_RATIO:g}x: {'ok' if ratio <= TARGET_RATIO else 'OVER'}); "
                  f"above interpreter startup: {over_base:.2f}x")
        return 0 if ratio <= TARGET_RATIO else 1
    except BenchError as exc:
        print(f"bench_compare: {exc}", file=sys.stderr)
        return 2
    finally:
        if tmp is not None and not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
