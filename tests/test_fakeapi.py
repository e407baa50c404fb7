"""The Messages API stand-in, driven through the real anthropic SDK (sync and async, streaming and not)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import anthropic
import httpx2
import pytest

from ctxls.core.tokens import raw_count
from fakeapi import (CLEARED_PLACEHOLDER, MESSAGE_OVERHEAD, Fault, FakeMessagesAPI, Reply, text, thinking,
                     tool_use, tool_use_raw)

MODEL = "claude-sonnet-4-5"
HERE = Path(__file__).resolve().parent


def user(content):
    return {"role": "user", "content": content}


def assistant(content):
    return {"role": "assistant", "content": content}


@pytest.fixture
def api():
    with FakeMessagesAPI() as a:
        yield a


def client(api, **kw):
    return anthropic.Anthropic(api_key="test", base_url=api.base_url, **kw)


def create(c, messages, **kw):
    return c.messages.create(model=MODEL, max_tokens=100, messages=messages, **kw)


# ----------------------------------------------------------------------------------------------- replies

def test_scripted_tool_turns_non_streaming(api):
    api.script([Reply(text("I will read it."), tool_use("read_file", id="toolu_1", path="src/a.py")),
                Reply(text("It defines main."))])
    c = client(api)
    first = create(c, [user("what is in a.py?")])
    assert first.stop_reason == "tool_use"
    assert first.content[0].text == "I will read it."
    assert (first.content[1].type, first.content[1].id, first.content[1].name, first.content[1].input) == (
        "tool_use", "toolu_1", "read_file", {"path": "src/a.py"})
    history = [user("what is in a.py?"), assistant([b.model_dump(exclude_none=True) for b in first.content]),
               user([{"type": "tool_result", "tool_use_id": "toolu_1", "content": "def main(): pass"}])]
    second = create(c, history)
    assert second.stop_reason == "end_turn" and second.content[0].text == "It defines main."
    assert second.model == MODEL and second.role == "assistant" and second.id.startswith("msg_")
    assert api.remaining() == 0
    recs = api.messages_requests()
    assert [r.status for r in recs] == [200, 200]
    assert recs[1].body["messages"][2]["content"][0]["tool_use_id"] == "toolu_1"
    assert recs[0].headers["authorization"] == "Bearer test" and "anthropic-version" in recs[0].headers
    assert recs[0].usage["input_tokens"] == raw_count("what is in a.py?") + MESSAGE_OVERHEAD
    assert recs[0].usage["output_tokens"] == raw_count("I will read it.") + raw_count(
        'read_file {"path":"src/a.py"}')


def test_stream_helper_and_raw_events_rebuild_the_reply(api):
    long = "The quick brown fox jumps over the lazy dog. " * 5
    api.script([Reply(text(long), tool_use("edit_file", id="toolu_e", path="a.py", old_string="x", new_string="y")),
                Reply(text(long), tool_use("edit_file", id="toolu_f", path="b.py", old_string="1", new_string="2"))])
    c = client(api)
    with c.messages.stream(model=MODEL, max_tokens=100, messages=[user("go")]) as s:
        deltas = [e.delta.text for e in s if e.type == "content_block_delta" and e.delta.type == "text_delta"]
        final = s.get_final_message()
    assert len(deltas) == 3 and "".join(deltas) == long
    assert final.content[1].input == {"path": "a.py", "old_string": "x", "new_string": "y"}
    assert final.stop_reason == "tool_use" and final.usage.input_tokens == raw_count("go") + MESSAGE_OVERHEAD

    events = list(create(c, [user("go")], stream=True))
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    assert kinds.count("content_block_start") == 2 == kinds.count("content_block_stop")
    parts = [e.delta.partial_json for e in events if e.type == "content_block_delta"
             and e.delta.type == "input_json_delta"]
    assert len(parts) == 3 and json.loads("".join(parts)) == {"path": "b.py", "old_string": "1", "new_string": "2"}
    delta = next(e for e in events if e.type == "message_delta")
    assert delta.delta.stop_reason == "tool_use" and delta.usage.output_tokens > 1


async def test_async_client_streams_and_creates(api):
    api.script([Reply("one"), Reply("two")])
    c = anthropic.AsyncAnthropic(api_key="test", base_url=api.base_url)
    async with c.messages.stream(model=MODEL, max_tokens=10, messages=[user("hi")]) as s:
        final = await s.get_final_message()
    assert final.content[0].text == "one"
    m = await c.messages.create(model=MODEL, max_tokens=10, messages=[user("hi")])
    assert m.content[0].text == "two"


def test_callable_steps_handlers_and_exhaustion(api):
    seen = []
    api.script([lambda body: seen.append(body["messages"][-1]["content"]) or Reply(f"echo {len(seen)}")])
    api.add_handler(lambda body: "SUMMARISE" in json.dumps(body["messages"][-1]), lambda body: Reply("summary"))
    c = client(api, max_retries=2)
    assert create(c, [user("SUMMARISE please")]).content[0].text == "summary"
    assert create(c, [user("first")]).content[0].text == "echo 1"
    assert seen == ["first"] and api.remaining() == 0
    with pytest.raises(anthropic.InternalServerError, match="script exhausted"):
        create(c, [user("one too many")])
    # x-should-retry: false, so the mistake shows once, not three times
    assert [r.status for r in api.messages_requests()] == [200, 200, 500]


def test_invalid_tool_arguments_are_easy_to_script(api):
    api.script([Reply(tool_use("read_file", path=5)), Reply(tool_use("read_file")),
                Reply.raw_input("read_file", '{"path": "a.py", "start_line": "ten"}'),
                Reply(tool_use_raw("read_file", '{"path": "a.py"')),
                Reply(tool_use_raw("read_file", '{"path": "a.py"'))])
    c = client(api)
    assert create(c, [user("x")]).content[0].input == {"path": 5}
    assert create(c, [user("x")]).content[0].input == {}
    with c.messages.stream(model=MODEL, max_tokens=10, messages=[user("x")]) as s:
        assert s.get_final_message().content[0].input == {"path": "a.py", "start_line": "ten"}
    # unparseable JSON: non-streaming hands the raw string over as input; the stream helper raises
    assert create(c, [user("x")]).content[0].input == '{"path": "a.py"'
    with pytest.raises(ValueError, match="Unable to parse tool parameter JSON"):
        with c.messages.stream(model=MODEL, max_tokens=10, messages=[user("x")]) as s:
            s.get_final_message()


# ----------------------------------------------------------------------------------------------- faults

def test_rate_limit_is_retried_by_the_sdk_honouring_retry_after(api):
    api.script([Reply("after the wait")])
    api.fail_next(Fault.rate_limit(retry_after=0.4), Fault.rate_limit(retry_after=0.4))
    c = client(api, max_retries=2)
    t0 = time.monotonic()
    assert create(c, [user("x")]).content[0].text == "after the wait"
    assert time.monotonic() - t0 >= 0.8
    recs = api.messages_requests()
    assert [(r.status, r.fault, r.headers["x-stainless-retry-count"]) for r in recs] == [
        (429, "rate_limit", "0"), (429, "rate_limit", "1"), (200, None, "2")]
    assert recs[2].t - recs[1].t >= 0.4
    assert api.remaining() == 0


def test_faults_past_max_retries_raise_the_matching_error(api):
    api.script([Reply("never reached")])
    c = client(api, max_retries=1)
    api.fail_next(Fault.overloaded(retry_after=0.01), Fault.overloaded(retry_after=0.01))
    with pytest.raises(anthropic.OverloadedError):
        create(c, [user("x")])
    api.fail_next(Fault.server_error(retry_after=0.01), Fault.server_error(retry_after=0.01))
    with pytest.raises(anthropic.InternalServerError):
        create(c, [user("x")])
    api.fail_next(Fault.rate_limit(0.01), Fault.rate_limit(0.01))
    with pytest.raises(anthropic.RateLimitError):
        create(c, [user("x")])
    assert [r.status for r in api.messages_requests()] == [529, 529, 500, 500, 429, 429]
    assert api.remaining() == 1  # faulted requests consume no step


def test_overloaded_and_server_error_without_retry_after_use_the_sdk_backoff(api):
    api.script([Reply("ok")])
    api.fail_next(Fault.overloaded(), Fault.server_error())
    assert create(client(api, max_retries=2), [user("x")]).content[0].text == "ok"
    recs = api.messages_requests()
    assert [r.status for r in recs] == [529, 500, 200]
    assert recs[1].t - recs[0].t >= 0.35  # INITIAL_RETRY_DELAY 0.5 s minus at most 25 % jitter


async def stream_event_types(api, use_async, kw, got):
    """Iterate a streamed answer with the sync or async client (max_retries 3), appending event types to got."""
    if use_async:
        c = anthropic.AsyncAnthropic(api_key="test", base_url=api.base_url, max_retries=3)
        async with c.messages.stream(**kw) as s:
            async for e in s:
                got.append(e.type)
    else:
        with client(api, max_retries=3).messages.stream(**kw) as s:
            for e in s:
                got.append(e.type)


@pytest.mark.parametrize("use_async", [False, True])
async def test_overloaded_mid_stream_is_not_retried_by_the_sdk(api, use_async):
    api.script([Reply(text("partial text"), tool_use("read_file", path="a.py"))])
    api.fail_next(Fault.overloaded_mid_stream(after_blocks=1))
    kw = dict(model=MODEL, max_tokens=10, messages=[user("x")])
    got = []
    with pytest.raises(anthropic.APIStatusError) as err:
        await stream_event_types(api, use_async, kw, got)
    assert err.value.status_code == 200 and err.value.body["error"]["type"] == "overloaded_error"
    assert "text" in got and "content_block_stop" in got  # the first block arrived before the error
    assert len(api.messages_requests()) == 1 and api.remaining() == 1
    # the caller's retry gets the step
    with client(api).messages.stream(**kw) as s:
        assert s.get_final_message().content[0].text == "partial text"


def test_overloaded_mid_stream_on_a_plain_request_is_a_retried_529(api):
    api.script([Reply("fine")])
    api.fail_next(Fault.overloaded_mid_stream())
    c = client(api, max_retries=1)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(c, "_calculate_retry_timeout", lambda *a, **k: 0.01)
        assert create(c, [user("x")]).content[0].text == "fine"
    assert [r.status for r in api.messages_requests()] == [529, 200]


@pytest.mark.parametrize("use_async", [False, True])
async def test_cut_stream_raises_a_transport_error_and_is_not_retried(api, use_async):
    api.script([Reply("whole answer")])
    api.fail_next(Fault.cut_stream(after_events=3))
    kw = dict(model=MODEL, max_tokens=10, messages=[user("x")])
    got = []
    with pytest.raises(httpx2.TransportError, match="peer closed connection"):
        await stream_event_types(api, use_async, kw, got)
    assert got == ["message_start", "content_block_start"]  # 3 events sent: message_start, ping, block start
    assert len(api.messages_requests()) == 1 and api.remaining() == 1
    assert create(client(api), [user("x")]).content[0].text == "whole answer"


def test_cut_body_of_a_plain_request_is_retried_by_the_sdk(api):
    api.script([Reply("whole answer")])
    api.fail_next(Fault.cut_stream())
    c = client(api, max_retries=1)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(c, "_calculate_retry_timeout", lambda *a, **k: 0.01)
        assert create(c, [user("x")]).content[0].text == "whole answer"
    assert [r.fault for r in api.messages_requests()] == ["cut_stream", None]


def test_slow_delays_then_serves_and_consumes_its_step(api):
    api.script([Reply("slowly"), Reply("again")])
    api.fail_next(Fault.slow(0.5))
    c = client(api)
    t0 = time.monotonic()
    assert create(c, [user("x")]).content[0].text == "slowly"
    assert time.monotonic() - t0 >= 0.5
    assert api.remaining() == 1
    api.fail_next(Fault.slow(1.0))
    with pytest.raises(anthropic.APITimeoutError):
        create(client(api, max_retries=0, timeout=0.3), [user("x")])
    time.sleep(0.8)  # let the slow handler finish
    assert api.remaining() == 0  # served to a client that had given up


def test_step_faults_hit_the_first_request_that_reaches_the_step(api):
    api.script([Reply("first"), Reply("second", faults=[Fault.rate_limit(0.01)])])
    c = client(api)
    assert create(c, [user("x")]).content[0].text == "first"
    assert create(c, [user("x")]).content[0].text == "second"
    assert [r.status for r in api.messages_requests()] == [200, 429, 200]


# ----------------------------------------------------------------------------------------------- validation

@pytest.mark.parametrize("messages, needle", [
    ([assistant("hi")], "roles must alternate"),
    ([user("a"), user("b")], "roles must alternate"),
    ([user("a"), assistant([tool_use("t", id="toolu_a")]), user("no result")], "without `tool_result`"),
    ([user("a"), assistant([tool_use("t", id="toolu_a")])], "without `tool_result`"),
    ([user([{"type": "tool_result", "tool_use_id": "toolu_z", "content": "x"}])], "unexpected `tool_use_id`"),
    ([user("a"), assistant([tool_use("t", id="toolu_a")]),
      user([text("first"), {"type": "tool_result", "tool_use_id": "toolu_a", "content": "x"}])], "must come first"),
    ([user([text("")])], "must be non-empty"),
])
def test_invalid_conversations_are_rejected_and_recorded(api, messages, needle):
    api.script([Reply("unused")])
    with pytest.raises(anthropic.BadRequestError, match=needle):
        create(client(api), messages)
    rec = api.messages_requests()[-1]
    assert rec.status == 400 and needle in rec.error and api.remaining() == 1


def test_valid_tool_round_trip_with_text_after_the_results(api):
    api.script([Reply("ok")])
    msgs = [user("a"), assistant([text("reading"), tool_use("t", id="toolu_a"), tool_use("t", id="toolu_b")]),
            user([{"type": "tool_result", "tool_use_id": "toolu_b", "content": "B"},
                  {"type": "tool_result", "tool_use_id": "toolu_a", "content": [text("A")], "is_error": True},
                  text("nested CLAUDE.md here")])]
    assert create(client(api), msgs).content[0].text == "ok"


def test_prompt_too_long_and_count_tokens_agree(api):
    big = "word " * 3000
    body = dict(model=MODEL, max_tokens=10, messages=[user(big)], system="You are terse.",
                tools=[{"name": "read_file", "description": "Read", "input_schema": {"type": "object"}}])
    c = client(api)
    counted = c.messages.count_tokens(model=MODEL, messages=body["messages"], system=body["system"],
                                      tools=body["tools"]).input_tokens
    tool_json = json.dumps(body["tools"][0], sort_keys=True, separators=(",", ":"))
    assert counted == raw_count(tool_json) + raw_count("You are terse.") + raw_count(big) + MESSAGE_OVERHEAD
    assert counted == api.count(body)
    api.window = counted - 1
    with pytest.raises(anthropic.BadRequestError, match=f"prompt is too long: {counted} tokens > {counted - 1}"):
        c.messages.create(**body)
    api.window = counted
    api.script([Reply("fits")])
    m = c.messages.create(**body)
    assert m.usage.input_tokens == counted


def test_token_scale_multiplies_each_block():
    with FakeMessagesAPI(token_scale=1.3) as api:
        msgs = [user("alpha beta gamma delta " * 50), assistant("ok then"), user("and more words here")]
        expected = (round(raw_count("alpha beta gamma delta " * 50) * 1.3) + round(raw_count("ok then") * 1.3)
                    + round(raw_count("and more words here") * 1.3) + 3 * MESSAGE_OVERHEAD)
        assert client(api).messages.count_tokens(model=MODEL, messages=msgs).input_tokens == expected
        assert expected > 1.25 * (raw_count("alpha beta gamma delta " * 50) + 10)


def test_unknown_route_and_bad_json_get_clear_errors(api):
    c = client(api, max_retries=0)
    with pytest.raises(anthropic.NotFoundError, match="no route"):
        c.models.list()
    import urllib.request
    req = urllib.request.Request(api.base_url + "/v1/messages", data=b"{not json", method="POST",
                                 headers={"content-type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=5)
    assert err.value.code == 400 and b"could not parse" in err.value.read()


# ----------------------------------------------------------------------------------------------- standalone

def test_standalone_cli_serves_a_scenario_and_records(tmp_path):
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps([
        {"content": [{"type": "tool_use", "name": "list_dir", "input": {"path": "."}}],
         "fault": {"kind": "overloaded", "retry_after": 0.01}},
        {"content": [{"type": "text", "text": "all done"}], "stop_reason": "end_turn"},
    ]))
    record = tmp_path / "requests.jsonl"
    proc = subprocess.Popen([sys.executable, str(HERE / "fakeapi.py"), "--port", "0", "--scenario", str(scenario),
                             "--record", str(record)], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("listening http://127.0.0.1:")
        c = anthropic.Anthropic(api_key="test", base_url=line.split()[1], max_retries=2)
        first = c.messages.create(model=MODEL, max_tokens=10, messages=[user("list")])
        assert first.stop_reason == "tool_use" and first.content[0].input == {"path": "."}
        tid = first.content[0].id
        with c.messages.stream(model=MODEL, max_tokens=10, messages=[
                user("list"), assistant([first.content[0].model_dump(exclude_none=True)]),
                user([{"type": "tool_result", "tool_use_id": tid, "content": "a.py"}])]) as s:
            assert s.get_final_message().content[0].text == "all done"
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
    lines = [json.loads(x) for x in record.read_text().splitlines()]
    assert len(lines) == 3  # the 529 attempt, its retry, the streamed second turn
    assert lines[0] == lines[1] and lines[2]["stream"] is True
    assert lines[2]["messages"][2]["content"][0]["tool_use_id"] == tid


def test_standalone_cli_rejects_a_bad_scenario(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"text": "no content"}]')
    proc = subprocess.run([sys.executable, str(HERE / "fakeapi.py"), "--scenario", str(bad)],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and "step 0" in proc.stderr and "Traceback" not in proc.stderr


# ----------------------------------------------------------------------------------------------- prefix caching

EPH = {"type": "ephemeral"}
SYSTEM = "You are ctxls's agent. Follow the project's instructions exactly. " * 80
TOOL = {"name": "read_file", "description": "Read a file of the workspace. " * 30,
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}


def tool_tokens(tool=TOOL):
    return raw_count(json.dumps(tool, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


def cached(block, ttl=None):
    return {**block, "cache_control": {**EPH, **({"ttl": ttl} if ttl else {})}}


def usage_of(m):
    return (m.usage.cache_read_input_tokens, m.usage.cache_creation_input_tokens, m.usage.input_tokens)


def req(c, messages, system=SYSTEM, tools=(TOOL,), system_cc=True, **kw):
    sys_block = {"type": "text", "text": system}
    return c.messages.create(model=MODEL, max_tokens=50, messages=messages, tools=list(tools),
                             system=[cached(sys_block) if system_cc else sys_block], **kw)


def test_identical_request_reads_the_prefix_and_a_new_turn_writes_only_the_tail():
    with FakeMessagesAPI(min_cacheable=1024) as api:
        api.script([Reply("a1"), Reply("a1"), Reply("a2")])
        c = client(api)
        T, S = tool_tokens(), raw_count(SYSTEM)
        q1 = raw_count("first question") + MESSAGE_OVERHEAD
        assert T + S >= 1024  # the system breakpoint is cacheable
        m1 = req(c, [user([cached(text("first question"))])])
        assert usage_of(m1) == (0, T + S + q1, 0)
        m2 = req(c, [user([cached(text("first question"))])])
        assert usage_of(m2) == (T + S + q1, 0, 0)
        a1, q2 = raw_count("a1") + MESSAGE_OVERHEAD, raw_count("second question") + MESSAGE_OVERHEAD
        m3 = req(c, [user([text("first question")]), assistant("a1"), user([cached(text("second question")),
                                                                          text("trailing, after the breakpoint")])])
        tail = raw_count("trailing, after the breakpoint")
        assert usage_of(m3) == (T + S + q1, a1 + q2, tail)
        assert api.count(api.messages_requests()[2].body) == T + S + q1 + a1 + q2 + tail
        assert api.cache_stats()["hits"] == 2 and api.cache_stats()["entries"] == 3


def test_a_changed_early_block_rewrites_from_that_point():
    with FakeMessagesAPI(min_cacheable=100) as api:
        api.script([Reply("x"), Reply("x")])
        c = client(api)
        T, q = tool_tokens(), raw_count("question") + MESSAGE_OVERHEAD
        msgs = [user([cached(text("question"))])]
        req(c, msgs, tools=[cached(TOOL)])
        changed = SYSTEM.replace("exactly", "precisely")
        m = req(c, msgs, system=changed, tools=[cached(TOOL)])
        assert usage_of(m) == (T, raw_count(changed) + q, 0)


def test_below_min_cacheable_nothing_is_written():
    with FakeMessagesAPI(min_cacheable=1024) as api:
        api.script([Reply("x"), Reply("x")])
        c = client(api)
        small = [user([cached(text("short"))])]
        for _ in range(2):
            m = c.messages.create(model=MODEL, max_tokens=5, messages=small)
            assert usage_of(m) == (0, 0, raw_count("short") + MESSAGE_OVERHEAD)
        assert api.cache_stats()["entries"] == 0


@pytest.mark.parametrize("appended, hit", [(20, True), (21, False)])
def test_lookback_reaches_20_blocks_before_a_breakpoint(appended, hit):
    with FakeMessagesAPI(min_cacheable=100) as api:
        api.script([Reply("x"), Reply("x")])
        c = client(api)
        S, b0 = raw_count(SYSTEM), raw_count("block 0") + MESSAGE_OVERHEAD
        req(c, [user([cached(text("block 0"))])], tools=(), system_cc=False)
        blocks = [text("block 0")] + [text(f"block {i}") for i in range(1, appended + 1)]
        blocks[-1] = cached(blocks[-1])
        m = req(c, [user(blocks)], tools=(), system_cc=False)
        rest = sum(raw_count(f"block {i}") for i in range(1, appended + 1))
        assert usage_of(m) == ((S + b0, rest, 0) if hit else (0, S + b0 + rest, 0))


def test_entries_expire_five_minutes_after_their_last_use_on_the_virtual_clock():
    with FakeMessagesAPI(clock="virtual") as api:
        api.script([Reply("x")] * 5)
        c = client(api)
        msgs = [user([cached(text("question"))])]
        full = tool_tokens() + raw_count(SYSTEM) + raw_count("question") + MESSAGE_OVERHEAD
        longer = [user([text("question")]), assistant("x"), user([cached(text("next"))])]
        tail = raw_count("x") + raw_count("next") + 2 * MESSAGE_OVERHEAD
        assert usage_of(req(c, msgs)) == (0, full, 0)
        api.advance(240)
        # t=4 min: a longer request finds the entry 2 blocks back (not one of its breakpoints) and refreshes it
        assert usage_of(req(c, longer)) == (full, tail, 0)
        api.advance(240)
        assert usage_of(req(c, msgs)) == (full, 0, 0)      # t=8 min: alive only thanks to that refresh
        api.advance(360)
        assert usage_of(req(c, msgs)) == (0, full, 0)      # 6 minutes idle: expired, written again
        assert [r.t for r in api.messages_requests()] == [0, 240, 480, 840]
        with pytest.raises(RuntimeError):
            FakeMessagesAPI().advance(1)


def test_one_hour_entries_outlive_five_minute_ones_and_are_reported_apart():
    with FakeMessagesAPI(clock="virtual") as api:
        api.script([Reply("x")] * 3)
        c = client(api)
        T, S, q = tool_tokens(), raw_count(SYSTEM), raw_count("question") + MESSAGE_OVERHEAD
        sys1h = [cached({"type": "text", "text": SYSTEM}, ttl="1h")]
        msgs = [user([cached(text("question"))])]
        m = c.messages.create(model=MODEL, max_tokens=5, tools=[TOOL], system=sys1h, messages=msgs)
        assert (m.usage.cache_creation.ephemeral_1h_input_tokens, m.usage.cache_creation.ephemeral_5m_input_tokens) \
            == (T + S, q)
        api.advance(600)
        m = c.messages.create(model=MODEL, max_tokens=5, tools=[TOOL], system=sys1h, messages=msgs)
        assert usage_of(m) == (T + S, q, 0)
        with pytest.raises(anthropic.BadRequestError, match="1h"):
            c.messages.create(model=MODEL, max_tokens=5, system=[cached({"type": "text", "text": SYSTEM})],
                              messages=[user([cached(text("q"), ttl="1h")])])


def test_automatic_caching_moves_the_breakpoint_to_the_last_block():
    with FakeMessagesAPI(min_cacheable=100) as api:
        api.script([Reply("x"), Reply("x")])
        c = client(api)
        S, q1 = raw_count(SYSTEM), raw_count("question") + MESSAGE_OVERHEAD
        m = c.messages.create(model=MODEL, max_tokens=5, system=SYSTEM, messages=[user("question")],
                              cache_control=EPH)
        assert usage_of(m) == (0, S + q1, 0)
        m = c.messages.create(model=MODEL, max_tokens=5, system=SYSTEM, cache_control=EPH,
                              messages=[user("question"), assistant("x"), user("next")])
        assert usage_of(m) == (S + q1, raw_count("x") + raw_count("next") + 2 * MESSAGE_OVERHEAD, 0)


def test_at_most_four_breakpoints_automatic_caching_included(api):
    api.script([Reply("x")])
    c = client(api)
    four = [user([cached(text(f"b{i}")) for i in range(4)])]
    five = [user([cached(text(f"b{i}")) for i in range(5)])]
    with pytest.raises(anthropic.BadRequestError, match="maximum of 4 blocks with cache_control.*Found 5"):
        c.messages.create(model=MODEL, max_tokens=5, messages=five)
    with pytest.raises(anthropic.BadRequestError, match="Found 5"):
        c.messages.create(model=MODEL, max_tokens=5, messages=four, cache_control=EPH)
    assert c.messages.create(model=MODEL, max_tokens=5, messages=four).content[0].text == "x"


# ----------------------------------------------------------------------------------------------- context editing

BETA = ["context-management-2025-06-27"]


def tool_history(names, size=200):
    msgs = [user("refactor the stats module")]
    results = []
    for i, name in enumerate(names):
        content = f"file {i}: " + "lorem ipsum dolor sit amet " * size
        results.append(content)
        msgs.append(assistant([tool_use(name, id=f"toolu_h{i}", path=f"f{i}.py")]))
        msgs.append(user([{"type": "tool_result", "tool_use_id": f"toolu_h{i}", "content": content}]))
    return msgs, results


def clear_edit(**kw):
    return {"edits": [{"type": "clear_tool_uses_20250919", **kw}]}


def saved(results, idx):
    return sum(raw_count(results[i]) - raw_count(CLEARED_PLACEHOLDER) for i in idx)


def test_clear_tool_uses_clears_all_but_the_kept_results_and_reports_it(api):
    api.script([Reply("ok"), Reply("ok")])
    c = client(api)
    msgs, results = tool_history(["read_file"] * 5)
    full = api.count({"messages": msgs})
    cm = clear_edit(trigger={"type": "input_tokens", "value": 1000}, keep={"type": "tool_uses", "value": 2})
    m = c.beta.messages.create(model=MODEL, max_tokens=5, messages=msgs, betas=BETA, context_management=cm)
    edits = m.context_management.applied_edits
    assert [(e.type, e.cleared_tool_uses, e.cleared_input_tokens) for e in edits] == [
        ("clear_tool_uses_20250919", 3, saved(results, [0, 1, 2]))]
    assert m.usage.input_tokens == full - saved(results, [0, 1, 2])
    with c.beta.messages.stream(model=MODEL, max_tokens=5, messages=msgs, betas=BETA, context_management=cm) as s:
        final = s.get_final_message()
    assert final.context_management.applied_edits[0].cleared_tool_uses == 3
    sent = api.messages_requests()[0].body["messages"]
    assert sent[2]["content"][0]["content"] == results[0]  # the client's history is not touched
    counted = c.beta.messages.count_tokens(model=MODEL, messages=msgs, betas=BETA, context_management=cm)
    assert counted.input_tokens == m.usage.input_tokens
    assert counted.context_management.original_input_tokens == full


def test_clear_tool_uses_trigger_exclusions_and_clear_at_least(api):
    api.script([Reply("ok")] * 4)
    c = client(api)
    msgs, results = tool_history(["run_command", "run_command", "read_file", "read_file", "read_file"])
    full = api.count({"messages": msgs})

    def applied(**kw):
        m = c.beta.messages.create(model=MODEL, max_tokens=5, messages=msgs, betas=BETA,
                                   context_management=clear_edit(**kw))
        return [(e.cleared_tool_uses, e.cleared_input_tokens) for e in m.context_management.applied_edits]

    assert applied(trigger={"type": "input_tokens", "value": full + 1}) == []
    assert applied(trigger={"type": "tool_uses", "value": 5}, keep={"type": "tool_uses", "value": 1},
                   exclude_tools=["run_command"]) == [(2, saved(results, [2, 3]))]
    assert applied(trigger={"type": "tool_uses", "value": 1},
                   clear_at_least={"type": "input_tokens", "value": full}) == []
    both = applied(trigger={"type": "tool_uses", "value": 1}, keep={"type": "tool_uses", "value": 4},
                   clear_tool_inputs=True)
    inputs = raw_count('run_command {"path":"f0.py"}') - raw_count("run_command {}")
    assert both == [(1, saved(results, [0]) + inputs)]


def test_clearing_invalidates_the_cache_from_the_first_cleared_result():
    with FakeMessagesAPI(min_cacheable=100) as api:
        api.script([Reply("ok"), Reply("ok")])
        c = client(api)
        msgs, results = tool_history(["read_file"] * 4)
        msgs[-1]["content"][0] = cached(msgs[-1]["content"][0])
        sys_blocks = [cached({"type": "text", "text": SYSTEM})]
        c.beta.messages.create(model=MODEL, max_tokens=5, system=sys_blocks, messages=msgs, betas=BETA)
        m = c.beta.messages.create(model=MODEL, max_tokens=5, system=sys_blocks, messages=msgs, betas=BETA,
                                   context_management=clear_edit(trigger={"type": "tool_uses", "value": 1},
                                                                 keep={"type": "tool_uses", "value": 1}))
        assert m.usage.cache_read_input_tokens == raw_count(SYSTEM)
        assert m.usage.cache_creation_input_tokens == api.count({"messages": msgs}) - saved(results, [0, 1, 2])


def test_context_management_needs_its_beta_header(api):
    api.script([Reply("ok")])
    msgs, _ = tool_history(["read_file"])
    with pytest.raises(anthropic.BadRequestError, match="context-management-2025-06-27"):
        client(api).messages.create(model=MODEL, max_tokens=5, messages=msgs,
                                    extra_body={"context_management": clear_edit()})


def test_clear_thinking_keeps_the_last_turns_thinking(api):
    api.script([Reply("ok")])
    msgs = [user("q"), assistant([thinking("deep thoughts " * 50), text("a")]), user("q2"),
            assistant([thinking("more thoughts"), text("b")]), user("q3")]
    m = client(api).beta.messages.create(model=MODEL, max_tokens=5, messages=msgs, betas=BETA, context_management={
        "edits": [{"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}}]})
    e = m.context_management.applied_edits[0]
    assert (e.type, e.cleared_thinking_turns, e.cleared_input_tokens) == (
        "clear_thinking_20251015", 1, raw_count("deep thoughts " * 50))


def test_bench_script_runs_and_reports_the_session_prompt_it_built():
    proc = subprocess.run([sys.executable, str(HERE.parent / "bench" / "bench_fakeapi.py"), "--calls", "3",
                           "--turns", "4", "--lines", "20"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "SDK create:" in proc.stdout and "SDK stream:" in proc.stdout
    expected = raw_count("task") + MESSAGE_OVERHEAD
    for i in range(3):  # the cached prefix of the last turn: everything up to the previous turn's result
        expected += raw_count(f'read_file {{"path":"f{i}.py"}}') + MESSAGE_OVERHEAD
        expected += raw_count("".join(f"def f{i}_{j}(x):\n    return x * {j} + {i}\n" for j in range(20)))
        expected += MESSAGE_OVERHEAD
    assert f"({expected:,} read from the cache)" in proc.stdout
