"""Rules: `@imports` (CTX301-CTX306), spec A4."""

from __future__ import annotations

import re
import weakref
from pathlib import Path

from .. import discovery as D
from ..workspace import FileInfo, Workspace
from ..findings import Edit, Finding, Fix, Related, Span
from ..loader import TEXT_EXTENSIONS, is_within, resolve_import
from ..markdown import ImportRef
from . import rule
from .path_index import GitIgnores, name_index
from .path_refs import KNOWN_EXT
from .references import _generic_name

IMPORTING_KINDS = (D.CLAUDE_MD, D.CLAUDE_LOCAL_MD, D.AGENTS_MD, D.GEMINI_MD, D.RULE, D.MEMORY_INDEX)


def _span(fi: FileInfo, ref: ImportRef) -> Span:
    line = ref.line - 1
    return Span(line, ref.col, line, ref.col + 1 + len(ref.raw))


def _targets(ws: Workspace, fi: FileInfo) -> list[tuple[ImportRef, Path]]:
    """Resolved imports of ``fi``, memoised in the snapshot by the file's imports (a path-only computation)."""
    key = ("import_targets", fi.path, fi.prepared.imports, ws.settings.home)
    got = ws.fs.memo.get(key)
    if got is None:
        got = ws.fs.memo[key] = [(ref, resolve_import(fi.path, ref.path, ws.settings.home))
                                 for ref in fi.prepared.imports]
    return got


class _Graph:
    """The files that can import (see `_importers`) and what identifies the import graph they form."""

    __slots__ = ("files", "signature")

    def __init__(self, files: list[FileInfo], signature: tuple) -> None:
        self.files = files
        self.signature = signature


_GRAPHS: "weakref.WeakKeyDictionary[Workspace, list[tuple[object, _Graph]]]" = weakref.WeakKeyDictionary()


def _graph(ws: Workspace) -> _Graph:
    """`_importers` of ``ws`` (under its current scope), walked once per workspace and scope.

    The signature holds everything the graph rules read: each file with its resolved imports (a list the
    snapshot keeps while the file's imports stay the same, so an edit elsewhere in the file leaves it the
    very same object), and the import targets that are files without being importers (non-text files)."""
    per_ws = _GRAPHS.setdefault(ws, [])
    scope = ws.scope
    for sc, g in per_ws:
        if sc is scope:
            return g
    expansions = _expansions(ws)
    seen: dict[Path, FileInfo] = {}
    stack = list(ws.files(*IMPORTING_KINDS))
    while stack:
        fi = stack.pop()
        if fi.path in seen or fi.text is None:
            continue
        seen[fi.path] = fi
        got = expansions.get(id(fi))
        if got is None or got[0] is not fi:
            got = expansions[id(fi)] = (fi, *_expand(ws, fi))
        for target in got[2]:
            if target not in seen:
                stack.append(ws.file(target))
    if scope is None and len(expansions) > 2 * len(seen) + 64:  # records of files that changed since
        live = {id(fi) for fi in seen.values()}
        for k in [k for k in expansions if k not in live]:
            del expansions[k]
    files = sorted(seen.values(), key=lambda f: str(f.path))
    edges = tuple((fi.path, expansions[id(fi)][1]) for fi in files)
    others = frozenset(t for fi in files for ts in expansions[id(fi)][2:] for t in ts if t not in seen)
    g = _Graph(files, (ws.root, edges, others))
    per_ws.append((scope, g))
    return g


def _expansions(ws: Workspace) -> dict[int, tuple]:
    """Per file record (by identity: a workspace takes over the records of unchanged files), what the walk in
    `_graph` reads of it: kept in the snapshot while the editor buffers are the same files (a buffer makes a
    file exist)."""
    key = ("import_expansions",)
    overlays = frozenset(ws.fs.overlays)
    got = ws.fs.memo.get(key)
    if got is None or got[0] != overlays:
        got = ws.fs.memo[key] = (overlays, {})
    return got[1]


def _expand(ws: Workspace, fi: FileInfo) -> tuple[list, tuple[Path, ...], tuple[Path, ...]]:
    """``fi``'s resolved imports, the targets the walk follows (text files) and the other targets that are
    files."""
    targets = _targets(ws, fi)
    follow, other = [], []
    for _, t in targets:
        if ws.fs.is_file(t):
            (follow if _is_text(t) else other).append(t)
    return targets, tuple(follow), tuple(other)


