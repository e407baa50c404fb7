"""What the context engine saves: one deterministic 48-step session, replayed three times against the Messages API
stand-in (tests/fakeapi.py, prefix caching as spec D2 says: 5-minute entries, reads 0.1x, writes 1.25x):

  naive            the loop appending everything, no cache breakpoints (every request billed in full)
  naive+cache      the same loop with ctxls's cache breakpoints
  ctxls            ctxls's policy: breakpoints, clearing, compaction (defaults, 200K window)

The session: several 5-40K-token file reads, test logs from a command, searches, small reads and edits. The
naive runs get a 2M-token window from the stand-in (they would not fit in 200K); ctxls keeps 200K.

    python bench/agent_economics.py [--png out.png] [--steps 48]

Prints, for each run: billed input-token equivalents, peak request size, cache-read share, cost at list prices,
and ctxls's ratios against both naive runs; writes a PNG chart of request size per turn (matplotlib, in the
`bench` extra).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from fakeapi import FakeMessagesAPI, Reply, text, tool_use  # noqa: E402

from ctxls.agent.build import open_run  # noqa: E402
from ctxls.agent.compaction import SUMMARY_INSTRUCTION  # noqa: E402
from ctxls.agent.ledger import Prices, request_size, summary  # noqa: E402
from ctxls.agent.provider import Provider  # noqa: E402
from ctxls.agent.settings import AgentSettings  # noqa: E402
from ctxls.agentcmd import TerminalHost  # noqa: E402
from ctxls.core.settings import Settings  # noqa: E402

BIG_READS = [5_000, 12_000, 40_000, 8_000, 25_000, 15_000, 30_000, 6_000]


def code_lines(rng: random.Random, tokens: int, module: str) -> list[str]:
    """Python-looking text of about ``tokens`` cl100k tokens (about 4 characters a token)."""
    words = ["value", "result", "items", "config", "request", "user", "order", "total", "cache", "index"]
    out, size, i = [], 0, 0
    while size < tokens * 4:
        w1, w2 = rng.choice(words), rng.choice(words)
        line = (f"def {module}_{w1}_{i}({w2}, limit={rng.randint(1, 999)}):" if i % 6 == 0 else
                f"    {w1}_{i % 50} = {w2}.get('{w1}', {rng.randint(0, 10_000)})  # {module} step {i}")
        out.append(line)
        size += len(line) + 1
        i += 1
    return out


def make_workspace(root: Path, seed: int = 7) -> None:
    rng = random.Random(seed)
    (root / ".git").mkdir(parents=True)
    (root / ".ctxls.toml").write_text('home = "../home"\nceiling = "."\nmanaged_dir = "../managed"\n'
                                      'auto_memory_dir = "../home/mem"\ntoday = "2026-11-29"\n')
    (root.parent / "home" / "mem").mkdir(parents=True, exist_ok=True)
    (root / "CLAUDE.md").write_text("# Shop\n\n- Run `cat logs/test-N.log` to see the latest test run.\n"
                                    "- Amounts are integer cents; never use floats for money.\n" +
                                    "".join(f"- Convention {i}: keep module {i} free of I/O.\n" for i in range(40)))
    (root / "src").mkdir()
    for i, tokens in enumerate(BIG_READS):
        (root / "src" / f"module{i}.py").write_text("\n".join(code_lines(rng, tokens, f"m{i}")) + "\n")
    for i in range(12):
        (root / "src" / f"small{i}.py").write_text("\n".join(code_lines(rng, 900, f"s{i}")) + "\n")
    (root / "logs").mkdir()
    for i in range(8):
        lines = [f"tests/test_{rng.choice(['orders', 'users', 'cart'])}.py::test_case_{j} "
                 f"{'PASSED' if rng.random() > 0.08 else 'FAILED'} [{j * 100 // 160:>3}%]" for j in range(160)]
        lines += [f"FAILED tests/test_orders.py::test_case_{i * 3} - AssertionError: 1999 != 2000"] * 3
        (root / "logs" / f"test-{i}.log").write_text("\n".join(lines) + "\n")


def script(steps: int) -> list[Reply]:
    """The model's side: 47 tool calls and a final answer, the same for every run."""
    big = {2: 0, 5: 1, 9: 2, 14: 3, 20: 4, 26: 5, 33: 6, 40: 7}
    tests = {7, 12, 18, 24, 30, 36, 42, 46}
    edits = {8, 13, 19, 25, 31, 37, 43}
    out: list[Reply] = []
    small = 0
    for s in range(1, steps):
        note = text(f"Step {s}: continuing.")
        if s in big:
            out.append(Reply(note, tool_use("read_file", path=f"src/module{big[s]}.py")))
        elif s in tests:
            out.append(Reply(note, tool_use("run_command", command=f"cat logs/test-{len(out) % 8}.log")))
        elif s in edits:
            out.append(Reply(note, tool_use("write_file", path=f"notes/step{s}.md", content=f"# Step {s}\n\nFixed.\n")))
        elif s % 3 == 0:
            out.append(Reply(note, tool_use("search", pattern=f"def m{s % 8}_value", path="src")))
        else:
            out.append(Reply(note, tool_use("read_file", path=f"src/small{small % 12}.py")))
            small += 1
    out.append(Reply(text("Done: the order totals are integer cents again and the tests pass.")))
    return out


