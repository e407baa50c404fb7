"""Unit tests of the duplication rules (CTX201, CTX202): normalisation, units, similarity, mtimes, bad input.

The data-driven cases live in fixtures/check/dup_*."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ctxls.core.check import CheckConfig, Workspace, run_checks
from ctxls.core.fixes import apply_to_text
from ctxls.core.rules import dup_analysis as A
from ctxls.core.rules import dup_pairs
from ctxls.core.rules import dup_units as U
from ctxls.core.rules import duplication as D
from ctxls.core.settings import Settings


def make_ws(tmp_path: Path, files: dict[str, str], **config) -> Workspace:
    root = tmp_path / "repo"
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    root.mkdir(exist_ok=True)
    settings = Settings(home=tmp_path / "home", ceiling=tmp_path, managed_dir=tmp_path / "managed")
    cfg = CheckConfig(select=frozenset({"CTX201", "CTX202"}), **config)
    return Workspace(root, settings, cfg)


def findings(ws: Workspace, code: str | None = None):
    res = run_checks(ws)
    assert res.errors == []
    return [f for f in res.findings if code is None or f.code == code]


# ------------------------------------------------------------------------------------------ normalisation

def test_normalise_ignores_markdown_case_and_punctuation() -> None:
    a = D.normalise("Run **`pnpm test`** before pushing; CI runs the _same_ command.")
    b = D.normalise("run `pnpm test` before pushing -- ci runs the same command")
    assert a == b == ["run", "pnpm", "test", "before", "pushing", "ci", "runs", "the", "same", "command"]


def test_normalise_keeps_paths_and_snake_case() -> None:
    words = D.normalise("Edit `services/api/user_store.py` (see <!-- note --> docs/x.md).")
    assert words == ["edit", "services/api/user_store.py", "see", "docs/x.md"]


def test_content_words_drop_modal_negation_and_numbers() -> None:
    a = D.content_words(D.normalise("Migrations MUST be reversible within 30s."))
    b = D.content_words(D.normalise("Migrations should never be reversible within 60s."))
    assert a == b == frozenset({"migrations", "reversible"})


@pytest.mark.parametrize("x, y, near", [
    ("Keep request handlers under 40 lines; move helpers into lib/.",
     "Keep request handlers under 80 lines; move helpers into lib/.", True),
    ("Never call the billing service synchronously from a handler.",
     "Always call the billing service synchronously from a handler.", True),
    ("Run `make lint` before pushing to the main branch.",
     "Run `make test` before pushing to the main branch.", False),
    ("Use the payment fixtures in tests/payment instead of mocks.",
     "Use the order fixtures in tests/order instead of mocks.", False),
])
def test_similarity_threshold(x: str, y: str, near: bool) -> None:
    sim = D.similarity(D.content_words(D.normalise(x)), D.content_words(D.normalise(y)))
    assert (sim >= CheckConfig().duplicate_threshold) is near, sim


# ------------------------------------------------------------------------------------------ units

def test_units_skip_trivial_blocks() -> None:
    text = (
        "---\ndescription: Always run the whole test suite first\n---\n"
        "# Always run the whole test suite first\n\n"
        "Setext heading with enough words here\n======\n\n"
        "```\nAlways run the whole test suite first\n```\n\n"
        "<!-- Always run the whole test suite first -->\n\n"
        "| Column one here | Column two here |\n|---|---|\n| a row with four words | x |\n\n"
        "- Too short.\n"
        "- Always run the whole test suite first.\n"
        "  continued on a lazy line\n"
        "  - a nested item with words\n\n"
        "@docs/a.md is imported here for you\n"
    )
    units = D.extract_units(text)
    keys = [u.key for u in units]
    assert keys == [
        "a row with four words x",
        "always run the whole test suite first continued on a lazy line",
        "a nested item with words",
    ]
    item = units[1]
    assert item.nested and (item.start, item.end) == (19, 20)


def test_paragraph_of_sentences_splits_into_lines() -> None:
    text = "Use pnpm for every install.\nNever commit the lockfile by hand.\n\nThis paragraph is\nsoft wrapped prose.\n"
    assert [(u.start, u.end) for u in D.extract_units(text)] == [(0, 0), (1, 1), (3, 4)]


@pytest.mark.parametrize("text", [
    "", "\n\n", "---\n", "---\nfoo: [\n---\n", "```\nnever closed\n- a b c d e\n", "\x00\x01 binary \xff",
    "- " * 5000, "#" * 10000, "> > > - quoted item with words\n", "1)\n2)\n", "|\n|-|\n",
    "- a\n\t- tabbed nested item with words\n",
])
def test_units_never_raise(text: str) -> None:
    D.extract_units(text)


# ------------------------------------------------------------------------------------------ rules

def test_within_file_duplicate_fix_round_trip(tmp_path: Path) -> None:
    text = "# A\n\n- Always run the whole test suite first.\n\nSome prose in between here.\n\n" \
           "- always run the whole test suite first\n"
    ws = make_ws(tmp_path, {"CLAUDE.md": text})
    (f,) = findings(ws)
    assert f.code == "CTX201" and f.line == 7 and "Duplicate of line 3" in f.message
    (fix,) = f.fixes
    assert fix.safe
    assert apply_to_text(text, fix.edits) == text[:text.index("- always")]


@pytest.mark.parametrize("child_newer", [True, False])
def test_diverged_says_which_is_newer_by_mtime(tmp_path: Path, child_newer: bool) -> None:
    root_text = "# Root\n\n1. Keep request handlers under 40 lines; move helpers into `lib/`.\n"
    child_text = "# API\n\n- Keep request handlers under 80 lines; move helpers into `lib/`.\n"
    ws = make_ws(tmp_path, {"CLAUDE.md": root_text, "api/CLAUDE.md": child_text})
    now = time.time()
    old, new = now - 3600, now
    os.utime(ws.root / "CLAUDE.md", (old, new if not child_newer else old))
    os.utime(ws.root / "api/CLAUDE.md", (old, old if not child_newer else new))
    (f,) = findings(ws)
    assert f.code == "CTX202" and f.path == ws.root / "api/CLAUDE.md" and f.line == 3
    assert 'Diverged from "Keep request handlers under 40 lines' in f.message
    (fix,) = f.fixes
    assert not fix.safe
    (edit,) = fix.edits
    if child_newer:
        assert "this version is newer by file modification time" in f.message
        assert edit.path == ws.root / "CLAUDE.md"
        assert apply_to_text(root_text, [edit]) == \
            "# Root\n\n1. Keep request handlers under 80 lines; move helpers into `lib/`.\n"
    else:
        assert "the other version is newer by file modification time" in f.message
        assert edit.path == ws.root / "api/CLAUDE.md"
        assert apply_to_text(child_text, [edit]) == \
            "# API\n\n- Keep request handlers under 40 lines; move helpers into `lib/`.\n"


def test_config_threshold_and_min_words(tmp_path: Path) -> None:
    files = {
        "CLAUDE.md": "- Feature flags live in `config/flags.yaml` and default to off.\n- Use pnpm everywhere.\n",
        "a/CLAUDE.md": "- Feature flags live in `config/flags.yaml` and default to on.\n- Use pnpm everywhere.\n",
    }
    assert [f.code for f in findings(make_ws(tmp_path / "1", files))] == ["CTX202"]  # 3 words < 4
    assert findings(make_ws(tmp_path / "2", files, duplicate_threshold=0.9)) == []
    got = findings(make_ws(tmp_path / "3", files, duplicate_min_words=3))
    assert sorted(f.code for f in got) == ["CTX201", "CTX202"]


def test_symlinked_copy_is_one_file(tmp_path: Path) -> None:
    ws = make_ws(tmp_path, {"CLAUDE.md": "- Always run the whole test suite first.\n"})
    (ws.root / "a").mkdir()
    (ws.root / "a" / "CLAUDE.md").symlink_to(ws.root / "CLAUDE.md")
    assert findings(ws) == []


def test_load_order_survives_disagreeing_sessions() -> None:
    pos = A.load_order(3, [[0, 1, 2], [2, 1, 0]])
    assert sorted(pos) == [0, 1, 2]


def test_analysis_is_shared_between_the_rules(tmp_path: Path) -> None:
    ws = make_ws(tmp_path, {"CLAUDE.md": "- Always run the whole test suite first.\n"})
    assert D._analyse(ws) is D._analyse(ws)


def test_near_duplicate_graph_equals_brute_force(tmp_path: Path) -> None:
    """The prefix-filtered join finds exactly the pairs an all-pairs comparison finds: representatives of
    co-loading files, different keys, not parallel items (`dup_parallel`), Jaccard of content words at or above
    the threshold."""
    import subprocess
    import sys

    repo, home = tmp_path / "repo", tmp_path / "home"
    gen = Path(__file__).resolve().parent.parent / "bench" / "gen_monorepo.py"
    subprocess.run([sys.executable, str(gen), str(repo), "--home", str(home), "--files", "200", "--dirs", "25",
                    "--claude", "40", "--skills", "5"], check=True, stdout=subprocess.DEVNULL)
    for threshold in (0.8, 0.6):
        ws = Workspace(repo, Settings(home=home, ceiling=tmp_path, managed_dir=tmp_path / "managed"),
                       CheckConfig(duplicate_threshold=threshold))
        an = A.Analysis.build(*D._inputs(ws, 4), threshold, 4)
        reps = [u for reps in an.reps_of for u in reps.values()]
        want = set()
        for i, u in enumerate(reps):
            for v in reps[i + 1:]:
                if v.fid not in an.coload[u.fid] or u.key == v.key or dup_pairs.parallel(an, u, v):
                    continue
                inter = len(u.words & v.words)
                if inter / (len(u.words) + len(v.words) - inter) >= threshold - 1e-9:
                    want.add(frozenset((u.uid, v.uid)))
        got = {frozenset((a, b)) for a, nb in an.similar.items() for b in nb}
        assert want, "the generated repo has near duplicates"
        assert got == want


# ------------------------------------------------------------------------------------------ fast paths
# Each shortcut of the build gives what the plain version it replaces gives.

def test_chunked_normalisation_equals_normalise() -> None:
    import random

    r = random.Random(7)
    alphabet = "aZk_ \t\u00a0\u2003\x1cΣİ'./@+#:=-<!-->`*~()[]019²"
    texts = ["Run **`pnpm test`** before __init__ and _x_ (see <!-- a b --> docs/x.md).", "ΣΑΣ σ", ""]
    texts += ["".join(r.choice(alphabet) for _ in range(r.randint(0, 30))) for _ in range(20_000)]
    for text in texts:
        words = D.normalise(text)
        assert U.normalised(text) == (len(words), " ".join(words), D.content_words(words)), repr(text)


def test_sentence_end_check_equals_pattern() -> None:
    import random
    import re

    pattern = re.compile(r"[.!?:][*_`)\"']* *$")
    r = random.Random(8)
    for _ in range(50_000):
        text = "".join(r.choice(".!?:*_`)\"' a\t\r") for _ in range(r.randint(0, 8)))
        assert U.ends_sentence(text) == bool(pattern.search(text)), repr(text)


def test_list_item_shortcut() -> None:
    text = "1 plain text with words\n- an item with four words\n-  two spaces before text\n* star item words here\n"
    units = D.extract_units(text, min_words=1)
    assert [(u.key, u.col) for u in units] == [
        ("1 plain text with words", 0), ("an item with four words", 0), ("two spaces before text", 0),
        ("star item words here", 0)]
    assert D.extract_units("- - -\n---\n- \u00a0x y z w\n", min_words=1)[0].key == "x y z w"


def _assert_matches_as_resolved(an: A.Analysis) -> None:
    """The matches `build` made group by group are the ones `_resolve` makes unit by unit."""
    want = {}
    for units in an.units_of:
        for u in units:
            v = an._exact_partner(u)
            if v is not None:
                want[u.uid] = (v.uid, True, 1.0)
            elif u.uid in an.similar:  # the most similar earlier neighbour; ties: the one that loads first
                here = (an.files[u.fid].pos, u.start)
                ranked = []
                for vid, sim in an.similar[u.uid].items():
                    place = (an.files[an.by_uid[vid].fid].pos, an.by_uid[vid].start)
                    if place < here:
                        ranked.append(((-sim, *place), vid, sim))
                if ranked:
                    _, vid, sim = min(ranked)
                    want[u.uid] = (vid, False, sim)
    assert {uid: (m.earlier.uid, m.exact, m.similarity) for uid, m in an.matches.items()} == want


def test_build_matches_equal_unit_by_unit_resolution(tmp_path: Path) -> None:
    a = "- Always run the whole test suite before pushing.\n"
    b = "- Database migrations MUST be reversible in every service.\n"
    c = "- Keep request handlers small and move helpers into lib.\n  - nested detail here\n"
    d = "- Database migrations should be reversible in every service.\n"
    files = {
        "CLAUDE.md": a + b + c,
        "CLAUDE.local.md": a + d,
        "AGENTS.md": b + a,
        "a/CLAUDE.md": c + a + d + a + b,
        "a/b/CLAUDE.md": c + b + d + c,
        "a/b/AGENTS.md": a + b,
        "z/CLAUDE.md": d + a,
    }
    ws = make_ws(tmp_path, files)
    an = D._analyse(ws)
    assert sum(m.exact for m in an.matches.values()) >= 5 and any(not m.exact for m in an.matches.values())
    _assert_matches_as_resolved(an)


def test_build_matches_equal_unit_by_unit_resolution_on_a_generated_repo(tmp_path: Path) -> None:
    import subprocess
    import sys

    repo, home = tmp_path / "repo", tmp_path / "home"
    gen = Path(__file__).resolve().parent.parent / "bench" / "gen_monorepo.py"
    subprocess.run([sys.executable, str(gen), str(repo), "--home", str(home), "--files", "200", "--dirs", "25",
                    "--claude", "40", "--skills", "5"], check=True, stdout=subprocess.DEVNULL)
    ws = Workspace(repo, Settings(home=home, ceiling=tmp_path, managed_dir=tmp_path / "managed"), CheckConfig())
    an = A.Analysis.build(*D._inputs(ws, 4), 0.8, 4)
    assert an.matches
    _assert_matches_as_resolved(an)


def test_session_counts_leave_out_agent_config_and_docs_folders(tmp_path: Path) -> None:
    """"In each of N sessions" counts the directories a session starts in (issue 16): services/api, not its
    .claude/ or docs/ folders, which load the same files."""
    rule = "- Run the linter with `make lint` before every commit, never by hand.\n"
    ws = make_ws(tmp_path, {"CLAUDE.md": "# Root\n" + rule, "services/api/CLAUDE.md": "# API\n" + rule,
                            "services/api/docs/guide.md": "# Guide\n", "services/api/.claude/rules/x.md": "# X\n",
                            "services/api/src/main.py": "print()\n"})
    [f] = findings(ws, "CTX201")
    assert f.path.name == "CLAUDE.md" and f.path.parent.name == "api"
    assert "in each of 2 sessions" in f.message, f.message  # services/api and services/api/src
    assert f.data["sessions"] == 2


def test_a_copied_file_is_one_finding(tmp_path: Path) -> None:
    """dup_copies (issue 15): 5 or more instructions of one file repeated in another are one finding, a warning
    for a copy and info for two variants of one file (constitution.md / constitution-py.md), the line findings
    info; lead-ins of same-titled sections are info."""
    root, found = _copies_fixture(tmp_path, "CTX201")
    copies = {f.path.relative_to(root).as_posix(): f for f in found if "instructions of this file repeat" in f.message}
    assert copies[".claude/rules/constitution.md"].severity == "info"
    assert "variants" in copies[".claude/rules/constitution.md"].message
    assert copies["services/CLAUDE.md"].severity == "warning"
    assert (copies["services/CLAUDE.md"].data or {}).get("copies") == 5
    assert [f for f in found if f.severity == "warning"] == [copies["services/CLAUDE.md"]]
    lines = [f for f in found if f.path == root / "services" / "CLAUDE.md" and f is not copies["services/CLAUDE.md"]]
    assert len(lines) == 5 and all(f.severity == "info" and f.fixes for f in lines)


def test_diverged_variants_are_info(tmp_path: Path) -> None:
    """CTX202 between two variants of one file (constitution.md / constitution-py.md: 80 vs 90 percent) is
    info: the variants are meant to differ."""
    _, (f,) = _copies_fixture(tmp_path, "CTX202")
    assert f.severity == "info" and "variants of one file" in f.message and "90 percent" in f.message


def _copies_fixture(tmp_path: Path, code: str):
    """fixtures/check/dup_copies_leadins checked for one code: (the repo root, the findings)."""
    import shutil

    from ctxls.core.check import run_checks as run
    from ctxls.core.settings import Settings
    from ctxls.core.workspace import CheckConfig, Workspace

    src = Path(__file__).resolve().parent.parent / "fixtures" / "check" / "dup_copies_leadins" / "tree"
    shutil.copytree(src, tmp_path / "t", symlinks=True)
    root = tmp_path / "t" / "repo"
    (tmp_path / "home").mkdir()
    ws = Workspace(root, Settings(home=tmp_path / "home", ceiling=tmp_path, managed_dir=tmp_path / "m"),
                   CheckConfig(select=frozenset({code}), git_history=False))
    return root, run(ws).findings