def _importers(ws: Workspace) -> list[FileInfo]:
    """Files that can import: instruction sources plus every file they reach through imports."""
    return _graph(ws).files


def _cached(ws: Workspace, name: str, signature: tuple, compute) -> list[Finding]:
    """The findings of a graph rule, kept in the snapshot and computed again only when the graph's signature
    changed (they depend on nothing else)."""
    key = ("imports_rule", name)
    got = ws.fs.memo.get(key)
    if got is not None and got[0] == signature:
        return got[1]
    out = list(compute())
    ws.fs.memo[key] = (signature, out)
    return out


def _is_text(p: Path) -> bool:
    return not p.suffix or p.suffix.lower() in TEXT_EXTENSIONS


@rule("CTX301", "import-missing", "imports", "error",
      summary="An `@import` points at a file that does not exist, so nothing loads.",
      why="Missing imports are skipped silently by the agent: the instructions you meant to include never reach "
          "the model. Some cases are only info: an `@name` with no file extension and no `./` (`@wordpress/data`, "
          "`@tanstack/query`, `@alice`), which reads as a package or a person though the agent still tries to "
          "import it; a target in a build-output directory (`target/`, `dist/`, ...), which exists once "
          "the build has run; a file of the user's home (`@~/.claude/my-notes.md`, each developer's own); and an "
          "absolute path whose tail is a file of the workspace (`@/workspace/AGENTS.md`, the repository where "
          "a container mounts it); and a file git ignores (`@CLAUDE.local.md` under `*.local.*`).",
      example="`See @docs/architecture.md` after docs/ was renamed to design/.",
      fix="Point the import at the file's new place. When exactly one file in the workspace has that name, the "
          "quick fix rewrites the import to it. For a package or person name, put it in backticks (a quick "
          "fix, not applied by --fix): the agent then reads it as text. "
          "A scope of packages after an @ (`@acme/\\*`, `@acme/`) is info: no file was meant.")
