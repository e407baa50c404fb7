"""Cursor (spec C3): `.cursor/rules/**/*.mdc` by rule type, nested rule folders, AGENTS.md, `.cursorrules`.

The workspace folder is the start directory. A rule's type comes from its frontmatter, read as Cursor reads
it (`key: value` text, not YAML):
- Always: `alwaysApply: true` (the boolean; a quoted "true" is a string and is not true) - loads at startup;
- Auto Attached: `globs` (a comma-separated string) - attaches when a touched file matches (relative to the
  directory holding `.cursor/`, gitignore semantics);
- Agent Requested: only `description` - the model sees the name and description and fetches the body;
- Manual: neither - applies only when the user types `@name`.
A `.cursor/rules/` below the workspace folder is scoped to its directory: its rules (and that directory's
AGENTS.md) apply when a file there is touched. The root AGENTS.md and the legacy `.cursorrules` load always.
Cursor publishes no wrapper: a block is the rule body as written (frontmatter stripped, trimmed).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pathspec

from .. import model as M
from ..fs import FileSystem
from ..model import Session
from ..settings import Settings
from ..tokens import TokenCounter
from .common import (Builder, LooseFrontmatter, body_lines, dirs_down, files_below, is_within, loose_frontmatter,
                     split_globs, trimmed)

AGENT = "cursor"
ALWAYS, AUTO, REQUESTED, MANUAL = "Always", "Auto Attached", "Agent Requested", "Manual"


@dataclass(frozen=True)
class CursorRule:
    path: Path
    base: Path
    """The directory holding `.cursor/` (globs are relative to it)."""
    name: str
    type: str
    globs: tuple[str, ...]
    description: str
    fm: LooseFrontmatter

    def matches(self, target: Path) -> bool:
        if not self.globs or not is_within(target, self.base):
            return False
        rel = target.relative_to(self.base).as_posix()
        try:
            return pathspec.PathSpec.from_lines("gitignore", self.globs).match_file(rel)
        except Exception:
            return False


def classify(fm: LooseFrontmatter) -> tuple[str, tuple[str, ...], str]:
    """(type, globs, description) as Cursor reads the frontmatter."""
    aa = fm.fields.get("alwaysApply")
    always = aa is not None and not aa.quoted and aa.raw.lower() == "true"
    g = fm.fields.get("globs")
    globs = split_globs(g.raw) if g is not None and g.raw else ()  # a YAML block list leaves the value empty
    d = fm.fields.get("description")
    desc = d.text.strip() if d is not None else ""
    kind = ALWAYS if always else AUTO if globs else REQUESTED if desc else MANUAL
    return kind, globs, desc


# What CTX502 asks of a profile whose fields people put in Claude Code rules (see `rule_reading`).
LABEL = "Cursor"
RULE_FIELDS = ("alwaysApply", "globs")
"""Rule frontmatter only Cursor reads (its `description` is a word every agent uses: not a sign of Cursor)."""
RULE_DIRS = (".cursor/rules",)


def rule_reading(path: Path, text: str, root: Path, settings: Settings, fs: FileSystem) -> tuple[str, str] | None:
    """(the path through which Cursor reads the rule file ``path``, relative to ``root``; what Cursor does with
    it), or None when Cursor does not read it: a `.cursor/rules` rule of the workspace root is it, or links
    to it."""
    real = fs.realpath(path)
    for p in rule_files(root, settings, fs):
        if fs.realpath(p) == real:
            kind, globs, _ = classify(loose_frontmatter(text))
            name = os.path.splitext(p.name)[0]
            what = {ALWAYS: "an Always rule: it loads in every session",
                    AUTO: f"an Auto Attached rule: it attaches when a file matching {', '.join(globs)} is touched",
                    REQUESTED: "an Agent Requested rule: the model sees its description and fetches it when needed",
                    MANUAL: f"a Manual rule: it applies only when the user types @{name}"}[kind]
            return p.relative_to(root).as_posix(), f"Cursor reads it as {what}"
    return None


def unread_reason(path: Path) -> str:
    """Why Cursor does not read a rule file that carries its fields."""
    return (f"Cursor reads `.mdc` rules under .cursor/rules (plain `.md` too with `cursor_md_rules = true`), and "
            f"{path.name} is not one of them")


def rule_files(base: Path, settings: Settings, fs: FileSystem) -> list[Path]:
    """`.mdc` files (and `.md` with cursor_md_rules) under ``base``/.cursor/rules, recursively, sorted."""
    return files_below(base / ".cursor" / "rules", (".mdc", ".md") if settings.cursor_md_rules else (".mdc",), fs)


def parse_rule(path: Path, base: Path, fs: FileSystem, settings: Settings) -> tuple[CursorRule, str, tuple[int, int] | None] | None:
    src = fs.read(path, settings.max_file_bytes)
    if not src.ok:
        return None
    fm = loose_frontmatter(src.text or "")
    kind, globs, desc = classify(fm)
    rules_dir = base / ".cursor" / "rules"
    name = os.path.splitext(path.relative_to(rules_dir).as_posix())[0]
    content, lines = body_lines(fm)
    return CursorRule(path, base, name, kind, globs, desc, fm), content, lines


def load(start: Path, touched: list[Path], settings: Settings, root: Path, fs: FileSystem,
         counter: TokenCounter, prefixes: dict | None = None) -> Session:
    b = Builder(AGENT, start, root, settings, fs, counter, touched)
    rules = _rules_of(b, start)
    _apply_dir_rules(b, rules, None, M.STARTUP)
    _add_plain(b, start / "AGENTS.md", M.AGENTS_MD, M.STARTUP)
    if settings.cursor_legacy_rules:
        _add_plain(b, start / ".cursorrules", M.CURSORRULES, M.STARTUP)
    for t in touched:
        trigger = b.trigger(t)
        b.read_block(t, trigger)
        if not is_within(t, start):
            continue
        for r, content, lines in rules:  # the workspace's Auto Attached rules
            if r.type == AUTO and not b.seen(r.path) and r.matches(t):
                b.add(M.CURSOR_RULE, content, source=r.path, tier="Project", trigger=trigger, lines=lines,
                      notes=[f"Auto Attached: globs {', '.join(r.globs)} match {b.display(t)}"])
        if t.parent != start:
            for d in dirs_down(start, t.parent)[1:]:  # nested rule folders on the way to the file
                _apply_dir_rules(b, _rules_of(b, d), t, trigger)
                _add_plain(b, d / "AGENTS.md", M.NESTED_AGENTS_MD, trigger)
    return b.session()


def _rules_of(b: Builder, base: Path) -> list[tuple[CursorRule, str, tuple[int, int] | None]]:
    out = []
    for p in rule_files(base, b.settings, b.fs):
        got = parse_rule(p, base, b.fs, b.settings)
        if got is None:
            b.read(p, M.STARTUP, M.CURSOR_RULE)  # records why
            continue
        out.append(got)
    return out


def _apply_dir_rules(b: Builder, rules, target: Path | None, trigger: str) -> None:
    """Rules of one `.cursor/rules/`: the workspace's at startup (target None), a nested folder's on a touch."""
    listing = []
    for r, content, lines in rules:
        if b.seen(r.path):
            continue
        if not content:
            b.mark(r.path)
            b.skip(r.path, "empty body", trigger, M.CURSOR_RULE)
            continue
        if r.type == ALWAYS:
            note = [] if target is None else [f"nested rule folder of {b.display(r.base)}"]
            b.add(M.CURSOR_RULE, content, source=r.path, tier="Project", trigger=trigger, lines=lines, notes=note)
        elif r.type == AUTO:
            if target is not None and r.matches(target):
                b.add(M.CURSOR_RULE, content, source=r.path, tier="Project", trigger=trigger, lines=lines,
                      notes=[f"Auto Attached: globs {', '.join(r.globs)} match {b.display(target)}"])
            elif target is None:
                b.skip(r.path, f"Auto Attached: attaches when a file matching {', '.join(r.globs)} is in context",
                       trigger, M.CURSOR_RULE, when="touch")
        elif r.type == REQUESTED:
            listing.append(r)
            b.mark(r.path)
            b.skip(r.path, f"Agent Requested: the model sees its description and fetches the body when it "
                           f"judges it relevant", trigger, M.CURSOR_RULE, when="request")
        else:
            b.mark(r.path)
            b.skip(r.path, manual_reason(r), trigger, M.CURSOR_RULE, when="manual")
    if listing:
        text = "\n".join(f"- {r.name}: {r.description}" for r in listing)
        b.add(M.RULE_LISTING, text, trigger=trigger,
              notes=[f"{len(listing)} Agent Requested rule{'s' if len(listing) != 1 else ''}: bodies on request"])


def manual_reason(r: CursorRule) -> str:
    aa = r.fm.fields.get("alwaysApply")
    if aa is not None and aa.quoted and aa.text.strip().lower() == "true":
        why = f"alwaysApply is the string {aa.raw}, not the boolean true, and there are no globs or description"
    else:
        why = "no alwaysApply, globs or description"
    return f"Manual: {why}, so it applies only when the user types @{r.name}"


def _add_plain(b: Builder, path: Path, kind: str, trigger: str) -> None:
    if b.seen(path) or not b.fs.is_file(path):
        return
    src = b.read(path, trigger, kind)
    if src is None:
        return
    content, lines = trimmed(src.text or "")
    if not content:
        b.mark(path)
        b.skip(path, "empty or whitespace-only", trigger, kind)
        return
    b.add(kind, content, source=path, tier="Project", trigger=trigger, lines=lines, notes=src.notes)


def unloaded(path: Path, session: Session, settings: Settings, fs: FileSystem) -> tuple[str | None, str]:
    start = session.start_dir
    parts = path.parts
    if ".cursor" in parts:
        i = len(parts) - 1 - parts[::-1].index(".cursor")
        base = Path(*parts[:i])
        if parts[i + 1:i + 2] != ("rules",) or not path.name.endswith((".mdc", ".md")):
            return None, "not a file Cursor reads"
        if path.name.endswith(".md") and not settings.cursor_md_rules:
            return None, "a .md file under .cursor/rules: Cursor reads .mdc rules (cursor_md_rules is off)"
        if not is_within(base, start):
            return None, "outside the workspace folder"
        got = parse_rule(path, base, fs, settings)
        if got is None:
            return None, "unreadable"
        r = got[0]
        where = f"a file under {M.display_path(base, session.root)}/" if base != start else "a matching file"
        if r.type == REQUESTED:
            return "request", "Agent Requested: the model fetches it when its description fits"
        if r.type == MANUAL:
            return "manual", manual_reason(r)
        if r.type == AUTO:
            return "touch", f"Auto Attached when {where} matching {', '.join(r.globs)} is in context"
        return "touch", f"nested rule folder: attaches when {where} is in context"
    if path.name == "AGENTS.md":
        if is_within(path.parent, start) and path.parent != start:
            return "touch", "nested AGENTS.md: applies when a file in its directory is in context"
        return None, "outside the workspace folder"
    if path.name == ".cursorrules":
        if not settings.cursor_legacy_rules:
            return None, "legacy .cursorrules reading is off (cursor_legacy_rules)"
        return None, "Cursor reads .cursorrules only at the workspace root"
    return None, "not a file Cursor reads"
