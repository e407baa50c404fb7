"""`.ctxls/`, the directory ctxls keeps its caches, reports and agent records in, at the workspace root."""

from __future__ import annotations

from pathlib import Path

STATE_DIR = ".ctxls"


def state_dir(root: Path) -> Path:
    """`.ctxls/` of the workspace, created with a `.gitignore` of `*` (as ruff and pytest do with their caches)
    so it never shows as untracked. Raises OSError when it cannot be created; a missing `.gitignore` is not an
    error."""
    d = root / STATE_DIR
    d.mkdir(parents=True, exist_ok=True)
    gi = d / ".gitignore"
    if not gi.exists():
        try:
            gi.write_text("# written by ctxls\n*\n", encoding="utf-8")
        except OSError:
            pass
    return d


def state_path(root: Path, *parts: str) -> Path:
    """A path under `.ctxls/`, with `.ctxls/` (and its `.gitignore`) created and the parent of the path too."""
    p = state_dir(root).joinpath(*parts)
    p.parent.mkdir(parents=True, exist_ok=True)
    return p


def make_parent(path: Path) -> None:
    """Create the parent directory of ``path``; when the path lies under a `.ctxls/`, that directory is created
    through `state_dir` (with its `.gitignore`). Raises OSError."""
    for anc in path.parents:
        if anc.name == STATE_DIR:
            state_dir(anc.parent)
            break
    path.parent.mkdir(parents=True, exist_ok=True)