def import_missing(ws: Workspace):
    for fi in _importers(ws):
        targets = _targets(ws, fi)
        for ref, target in targets:
            if ws.fs.exists(target):
                continue
            raw = ref.raw.rstrip(_TRAILING)
            if raw != ref.raw and target.name.rstrip(_TRAILING) and ws.fs.exists(
                    meant := target.with_name(target.name.rstrip(_TRAILING))):
                # `@dev/CODING.adoc;`: the punctuation is part of the path as the agent reads it
                sp = _span(fi, ref)
                # (not applied by --fix: it drops punctuation the sentence may need)
                fix = Fix(f"Import @{raw}", (Edit(fi.path, sp, "@" + raw),), safe=False)
                also = next((r for r, t in targets if t == meant), None)  # (``meant`` exists)
                if also is not None:
                    # the same file imported elsewhere in this file: its text loads anyway
                    yield Finding("CTX301", "info", fi.path, sp,
                                  f"@{ref.raw} does not exist (the agent keeps the trailing "
                                  f"{ref.raw[len(raw):]!r} in the path), but line {also.line} imports "
                                  f"{raw}, so its text loads anyway")
                else:
                    yield Finding("CTX301", "error", fi.path, sp,
                                  f"@{ref.raw} does not exist, so it never loads: the agent keeps the trailing "
                                  f"{ref.raw[len(raw):]!r} in the path; write @{raw}", fixes=[fix])
                continue
            fixes = []
            candidates = [] if _generic_name(target.name) else \
                [p for p in ws.files_by_name.get(target.name, []) if p != target and p != fi.path]
            if len(candidates) == 1:
                new = Path(_relpath(candidates[0], fi.path.parent))
                sp = _span(fi, ref)
                fixes.append(Fix(f"Import @{new.as_posix()} instead",
                                 (Edit(fi.path, sp, "@" + new.as_posix().replace(" ", "\\ ")),)))
                hint = f"; did it move to {ws.rel(candidates[0])}?"
            else:
                hint = ""
            bare = target.name.rstrip(_TRAILING)  # (trailing punctuation is part of the import as written)
            if not fixes and bare and "." not in bare:
                # `@docs/architecture` for docs/architecture.md: the agent adds no extension, so nothing loads
                named = _with_extension(ws, target.with_name(bare))
                if named is not None:
                    name = ref.raw.rstrip(_TRAILING)
                    sp = _span(fi, ref)
                    new_ref = "@" + name + named.name[len(bare):]
                    yield Finding("CTX301", "error", fi.path, sp,
                                  f"@{ref.raw} does not exist, so it never loads; the agent adds no extension: "
                                  f"did you mean {new_ref}?",
                                  fixes=[Fix(f"Import {new_ref}", (Edit(fi.path, Span(
                                      sp.start_line, sp.start_col, sp.end_line, sp.start_col + 1 + len(name)),
                                      new_ref),))])
                    continue
            if not fixes and _names_something(ref.raw):
                sp = _span(fi, ref)
                name = ref.raw.rstrip(_TRAILING)  # "When using @tresjs/core, Vue..."
                code = f"`@{name}`"
                sp_name = Span(sp.start_line, sp.start_col, sp.end_line, sp.start_col + 1 + len(name))
                yield Finding("CTX301", "info", fi.path, sp,
                              f"@{ref.raw} is no file: the agent tries to import it and loads nothing; if it names "
                              f"a package or a person, write {code}",
                              fixes=[Fix(f"Write {code} (text, not an import)", (Edit(fi.path, sp_name, code),),
                                         safe=False)])
                continue
            if not fixes and raw.startswith("~/"):
                # `@~/.claude/freenet-local.md`: each developer's own file, which Claude Code's docs import so
                yield Finding("CTX301", "info", fi.path, _span(fi, ref),
                              f"@{ref.raw} is a file of each user's home, not of the repository: it does not exist "
                              f"here, so it loads nothing on this machine (a personal file each developer may add)")
                continue
            if not fixes and raw.startswith("/") and not is_within(str(target), str(ws.root)):
                inside = _same_tail(ws, raw)
                if inside is not None:
                    # `@/workspace/AGENTS.md` where the devcontainer mounts the repository at /workspace
                    yield Finding("CTX301", "info", fi.path, _span(fi, ref),
                                  f"@{ref.raw} does not exist on this machine, so it never loads here; it reads as "
                                  f"this repository's {inside} where it is mounted elsewhere (a container): import "
                                  f"it by a relative path to have it everywhere")
                    continue
            if not fixes and is_within(str(target), str(ws.root)) and _ignored(ws, target):
                # `@CLAUDE.local.md` with `*.local.*` in .gitignore: each developer's own file, absent from a clone
                yield Finding("CTX301", "info", fi.path, _span(fi, ref),
                              f"@{ref.raw} does not exist here, and git ignores it: a file each developer keeps "
                              f"for themselves (it loads where one was made)")
                continue
            built = _build_output(ws, target)
            if not fixes and built is not None:
                yield Finding("CTX301", "info", fi.path, _span(fi, ref),
                              f"@{ref.raw} does not exist yet ({built}/ holds build output): it loads only in "
                              f"sessions started after the build; import a committed file to have it everywhere")
                continue
            yield Finding("CTX301", "error", fi.path, _span(fi, ref),
                          f"@{ref.raw} does not exist, so it never loads{hint}", fixes=fixes)


_TRAILING = ",.;:!?)]'\""


def _ignored(ws: Workspace, target: Path) -> bool:
    """Whether a .gitignore of the workspace ignores ``target`` (inside the workspace)."""
    return GitIgnores(ws, name_index(ws)).ignores(ws.rel(target))


def _same_tail(ws: Workspace, raw: str) -> str | None:
    """The workspace file that absolute path ``raw`` names below another mount of the repository
    (`/workspace/AGENTS.md` -> `AGENTS.md`): its trailing segments are a path from the root, or None."""
    segs = [s for s in raw.split("/") if s]
    for k in range(1, len(segs)):
        rel = "/".join(segs[k:])
        if ws.fs.exists(ws.root / rel):
            return rel
    return None


def _with_extension(ws: Workspace, target: Path) -> Path | None:
    """The text file that is ``target`` plus an extension (`.md` first), when there is one."""
    listing = ws.fs.listing(target.parent)
    prefix = target.name + "."
    hits = sorted(n for n, kind in listing.items() if kind == "f" and n.startswith(prefix)
                  and "." not in n[len(prefix):] and _is_text(Path(n)))
    if not hits:
        return None
    return target.parent / next((n for n in hits if n.endswith(".md")), hits[0])


