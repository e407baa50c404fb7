"""Regular expressions compiled on first use.

The rules hold a few hundred module-level patterns, and compiling them all at import took 0.15 s of a cold
`ctxls check` of a small repository (more than the analysis itself), though a run uses a fraction of them.
`compile` returns a stand-in that compiles on the first attribute asked for and then keeps the compiled
pattern's methods as its own attributes, so later calls cost what calls on the pattern cost.
"""

from __future__ import annotations

import re
import threading
from typing import Any

_lock = threading.Lock()
_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "pattern", "flags",
            "groups", "groupindex")


class LazyPattern:
    """A `re.Pattern` compiled when first used (see the module docstring)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)

    def compiled(self) -> re.Pattern[str]:
        got = self.__dict__.get("_compiled")
        if got is None:
            with _lock:
                got = self.__dict__.get("_compiled")
                if got is None:
                    got = re.compile(*self._args)
                    for name in _METHODS:
                        self.__dict__[name] = getattr(got, name)
                    self.__dict__["_compiled"] = got
        return got

    def __getattr__(self, name: str) -> Any:  # only for what is not set yet: compile, then it is
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return f"lazyre.compile({self._args[0]!r})"


def compile(pattern: str, flags: int = 0) -> LazyPattern:  # noqa: A001 (named as re's)
    return LazyPattern(pattern, flags)
