"""A persistent token cache (content hash -> cl100k count) under the workspace's `.ctxls/` directory.

Reading or writing it never raises: a corrupt or unwritable cache only means counting again.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from .statedir import make_parent
from .tokens import ENCODING

VERSION = 1


class TokenCache(dict):
    def __init__(self, path: Path | None) -> None:
        super().__init__()
        self.path = path
        self.loaded = 0
        if path is None:
            return
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            tokens = data.get("tokens") if data.get("version") == VERSION and data.get("encoding") == ENCODING else None
            if isinstance(tokens, dict):
                self.update({k: v for k, v in tokens.items()
                             if isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0})
        except (OSError, ValueError, AttributeError, TypeError):
            pass
        self.loaded = len(self)

    def save(self) -> bool:
        if self.path is None or len(self) == self.loaded:
            return False
        try:
            make_parent(self.path)
            text = json.dumps({"version": VERSION, "encoding": ENCODING, "tokens": dict(self)}, separators=(",", ":"))
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tokens.")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, self.path)
            return True
        except OSError:
            return False


def default_cache_path(root: Path) -> Path:
    return root / ".ctxls" / "cache" / "tokens.json"