def _names_something(raw: str) -> bool:
    """`@wordpress/data`, `@alice`, `@tresjs/core,`: no file extension (trailing punctuation aside) and no
    explicit relative or home prefix. Also what is plainly no file the author meant to import: a decorator
    (`@agent.tool`: its "extension" is no file type), a TypeScript path alias (`@/mocks`), a CSS at-rule
    inside a link's text (`@apply](x.md)`)."""
    raw = raw.rstrip(_TRAILING)
    if "](" in raw:
        return True  # "[Avoid Overusing @apply](x.md)": the link's text, up to its target
    if "*" in raw or re.fullmatch(r"[\w.-]+/", raw):
        return True  # "all @real-router/\* packages", "@acme/ packages": a scope of packages, no file
    if raw.startswith("/") and not raw.startswith("//") and "." not in raw.rsplit("/", 1)[-1]:
        return True  # `@/mocks`: a path alias of the project's bundler
    if not raw or raw.startswith(("./", "../", "~", "/")) or raw.endswith("/"):
        return False
    last = raw.rsplit("/", 1)[-1]
    if "." not in last:
        return True
    ext = last.rsplit(".", 1)[1].lower()
    return "/" not in raw and ext not in KNOWN_EXT and "." + ext not in TEXT_EXTENSIONS  # `@agent.tool_plain`


def _build_output(ws: Workspace, target: Path) -> str | None:
    """The build-output directory (`target`, `dist`, ...) ``target`` lies in, inside the workspace."""
    if not is_within(target, ws.root):
        return None
    for seg in target.relative_to(ws.root).parts[:-1]:
        if seg in _BUILD_DIRS:
            return seg
    return None


_BUILD_DIRS = frozenset({"dist", "build", "target", "out", "coverage", ".next", ".nuxt", "_build"})


def _relpath(target: Path, base: Path) -> str:
    import os

    return os.path.relpath(target, base)


@rule("CTX302", "import-cycle", "imports", "warning",
      summary="Files import each other in a cycle.",
      why="The agent drops the repeated file silently; the cycle usually means one of the imports is a mistake "
          "and makes the load order hard to predict.",
      example="a.md imports @b.md and b.md imports @a.md.",
      fix="Remove the import that closes the cycle.")
def import_cycle(ws: Workspace):
    g = _graph(ws)
    return _cached(ws, "CTX302", g.signature, lambda: _import_cycle(ws, g.files))


