"""Git as a second look for rules other than the stale-path promotion (issue 15, set 18): a `paths:` glob whose
directory is missing is a moved directory only when git shows files were once under it (CTX507), and a file a
sparse checkout leaves off the disk is the repository's all the same (CTX401). Real repositories built here."""

from __future__ import annotations

import shutil
from pathlib import Path

from ctxls.core.check import CheckConfig, Workspace, run_checks
from ctxls.core.settings import Settings

from test_history import git, write

DBT = "---\npaths:\n  - \"services/etl/dbt/**\"\n---\n\n# dbt\n"
WEB = "---\npaths:\n  - \"services/web/app/api/**\"\n  - \"services/web/src/**\"\n---\n\n# Web API\n"


def _findings(root: Path, code: str, git_history: bool = True) -> dict[tuple[str, int], str]:
    (root / ".home").mkdir(exist_ok=True)
    ws = Workspace(root, Settings(home=root / ".home", ceiling=root),
                   CheckConfig(select=(code,), git_history=git_history))
    res = run_checks(ws)
    assert res.errors == []
    return {(ws.rel(f.path), f.line): f.severity for f in res.findings}


def _commit(root: Path, message: str, date: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message, date=date)


def _new_repo(tmp_path: Path, name: str = "repo") -> Path:
    root = tmp_path / name
    root.mkdir()
    git(root, "init", "-q")
    return root


def _glob_repo(tmp_path: Path) -> Path:
    root = _new_repo(tmp_path)
    write(root, ".claude/rules/dbt.md", DBT)
    write(root, ".claude/rules/web.md", WEB)
    write(root, "services/etl/dbt/models/a.sql", "select 1\n")
    write(root, "services/web/src/main.ts", "export {}\n")
    write(root, "services/web/src/api/client.ts", "export {}\n")  # an `api/` elsewhere: reads as a moved one
    write(root, "services/etl/api/x.py", "\n")
    _commit(root, "first", "2025-01-01T12:00:00Z")
    git(root, "rm", "-rq", "services/etl/dbt")
    write(root, "services/etl/dbt_old/models/a.sql", "select 1\n")
    _commit(root, "retire dbt", "2025-02-01T12:00:00Z")
    return root


def test_a_glob_directory_git_had_is_a_warning_one_it_never_had_is_info(tmp_path: Path) -> None:
    got = _findings(_glob_repo(tmp_path), "CTX507")
    assert got[(".claude/rules/dbt.md", 3)] == "warning"  # services/etl/dbt/ had files: they went
    assert got[(".claude/rules/web.md", 3)] == "info"  # services/web/app/api/ never had any: written ahead


def test_without_git_history_a_missing_glob_directory_stays_a_warning(tmp_path: Path) -> None:
    got = _findings(_glob_repo(tmp_path), "CTX507", git_history=False)
    assert got[(".claude/rules/dbt.md", 3)] == "warning"
    assert got[(".claude/rules/web.md", 3)] == "warning"


def _sparse_repo(tmp_path: Path) -> Path:
    root = _new_repo(tmp_path)
    write(root, "anvil/AGENTS.md", "# Anvil\n\n- `snapshots/state.json`: the chain state the tests load\n"
                                   "- `snapshots/gone.json`: an older state\n")
    write(root, "anvil/snapshots/state.json", "{}\n")
    write(root, "anvil/snapshots/README.md", "state\n")
    write(root, "anvil/snapshots/gone.json", "{}\n")
    _commit(root, "first", "2025-01-01T12:00:00Z")
    git(root, "rm", "-q", "anvil/snapshots/gone.json")
    git(root, "commit", "-qm", "drop the old state", date="2025-02-01T12:00:00Z")
    git(root, "sparse-checkout", "set", "--no-cone", "/*", "!/anvil/snapshots/state.json")
    assert not (root / "anvil/snapshots/state.json").exists()
    return root


def test_a_file_the_sparse_checkout_leaves_off_the_disk_exists(tmp_path: Path) -> None:
    got = _findings(_sparse_repo(tmp_path), "CTX401")
    assert ("anvil/AGENTS.md", 3) not in got  # tracked, only not checked out
    assert got[("anvil/AGENTS.md", 4)] == "warning"  # in no checkout at all: deleted


CLAIMS = ("# Layout\n\n"
          "- `src/old_loader.py`: reads the config\n"          # 3: committed, then deleted
          "- `src/planned_cache.py`: the cache layer\n"        # 4: never committed
          "- [the guide](docs/guide.md) explains the rest\n"   # 5: a link, never committed
          "- `ui/copuntry-combobox.tsx`: the picker\n"         # 6: misspelt, never committed
          "- `docs/api.md`: the API reference\n")               # 7: never committed, docs/architecture/api.md is


