#!/usr/bin/env python3
"""The Messages API stand-in's own cost per call, so that agent benchmarks can tell ctxls's latency from it.

    python bench/bench_fakeapi.py [--calls 100] [--turns 48] [--lines 700]

Prints, through the real anthropic SDK against tests/fakeapi.py on 127.0.0.1:
* baseline: a raw HTTP POST of the same small request (http.client, no SDK), ms per call
* create / stream: the SDK's messages.create and messages.stream + get_final_message, ms per call, and their
  ratio to the baseline
* session: a growing session of ``--turns`` tool turns (each adds a file read of ``--lines`` x 2 lines, the
  newest result a cache breakpoint), ms per call for the first and last turn and the last prompt's tokens
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import anthropic  # noqa: E402

from fakeapi import FakeMessagesAPI, Reply, tool_use  # noqa: E402


def per_call_ms(fn, calls: int) -> float:
    t = time.perf_counter()
    for i in range(calls):
        fn(i)
    return (time.perf_counter() - t) * 1000 / calls


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=100)
    p.add_argument("--turns", type=int, default=48)
    p.add_argument("--lines", type=int, default=700)
    a = p.parse_args()
    with FakeMessagesAPI(window=10_000_000) as api:
        c = anthropic.Anthropic(api_key="bench", base_url=api.base_url)
        api.script([Reply("ok")] * (3 * a.calls + a.turns + 2))
        c.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "warm up"}])
        conn = http.client.HTTPConnection("127.0.0.1", api.port)

        def raw(i: int) -> None:
            body = json.dumps({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": f"q{i}"}]})
            conn.request("POST", "/v1/messages", body, {"content-type": "application/json"})
            conn.getresponse().read()

        def create(i: int) -> None:
            c.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": f"q{i}"}])

        def stream(i: int) -> None:
            with c.messages.stream(model="m", max_tokens=10, messages=[{"role": "user", "content": f"q{i}"}]) as s:
                s.get_final_message()

        base = per_call_ms(raw, a.calls)
        print(f"baseline raw HTTP POST: {base:.2f} ms per call")
        for name, fn in (("create", create), ("stream", stream)):
            ms = per_call_ms(fn, a.calls)
            print(f"SDK {name}: {ms:.2f} ms per call ({ms / base:.1f}x baseline)")

        msgs: list[dict] = [{"role": "user", "content": "task"}]
        times, last = [], None
        for i in range(a.turns):
            msgs.append({"role": "assistant", "content": [tool_use("read_file", id=f"t{i}", path=f"f{i}.py")]})
            for old in msgs[2::2]:
                old["content"][0].pop("cache_control", None)
            content = "".join(f"def f{i}_{j}(x):\n    return x * {j} + {i}\n" for j in range(a.lines))
            msgs.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                                      "content": content, "cache_control": {"type": "ephemeral"}}]})
            t = time.perf_counter()
            last = c.messages.create(model="m", max_tokens=10, messages=msgs)
            times.append((time.perf_counter() - t) * 1000)
        u = last.usage
        tokens = u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens
        print(f"session of {a.turns} turns: first {times[0]:.1f} ms, last {times[-1]:.1f} ms per call; "
              f"last prompt {tokens:,} tokens ({u.cache_read_input_tokens:,} read from the cache)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
