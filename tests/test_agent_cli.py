"""`ctxls agent` end to end: the real CLI in a subprocess, the real anthropic SDK inside it, and the local stand-in
of the Messages API (tests/fakeapi.py) playing scripted scenarios and recording every request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_helpers import (agent_env, assert_valid_conversation, audit, make_workspace, result_text, run_agent,
                           run_agent_in_pty, without_cache_control,
                           session_id, tool_results, transcript)
from fakeapi import Fault, FakeMessagesAPI, Reply, text, tool_use


@pytest.fixture
def api():
    with FakeMessagesAPI() as a:
        yield a


@pytest.fixture
def ws(tmp_path):
    return make_workspace(tmp_path)


def bodies(api) -> list[dict]:
    return [r.body for r in api.messages_requests() if r.status == 200 and not r.fault]


def test_multi_step_task_runs_command_reads_and_edits(api, ws):
    api.script([
        Reply(text("Checking the tests first."), tool_use("run_command", command="echo tests-pass")),
        Reply(tool_use("read_file", path="src/app.py")),
        Reply(tool_use("edit_file", path="src/app.py", old_string='"Hello " + name', new_string='f"Hello {name}"')),
        Reply(text("Done: greet uses an f-string.")),
    ])
    proc = run_agent(api, ws, "use an f-string in greet", "--yes-to", "run_command:echo*", "--yes-to", "edit_file")
    assert proc.returncode == 0, proc.stderr
    assert "Done: greet uses an f-string." in proc.stdout
    assert (ws / "src" / "app.py").read_text() == 'def greet(name):\n    return f"Hello {name}"\n'
    sent = bodies(api)
    assert len(sent) == 4 and api.remaining() == 0
    assert result_text(tool_results(sent[1])[0]).startswith("exit code 0\ntests-pass")
    assert '"Hello " + name' in result_text(tool_results(sent[2])[0])
    assert result_text(tool_results(sent[3])[0]) == "edited src/app.py"
    decisions = [(a["tool"], a["decision"]) for a in audit(ws)]
    assert decisions == [("run_command", "allowed"), ("read_file", "allowed"), ("edit_file", "allowed")]
    sid = session_id(proc)
    assert all(a["session"] == sid for a in audit(ws))
    assert_valid_conversation(sent[-1]["messages"])


def test_edit_without_approval_is_refused_and_the_model_sees_it(api, ws):
    before = (ws / "src" / "app.py").read_text()
    api.script([Reply(tool_use("edit_file", path="src/app.py", old_string="Hello", new_string="Bye")),
                Reply(text("I could not edit."))])
    proc = run_agent(api, ws, "change greeting")
    assert proc.returncode == 0, proc.stderr
    assert (ws / "src" / "app.py").read_text() == before
    res = tool_results(bodies(api)[1])[0]
    assert res["is_error"] is True and result_text(res).startswith("refused: needs approval")
    assert audit(ws)[0]["decision"] == "refused"


def test_first_request_carries_exactly_the_context_blocks(api, ws):
    api.script([Reply(text("ok"))])
    proc = run_agent(api, ws, "hello")
    assert proc.returncode == 0, proc.stderr
    ctx = subprocess.run([sys.executable, "-m", "ctxls", "context", ".", "--format", "json", "--text", "--no-cache"],
                         cwd=ws, env=agent_env(api), capture_output=True, text=True, timeout=60)
    assert ctx.returncode == 0, ctx.stderr
    blocks = json.loads(ctx.stdout)["blocks"]
    expected = "".join(b["text"] for b in blocks if b["startup"] and b["kind"] not in ("system_prompt", "tool_schemas"))
    first = bodies(api)[0]["messages"][0]
    assert first["role"] == "user"
    assert first["content"][0]["text"] == expected
    assert "Run `echo tests-pass`" in expected and first["content"][1]["text"] == "hello"


def test_nested_claude_md_joins_after_the_first_read_there_exactly_once(api, ws):
    api.script([
        Reply(tool_use("read_file", path="src/app.py")),
        Reply(tool_use("read_file", path="services/billing/refund.py")),
        Reply(tool_use("read_file", path="services/billing/invoice.py")),
        Reply(text("done")),
    ])
    proc = run_agent(api, ws, "look around")
    assert proc.returncode == 0, proc.stderr
    sent = bodies(api)
    marker = "NESTED-BILLING-RULE"
    assert all(marker not in json.dumps(b) for b in sent[:2])  # not at startup, not after a read elsewhere
    last_user = sent[2]["messages"][-1]["content"]
    assert last_user[0]["type"] == "tool_result" and "def refund" in result_text(last_user[0])
    assert last_user[1]["type"] == "text" and marker in last_user[1]["text"]
    assert "services/billing/CLAUDE.md" in last_user[1]["text"]
    assert json.dumps(sent[3]).count(marker) == 1  # the second read in billing adds no second copy


def test_traversal_symlink_escape_and_dotenv_are_refused_and_never_sent(api, ws, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("OUTSIDE-CONTENT-MARKER\n")
    os.symlink(outside / "secret.txt", ws / "src" / "link.txt")
    api.script([
        Reply(tool_use("read_file", path="../../etc/passwd"), tool_use("read_file", path="src/link.txt"),
              tool_use("read_file", path=".env"), tool_use("list_dir", path=".")),
        Reply(text("nothing to see")),
    ])
    proc = run_agent(api, ws, "read secrets")
    assert proc.returncode == 0, proc.stderr
    sent = json.dumps(bodies(api))
    for marker in ("OUTSIDE-CONTENT-MARKER", "DOTENV-CONTENT-MARKER", "root:x:0:0"):
        assert marker not in sent
    res = tool_results(bodies(api)[1])
    assert [r.get("is_error") for r in res] == [True, True, True, None]
    assert "outside the workspace" in result_text(res[0]) and "symbolic link" in result_text(res[1])
    assert "deny pattern '.env*'" in result_text(res[2])
    listing = result_text(res[3]).splitlines()
    assert ".env" not in listing and "[1 entry hidden by the deny list]" in listing and "README.md" in listing
    assert [a["decision"] for a in audit(ws)] == ["refused", "refused", "refused", "allowed"]


def test_write_after_reading_an_injection_is_refused_even_when_allow_listed(api, ws):
    api.script([
        Reply(tool_use("read_file", path="docs/notes.md")),
        Reply(tool_use("write_file", path="README.md", content="")),
        Reply(text("ok")),
    ])
    proc = run_agent(api, ws, "summarise the notes", "--yes-to", "write_file", "--yes-to", "edit_file")
    assert proc.returncode == 0, proc.stderr
    assert "README-ORIGINAL-TEXT" in (ws / "README.md").read_text()
    res = tool_results(bodies(api)[2])[0]
    assert res["is_error"] and "untrusted text was read earlier" in result_text(res)
    a = audit(ws)
    assert a[0]["tool"] == "read_file" and a[0]["tainted"] is True and "prompt injection" in a[0]["reason"]
    assert a[1]["decision"] == "refused" and a[1]["tainted"] is True


def test_reading_a_dependency_taints_but_plain_command_output_does_not(api, ws):
    api.script([
        Reply(tool_use("run_command", command="echo all good")),
        Reply(tool_use("edit_file", path="src/app.py", old_string="Hello", new_string="Hi")),
        Reply(tool_use("read_file", path="vendor/lib/helper.py")),
        Reply(tool_use("edit_file", path="src/app.py", old_string="Hi", new_string="Hey")),
        Reply(text("ok")),
    ])
    proc = run_agent(api, ws, "x", "--yes-to", "run_command:echo*", "--yes-to", "edit_file")
    assert proc.returncode == 0, proc.stderr
    assert [a["decision"] for a in audit(ws)] == ["allowed", "allowed", "allowed", "refused"]
    assert "Hi " in (ws / "src" / "app.py").read_text()
    assert "dependency directory" in audit(ws)[2]["reason"]


def test_invalid_arguments_are_an_error_result_and_the_loop_goes_on(api, ws):
    api.script([
        Reply(tool_use("read_file", path=5), tool_use("read_file"), tool_use("no_such_tool", x=1)),
        Reply(tool_use("read_file", path="src/app.py", start_line=2)),
        Reply(text("recovered")),
    ])
    proc = run_agent(api, ws, "x")
    assert proc.returncode == 0, proc.stderr
    res = tool_results(bodies(api)[1])
    assert all(r["is_error"] for r in res)
    assert "path" in result_text(res[0]) and "5 is not of type 'string'" in result_text(res[0])
    assert "'path' is a required property" in result_text(res[1])
    assert "unknown tool 'no_such_tool'" in result_text(res[2])
    assert result_text(tool_results(bodies(api)[2])[0]).startswith("     2\t")
    assert [a["decision"] for a in audit(ws)] == ["error", "error", "error", "allowed"]


@pytest.mark.parametrize("fault", [
    Fault.rate_limit(retry_after=0.05), Fault.overloaded(), Fault.server_error(),
    Fault.overloaded_mid_stream(after_blocks=1), Fault.cut_stream(after_events=3)],
    ids=["429", "529", "500", "529-mid-stream", "cut-stream"])
def test_each_fault_is_retried_and_the_transcript_has_no_gaps(api, ws, fault):
    api.script([Reply(text("Reading."), tool_use("read_file", path="src/app.py")), Reply(text("All read."))])
    api.fail_next(fault, fault)
    proc = run_agent(api, ws, "read app")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("retrying in") == 2
    ok = bodies(api)
    assert len(ok) == 2 and len(api.messages_requests()) == 4
    assert ok[0]["messages"] == [r.body for r in api.messages_requests()][0]["messages"]  # the retry resends as is
    sid = session_id(proc)
    messages = [r["message"] for r in transcript(ws, sid) if r["type"] == "message"]
    assert_valid_conversation(messages)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[1]["content"][0]["text"] == "Reading."  # once: the broken attempt's text is not kept


def test_provider_failure_after_retries_exits_3(api, ws):
    api.script([Reply(text("never"))])
    api.fail_next(*[Fault.overloaded()] * 5)
    proc = run_agent(api, ws, "x")
    assert proc.returncode == 3, proc.stderr
    assert "gave up after 5 attempts" in proc.stderr and "overloaded_error" in proc.stderr


def test_no_key_is_a_clear_usage_error(api, ws):
    proc = run_agent(api, ws, "x", ANTHROPIC_API_KEY="")
    assert proc.returncode == 2
    assert "ANTHROPIC_API_KEY" in proc.stderr and "Traceback" not in proc.stderr
    assert api.requests == []


def test_max_turns_stops_with_1_and_resume_continues_the_history(api, ws):
    api.script([
        Reply(tool_use("read_file", path="src/app.py")),
        Reply(tool_use("list_dir", path="src")),
        Reply(tool_use("read_file", path="README.md")),
        Reply(text("finished")),
    ])
    first = run_agent(api, ws, "explore", "--max-turns", "2")
    assert first.returncode == 1, first.stderr
    assert "--max-turns" in first.stderr
    sid = session_id(first)
    assert len(bodies(api)) == 2
    # the tool calls of the last answer ran before stopping: the transcript ends with their results
    msgs = [r["message"] for r in transcript(ws, sid) if r["type"] == "message"]
    assert msgs[-1]["role"] == "user" and msgs[-1]["content"][0]["type"] == "tool_result"
    second = run_agent(api, ws, "--resume", sid)
    assert second.returncode == 0, second.stderr
    assert session_id(second) == sid and "finished" in second.stdout
    resumed = bodies(api)[2]
    assert without_cache_control(resumed["messages"]) == msgs  # the full history, as stored
    # a new process sends the same system prompt and tool definitions, byte for byte (a stable cached prefix),
    # with at most four breakpoints: last tool, system, startup block, newest message
    assert resumed["system"] == bodies(api)[0]["system"] and resumed["tools"] == bodies(api)[0]["tools"]
    marks = json.dumps(resumed).count('"cache_control"')
    assert marks == 4 and resumed["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert resumed["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert resumed["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert_valid_conversation(bodies(api)[-1]["messages"])


def test_remember_writes_the_memory_index_and_refuses_secrets(api, ws, tmp_path):
    api.script([Reply(tool_use("remember", fact="The billing tests need the fake clock."),
                      tool_use("remember", fact="key sk-ant-api03-u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8dKLzd")),
                Reply(text("noted"))])
    proc = run_agent(api, ws, "remember")
    assert proc.returncode == 0, proc.stderr
    mem = (tmp_path / "home" / "mem" / "MEMORY.md").read_text()
    assert "- The billing tests need the fake clock. (2026-11-29)" in mem and "sk-ant" not in mem
    res = tool_results(bodies(api)[1])
    assert not res[0].get("is_error") and res[1]["is_error"] and "Anthropic API key" in result_text(res[1])
    assert "sk-ant-api03-u8jz" not in (ws / ".ctxls" / "audit.jsonl").read_text()  # redacted in the audit too


def test_on_a_terminal_the_gate_asks_and_a_rejected_edit_leaves_the_file(api, ws):
    before = (ws / "src" / "app.py").read_text()
    api.script([
        Reply(tool_use("edit_file", path="src/app.py", old_string="Hello", new_string="Bye")),
        Reply(tool_use("run_command", command="echo approved-run")),
        Reply(text("ok")),
    ])
    rc, out = run_agent_in_pty(api, ws, ["change greeting"], answers=["n", "y"])
    assert rc == 0, out
    assert "-    return \"Hello \" + name" in out and "+    return \"Bye \" + name" in out  # the diff was shown
    assert (ws / "src" / "app.py").read_text() == before
    res = tool_results(bodies(api)[1])[0]
    assert res["is_error"] and result_text(res).startswith("denied: the user rejected this change")
    assert result_text(tool_results(bodies(api)[2])[0]).startswith("exit code 0\napproved-run")
    assert [a["decision"] for a in audit(ws)] == ["denied", "approved"]


def test_ctrl_c_cancels_with_1_and_leaves_a_consistent_transcript(api, ws):
    import signal
    import time

    api.script([Reply(tool_use("run_command", command="sleep 30")), Reply(text("never"))])
    proc = subprocess.Popen([sys.executable, "-m", "ctxls", "agent", "wait", "--yes-to", "run_command"], cwd=ws,
                            env=agent_env(api), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not any(a["tool"] == "run_command" for a in audit(ws)) \
            and len(api.messages_requests()) < 1:
        time.sleep(0.05)
    time.sleep(1.0)  # the command is running now
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1, err
    assert "cancelled" in err
    msgs = [r["message"] for r in transcript(ws, session_id(subprocess.CompletedProcess([], 1, out, err)))
            if r["type"] == "message"]
    assert_valid_conversation(msgs)
    assert msgs[-1]["content"][0]["content"] == "not executed: the user cancelled the run"
    assert [(a["tool"], a["decision"], a["reason"]) for a in audit(ws)] == [
        ("run_command", "error", "cancelled by the user")]


def test_wall_clock_timeout_stops_with_1(api, ws):
    api.script([Reply(text("too slow"))])
    api.fail_next(Fault.slow(10))
    proc = run_agent(api, ws, "x", "--timeout", "1")
    assert proc.returncode == 1, proc.stderr
    assert "time limit" in proc.stderr


def test_server_side_clearing_sends_context_management(api, ws):
    (ws / ".ctxls.toml").write_text((ws / ".ctxls.toml").read_text() + "server_side_clearing = true\n")
    api.script([Reply(tool_use("read_file", path="src/app.py")), Reply(text("ok"))])
    proc = run_agent(api, ws, "read")
    assert proc.returncode == 0, proc.stderr
    first = api.messages_requests()[0]
    assert "context-management-2025-06-27" in first.headers.get("anthropic-beta", "")
    (edit,) = first.body["context_management"]["edits"]
    assert edit["type"] == "clear_tool_uses_20250919" and edit["keep"] == {"type": "tool_uses", "value": 3}
