"""Rule: `paths:` globs of rules and skills that are invalid or match nothing (CTX507)."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from .. import discovery as D
from ..loader import is_within
from ..workspace import FileInfo, Workspace
from ..findings import Finding, Span
from ..globs import PathGlobs, parse_paths, split_outside_braces
from . import GIT_BUDGET_S, rule
from .sources import FM, claude_base, key_span, kind_word, read_frontmatter, sources

# ============================================================================================ CTX507
@rule("CTX507", "paths-glob", "skills", "warning",
      summary="A `paths:` glob of a rule or skill that is invalid or matches no file in the workspace.",
      why="A rule or skill with `paths:` loads only when Claude reads a matching file. A pattern that is invalid "
          "matches nothing; a pattern that matches no file (a renamed directory, a wrong extension, a path "
          "written relative to the wrong directory) means the instructions never load. Patterns are matched with "
          "gitignore semantics relative to the directory that contains `.claude/`.",
      example="```markdown\n---\npaths:\n  - \"src/api/**/*.ts\"   # the code moved to services/api/\n---\n```",
      fix="Fix the pattern so it matches the files the rule is for (relative to the directory containing "
          "`.claude/`), or delete it. Directories ctxls never scans (node_modules, dist, build...) are not "
          "checked. Only what looks like a mistake is a warning: a pattern whose directory is missing while a "
          "directory of that name (or a close one beside it) exists elsewhere, the way a moved directory looks, "
          "or a rule none of whose patterns match although they name directories. It is info when another "
          "pattern of the rule matches and the pattern's directory exists (a kind of file the project has none "
          "of yet) or exists nowhere under any name like it (a rule written for projects in general: `tests/**` "
          "where there are none) or is one member of a family of patterns (`java/compiler/**` beside "
          "`go/compiler/**` and `csharp/compiler/**`: a language not written yet), and when every pattern names a kind of file (`**/*.nix`, `flake.nix`) that the "
          "project has none of: such a rule never loads here and costs nothing. A rule of a template directory (`[check] template_dirs`) scopes the project it is copied "
          "into, which the template does not hold: info. "
          "An exclusion (`!packages/**/*.test.ts`) is not checked: matching nothing, it leaves nothing out. In a git "
          "repository a warning needs git to show files were once under the pattern's directory (a directory "
          "that moved or went); one the repository never had (`.github/**` before any CI, an `app/api/` not grown "
          "yet) is info.")
def paths_glob(ws: Workspace):
    suspects: list[tuple[Finding, str]] = []
    for f in _paths_glob(ws, suspects):
        yield f
    yield from _moved_per_git(ws, suspects)


def _moved_per_git(ws: Workspace, suspects: list[tuple[Finding, str]]):
    """A pattern whose directory is missing reads as a moved directory: a warning. With git history at hand it
    stays one only when git shows files were once under that directory (`services/etl/dbt/`, deleted when the
    ETL moved); a directory the repository never had is one the rule was written for ahead of time (a Next.js
    `app/api/` the frontend never grew, `.github/` before any CI): info."""
    history = ws.git() if suspects else None
    if history is None:
        yield from (f for f, _ in suspects)
        return
    removals = history.removals({d + "/" for _, d in suspects if d}, budget=GIT_BUDGET_S, settle=True)
    for f, d in suspects:
        r = removals.get(d + "/") if d else None
        if r is not None and (r.path == d or r.path.startswith(d + "/")):
            f.data.setdefault("explain", []).append(f"git history: {r.describe()}")
            yield f
        elif d:
            f.severity = "info"
            f.data.setdefault("explain", []).append(
                f"git history shows no file was ever under `{d}/`: the pattern was written for files to come, "
                "not for a directory that moved")
            f.message += f" (git shows no file was ever under `{d}/`)"
            yield f
        else:
            yield f


def _paths_glob(ws: Workspace, suspects: list[tuple[Finding, str]]):
    root_only = ws.settings.paths_md_root_only
    for fi in sources(ws, D.RULE, D.SKILL):
        fm = read_frontmatter(fi)
        if fm is None or not isinstance(fm.data, dict) or fm.data.get("paths") is None:
            continue
        value = fm.data["paths"]
        key_line = fm.keys.get("paths", 1)
        whole = parse_paths(value, root_only)
        if not isinstance(value, (str, list)):
            for err in whole.errors:
                yield Finding("CTX507", "warning", fi.path, key_span(fi, key_line, "paths"),
                              f"`paths:` {err.split('paths ', 1)[-1]}: Claude Code loads the "
                              f"{kind_word(fi.kind)} in every session; write a list of globs")
            continue
        if whole.unconditional and not whole.errors:
            continue
        # one entry per pattern as Claude Code splits them (commas outside braces, list items too)
        entries = [e for item in ([value] if isinstance(value, str) else value)
                   for e in (split_outside_braces(item) if isinstance(item, str) else [item])]
        cb = claude_base(fi.path)
        base = cb[1] if cb is not None else None
        check_matches = base is not None and is_within(base, ws.root) and \
            not (cb is not None and cb[0] == ws.settings.claude_dir)
        misses: list[tuple[str, int]] = []
        matched = False
        for entry in entries:
            line = _entry_line(fi, fm, key_line, entry)
            if not isinstance(entry, str):
                yield Finding("CTX507", "warning", fi.path, key_span(fi, line),
                              f"`paths:` entry {entry!r} is not a string: it matches nothing; quote it")
                continue
            if not entry:
                continue
            if entry.startswith("!"):
                continue  # `!packages/**/*.test.ts`: an exclusion, which matching nothing leaves nothing out
            one = parse_paths([entry], root_only)
            if one.errors:
                err = one.errors[0].replace("pattern ", "Glob ", 1)
                yield Finding("CTX507", "warning", fi.path, _entry_span(fi, line, entry),
                              f"{err}; fix the pattern")
                continue
            if one.unconditional or not check_matches:
                continue
            if _skipped_area(one.patterns):
                continue
            if _any_match(ws, base, one, root_only):
                matched = True
            else:
                misses.append((entry, line))
        kinds_only = all(kind_only(e) for e, _ in misses)
        for entry, line in misses:
            where = ws.rel(base) if base != ws.root else "the workspace root"
            where = where if where != "." else "the workspace root"
            if matched and _dir_exists(ws, base, entry):
                # `**/*.tsx` beside a `**/*.ts` that matches: a kind of file the project has none of yet, while
                # the rule loads for its other patterns
                yield Finding("CTX507", "info", fi.path, _entry_span(fi, line, entry),
                              f"Glob '{entry}' matches no file under {where} yet (the {kind_word(fi.kind)} loads "
                              f"for its other patterns); drop it if no such file is coming")
                continue
            moved = None if kind_only(entry) else _moved_dir(ws, base, entry)
            family = _family(entry, entries)
            if matched and moved is not None and family is not None:
                # `java/compiler/**` beside `go/compiler/**` and `csharp/compiler/**`: one pattern per language of a
                # family; the `compiler/` of another language says nothing moved, the member is not written yet
                yield Finding("CTX507", "info", fi.path, _entry_span(fi, line, entry),
                              f"Glob '{entry}' matches no file under {where} yet: the {kind_word(fi.kind)} names the "
                              f"same directory under other parents (`{family}`), and loads for those; drop it if "
                              f"none is coming")
                continue
            if matched and moved is None:
                # a directory this project does not have, with nothing of its name anywhere (a rule written for
                # projects in general, `tests/**` where there are none): nothing says it moved
                d = _literal_dir(entry)
                yield Finding("CTX507", "info", fi.path, _entry_span(fi, line, entry),
                              f"Glob '{entry}' matches no file under {where}: there is no `{d}/` and no directory "
                              f"of that name anywhere (the {kind_word(fi.kind)} loads for its other patterns); "
                              f"drop it if none is coming",
                              data={"explain": [f"`{d}/` is missing, and no directory of the workspace is named "
                                                f"`{d.rsplit('/', 1)[-1]}` or close to it: nothing says it moved"]})
                continue
            if not matched and kinds_only:
                # `**/*.nix`, `flake.nix`: a rule for a kind of file this project has none of; it costs nothing
                yield Finding("CTX507", "info", fi.path, _entry_span(fi, line, entry),
                              f"Glob '{entry}' matches no file under {where}: the project has no such file, so the "
                              f"{kind_word(fi.kind)} never loads here; fix the pattern if such files exist",
                              data={"explain": ["every pattern of the rule names a kind of file (no directory), "
                                                "and the workspace has none of them"]})
                continue
            hint = "" if moved is None else f" (did you mean `{moved[1]}/`?)" if moved[0] == "close" else \
                f" (a directory named `{moved[1].rsplit('/', 1)[-1]}/` is at {moved[1]})"
            # (a rule of a template, `templates/fastapi/.claude/rules/testing.md`, scopes the project it is copied
            # into: the template directory holds none of its files)
            shipped = ws.config.in_template_dir(ws.rel(fi.path))
            f = Finding("CTX507", "info" if shipped else "warning", fi.path, _entry_span(fi, line, entry),
                        f"Glob '{entry}' matches no file under {where}{hint}: the {kind_word(fi.kind)} never "
                        f"loads for it; fix the pattern (it is relative to the directory containing .claude/)"
                        + (" (a template's rule: it scopes the project the template is copied into)"
                           if shipped else ""))
            if shipped:
                yield f
            else:
                d = _literal_dir(entry)
                rel = ws.rel(base)
                suspects.append((f, d if rel in ("", ".") or not d else f"{rel}/{d}"))


def _family(entry: str, entries: list) -> str | None:
    """Another pattern of the rule that is ``entry`` under another first directory (`go/compiler/**` for
    `java/compiler/**`), if any."""
    first, _, rest = entry.partition("/")
    if not rest or any(c in first + rest.partition("/")[0] for c in "*?[{"):
        return None  # (a literal directory under the first: `compiler/` of `java/compiler/**`, not `**` of `test/**`)
    for e in entries:
        if isinstance(e, str) and e != entry and e.partition("/")[2] == rest and e.partition("/")[0] != first:
            return e
    return None


def _literal_dir(entry: str) -> str:
    """The literal directory a glob starts with: `src/web` of `src/web/**/*.tsx`, '' for `**/*.tsx`."""
    cut = min((i for i in (entry.find(c) for c in "*?[{") if i >= 0), default=len(entry))
    return entry[:cut].rpartition("/")[0].strip("/")


def kind_only(entry: str) -> bool:
    """A glob that names a kind of file wherever it is (`**/*.nix`, `*.tsx`, `flake.nix`), no directory."""
    return "/" not in entry.strip("/").removeprefix("**/")


def _moved_dir(ws: Workspace, base: Path, entry: str) -> tuple[str, str] | None:
    """Where the missing literal directory of ``entry`` may have gone: ("close", its pattern-relative path) for a
    directory with a close name beside where it should be, ("elsewhere", its root-relative path) for one of the
    same name elsewhere in the workspace. None when the directory exists or nothing is like it."""
    d = _literal_dir(entry)
    if not d or ws.fs.is_dir(base / d):
        return None
    name = d.rsplit("/", 1)[-1]
    parent = base / d.rpartition("/")[0] if "/" in d else base
    siblings = [n for n, k in ws.fs.listing(parent).items() if k == "d"]
    close = difflib.get_close_matches(name, siblings, n=1, cutoff=0.8)
    if close:
        return "close", (d.rpartition("/")[0] + "/" + close[0]).lstrip("/")
    entries, _ = ws.tree()
    for _, rel, _ in entries:
        if rel.rsplit("/", 1)[-1] == name:
            return "elsewhere", rel
    return None


def _dir_exists(ws: Workspace, base: Path, entry: str) -> bool:
    """Whether the literal directory a glob starts with (`_literal_dir`; none for `**/*.tsx`) exists under
    ``base``."""
    d = _literal_dir(entry)
    return not d or ws.fs.is_dir(base / d)


def _entry_line(fi: FileInfo, fm: FM, key_line: int, entry: Any) -> int:
    if isinstance(entry, str) and entry:
        for i in range(key_line, fm.close):
            if entry in fi.lines[i]:
                return i
    return key_line


def _entry_span(fi: FileInfo, line: int, entry: str) -> Span:
    text = fi.lines[line].rstrip("\r")
    col = text.find(entry)
    if col >= 0 and line != 0:
        return Span(line, col, line, col + len(entry))
    return Span(line, 0, line, len(text))


def _skipped_area(patterns: tuple[str, ...]) -> bool:
    """Patterns that point into directories the workspace scan never enters (node_modules, dist...)."""
    for p in patterns:
        first = p.lstrip("/").split("/", 1)[0]
        if first in D.SKIP_DIRS or first.startswith(".") and first not in (".", "..", ".claude", ".github"):
            return True
        if any(seg in D.SKIP_DIRS for seg in p.split("/")):
            return True
    return False


def _all_files(ws: Workspace) -> list[str]:
    """Every file of the workspace relative to its root (posix)."""
    return ws.rel_files


def _any_match(ws: Workspace, base: Path, globs: PathGlobs, root_only: bool) -> bool:
    """Whether a file of the workspace under ``base`` matches ``globs``."""
    key = ("ctxls.paths_glob.lower", str(base))
    files = ws.fs.memo.get(key)
    if files is None:
        # (matched lower-cased, as the loader does: Claude Code's matcher ignores case)
        files = ws.fs.memo[key] = [f.lower() for f in ws.files_under(base) or []]
    from ..globs import _spec  # the loader's own compiled matcher

    spec = _spec(globs.patterns, root_only)
    regexes = [(p.regex, p.include) for p in spec.patterns if getattr(p, "regex", None) is not None]
    if all(inc for _, inc in regexes):
        return any(any(map(rx.match, files)) for rx, _ in regexes)  # (map: the loop runs in C)
    return any(spec.match_file(f) for f in files)
