"""Publishing diagnostics: the direct JSON conversion equals pygls' (positions in every encoding), and the
publish plan sends exactly the files whose diagnostics changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from lsprotocol import types as T
from pygls.protocol import default_converter
from pygls.workspace.position_codec import PositionCodec

from ctxls.core.engine import Engine
from ctxls.core.findings import Finding, Related, Span
from ctxls.core.settings import Settings
from ctxls.lsp.convert import client_units, diagnostic_dict, to_diagnostic
from ctxls.lsp.diagnostics import plan_publish, publish

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures"
ENCODINGS = [T.PositionEncodingKind.Utf16, T.PositionEncodingKind.Utf8, T.PositionEncodingKind.Utf32, "bogus"]
TEXTS = ["", "plain ascii", "café au lait", "emoji 😀 here", "\U0001F600\U0001F600x", "lone \udcff surrogate",
         "中文字符 and ascii", "mixed é😀中"]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_client_units_match_pygls(encoding) -> None:
    codec = PositionCodec(encoding)
    for text in TEXTS:
        for cut in range(len(text) + 1):
            assert client_units(text[:cut], encoding) == codec.client_num_units(text[:cut]), (text, cut)


class FakeServer(SimpleNamespace):
    def lines_of(self, path: Path) -> list[str]:
        return self.files.get(path, "").split("\n")


def _server(files: dict[Path, str], encoding) -> FakeServer:
    return FakeServer(files=files, workspace=SimpleNamespace(position_codec=PositionCodec(encoding)))


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_diagnostic_dict_equals_the_converted_diagnostic(tmp_path: Path, encoding) -> None:
    a, b = tmp_path / "a b" / "CLAUDE.md", tmp_path / "x.md"
    files = {a: "# T\n- 😀 café: x\n中文 line\n", b: "ok\n"}
    ls = _server(files, encoding)
    findings = [
        Finding("CTX201", "warning", a, Span(1, 3, 1, 12), "dup", related=[Related(b, Span(0, 0, 0, 2), "there")]),
        Finding("CTX301", "error", a, Span(2, 1, 2, 5), "missing"),
        Finding("CTX104", "info", a, Span(9, 0, 9, 3), "past the end"),  # a stale span after a shorter buffer
        Finding("CTX999", "bogus-severity", b, Span(0, 0, 0, 0), "x", related=[Related(a, Span(1, 0, 1, 4), "r")]),
    ]
    conv = default_converter()
    for f in findings:
        want = conv.unstructure(to_diagnostic(ls, f), T.Diagnostic)
        got = diagnostic_dict(f, encoding, ls.lines_of)
        assert json.loads(json.dumps(got)) == json.loads(json.dumps(want)), f


def _settings(tmp: Path, root: Path) -> Settings:
    return Settings(home=tmp / "home", ceiling=root, managed_dir=tmp / "managed", today="2026-11-29",
                    auto_memory_dir=tmp / "home" / "mem")


class Writer:
    def __init__(self) -> None:
        self.data = b""
        self.writes = 0

    def write(self, data: bytes) -> None:
        self.data += data
        self.writes += 1

    def messages(self) -> list[dict]:
        out, rest = [], self.data.decode()
        while rest:
            head, _, rest = rest.partition("\r\n\r\n")
            n = int(head.split("\r\n")[0].split(": ")[1])
            out.append(json.loads(rest[:n]))
            rest = rest[n:]
        return out


def _ls(engine: Engine, encoding=T.PositionEncodingKind.Utf16) -> SimpleNamespace:
    from pygls.protocol.json_rpc import JsonRPCProtocol

    proto = SimpleNamespace(writer=Writer(), _include_headers=True, CONTENT_TYPE=JsonRPCProtocol.CONTENT_TYPE,
                            CHARSET=JsonRPCProtocol.CHARSET)
    # agent_loop: the server's open agent session (none here), read by all_findings since the context engine
    return SimpleNamespace(engine=engine, published={}, uris={}, protocol=proto, agent_loop=None,
                           workspace=SimpleNamespace(position_codec=PositionCodec(encoding)))


def _round(ls) -> dict[str, list[dict]]:
    """Check, plan and publish; the notifications sent, by URI."""
    ls.engine.check()
    ls.protocol.writer = Writer()
    publish(ls, plan_publish(ls, ls.engine))
    msgs = ls.protocol.writer.messages()
    assert all(m["method"] == "textDocument/publishDiagnostics" for m in msgs)
    assert ls.protocol.writer.writes <= 1  # all at once
    return {m["params"]["uri"]: m["params"]["diagnostics"] for m in msgs}


def test_publish_sends_only_changed_files_and_clears_vanished_ones(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES / "lsp" / "workspace", root)
    ls = _ls(Engine(root, _settings(tmp_path, root)))
    first = _round(ls)
    claude = root / "CLAUDE.md"
    assert claude.as_uri() in first and {d["code"] for d in first[claude.as_uri()]} >= {"CTX301"}
    assert set(first) == {p.as_uri() for p in ls.engine.findings}
    # what a client shows, nothing more (the server's quick fixes find findings by code and line)
    keys = {k for ds in first.values() for d in ds for k in d}
    assert keys == {"range", "message", "severity", "code", "source", "relatedInformation"}
    assert _round(ls) == {}  # nothing changed: nothing sent
    text = claude.read_text()
    ls.engine.set_buffer(claude, text.replace("@docs/missing.md", "@docs/arch.md"))
    sent = _round(ls)
    assert claude.as_uri() in sent and "CTX301" not in {d["code"] for d in sent[claude.as_uri()]}
    assert all(ds != first.get(uri) for uri, ds in sent.items())  # only what changed
    # a file whose findings all go is cleared
    api = root / "services" / "api" / "CLAUDE.md"
    ls.engine.set_buffer(api, "# API\n@gone.md\n")
    assert {d["code"] for d in _round(ls)[api.as_uri()]} == {"CTX301"}
    ls.engine.set_buffer(api, "# API\n")
    sent = _round(ls)
    assert api not in ls.engine.findings and sent[api.as_uri()] == [] and api.as_uri() not in ls.published
    assert _round(ls) == {}


def test_an_unsent_plan_leaves_the_published_state_alone(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES / "lsp" / "workspace", root)
    ls = _ls(Engine(root, _settings(tmp_path, root)))
    _round(ls)
    claude = root / "CLAUDE.md"
    ls.engine.set_buffer(claude, claude.read_text() + "\n@docs/nowhere.md\n")
    ls.engine.check()
    plan_publish(ls, ls.engine)  # say the check's task was cancelled before it could publish
    assert "nowhere" in json.dumps(_round(ls)[claude.as_uri()])  # the next check still sends it


def test_non_ascii_text_change_republishes_unchanged_findings(tmp_path: Path) -> None:
    """Spans are in code points: the same finding after an edit earlier on its line has another UTF-16 range."""
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES / "lsp" / "workspace", root)
    claude = root / "CLAUDE.md"
    text = claude.read_text()
    ls = _ls(Engine(root, _settings(tmp_path, root)))
    _round(ls)
    line = next(i for i, t in enumerate(text.split("\n")) if "@docs/missing.md" in t)

    def missing_range(diags):
        return next(d["range"] for d in diags if d["code"] == "CTX301")

    ls.engine.set_buffer(claude, text.replace("@docs/missing.md", "é @docs/missing.md"))
    r1 = missing_range(_round(ls)[claude.as_uri()])
    ls.engine.set_buffer(claude, text.replace("@docs/missing.md", "😀 @docs/missing.md"))
    r2 = missing_range(_round(ls)[claude.as_uri()])  # same code points, one more UTF-16 unit
    assert r1["start"]["line"] == r2["start"]["line"] == line
    assert r2["start"]["character"] == r1["start"]["character"] + 1
    # an ASCII file with the same findings is not sent again
    ls.engine.set_buffer(claude, text.replace("@docs/missing.md", "x @docs/missing.md"))
    _round(ls)
    ls.engine.set_buffer(claude, text.replace("@docs/missing.md", "y @docs/missing.md"))
    assert claude.as_uri() not in _round(ls)


def test_gc_deferred_only_defers_and_restores() -> None:
    import gc

    from ctxls.lsp.diagnostics import gc_deferred

    assert gc.isenabled()
    with gc_deferred():
        assert not gc.isenabled()
    assert gc.isenabled()
    with gc_deferred(False):
        assert gc.isenabled()
    with pytest.raises(RuntimeError):
        with gc_deferred():
            raise RuntimeError("a failed check")
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_deferred():
            pass
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()


def test_full_check_pending(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES / "lsp" / "workspace", root)
    engine = Engine(root, _settings(tmp_path, root))
    assert engine.full_check_pending
    engine.check()
    assert not engine.full_check_pending
    engine.set_buffer(root / "CLAUDE.md", "# changed\n")
    assert not engine.full_check_pending
    engine.file_changed(root / "web" / "CLAUDE.md", structural=True)
    assert engine.full_check_pending


def test_range_dict_matches_pygls_on_every_kind_of_span() -> None:
    from ctxls.lsp.convert import range_dict

    lines = ["plain ascii line", "café 😀 x", "", "last"]
    spans = [Span(l1, c1, l2, c2) for l1 in range(0, 6) for l2 in (l1, l1 + 1) for c1 in (0, 3, 9, 40)
             for c2 in (0, 4, 16, 99)]
    for encoding in ENCODINGS:
        codec = PositionCodec(encoding)
        for sp in spans:
            r = codec.range_to_client_units(lines, T.Range(T.Position(sp.start_line, sp.start_col),
                                                           T.Position(sp.end_line, sp.end_col)))
            want = {"start": {"line": r.start.line, "character": r.start.character},
                    "end": {"line": r.end.line, "character": r.end.character}}
            assert range_dict(lines, sp, encoding) == want, (encoding, sp)
