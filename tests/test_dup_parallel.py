"""Parallel items (issue 15): the items of one list or table, and two files' instances of one template, are
never near duplicates (core/rules/dup_parallel.py), while a real disagreement in the same shape is still one."""

from __future__ import annotations

from pathlib import Path

from ctxls.core.check import CheckConfig, Workspace, run_checks
from ctxls.core.rules import dup_pairs
from ctxls.core.rules import duplication as D
from ctxls.core.rules.dup_parallel import block_of, line_runs, list_templates, masked, one_template
from ctxls.core.settings import Settings


def test_line_runs_group_list_items_continuations_and_table_rows() -> None:
    lines = ["# T", "- a", "  more of a", "- b", "", "1. c", "2) d", "para", "| x | y |", "| 1 | 2 |", "", "- e"]
    runs = line_runs(lines)
    assert runs == [-1, 0, 0, 0, -1, 1, 1, -1, 2, 2, -1, 3]
    assert block_of(runs, 1, 2) == 0 and block_of(runs, 3, 3) == 0
    assert block_of(runs, 7, 7) is None  # a paragraph line
    assert block_of(runs, 6, 8) is None  # across a paragraph
    assert block_of(runs, 11, 12) is None  # past the end


def test_masked_turns_every_word_with_a_digit_into_one_mark() -> None:
    assert masked("rule 3 for area 12 the handler h33 v1/area12/items validates") == \
        ("rule", "#", "for", "area", "#", "the", "handler", "#", "#", "validates")
    assert masked("no numbers here") == ("no", "numbers", "here")


def test_numbered_items_are_a_template_with_no_enumerating_name() -> None:
    keys = ["rule 3 for area 12 the handler 33 validates every incoming payload first",
            "rule 4 for area 12 the handler 40 validates every incoming payload first"]
    assert list_templates(keys) == [frozenset(), frozenset()]


def test_names_that_enumerate_are_the_templates_varying_positions() -> None:
    keys = ["rule 0 keep the alpha module small and test alpha paths",
            "rule 1 keep the beta module small and test delta paths",
            "rule 2 keep the gamma module small and test eta paths"]
    assert list_templates(keys) == [frozenset({4, 9})] * 3  # the two names (numbers are masked)


def test_unrelated_items_and_lone_items_are_no_template() -> None:
    # as many words, but most positions differ: a list, not a template
    assert list_templates(["run the linter before every push", "never commit secrets to this repository"]) == \
        [None, None]
    assert list_templates(["requests time out after 30 seconds"]) == [None]
    # exact copies within one list are CTX201's, not instances of a template
    assert list_templates(["keep handlers small and pure", "keep handlers small and pure"]) == [None, None]
    # the one of another length stays out
    got = list_templates(["rule 1 for area 2 applies", "rule 2 for area 2 applies", "a different item of five"])
    assert got == [frozenset(), frozenset(), None]


def test_one_template_needs_every_difference_at_a_position_both_lists_enumerate() -> None:
    a = masked("the billing worker of area 12 reads the billing queue")
    b = masked("the invoice worker of area 40 reads the invoice queue")
    c = masked("the billing worker of area 40 skips the billing queue")
    names = frozenset({1, 8})
    assert one_template(a, names, b, names)
    assert not one_template(a, names, b, frozenset({1}))  # position 8 does not vary in the second list
    assert not one_template(a, names, c, names)  # "reads" / "skips": a fixed word of the template changed
    assert not one_template(a, names, a[:-1], names)


def _ws(tmp_path: Path, files: dict[str, str]) -> Workspace:
    root = tmp_path / "repo"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / ".git").mkdir()
    return Workspace(root, Settings(home=tmp_path / "home", ceiling=tmp_path, managed_dir=tmp_path / "m"),
                     CheckConfig(select=["CTX202"]))


def _rules(area: int, base: int, n: int = 4) -> str:
    return "".join(f"- Rule {r} for area {area}: the handler {base + 7 * r} validates every incoming payload "
                   f"first.\n" for r in range(1, n + 1))


def test_two_instances_of_a_template_in_co_loading_files_are_not_versions(tmp_path: Path) -> None:
    ws = _ws(tmp_path, {"CLAUDE.md": "# Root\n\n" + _rules(1, 3),
                        "a/CLAUDE.md": "# A\n\n" + _rules(2, 9) + "\n## Other\n\n"
                        "- Rule 3 for area 2: the handler 31 validates every incoming payload first.\n"})
    an = D._analyse(ws)
    root_units, a_units = an.units_of
    # items of one list: never paired; the two files' rule lists: instances of one template
    assert dup_pairs.parallel(an, root_units[0], root_units[1])
    assert dup_pairs.parallel(an, root_units[0], a_units[0])
    # the lone rule under "Other" is in no template: it is a version of the root's rule 3 (another handler)
    lone = a_units[-1]
    assert dup_pairs.template(an, lone) is None and not dup_pairs.parallel(an, root_units[2], lone)
    got = run_checks(ws).findings
    assert [(f.code, f.path.relative_to(ws.root).as_posix(), f.line) for f in got] == [("CTX202", "a/CLAUDE.md", 10)]


def test_a_changed_fixed_word_of_a_templated_item_is_still_a_disagreement(tmp_path: Path) -> None:
    a_rules = _rules(2, 9).replace("Rule 2 for area 2: the handler 23 validates", "Rule 2 for area 2: the handler 23 "
                                   "never validates")
    ws = _ws(tmp_path, {"CLAUDE.md": "# Root\n\n" + _rules(1, 3), "a/CLAUDE.md": "# A\n\n" + a_rules})
    got = run_checks(ws).findings
    assert [(f.code, f.line) for f in got] == [("CTX202", 4)]
    # (every root rule has its content words: the first one that loads is the other version quoted)
    assert got[0].message.startswith('Diverged from "Rule 1 for area 1: the handler 10')