def _claims_repo(tmp_path: Path) -> Path:
    root = _new_repo(tmp_path)
    write(root, "CLAUDE.md", CLAIMS)
    write(root, "src/old_loader.py", "\n")
    write(root, "ui/country-combobox.tsx", "export {}\n")
    write(root, "docs/index.md", "# Docs\n")
    write(root, "docs/architecture/api.md", "# API\n")
    _commit(root, "first", "2025-01-01T12:00:00Z")
    git(root, "rm", "-q", "src/old_loader.py")
    write(root, "src/loader.py", "\n")
    _commit(root, "fold the loader", "2025-02-01T12:00:00Z")
    return root


def test_git_confirms_a_claim_in_text_or_makes_it_info(tmp_path: Path) -> None:
    root = _claims_repo(tmp_path)
    (root / ".home").mkdir()
    ws = Workspace(root, Settings(home=root / ".home", ceiling=root), CheckConfig(select=("CTX401",)))
    by_line = {f.line: f for f in run_checks(ws).findings}
    assert by_line[3].severity == "warning" and "fold the loader" in by_line[3].message
    assert by_line[4].severity == "info" and by_line[4].data.get("never_in_git")
    assert "never had it" in by_line[4].message
    assert by_line[5].severity == "warning"  # a link: the model follows it whatever git says
    assert by_line[6].severity == "warning"  # misspelt: a typo of a file that is there
    assert by_line[7].severity == "warning"  # a real file named at a wrong path: the quick fix rewrites it
    assert "docs/architecture/api.md" in by_line[7].message


def test_a_claim_git_could_not_answer_in_time_is_info_saying_so(tmp_path: Path, monkeypatch) -> None:
    """Issue 15, set 30: under load the log of a 38,000-commit repository took longer than its budget, and
    claims git would have settled as never committed stayed warnings, so the answer changed with the machine's
    load. A log not read to its end confirms nothing: info, saying why. A link stays a warning."""
    from ctxls.core import history

    root = _claims_repo(tmp_path)
    monkeypatch.setattr(history, "_log_removals", lambda *a, **k: ({}, False))  # git out of time
    (root / ".home").mkdir()
    ws = Workspace(root, Settings(home=root / ".home", ceiling=root), CheckConfig(select=("CTX401",)))
    by_line = {f.line: f for f in run_checks(ws).findings}
    assert by_line[3].severity == "info" and "could not be read in time" in by_line[3].message
    assert by_line[4].severity == "info" and "could not be read in time" in by_line[4].message
    assert by_line[5].severity == "warning"  # a link
    assert by_line[7].severity == "warning"  # a real file named at a wrong path


def test_without_git_history_or_in_a_shallow_clone_a_claim_stays_a_warning(tmp_path: Path) -> None:
    root = _claims_repo(tmp_path)
    assert _findings(root, "CTX401", git_history=False)[("CLAUDE.md", 4)] == "warning"
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", root.as_uri(), str(shallow))
    got = _findings(shallow, "CTX401")
    assert got[("CLAUDE.md", 4)] == "warning"  # a shallow clone knows nothing before its cut
    assert got[("CLAUDE.md", 3)] == "warning"


ROOT_RULE = "# App\n\n- Keep the request timeout at 30 seconds for every call to the pose service in staging.\n"
SUB_RULE = "# Worker\n\n- Keep the request timeout at 60 seconds for every call to the pose service in staging.\n"


def _diverged_repo(tmp_path: Path, later: bool) -> Path:
    root = _new_repo(tmp_path, "later" if later else "together")
    write(root, "CLAUDE.md", ROOT_RULE)
    write(root, "worker/CLAUDE.md", SUB_RULE.replace("60", "30") if later else SUB_RULE)
    _commit(root, "first", "2025-01-01T12:00:00Z")
    if later:
        write(root, "worker/CLAUDE.md", SUB_RULE)
        git(root, "commit", "-qam", "slower worker", date="2025-02-01T12:00:00Z")
    return root


def test_two_versions_one_commit_wrote_are_info_one_changed_later_is_a_warning(tmp_path: Path) -> None:
    got = _findings(_diverged_repo(tmp_path, later=False), "CTX202")
    assert got == {("worker/CLAUDE.md", 3): "info"}  # written together: neither is a copy left behind
    got = _findings(_diverged_repo(tmp_path, later=True), "CTX202")
    assert got == {("worker/CLAUDE.md", 3): "warning"}  # one place updated, the other not: a stale copy


