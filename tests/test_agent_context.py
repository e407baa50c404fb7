"""The context engine through the real SDK and the Messages API stand-in: clearing, compaction, the window guard
with a tokenizer 30% bigger than ctxls's offline count, memory across runs and processes, the ledger."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agent_helpers import assert_valid_conversation, make_workspace, result_text, run_agent, session_id
from ctxls.agent.build import open_run
from ctxls.agent.compaction import SUMMARY_INSTRUCTION
from ctxls.agent.memory import remember
from ctxls.agent.provider import Provider
from ctxls.agent.settings import agent_settings_for
from ctxls.core.config import settings_for
from fakeapi import FakeMessagesAPI, Reply, text, tool_use


class Unattended:
    interactive = False

    def current_text(self, path):
        return None

    async def apply_change(self, change, ask):  # pragma: no cover - never called unattended with ask
        raise AssertionError("no change expected")

    async def confirm_command(self, command, ask):  # pragma: no cover
        raise AssertionError("no command expected")


def write_file(ws: Path, name: str, lines: int, tag: str) -> Path:
    p = ws / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("".join(f"{tag} line {i}: the value of item {i} is {i * 7 % 101}\n" for i in range(lines)))
    return p


async def run_loop(api, ws, task, clock=None, **agent):
    settings, _ = settings_for(ws)
    window = agent.pop("window", None)
    if window:
        settings = settings.replace(window=window)
    a, _ = agent_settings_for(ws)
    a = a.replace(**agent)
    provider = Provider(api_key="test", base_url=api.base_url, max_attempts=3, backoff_base=0.01,
                        model=a.model, max_tokens=a.max_tokens)
    kw = {"clock": clock} if clock else {}
    loop = open_run(ws, ws, settings, a, Unattended(), provider=provider)
    if clock:
        loop.clock = clock
    return loop, await loop.run(task), kw  # (kw: what the caller passed, for its own checks)


def ok_bodies(api) -> list[dict]:
    return [r.body for r in api.messages_requests() if r.status == 200 and not r.fault]


def is_summary(body: dict) -> bool:
    last = body["messages"][-1]["content"]
    return len(last) == 1 and last[0].get("type") == "text" and last[0]["text"] == SUMMARY_INSTRUCTION


@pytest.fixture
def ws(tmp_path):
    return make_workspace(tmp_path)


async def test_clearing_keeps_every_pair_and_the_last_results(ws):
    for i in range(8):
        write_file(ws, f"data/f{i}.txt", 120, f"F{i}")
    with FakeMessagesAPI() as api:
        api.script([Reply(tool_use("read_file", path=f"data/f{i}.txt")) for i in range(8)] + [Reply(text("done"))])
        loop, out, _ = await run_loop(api, ws, "read them all", clear_at=6000, clear_at_least=1000, clear_keep=3)
        assert out.status == "finished", out.detail
        sent = ok_bodies(api)
    last = sent[-1]["messages"]
    assert_valid_conversation([{**m, "content": [{k: v for k, v in b.items() if k != "cache_control"}
                                                 for b in m["content"]]} for m in last])
    results = [b for m in last if m["role"] == "user" for b in m["content"] if b.get("type") == "tool_result"]
    assert len(results) == 8
    cleared = [r for r in results if result_text(r).startswith("[cleared: read_file data/f")]
    assert cleared and len(cleared) <= 5
    for r in results[-3:]:  # the newest three are intact
        assert "line 119: the value" in result_text(r)
    assert "tokens; read it again if needed]" in result_text(cleared[0])
    # the transcript keeps the full text: clearing is a view of it
    stored = [b for m in loop.conv.messages if m["role"] == "user" for b in m["content"] if b.get("type") == "tool_result"]
    assert all("line 119" in result_text(b) for b in stored)


async def test_compaction_keeps_the_last_turns_and_brings_the_edited_claude_md_and_the_handoff(ws):
    for i in range(10):
        write_file(ws, f"data/f{i}.txt", 150, f"F{i}")
    claude = ws / "CLAUDE.md"

    def edit_claude_md(body):  # the user edits CLAUDE.md in the middle of the session
        claude.write_text("# Agent fixture\n\n- NEW-RULE-AFTER-EDIT: run `echo v2`.\n")
        return Reply(tool_use("read_file", path="data/f3.txt"))

    steps = [Reply(tool_use("update_handoff", content="Goal: read the data.\nCheck: all files read.\nNext: f4.")),
             Reply(tool_use("read_file", path="data/f0.txt")), Reply(tool_use("read_file", path="data/f1.txt")),
             Reply(tool_use("read_file", path="data/f2.txt")), edit_claude_md]
    steps += [Reply(tool_use("read_file", path=f"data/f{i}.txt")) for i in range(4, 10)] + [Reply(text("done"))]
    with FakeMessagesAPI() as api:
        api.add_handler(is_summary, lambda body: Reply(text("SUMMARY-MARKER: read f0-f3; CLAUDE.md was edited.")))
        api.script(steps)
        loop, out, _ = await run_loop(api, ws, "read the data", window=30_000, max_tokens=1000,
                                      clear_at_least=10 ** 9, keep_turns=2)
        assert out.status == "finished", out.detail
        bodies = ok_bodies(api)
    summaries = [i for i, b in enumerate(bodies) if is_summary(b)]
    assert summaries, "no compaction happened"
    s = summaries[0]
    # the summary request reuses the conversation's prefix and ends with the instruction alone
    assert bodies[s]["messages"][0]["content"][0]["text"] == bodies[0]["messages"][0]["content"][0]["text"]
    after = bodies[s + 1]
    head = after["messages"][0]["content"]
    texts = [b["text"] for b in head]
    assert "NEW-RULE-AFTER-EDIT" in texts[0]  # CLAUDE.md as it is on disk now
    assert any(t.startswith('<handoff file=".ctxls/handoff.md">') and "Next: f4." in t for t in texts)
    assert "SUMMARY-MARKER" in texts[-1]
    import json

    dumped = json.dumps(after)
    assert "Run `echo tests-pass`" not in dumped  # the old copy of CLAUDE.md is gone
    # the last K=2 turns are verbatim: the stored messages they start from
    kept = after["messages"][1:]
    stored = loop.conv.messages
    starts = [i for i, m in enumerate(stored) if m["role"] == "assistant"]
    assert kept[0]["role"] == "assistant"
    strip = lambda v: json.loads(json.dumps(v).replace(', "cache_control": {"type": "ephemeral"}', ""))  # noqa: E731
    first_kept = next(i for i in starts if strip(stored[i]) == strip(kept[0]))
    assert strip(kept) == strip(stored[first_kept:first_kept + len(kept)])
    assert_valid_conversation(strip(after["messages"]))


async def test_no_request_exceeds_the_window_when_the_offline_count_is_30_percent_low(ws):
    for i in range(14):
        write_file(ws, f"data/f{i}.txt", 200, f"F{i}")
    with FakeMessagesAPI(window=40_000, token_scale=1.3) as api:
        api.add_handler(is_summary, lambda body: Reply(text("summary: read the first files")))
        api.script([Reply(tool_use("read_file", path=f"data/f{i}.txt")) for i in range(14)] + [Reply(text("done"))])
        loop, out, _ = await run_loop(api, ws, "read everything", window=40_000, max_tokens=2000)
        assert out.status == "finished", out.detail
        rejected = [r for r in api.messages_requests() if r.status != 200]
        sizes = [sum(r.usage[k] for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
                 for r in api.messages_requests() if r.usage]
    assert rejected == []
    assert max(sizes) < 40_000 - 2000
    assert max(sizes) > 15_000  # the session really grew (the guard was needed)


def test_a_fact_remembered_in_run_1_is_in_run_2s_first_request(ws):
    with FakeMessagesAPI() as api:
        api.script([Reply(tool_use("remember", fact="Billing amounts are integer cents.")), Reply(text("noted")),
                    Reply(text("hello again"))])
        first = run_agent(api, ws, "note it")
        assert first.returncode == 0, first.stderr
        second = run_agent(api, ws, "what do you know?")
        assert second.returncode == 0, second.stderr
        bodies = ok_bodies(api)
    assert "Billing amounts are integer cents." not in bodies[0]["messages"][0]["content"][0]["text"]
    assert "- Billing amounts are integer cents. (2026-11-29)" in bodies[2]["messages"][0]["content"][0]["text"]


def test_concurrent_remember_from_two_processes_loses_nothing(tmp_path):
    index = tmp_path / "mem" / "MEMORY.md"
    code = ("import sys\nfrom pathlib import Path\nfrom ctxls.agent.memory import remember\n"
            "for i in range(40):\n    remember(Path(sys.argv[1]), f'process {sys.argv[2]} fact number {i} zq{i*7919}',"
            " '2026-11-29')\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(index), tag]) for tag in ("A", "B")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    lines = index.read_text().splitlines()
    for tag in "AB":
        for i in range(40):
            assert f"- process {tag} fact number {i} zq{i * 7919} (2026-11-29)" in lines
    assert len(lines) == 80


def test_memory_dedupes_and_moves_old_facts_to_a_topic_file(tmp_path):
    index = tmp_path / "MEMORY.md"
    assert remember(index, "The API tests need the fake clock.", "2026-11-01").startswith("remembered")
    assert remember(index, "the API tests need the fake clock", "2026-11-02").startswith("already remembered")
    for i in range(30):
        remember(index, f"fact {i}: module m{i} owns table t{i * 13}", "2026-11-03", max_lines=20)
    text = index.read_text()
    assert len(text.splitlines()) < 20
    assert "[Older facts (2026-11-03)](facts-2026-11-03.md)" in text
    topic = (tmp_path / "facts-2026-11-03.md").read_text()
    assert "The API tests need the fake clock." in topic and "fact 29:" in text
    every = text + topic
    assert all(f"fact {i}: module m{i}" in every for i in range(30))


async def test_ledger_records_usage_costs_and_a_pause_past_the_cache_life(ws):
    write_file(ws, "data/a.txt", 300, "A")
    with FakeMessagesAPI(clock="virtual") as api:
        def slow_step(body):
            api.advance(6 * 60)  # an approval that took six minutes
            return Reply(text("done"))

        api.script([Reply(tool_use("read_file", path="data/a.txt")), slow_step])
        loop, out, _ = await run_loop(api, ws, "read", clock=lambda: api.clock())
        assert out.status == "finished"
    # the loop's clock is the stand-in's, read when each answer arrives; the second came 6 minutes later
    assert len(loop.ledger) == 2
    assert loop.ledger[1].alarms and "past the 5-minute cache life" in loop.ledger[1].alarms[0]
    u = loop.ledger[0].usage
    assert u["cache_creation_input_tokens"] > 0  # the breakpoints wrote the prefix


def test_ledger_command_prints_the_sawtooth(ws):
    write_file(ws, "data/a.txt", 300, "A")
    with FakeMessagesAPI() as api:
        api.script([Reply(tool_use("read_file", path="data/a.txt")), Reply(text("done"))])
        run = run_agent(api, ws, "read")
        assert run.returncode == 0, run.stderr
        sid = session_id(run)
        led = run_agent(api, ws, "--ledger", sid)
    assert led.returncode == 0, led.stderr
    assert "| turn | kind | context |" in led.stdout and "cache hit rate" in led.stdout
    assert led.stdout.count("| turn | kind |") == 1 and "| 1 | turn |" in led.stdout and "| 2 | turn |" in led.stdout