def _import_cycle(ws: Workspace, importers: list[FileInfo]):
    files = {fi.path: fi for fi in importers}
    graph = {p: [(ref, t) for ref, t in _targets(ws, fi) if t in files] for p, fi in files.items()}
    reported: set[tuple[Path, int]] = set()
    color: dict[Path, int] = {}

    def visit(start: Path):
        stack = [(start, iter(graph[start]))]
        path = [start]
        color[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                color[node] = 2
                stack.pop()
                path.pop()
                continue
            ref, t = nxt
            if color.get(t) == 1:
                key = (node, ref.line)
                if key not in reported:
                    reported.add(key)
                    cyc = path[path.index(t):] + [t]
                    yield node, ref, t, cyc
            elif color.get(t) is None:
                color[t] = 1
                path.append(t)
                stack.append((t, iter(graph[t])))

    for p in sorted(graph):
        if color.get(p) is None:
            for node, ref, t, cyc in visit(p):
                fi = files[node]
                chain = " -> ".join(ws.rel(c) for c in cyc)
                if t == node:  # "Update @AGENTS.md" in AGENTS.md: the agent loads it once, nothing is lost
                    yield Finding("CTX302", "info", node, _span(fi, ref),
                                  f"@{ref.raw} is this file itself: the agent does not load it again; write "
                                  f"`{ref.raw}` if it names the file in prose",
                                  data={"explain": ["a file that imports itself: a cycle of one, harmless"]})
                    continue
                yield Finding("CTX302", "warning", node, _span(fi, ref),
                              f"@{ref.raw} closes an import cycle ({chain}): remove one of the imports",
                              related=[Related(t, Span(0, 0, 0, 0), "imported again here")])


@rule("CTX303", "import-too-deep", "imports", "warning",
      summary="An import chain is deeper than the agent follows (4 hops), so the last file never loads.",
      why="Claude Code follows nested imports at most four hops from the file it loaded (five in docs before "
          "2026-07-10); deeper imports are dropped silently.",
      example="CLAUDE.md -> a.md -> b.md -> c.md -> d.md -> e.md: e.md never loads.",
      fix="Import the deep file directly from a shallower one. Setting: `import_max_hops`.")
def import_too_deep(ws: Workspace):
    g = _graph(ws)
    roots = ws.files(D.CLAUDE_MD, D.CLAUDE_LOCAL_MD, D.AGENTS_MD, D.RULE)
    signature = (g.signature, ws.settings.import_max_hops, tuple(fi.path for fi in roots))
    return _cached(ws, "CTX303", signature, lambda: _import_too_deep(ws, g.files, roots))


def _import_too_deep(ws: Workspace, importers: list[FileInfo], roots: list[FileInfo]):
    hops = ws.settings.import_max_hops
    files = {fi.path: fi for fi in importers}
    reported: set[tuple[Path, int]] = set()
    for root in roots:
        # breadth-first from each directly loaded file, tracking depth and the visited set like the loader
        frontier = [(root.path, 0)]
        seen = {root.path}
        while frontier:
            nxt = []
            for p, depth in frontier:
                fi = files.get(p)
                if fi is None:
                    continue
                for ref, t in _targets(ws, fi):
                    if t in seen or not ws.fs.is_file(t):
                        continue
                    seen.add(t)
                    if depth + 1 > hops:
                        if (p, ref.line) not in reported:
                            reported.add((p, ref.line))
                            yield Finding("CTX303", "warning", p, _span(fi, ref),
                                          f"@{ref.raw} is hop {depth + 1} from {ws.rel(root.path)}; the agent "
                                          f"follows {hops} hops, so it never loads: import it from a shallower "
                                          f"file", related=[Related(root.path, Span(0, 0, 0, 0), "chain starts here")])
                    else:
                        nxt.append((t, depth + 1))
            frontier = nxt


@rule("CTX304", "import-in-code", "imports", "info",
      summary="An `@path` sits inside code or an HTML comment, so it is not imported.",
      why="Imports are not evaluated inside code spans, fenced or indented code blocks, or HTML comments. That is "
          "right for examples, but often a sign that an intended import was wrapped in backticks.",
      example="Read `@docs/style.md` before editing.",
      fix="Remove the backticks if you meant an import; otherwise ignore this (or suppress it with "
          "`<!-- ctxls-ignore CTX304 -->`).")
def import_in_code(ws: Workspace):
    for fi in _importers(ws):
        for ref in fi.prepared.skipped_imports:
            target = resolve_import(fi.path, ref.path.rstrip("`"), ws.settings.home)
            if not ws.fs.exists(target):
                continue  # an example, not a file: nothing to say
            yield Finding("CTX304", "info", fi.path, _span(fi, ref),
                          f"@{ref.raw.rstrip('`')} is inside code or a comment, so it is not imported: remove the "
                          f"backticks if you meant an import")


@rule("CTX305", "import-duplicate", "imports", "info",
      summary="The same file is imported twice from one file.",
      why="The second import is dropped by the agent; it is dead text that costs tokens.",
      example="@docs/a.md near the top and again at the bottom.",
      fix="Delete the second import (quick fix).")
def import_duplicate(ws: Workspace):
    for fi in _importers(ws):
        first: dict[Path, ImportRef] = {}
        for ref, t in _targets(ws, fi):
            if t in first:
                sp = _span(fi, ref)
                line_text = fi.lines[sp.start_line]
                fixes = []
                if line_text.strip() == "@" + ref.raw:  # the import is alone on its line: delete the line
                    fixes.append(Fix("Delete the duplicate import", (Edit(fi.path, Span(sp.start_line, 0,
                                                                                        sp.start_line + 1, 0), ""),)))
                yield Finding("CTX305", "info", fi.path, sp,
                              f"@{ref.raw} was already imported on line {first[t].line}; this one is dropped: "
                              f"delete it", fixes=fixes,
                              related=[Related(fi.path, _span(fi, first[t]), "first import")])
            else:
                first[t] = ref


@rule("CTX306", "import-outside-workspace", "imports", "info",
      summary="A project file imports a file outside the start directory, which needs a one-time approval.",
      why="Claude Code asks before loading imports that resolve outside the project; if the user declines once, "
          "those imports stay disabled for the project and the file never loads.",
      example="CLAUDE.md: @~/notes/team-conventions.md",
      fix="Keep shared instructions inside the repository, or make sure every user approves the import.")
def import_outside(ws: Workspace):
    for fi in _importers(ws):
        if not is_within(fi.path, ws.root):
            continue
        for ref, t in _targets(ws, fi):
            if is_within(t, ws.root) or not ws.fs.exists(t):
                continue
            yield Finding("CTX306", "info", fi.path, _span(fi, ref),
                          f"@{ref.raw} resolves outside the workspace ({t}): it loads only after each user "
                          f"approves it once, and never if they decline")
