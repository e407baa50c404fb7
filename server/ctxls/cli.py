"""Command line: `ctxls context | budget` (the same engine the language server uses).

Exit codes: 0 success, 1 findings/failure of the checked condition, 2 usage errors.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Sequence

from . import __version__


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--window", type=int, help="context window in tokens (default 200000; 1000000 for the 1M option)")
    p.add_argument("--home", type=Path, help="home directory holding .claude/ (default: your home)")
    p.add_argument("--model", help="model name, selects the token calibration factor (estimate)")
    p.add_argument("--ceiling", type=Path, help="stop the upward walk at this directory (default: filesystem root)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the token cache in .ctxls/")
    p.add_argument("--exact", action="store_true",
                   help="count with Anthropic's count_tokens endpoint (needs ANTHROPIC_API_KEY; cached)")
    p.add_argument("--format", choices=("text", "json"), default="text")


def _agent_option(p: argparse.ArgumentParser) -> None:
    from .core.profiles import AGENTS

    p.add_argument("--agent", choices=AGENTS, default="claude-code",
                   help="the agent whose loading rules to follow (default claude-code)")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="ctxls", description="What an AI coding agent loads into its context window.")
    ap.add_argument("--version", action="version", version=f"ctxls {__version__}")
    sub = ap.add_subparsers(dest="cmd", required=True)

    c = sub.add_parser("context", help="the ordered blocks a session started in PATH would hold")
    c.add_argument("path", type=Path, help="directory the agent starts in (a file means its directory)")
    c.add_argument("--touch", action="append", type=Path, default=[], metavar="FILE",
                   help="a file the agent reads; repeat for several, in order")
    c.add_argument("--text", action="store_true", help="include each block's rendered text in JSON output")
    _common(c)
    _agent_option(c)

    b = sub.add_parser("budget", help="context-budget calculator for a workspace")
    b.add_argument("root", type=Path, nargs="?", default=Path("."))
    b.add_argument("--top", type=int, default=5, help="how many directories and files to list (default 5)")
    _common(b)
    _agent_option(b)
    k = sub.add_parser("check", help="lint instruction, rule, skill and memory files")
    k.add_argument("paths", type=Path, nargs="*", help="files or directories to report on (default: the workspace)")
    k.add_argument("--fix", action="store_true", help="apply every safe fix, then report what remains")
    k.add_argument("--explain", metavar="CODE", default=None,
                   help="print why the rule CODE fired on each of its findings (heuristic, where it looked)")
    k.add_argument("--select", default="", help="comma-separated codes or prefixes to run (e.g. CTX2,CTX301)")
    k.add_argument("--ignore", default="", help="comma-separated codes or prefixes to skip")
    k.add_argument("--fail-level", choices=("error", "warning", "info", "hint"),
                   help="exit 1 when a finding is at or above this severity (default: warning)")
    k.add_argument("--jobs", type=_jobs, default=None, metavar="N",
                   help="1: run every rule in this process; 2 or more: split the rules over two processes "
                        "(default: 2 when this process may use two CPUs or more)")
    _common(k)
    k.set_defaults(format="text")
    for action in k._actions:
        if action.dest == "format":
            action.choices = ("text", "json", "sarif", "github")

    from .comparecmd import add_parser as _compare_parser

    _compare_parser(sub, _common)

    from .agentcmd import add_parser as _agent_parser

    _agent_parser(sub)

    sub.add_parser("rules", help="print the rule documentation (markdown, generated from the registry)")

    sv = sub.add_parser("serve", help="run the language server (stdio by default)")
    sv.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    sv.add_argument("--home", type=Path, help="home directory holding .claude/ (default: your home)")
    return ap


_ONE_SHOT = ("context", "budget", "check", "compare")
_ran_one_shot = False


def run() -> None:
    """The `ctxls` command (and `python -m ctxls`): `main`, then exit. After a one-shot command the process
    leaves without tearing down the interpreter, once its output is flushed: freeing a large model object by
    object, at exit, measured ~0.1 s of `ctxls check` on the bench monorepo, with nothing left to do."""
    code = main()
    if _ran_one_shot:
        import logging

        try:
            sys.stdout.flush()
        except BrokenPipeError:
            pass  # the reader left (`| head`): nothing more to say
        except (OSError, ValueError) as exc:
            code = _output_failed(exc)
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        logging.shutdown()
        os._exit(code)
    raise SystemExit(code)


OUTPUT_FAILED = 120  # what Python itself exits with when it cannot flush standard output


def _output_failed(exc: Exception) -> int:
    try:
        sys.stderr.write(f"ctxls: cannot write the output: {exc}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return OUTPUT_FAILED


def main(argv: Sequence[str] | None = None) -> int:
    global _ran_one_shot
    ap = build_parser()
    try:
        args = ap.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    import gc

    collecting = gc.isenabled()
    if args.cmd in _ONE_SHOT:
        _ran_one_shot = True
        # One-shot runs build a large, long-lived model (sessions, findings) and exit: the cyclic collector
        # would walk it over and over for garbage that is mostly acyclic (measured: ~0.4 s of CPU of `check`
        # on the bench monorepo, for a few MiB). Reference counting still frees everything else.
        gc.disable()
    try:
        if args.cmd == "context":
            return cmd_context(args)
        if args.cmd == "budget":
            return cmd_budget(args)
        if args.cmd == "check":
            return cmd_check(args)
        if args.cmd == "compare":
            from .comparecmd import cmd_compare

            return cmd_compare(args, _settings, _counter, _Usage)
        if args.cmd == "agent":
            from .agentcmd import cmd_agent

            return cmd_agent(args, _settings)
        if args.cmd == "serve":
            from .lsp.server import main as serve

            return serve(args.tcp, Path(os.path.abspath(args.home)) if args.home else None)
        if args.cmd == "rules":
            from .core.formats import rules_markdown

            sys.stdout.write(rules_markdown())
            return 0
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    finally:
        if collecting:
            gc.enable()
    ap.error(f"unknown command {args.cmd}")
    return 2


def _settings(args, root: Path):
    from .core.config import settings_for

    settings, problems = settings_for(root)
    for p in problems:
        print(f"ctxls: {p}", file=sys.stderr)
    changes = {}
    if args.window is not None:
        if args.window <= 0:
            raise _Usage("--window must be a positive number of tokens")
        changes["window"] = args.window
    if args.home is not None:
        changes["home"] = Path(os.path.abspath(args.home))
    elif os.environ.get("CLAUDE_CONFIG_DIR"):
        changes["config_dir"] = Path(os.environ["CLAUDE_CONFIG_DIR"]).expanduser()
    if args.model:
        changes["model"] = args.model
    if args.ceiling is not None:
        changes["ceiling"] = Path(os.path.abspath(args.ceiling))
    from .core.config import apply_agent_settings

    settings, problems = apply_agent_settings(settings.replace(**changes), root)  # (after --home: user settings)
    for p in problems:
        print(f"ctxls: {p}", file=sys.stderr)
    return settings


class _Usage(Exception):
    pass


def _counter(args, root: Path, settings):
    from .core.cache import TokenCache, default_cache_path
    from .core.tokens import TokenCounter, factor_for

    exact = None
    if args.exact:
        from .agent.provider import exact_token_counter

        exact = exact_token_counter(settings.model)
        if exact is None:
            raise _Usage("--exact needs ANTHROPIC_API_KEY")
    # exact counts are model-specific: keep them apart from the cl100k cache
    name = f"tokens-{settings.model or 'default'}-exact.json" if exact else None
    path = None if args.no_cache else default_cache_path(root)
    if path is not None and name:
        path = path.with_name(name)
    cache = TokenCache(path)
    return TokenCounter(factor_for(settings.model, settings.token_factor), cache, exact), cache


def cmd_context(args) -> int:
    from .core.config import find_root
    from .core.loader import load_session
    from .core.report import session_to_json

    path = Path(os.path.abspath(args.path))
    if not path.exists():
        print(f"ctxls: {args.path}: no such file or directory", file=sys.stderr)
        return 2
    start = path if path.is_dir() else path.parent
    root = find_root(start)
    try:
        settings = _settings(args, root)
    except _Usage as exc:
        print(f"ctxls: {exc}", file=sys.stderr)
        return 2
    try:
        counter, cache = _counter(args, root, settings)
    except _Usage as exc:
        print(f"ctxls: {exc}", file=sys.stderr)
        return 2
    session = load_session(start, [Path(os.path.abspath(t)) for t in args.touch], settings, root=root, counter=counter,
                           profile=args.agent)
    cache.save()
    if args.format == "json":
        json.dump(session_to_json(session, include_text=args.text), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    from .render import print_context

    print_context(session)
    return 0


def cmd_budget(args) -> int:
    from .core.budget import compute_budget
    from .core.fs import FileSystem

    root = Path(os.path.abspath(args.root))
    if not root.is_dir():
        print(f"ctxls: {args.root}: not a directory", file=sys.stderr)
        return 2
    try:
        settings = _settings(args, root)
    except _Usage as exc:
        print(f"ctxls: {exc}", file=sys.stderr)
        return 2
    try:
        counter, cache = _counter(args, root, settings)
    except _Usage as exc:
        print(f"ctxls: {exc}", file=sys.stderr)
        return 2
    fs = FileSystem(max_bytes=settings.max_file_bytes)
    from .render import budget_progress

    with budget_progress(enabled=args.format == "text" and sys.stderr.isatty()) as progress:
        report = compute_budget(root, settings, fs=fs, counter=counter, progress=progress, profile=args.agent)
    cache.save()
    if args.format == "json":
        from .core.report import budget_to_json

        json.dump(budget_to_json(report, args.top), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    from .render import print_budget

    print_budget(report, args.top)
    return 0


def _jobs(raw: str) -> int:
    try:
        n = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {raw!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n


def cmd_check(args) -> int:
    import dataclasses

    from .core.check import Workspace, run_checks, usable_cpus
    from .core.config import check_config_for, find_root
    from .core.fixes import plan_fixes

    paths = [Path(os.path.abspath(p)) for p in args.paths]
    for p, raw in zip(paths, args.paths):
        if not p.exists():
            print(f"ctxls: {raw}: no such file or directory", file=sys.stderr)
            return 2
    root = find_root(paths[0] if paths else Path.cwd())
    try:
        settings = _settings(args, root)
        counter, cache = _counter(args, root, settings)
    except _Usage as exc:
        print(f"ctxls: {exc}", file=sys.stderr)
        return 2
    config, problems = check_config_for(root)
    for p in problems:
        print(f"ctxls: {p}", file=sys.stderr)
    from .core.rules import load_all

    known = load_all()

    def matches(c: str) -> bool:
        return any(k.startswith(c) for k in known)

    for opt in ("select", "ignore"):
        bad = sorted(c for c in getattr(config, opt) if not matches(c))
        if bad:
            print(f"ctxls: [check] {opt}: unknown rule code(s) {', '.join(bad)}; ignored", file=sys.stderr)
            config = dataclasses.replace(config, **{opt: frozenset(c for c in getattr(config, opt) if matches(c))})
    bad = sorted(c for c in config.severity if c not in known)
    if bad:
        print(f"ctxls: [check] severity: unknown rule code(s) {', '.join(bad)}; ignored", file=sys.stderr)
        config = dataclasses.replace(config, severity={k: v for k, v in config.severity.items() if k in known})
    changes = {}
    for opt in ("select", "ignore"):
        codes = frozenset(c.strip().upper() for c in getattr(args, opt).split(",") if c.strip())
        bad = [c for c in codes if not any(k.startswith(c) for k in known)]
        if bad:
            print(f"ctxls: --{opt}: unknown rule code(s) {', '.join(sorted(bad))}", file=sys.stderr)
            return 2
        if codes:
            changes[opt] = codes
    if args.fail_level:
        changes["fail_level"] = args.fail_level
    config = dataclasses.replace(config, **changes)

    from .core import resultcache as RC

    cache_key = RC.key_of(__version__, repr(settings), repr(config), sorted(known), [str(p) for p in paths])
    # Exact counts come from the provider at run time: such a run neither reuses nor stores a report.
    results = RC.ResultCache(None if args.no_cache or args.exact else root / ".ctxls" / "cache" / "check.json")
    if results.path is not None:  # create it now: creating it after the scan would change the root's mtime
        try:
            results.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            results.path = None

    def run(still_valid: str | None = None):
        ws = Workspace(root, settings, config, counter=counter)
        res = run_checks(ws, paths or None, jobs=args.jobs if args.jobs is not None else usable_cpus())
        if res.errors:
            results.last_run = None
        elif still_valid is not None:
            results.last_run = still_valid  # nothing changed since that run: its fingerprint stands
        else:
            extra = [ws.memory_dir] + ws.walked_dirs
            results.put(cache_key, RC.fingerprint(ws.fs, ws.index.dirs, extra, root))
        return res

    def emit(report: dict) -> int:
        try:
            sys.stdout.write(report["stdout"])
        except BrokenPipeError:
            raise
        except OSError as exc:  # a full disk must not pass for "no findings" (0) or "findings" (1)
            return _output_failed(exc)
        sys.stderr.write(report["stderr"])
        return report["status"]

    if args.explain:
        return _explain(args.explain.strip().upper(), run(), root)
    if not args.fix:
        # Nothing changed since the last run with the same options: print its report as it was.
        cached = results.output(cache_key, args.format)
        if cached is not None and isinstance(cached.get("stdout"), str) and isinstance(cached.get("stderr"), str) \
                and cached.get("status") in (0, 1):
            return emit(cached)
    # The stored run may still be valid with only this format's report missing: its reports then sit side by
    # side, and alternating formats hits every time after the first of each.
    result = run(None if args.fix else results.last_run)
    fixed = 0
    if args.fix:
        def read(p: Path):
            try:
                return p.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return None

        plan = plan_fixes(result.findings, read)
        for path, text in plan.files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + ".ctxls-tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        fixed = len(plan.applied)
        if fixed:
            result = run()
    cache.save()
    report = _check_report(args, result, root, config, fixed)
    if not args.fix and not result.errors:
        results.put_output(args.format, report)
    return emit(report)


def _explain(code: str, result, root: Path) -> int:
    """`ctxls check --explain CODE`: each finding of CODE with the heuristics that made the rule fire (what the
    rule recorded in the finding), or the rule's documented reasoning when it records none. Exit 0; 2 for an
    unknown code."""
    from .core.rules import load_all

    registry = load_all()
    if code not in registry:
        print(f"ctxls: unknown rule code {code!r} (see `ctxls rules`)", file=sys.stderr)
        return 2
    info = registry[code]
    found = [f for f in result.findings if f.code == code]
    out = [f"{code} {info.name}: {info.summary}"]
    for f in found:
        try:
            shown = f.path.relative_to(root).as_posix()
        except ValueError:
            shown = str(f.path)
        out.append(f"{shown}:{f.line}:{f.span.start_col + 1}: {code} [{f.severity}] {f.message}")
        lines = f.data.get("explain") if isinstance(f.data, dict) else None
        for why in lines or [f"(this rule records no per-finding heuristics) {info.why}"]:
            out.append(f"    {why}")
        cands = f.data.get("candidates") if isinstance(f.data, dict) else None
        if cands and not any("where it may have gone" in w for w in (lines or [])):
            out.append("    candidates: " + ", ".join(str(c) for c in cands))
    out.append(f"{len(found)} finding{'s' if len(found) != 1 else ''} of {code}")
    try:
        sys.stdout.write("\n".join(out) + "\n")
    except OSError as exc:
        return _output_failed(exc)
    return 0


def _check_report(args, result, root: Path, config, fixed: int) -> dict:
    """What `ctxls check` prints: stdout, stderr and the exit status."""
    from .core import formats
    from .core.check import at_or_above

    err = [f"ctxls: internal error, rule skipped: {e}\n" for e in result.errors]
    findings = result.findings
    if args.format == "json":
        out = formats.check_json(findings, root, result.errors, fixed)
    elif args.format == "sarif":
        out = json.dumps(formats.findings_to_sarif(findings, root), indent=2) + "\n"
    elif args.format == "github":
        out = formats.findings_to_github(findings, root)
    else:
        out = formats.findings_to_text(findings, root)
        counts = {}
        for f in findings:
            counts[f.severity] = counts.get(f.severity, 0) + 1
        summary = ", ".join(f"{n} {sev}" for sev, n in sorted(counts.items())) or "no findings"
        extra = f"; fixed {fixed}" if args.fix else ""
        err.append(f"{summary}{extra}\n")
    return {"stdout": out, "stderr": "".join(err), "status": 1 if at_or_above(findings, config.fail_level) else 0}


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