def test_a_generic_name_in_a_path_of_three_segments_is_put_to_git(tmp_path: Path) -> None:
    # `gradle/build-logic/CLAUDE.md` under a recipe heading (unsure): git matches the whole path, so a generic
    # file name does not keep it from the history that shows it moved
    root = _new_repo(tmp_path)
    write(root, "gradle/build-logic/CLAUDE.md", "# Build logic\n")
    write(root, "gradle/wrapper/gradle-wrapper.properties", "x\n")
    _commit(root, "first", "2025-01-01T12:00:00Z")
    git(root, "mv", "gradle/build-logic", "build-logic")
    git(root, "commit", "-qm", "move build-logic", date="2025-02-01T12:00:00Z")
    write(root, "CLAUDE.md", "# App\n\n## Creating a new feature module\n\n"
                             "1. Apply the plugin. See [build-logic](gradle/build-logic/CLAUDE.md) for what it sets up.\n")
    _commit(root, "docs", "2025-03-01T12:00:00Z")
    assert _findings(root, "CTX401") == {("CLAUDE.md", 5): "warning"}


def test_recall_fixture_in_a_repository_that_had_every_file(tmp_path: Path) -> None:
    """The recall fixture's 32 stale paths, in a git repository that committed each of them and then deleted
    it: git confirms every claim, so all 32 are warnings (the three whose first directory exists nowhere too).
    Never committed, a path in text is info (`test_git_confirms_a_claim_in_text_or_makes_it_info`)."""
    import shutil

    src = Path(__file__).resolve().parent.parent / "fixtures" / "check" / "ref_stale_recall" / "tree" / "repo"
    root = tmp_path / "repo"
    shutil.copytree(src, root, symlinks=True)
    (root / ".home").mkdir()
    ws = Workspace(root, Settings(home=root / ".home", ceiling=root), CheckConfig(select=("CTX401",),
                                                                                  git_history=False))
    missing = sorted({f.data["path"].removeprefix("./") for f in run_checks(ws).findings})
    assert len(run_checks(ws).findings) == 32
    git(root, "init", "-q")
    for p in missing:
        write(root, p.rstrip("/") + ("/x.md" if p.endswith("/") else ""), "old\n")
    _commit(root, "first", "2025-01-01T12:00:00Z")
    for p in missing:
        git(root, "rm", "-rq", p.rstrip("/"))
    git(root, "commit", "-qm", "reorganise", date="2025-02-01T12:00:00Z")
    got = _findings(root, "CTX401")
    assert len(got) == 32 and set(got.values()) == {"warning"}, got


def test_never_committed_is_a_setting(tmp_path: Path) -> None:
    """`[check] never_committed = "warning"` reports a claim git never had as the rule's other claims; a value
    that is no severity is an error message and the default stays."""
    root = _claims_repo(tmp_path)
    (root / ".home").mkdir()
    ws = Workspace(root, Settings(home=root / ".home", ceiling=root),
                   CheckConfig(select=("CTX401",), never_committed="warning"))
    by_line = {f.line: f for f in run_checks(ws).findings}
    assert by_line[4].severity == "warning" and by_line[4].data.get("never_in_git")
    config, errors = CheckConfig.from_mapping({"never_committed": "loud"})
    assert config.never_committed == "info" and errors == ["[check] never_committed must be one of error, "
                                                           "warning, info, hint"]


def test_a_js_name_of_a_typescript_file_is_stale_when_git_had_the_js_file(tmp_path: Path) -> None:
    """`lib/helpers.js` names lib/helpers.ts (TypeScript's ESM imports write the emitted name), but `lib/api.js`,
    which git shows was converted to lib/api.ts, is a layout written before the code moved to TypeScript."""
    root = _new_repo(tmp_path)
    write(root, "web/CLAUDE.md", "# Admin\n\n- `lib/api.js`: the API client\n- `lib/helpers.js`: small helpers\n")
    write(root, "web/lib/api.js", "export {}\n")
    write(root, "web/lib/helpers.ts", "export {}\n")
    _commit(root, "first", "2025-01-01T12:00:00Z")
    git(root, "mv", "web/lib/api.js", "web/lib/api.ts")
    git(root, "commit", "-qm", "convert to TypeScript", date="2025-02-01T12:00:00Z")
    assert _findings(root, "CTX401") == {("web/CLAUDE.md", 3): "warning"}


