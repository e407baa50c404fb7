"""Whether the repository's code still imports the module a missing path names (CTX401, CTX506).

A public repository exported from a private one keeps code that imports what the export left out: hundreds of
files say `from recidiviz.calculator.query import ...` while recidiviz/calculator/ is not in the checkout. An
instruction naming `recidiviz/calculator/query/views.py` then describes the code as its authors have it; only
this copy lacks the directory, and "point the reference at the right path" has no right path to offer.

Only Python packages are asked about (a dotted import names its directory unambiguously), only from the first
missing segment below a directory with an `__init__.py`, and only with `git grep` over the tracked `*.py` files
at the working tree, once per module, within a time limit. No git, no repository, `[check] git_history = false`
or no answer in time: None.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path
from typing import TYPE_CHECKING

from . import lazyre
from .git_run import git

if TYPE_CHECKING:
    from .workspace import Workspace

BUDGET_S = 2.0
"""Time for one module's `git grep`."""

_IDENT = lazyre.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def missing_module(ws: "Workspace", rel: str) -> str | None:
    """The dotted name of the Python module that workspace-relative ``rel`` names down to its first missing
    segment, when the directory above that segment is a package (`recidiviz.calculator` for
    recidiviz/calculator/query/views.py where recidiviz/__init__.py exists and recidiviz/calculator does not)."""
    segs = [s for s in rel.split("/") if s and s != "."]
    if len(segs) < 2 or ".." in segs:
        return None
    for i in range(1, len(segs)):
        if ws.exists(ws.root.joinpath(*segs[:i + 1])):
            continue
        if not ws.exists(ws.root.joinpath(*segs[:i], "__init__.py")):
            return None
        names = segs[:i] + [segs[i][:-3] if segs[i].endswith(".py") else segs[i]]
        return ".".join(names) if all(_IDENT.match(n) for n in names) else None
    return None


def importer(ws: "Workspace", module: str) -> str | None:
    """A tracked Python file (workspace-relative) whose code imports ``module`` or a module below it."""
    key = ("imports", ws.root, module)
    memo = ws.fs.memo
    if key not in memo:
        pattern = rf"^[[:space:]]*(from|import)[[:space:]]+{re.escape(module)}([.[:space:]]|$)"
        out = git(["grep", "-l", "-I", "-E", "--max-count=1", pattern, "--", "*.py"], str(ws.root),
                  timeout=BUDGET_S)
        first = out.split("\n", 1)[0].strip() if out else ""
        memo[key] = first or None
    return memo[key]


def still_imported(ws: "Workspace", path: str, base: Path | None = None) -> tuple[str, str] | None:
    """(module, importing file) when the code still imports the module that ``path`` names, as a path relative
    to directory ``base`` or to the workspace root: it is missing from this checkout, not from the code."""
    if not ws.config.git_history:
        return None
    here = os.path.relpath(base, ws.root).replace(os.sep, "/") if base is not None else "."
    seen = set()
    for rel in (posixpath.normpath(posixpath.join(here, path)), posixpath.normpath(path)):
        if rel in seen or rel.startswith(".."):
            continue
        seen.add(rel)
        module = missing_module(ws, rel)
        if module is not None and (who := importer(ws, module)) is not None:
            return module, who
    return None
