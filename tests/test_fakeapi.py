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


@pytest.mark.parametrize("use_async", [False, True])
async def test_overloaded_mid_stream_is_not_retried_by_the_sdk(api, use_async):
    api.script([Reply(text("partial text"), tool_use("read_file", path="a.py"))])
    api.fail_next(Fault.overloaded_mid_stream(after_blocks=1))
    kw = dict(model=MODEL, max_tokens=10, messages=[user("x")])
    got = []
    with pytest.raises(anthropic.APIStatusError) as err:
        if use_async:
            c = anthropic.AsyncAnthropic(api_key="test", base_url=api.base_url, max_retries=3)
            async with c.messages.stream(**kw) as s:
                async for e in s:
                    got.append(e.type)
        else:
            with client(api, max_retries=3).messages.stream(**kw) as s:
                for e in s:
                    got.append(e.type)
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
        if use_async:
            c = anthropic.AsyncAnthropic(api_key="test", base_url=api.base_url, max_retries=3)
            async with c.messages.stream(**kw) as s:
                async for e in s:
                    got.append(e.type)
        else:
            with client(api, max_retries=3).messages.stream(**kw) as s:
                for e in s:
                    got.append(e.type)
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
