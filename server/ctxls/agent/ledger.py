"""The per-turn token ledger: input, cache write, cache read, output, cost at list prices, and alarms.

Prices are settings (defaults: spec D2 multipliers over the current Sonnet's list price). Alarms: a turn that
rewrites most of its prefix (the cache was invalidated: an early block changed), and a pause longer than the
5-minute cache life (an approval or a long command), after which the whole prefix is written again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

CACHE_TTL_S = 300.0


@dataclass(frozen=True)
class Prices:
    input_per_mtok: float = 3.0
    output_per_mtok: float = 15.0
    cache_write_multiplier: float = 1.25
    """5-minute cache writes (spec D2; 1h writes cost 2x)."""
    cache_read_multiplier: float = 0.1

    def cost(self, usage: dict[str, int]) -> float:
        return (billed_input(usage, self) * self.input_per_mtok + usage.get("output_tokens", 0) * self.output_per_mtok) / 1e6


def billed_input(usage: dict[str, int], prices: Prices = Prices()) -> float:
    """Input-token equivalents billed: uncached input, cache writes at 1.25x, cache reads at 0.1x."""
    return (usage.get("input_tokens", 0) + usage.get("cache_creation_input_tokens", 0) * prices.cache_write_multiplier
            + usage.get("cache_read_input_tokens", 0) * prices.cache_read_multiplier)


def request_size(usage: dict[str, int]) -> int:
    return (usage.get("input_tokens", 0) + usage.get("cache_creation_input_tokens", 0)
            + usage.get("cache_read_input_tokens", 0))


@dataclass
class Entry:
    turn: int
    kind: str
    """`turn` (a model call of the loop) or `summary` (a compaction's call)."""
    usage: dict[str, int]
    at: float
    """Clock time of the call (seconds)."""
    alarms: list[str] = field(default_factory=list)


def alarms_for(entry: Entry, previous: Entry | None) -> list[str]:
    out = []
    u = entry.usage
    size = request_size(u)
    if previous is not None and size:
        pause = entry.at - previous.at
        if pause > CACHE_TTL_S:
            out.append(f"{pause / 60:.1f} min since the previous call: past the 5-minute cache life, the prefix "
                       f"({u.get('cache_creation_input_tokens', 0):,} tokens) was written again")
        elif u.get("cache_creation_input_tokens", 0) > 0.5 * size and request_size(previous.usage) > 0.5 * size:
            out.append(f"rewrote {u['cache_creation_input_tokens']:,} of {size:,} prompt tokens: an early part of "
                       f"the prompt changed, so the cached prefix could not be read")
    return out


def summary(entries: Iterable[Entry], prices: Prices = Prices()) -> dict[str, Any]:
    entries = list(entries)
    tot = {k: sum(e.usage.get(k, 0) for e in entries) for k in
           ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")}
    size = request_size(tot)
    return {"calls": len(entries), **tot, "billed_input": billed_input(tot, prices),
            "cache_read_share": tot["cache_read_input_tokens"] / size if size else 0.0,
            "peak_request": max((request_size(e.usage) for e in entries), default=0),
            "cost_usd": sum(prices.cost(e.usage) for e in entries)}


def markdown(entries: Iterable[Entry], prices: Prices = Prices(), window: int | None = None,
             title: str = "Session ledger") -> str:
    entries = list(entries)
    s = summary(entries, prices)
    peak = max((request_size(e.usage) for e in entries), default=0) or 1
    out = [f"# {title}", "",
           f"{s['calls']} calls · {s['billed_input']:,.0f} billed input-token equivalents · cache hit rate "
           f"{s['cache_read_share']:.0%} · peak request {s['peak_request']:,} tokens"
           + (f" of {window:,}" if window else "") + f" · ${s['cost_usd']:.4f} at list prices", "",
           "| turn | kind | context | input | cache write | cache read | output | cost | size |",
           "|---:|---|---:|---:|---:|---:|---:|---:|---|"]
    for e in entries:
        u = e.usage
        size = request_size(u)
        bar = "█" * max(1, round(20 * size / peak)) if size else ""
        out.append(f"| {e.turn} | {e.kind} | {size:,} | {u.get('input_tokens', 0):,} | "
                   f"{u.get('cache_creation_input_tokens', 0):,} | {u.get('cache_read_input_tokens', 0):,} | "
                   f"{u.get('output_tokens', 0):,} | ${prices.cost(u):.4f} | `{bar}` |")
    alarms = [(e.turn, a) for e in entries for a in e.alarms]
    if alarms:
        out += ["", "## Alarms", ""] + [f"- turn {t}: {a}" for t, a in alarms]
    return "\n".join(out) + "\n"


def from_records(records: Iterable[dict[str, Any]]) -> list[Entry]:
    """The ledger entries stored in a transcript (`turn` and `summary` records)."""
    out = []
    for r in records:
        if r.get("type") in ("turn", "summary") and isinstance(r.get("usage"), dict):
            out.append(Entry(int(r.get("turn", 0)), r["type"], r["usage"], float(r.get("at", 0.0)),
                             list(r.get("alarms") or [])))
    return out