def is_summary(body: dict) -> bool:
    last = body["messages"][-1]["content"]
    return len(last) == 1 and last[0].get("text") == SUMMARY_INSTRUCTION


async def one_run(name: str, ws: Path, steps: int, agent: AgentSettings, window: int, api_window: int):
    with FakeMessagesAPI(window=api_window, clock="virtual") as api:
        api.add_handler(is_summary, lambda body: Reply(text(
            "- Decisions: totals in integer cents.\n- Files: src/module0-7.py read; notes written.\n"
            "- Open: test_case failures in test_orders.\n- Next: rerun the tests.")))
        replies = script(steps)

        def paced(reply):  # the model thinks for 15 s a turn (virtual time)
            def step(body):
                api.advance(15)
                return reply
            return step

        api.script([paced(r) for r in replies])
        settings = Settings(home=ws.parent / "home", ceiling=ws, managed_dir=ws.parent / "managed",
                            auto_memory_dir=ws.parent / "home" / "mem", today="2026-11-29", window=window)
        provider = Provider(api_key="bench", base_url=api.base_url, model=agent.model, max_tokens=agent.max_tokens,
                            max_attempts=2, backoff_base=0.01)
        loop = open_run(ws, ws, settings, agent, TerminalHost(False), provider=provider)
        loop.clock = api.clock
        t0 = time.perf_counter()
        out = await loop.run("Fix the order totals so the tests pass.")
        wall = time.perf_counter() - t0
        sizes = [(e.kind, request_size(e.usage)) for e in loop.ledger]
        rejected = [r for r in api.messages_requests() if r.status != 200]
    return {"name": name, "status": out.status, "ledger": loop.ledger, "sizes": sizes, "wall": wall,
            "rejected": len(rejected), "turns": out.turns, "compactions": loop.conv.compactions,
            "cleared": len(loop.conv.cleared)}


async def main_async(args) -> int:
    base = AgentSettings(yes_to=("run_command", "write_file", "edit_file"), max_turns=args.steps + 5)
    naive = base.replace(clear_at=10 ** 9, clear_at_least=10 ** 9)
    runs = []
    for name, agent, window, api_window in (
            ("naive", naive.replace(cache_breakpoints=False), 2_000_000, 2_000_000),
            ("naive+cache", naive, 2_000_000, 2_000_000),
            ("ctxls", base, 200_000, 200_000)):
        tmp = Path(tempfile.mkdtemp(prefix="ctxls-econ-"))
        try:
            ws = tmp / "ws"
            make_workspace(ws)
            runs.append(await one_run(name, ws, args.steps, agent, window, api_window))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    prices = Prices()
    print(f"{args.steps}-step session; prices ${prices.input_per_mtok}/MTok input, ${prices.output_per_mtok}/MTok "
          f"output, cache writes x{prices.cache_write_multiplier}, reads x{prices.cache_read_multiplier}\n")
    print(f"{'run':<12} {'status':<9} {'calls':>5} {'billed input eq.':>17} {'peak request':>13} {'cache read':>11} "
          f"{'cost':>9} {'cleared':>8} {'compactions':>11}")
    sums = {}
    for r in runs:
        s = summary(r["ledger"], prices)
        sums[r["name"]] = s
        print(f"{r['name']:<12} {r['status']:<9} {s['calls']:>5} {s['billed_input']:>17,.0f} {s['peak_request']:>13,} "
              f"{s['cache_read_share']:>10.1%} ${s['cost_usd']:>8.3f} {r['cleared']:>8} {r['compactions']:>11}")
    c, n, nc = sums["ctxls"], sums["naive"], sums["naive+cache"]
    print(f"\nctxls vs naive:        {1 - c['billed_input'] / n['billed_input']:.1%} fewer billed input equivalents "
          f"(target >= 90%)")
    print(f"ctxls vs naive+cache:  {1 - c['billed_input'] / nc['billed_input']:.1%} fewer (target > 0%)")
    print(f"ctxls peak request:    {c['peak_request']:,} of 200,000 ({'under' if c['peak_request'] < 200_000 else 'OVER'}"
          f" the window); rejected requests: {runs[2]['rejected']}")
    print(f"ctxls cache-read share: {c['cache_read_share']:.1%} (target >= 70%)")
    loop_ms = sorted(t.loop_s * 1000 for t in runs[2]["turns"])
    if loop_ms:
        print(f"ctxls time per turn (excluding the model and commands): median {loop_ms[len(loop_ms) // 2]:.1f} ms, "
              f"max {loop_ms[-1]:.1f} ms")
    if args.png:
        chart(runs, Path(args.png))
        print(f"chart: {args.png}")
    return 0


def chart(runs, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 5), dpi=110)
    for r, style in zip(runs, ("-", "--", "-")):
        ys = [size for kind, size in r["sizes"] if kind == "turn"]
        ax.plot(range(1, len(ys) + 1), ys, style, label=r["name"], linewidth=2 if r["name"] == "ctxls" else 1.2)
    ax.axhline(200_000, color="red", linestyle=":", label="200K window")
    ax.set_xlabel("model call")
    ax.set_ylabel("request size (tokens)")
    ax.set_title("Request size per turn: append-everything vs ctxls's context engine")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=48)
    ap.add_argument("--png", default="bench/agent_economics.png")
    return asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