def _export_repo(tmp_path: Path) -> Path:
    """A filtered export: one commit deleted `app/calculator/`, which the code still imports, and `app/legacy/`,
    which nothing imports any more."""
    root = _new_repo(tmp_path)
    write(root, "app/__init__.py", "")
    write(root, "app/routes/__init__.py", "")
    write(root, "app/routes/views.py", "from app.calculator.query import funnel\n\nimport app.routes\n")
    write(root, "app/legacy/old.py", "x = 1\n")
    write(root, "app/calculator/query/funnel.py", "funnel = 1\n")
    write(root, "CLAUDE.md", "# App\n\n- Funnel views: `app/calculator/query/funnel.py`\n"
                             "- Old helpers: `app/legacy/old.py`\n"
                             "- Notebooks: [notebooks](app/research/notebooks/README.md)\n")
    write(root, ".claude/skills/funnel/SKILL.md",
          "---\nname: funnel\ndescription: Explain the funnel views. Use when asked about the funnel.\n---\n\n"
          "Read [the view](../../../app/calculator/query/funnel.py).\n"
          "Read [the helpers](../../../app/legacy/old.py).\n")
    _commit(root, "first", "2025-01-01T12:00:00Z")
    git(root, "rm", "-rq", "app/legacy", "app/calculator")
    _commit(root, "public export: drop legacy and the private calculator", "2025-02-01T12:00:00Z")
    return root


def test_a_path_whose_module_the_code_still_imports_is_info(tmp_path: Path) -> None:
    """Issue 15, set 30 (a public export of a private repository): `app/calculator/...` is missing from the
    checkout while the code imports `app.calculator`, so the instruction is right about the code: info, for
    CTX401 and for a skill's link (CTX506). `app/legacy/old.py`, deleted and imported by nothing, stays a
    warning; so does `app/research/...`, which nothing imports."""
    root = _export_repo(tmp_path)
    stale = _findings(root, "CTX401")
    assert stale[("CLAUDE.md", 3)] == "info"
    assert stale[("CLAUDE.md", 4)] == "warning"
    assert stale[("CLAUDE.md", 5)] == "warning"
    links = _findings(root, "CTX506")
    assert links == {(".claude/skills/funnel/SKILL.md", 6): "info", (".claude/skills/funnel/SKILL.md", 7): "warning"}


def test_without_git_a_path_the_code_imports_stays_a_warning(tmp_path: Path) -> None:
    root = _export_repo(tmp_path)
    assert _findings(root, "CTX401", git_history=False)[("CLAUDE.md", 3)] == "warning"
    shutil.rmtree(root / ".git")
    assert _findings(root, "CTX401")[("CLAUDE.md", 3)] == "warning"


def test_a_generated_file_or_a_place_to_put_things_that_git_shows_moved_is_stale(tmp_path: Path) -> None:
    """Set 28's Silencer and set 27's blz: `src/os.cpp` in a list under "Build artifacts" is read as something a
    build makes, and "Move logs to `.agents/logs/.archive/`" as a place things are put. Git showing the path was
    renamed away (to `src/platform/os.cpp`, `.agents/.archive/`) says the text names the old place: a warning. A
    file under the same heading that git shows was deleted, not moved (`dist/app.js`), may be built again: silent.
    The .gitignore naming the new place (`.agents/.archive/*`) does not make the old one a run-time name."""
    root = _new_repo(tmp_path)
    write(root, "src/os.cpp", "int x;\n")
    write(root, "src/main.cpp", "int main;\n")
    write(root, "dist/app.js", "x\n")
    write(root, ".agents/logs/.archive/.gitkeep", "")
    write(root, ".agents/logs/2025-01-01-setup.md", "# Setup\n")
    write(root, "CLAUDE.md", "# Game\n\n## Build artifacts\n\n"
                             "- Windows: the runtime finds its assets next to the exe (`src/os.cpp` `GetResDir`).\n"
                             "- Web: the bundle `dist/app.js`, loaded by `src/main.cpp`.\n\n"
                             "## Logs\n\nMove logs to `.agents/logs/.archive/` when:\n\n1. they are older than 30 days\n")
    _commit(root, "first", "2025-01-01T12:00:00Z")
    (root / "src/platform").mkdir()
    git(root, "mv", "src/os.cpp", "src/platform/os.cpp")
    git(root, "rm", "-q", "dist/app.js")
    (root / ".agents/.archive").mkdir(parents=True)
    git(root, "mv", ".agents/logs/.archive/.gitkeep", ".agents/.archive/.gitkeep")
    shutil.rmtree(root / ".agents/logs/.archive", ignore_errors=True)  # (git mv leaves the emptied directory)
    write(root, ".gitignore", ".agents/.archive/*\n!.agents/.archive/.gitkeep\n")
    _commit(root, "reorganise", "2025-02-01T12:00:00Z")
    assert _findings(root, "CTX401") == {("CLAUDE.md", 5): "warning", ("CLAUDE.md", 10): "warning"}
