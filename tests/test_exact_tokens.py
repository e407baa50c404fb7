"""Exact token counts through the real `anthropic` SDK, talking HTTP to a local stand-in of the API."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ctxls.agent.provider import exact_token_counter
from ctxls.core.tokens import TokenCounter

DEMO = Path(__file__).resolve().parent.parent / "fixtures" / "demo"


class StandIn(BaseHTTPRequestHandler):
    """POST /v1/messages/count_tokens: 3 tokens of request overhead + one per whitespace-separated word."""

    calls: list[dict] = []

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        key = self.headers.get("x-api-key") or (self.headers.get("authorization") or "").removeprefix("Bearer ")
        StandIn.calls.append({"path": self.path, "body": body, "key": key})
        if self.path != "/v1/messages/count_tokens":
            self.send_response(404)
            self.end_headers()
            return
        text = body["messages"][0]["content"]
        out = json.dumps({"input_tokens": 3 + len(text.split())}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):  # keep test output clean
        pass


@pytest.fixture()
def api():
    StandIn.calls = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_no_key_means_no_exact_mode(monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert exact_token_counter() is None


def test_exact_counts_subtract_the_request_overhead_and_are_cached(api: str) -> None:
    exact = exact_token_counter("claude-sonnet-4-5", api_key="sk-test", base_url=api)
    counter = TokenCounter(exact=exact)
    assert counter.count("one two three four") == 4
    assert counter.count("one two three four") == 4
    assert not counter.estimated and counter.method == "anthropic count_tokens"
    paths = [c["path"] for c in StandIn.calls]
    assert paths == ["/v1/messages/count_tokens"] * 2  # the empty-request probe + one text; the repeat was cached
    assert StandIn.calls[0]["key"] == "sk-test" and StandIn.calls[0]["body"]["model"] == "claude-sonnet-4-5"


def test_cli_exact_mode_end_to_end(api: str, tmp_path: Path) -> None:
    shutil.copytree(DEMO, tmp_path / "demo", ignore=shutil.ignore_patterns(".ctxls"))
    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": api}
    out = subprocess.run([sys.executable, "-m", "ctxls", "context", str(tmp_path / "demo" / "repo"), "--exact",
                          "--format", "json"], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["token_method"] == "anthropic count_tokens"
    files = [b for b in data["blocks"] if b["source"] is not None]
    assert files and all(b["estimated"] is False for b in files)
    claude = next(b for b in files if b["source"] == "CLAUDE.md")
    # the stand-in counts words: the block's tokens are its rendered text's words
    text = subprocess.run([sys.executable, "-m", "ctxls", "context", str(tmp_path / "demo" / "repo"), "--format",
                           "json", "--text", "--no-cache"], capture_output=True, text=True, env=env, timeout=60)
    rendered = next(b for b in json.loads(text.stdout)["blocks"] if b["source"] == "CLAUDE.md")["text"]
    assert claude["tokens"] == len(rendered.split())
    assert (tmp_path / "demo" / "repo" / ".ctxls" / "cache" / "tokens-default-exact.json").is_file()


def test_check_exact_never_reuses_an_estimated_report(api: str, tmp_path: Path) -> None:
    """The stored report of an estimated run must not answer an --exact run (the counts differ), and an exact
    run stores nothing a later estimated run could print."""
    shutil.copytree(DEMO, tmp_path / "demo", ignore=shutil.ignore_patterns(".ctxls"))
    repo = tmp_path / "demo" / "repo"
    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": api}
    base = [sys.executable, "-m", "ctxls", "check", str(repo), "--format", "json"]
    first = subprocess.run(base, capture_output=True, text=True, env=env, timeout=60)
    assert first.returncode in (0, 1), first.stderr
    assert StandIn.calls == []
    exact = subprocess.run(base + ["--exact"], capture_output=True, text=True, env=env, timeout=60)
    assert exact.returncode in (0, 1), exact.stderr
    # one call is the counter's start-up probe; counting the workspace takes more
    assert len(StandIn.calls) > 1, "the exact run printed the stored estimated report instead of counting"
    again = subprocess.run(base, capture_output=True, text=True, env=env, timeout=60)
    assert again.stdout == first.stdout
