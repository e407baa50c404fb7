"""CTX401 against a real git history (issue 15): a claim the rule is unsure of (a bare file name in running text,
a first directory found nowhere) or a path the text calls optional ("when available") is a warning when git
shows the repository had the file and the instruction file is older than its removal; info, or nothing for
the optional one, otherwise. Repositories built here with fixed commit dates."""

from __future__ import annotations

from pathlib import Path

from ctxls.core.check import CheckConfig, Workspace, run_checks
from ctxls.core.settings import Settings

from test_history import git, write

NOTES = ("# Project\n\n"
         "Out of the box, `core_components.ex` imports the icon component for hero icons.\n"
         "- Use the `<.input>` component from `core_components.ex` when available.\n"
         "- The team wrote a `handbook.md` of its own.\n")


def _check(root: Path) -> dict[tuple[int, str], tuple[str, str]]:
    (root / ".home").mkdir(exist_ok=True)
    ws = Workspace(root, Settings(home=root / ".home", ceiling=root), CheckConfig(select=("CTX401",)))
    res = run_checks(ws)
    assert res.errors == []
    return {(f.line, f.data["path"]): (f.severity, f.message) for f in res.findings}


def _repo(tmp_path: Path, notes_first: bool, ignore: str = "", notes_at: str = "CLAUDE.md") -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    write(root, "lib/web/core_components.ex", "defmodule Core do end\n")
    write(root, ".gitignore", ignore or "_build/\n")
    if notes_first:
        write(root, notes_at, NOTES)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first", date="2025-01-01T12:00:00Z")
    git(root, "rm", "-q", "lib/web/core_components.ex")
    write(root, "lib/web/icon.ex", "defmodule Icon do end\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "fold core_components.ex into components", date="2025-03-01T12:00:00Z")
    if not notes_first:
        write(root, "CLAUDE.md", NOTES)
        git(root, "add", "-A")
        git(root, "commit", "-qm", "notes", date="2025-06-01T12:00:00Z")
    return root


def test_a_name_the_repository_had_is_a_warning(tmp_path: Path) -> None:
    got = _check(_repo(tmp_path, notes_first=True))
    sev, msg = got[(3, "core_components.ex")]
    assert sev == "warning" and "was deleted on 2025-03-01" in msg and "fold core_components.ex" in msg
    assert got[(4, "core_components.ex")][0] == "warning"  # "when available", and it was here: stale after all
    assert got[(5, "handbook.md")][0] == "info"  # never in the history: a bare name stays unsure


def test_a_file_written_after_the_removal_names_something_else(tmp_path: Path) -> None:
    got = _check(_repo(tmp_path, notes_first=False))
    assert got[(3, "core_components.ex")][0] == "info"
    assert (4, "core_components.ex") not in got  # optional, and not this repository's old file: nothing
    assert got[(5, "handbook.md")][0] == "info"


def test_a_name_the_gitignore_speaks_of_is_made_at_run_time(tmp_path: Path) -> None:
    got = _check(_repo(tmp_path, notes_first=True, ignore="# Transitory artifacts (core_components.ex, ...)\n.tmp/\n"))
    assert got[(3, "core_components.ex")][0] == "info"
    assert (4, "core_components.ex") not in got


def test_without_git_history_nothing_is_promoted(tmp_path: Path) -> None:
    root = _repo(tmp_path, notes_first=True)
    (root / ".home").mkdir(exist_ok=True)
    ws = Workspace(root, Settings(home=root / ".home", ceiling=root),
                   CheckConfig(select=("CTX401",), git_history=False))
    got = {(f.line, f.data["path"]): f.severity for f in run_checks(ws).findings}
    assert got[(3, "core_components.ex")] == "info" and (4, "core_components.ex") not in got


def test_a_file_moved_after_the_removal_was_written_before_it(tmp_path: Path) -> None:
    """The instruction file was written before the removal, then moved (packages/server/ -> packages/core/): its
    first version counts (`git log --follow`), so the claim is a warning; a file really written after the
    removal stays info (the test above)."""
    root = _repo(tmp_path, notes_first=True, notes_at="packages/server/CLAUDE.md")
    git(root, "mv", "packages/server", "packages/core")
    git(root, "commit", "-qm", "rename the package", date="2025-06-01T12:00:00Z")
    got = _check(root)
    sev, msg = got[(3, "core_components.ex")]
    assert sev == "warning" and "was deleted on 2025-03-01" in msg
    assert got[(5, "handbook.md")][0] == "info"


def test_git_settles_a_tool_location_and_an_example_the_repository_had(tmp_path: Path) -> None:
    """A location an agent defines (`.claude/rules/`) and a path under an Examples heading are info on their
    own; git showing the repository had them, removed after the instruction file was written, makes them
    warnings (a directory: a file below it removed). A tool location the history never had stays info."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    write(root, "CLAUDE.md", "# Project\n\nSee the rules in `.claude/rules/` and the agents in `.claude/agents/`.\n\n"
                             "## Examples\n\n- `lib/old/widget_view.ex` renders a widget.\n")
    write(root, ".claude/rules/testing.md", "Run the tests.\n")
    write(root, ".claude/settings.json", "{}\n")
    write(root, "lib/old/widget_view.ex", "defmodule W do end\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first", date="2025-01-01T12:00:00Z")
    git(root, "rm", "-rq", ".claude/rules", "lib/old")
    write(root, "lib/new.ex", "defmodule N do end\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "consolidate the guidance", date="2025-03-01T12:00:00Z")
    got = _check(root)
    sev, msg = got[(3, ".claude/rules/")]
    assert sev == "warning" and ".claude/rules/testing.md" in msg and "2025-03-01" in msg
    assert got[(7, "lib/old/widget_view.ex")][0] == "warning"
    assert got[(3, ".claude/agents/")][0] == "info"


def test_a_precise_path_removed_before_the_file_was_written_is_still_stale(tmp_path: Path) -> None:
    """Text that moved into a new instruction file from others (git follows a rename, not a merge): a path of
    three segments or more that git shows removed (`web/src/icons`, transferred to a package) is a warning even
    when the file naming it is younger than the removal; a bare name removed before the file was written stays
    info (it may name something else). `web/` holds a package.json, and `web/src/` is a directory: the path is
    no export subpath of the package."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    write(root, "web/package.json", "{}\n")
    write(root, "web/src/icons/x.svg", "<svg/>\n")
    write(root, "web/src/app.ts", "export {}\n")
    write(root, "web/legacy.ts", "export {}\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first", date="2025-01-01T12:00:00Z")
    git(root, "rm", "-rq", "web/src/icons", "web/legacy.ts")
    write(root, "packages/opal/svgs/x.svg", "<svg/>\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Transfer all icons to @opal/icons", date="2025-03-01T12:00:00Z")
    write(root, "web/AGENTS.md", "# Web\n\n- ONLY use icons from the `web/src/icons` directory.\n"
                                 "- If an icon is needed but doesn't exist in the `web/src/icons` directory, import it from Figma.\n"
                                 "- The team keeps `legacy.ts` as its own.\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "notes", date="2025-06-01T12:00:00Z")
    got = _check(root)
    for line in (3, 4):  # a claim, and a conditional one (reported only when git shows it was there)
        sev, msg = got[(line, "web/src/icons")]
        assert sev == "warning" and "Transfer all icons" in msg
    assert got[(5, "legacy.ts")][0] == "info"


def test_a_dotfile_of_two_dots_is_a_file_when_git_had_it(tmp_path: Path) -> None:
    """shisho (set 16): `.mise.toml`, renamed to `mise.toml`, read as a file-name suffix like `.spec.ts` and never
    reported. A dotted name is a suffix when files of that suffix exist; otherwise git decides."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    write(root, ".mise.toml", "[tools]\nnode = '22'\n")
    write(root, "src/app.spec.ts", "test('x', () => {})\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first", date="2025-01-01T12:00:00Z")
    write(root, "CLAUDE.md", "# Notes\n\nTool versions are pinned in `.mise.toml`.\n"
                             "Tests are named `.spec.ts` and live beside the code.\n"
                             "Lint settings are in `.golangci.yml`.\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "notes", date="2025-02-01T12:00:00Z")
    git(root, "mv", ".mise.toml", "mise.toml")
    git(root, "commit", "-qm", "mise reads mise.toml", date="2025-03-01T12:00:00Z")
    got = _check(root)
    sev, msg = got[(3, ".mise.toml")]
    assert sev == "warning" and "mise.toml" in msg
    assert (4, ".spec.ts") not in got  # `app.spec.ts` is here: the suffix names a kind of file
    assert (5, ".golangci.yml") not in got  # never in the history: a suffix or a dotfile, nothing to say


def test_a_named_build_config_is_no_generic_name(tmp_path: Path) -> None:
    """writing-tools (set 18): `vite.google-docs.config.ts`, deleted, read as generic like `vite.config.ts` (in
    many projects, so a deleted one says nothing) and never asked of git: a lost true positive."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    write(root, "frontend/vite.google-docs.config.ts", "export default {}\n")
    write(root, "frontend/vite.config.ts", "export default {}\n")
    write(root, "frontend/CLAUDE.md", "# Frontend\n\nThe docs bundle builds separately via `vite.google-docs.config.ts`.\n"
                                      "The app builds via `vite.config.ts`.\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first", date="2025-01-01T12:00:00Z")
    git(root, "rm", "-q", "frontend/vite.google-docs.config.ts", "frontend/vite.config.ts")
    git(root, "commit", "-qm", "unify the builds", date="2025-03-01T12:00:00Z")
    got = _check(root)
    assert got[(3, "vite.google-docs.config.ts")][0] == "warning"
    assert got[(4, "vite.config.ts")][0] == "info"  # a tool's own config: git's answer would say nothing
