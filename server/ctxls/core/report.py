"""Machine-readable forms of the session (the stable JSON schema documented in docs/json-schema.md)."""

from __future__ import annotations

from typing import Any

from .model import Session

CONTEXT_SCHEMA = "ctxls.context/1"


def session_to_json(session: Session, include_text: bool = False) -> dict[str, Any]:
    disp = session.display_source
    blocks = []
    for b in session.blocks:
        d: dict[str, Any] = {
            "kind": b.kind,
            "source": disp(b.source),
            "tier": b.tier,
            "lines": list(b.lines) if b.lines else None,
            "trigger": b.trigger,
            "tokens": b.tokens,
            "cumulative": b.cumulative,
            "estimated": b.estimated,
            "startup": b.startup,
        }
        if b.cut:
            d["cut"] = b.cut
        if b.notes:
            d["notes"] = list(b.notes)
        if include_text:
            d["text"] = b.text
        blocks.append(d)
    out: dict[str, Any] = {
        "schema": CONTEXT_SCHEMA,
        "agent": session.agent,
        "start_dir": disp(session.start_dir) or ".",
        "touched": [disp(t) for t in session.touched],
        "window": session.window,
        "total_tokens": session.total_tokens,
        "startup_tokens": session.startup_tokens,
        "percent_of_window": round(100 * session.total_tokens / session.window, 2) if session.window else None,
        "token_method": session.token_method,
        "blocks": blocks,
        "skipped": [
            {"source": disp(s.source), "kind": s.kind, "trigger": s.trigger, "reason": s.reason,
             **({"when": s.when} if s.when else {})}
            for s in session.skipped
        ],
    }
    if session.skills is not None:
        sk = session.skills
        out["skills"] = {
            "budget_chars": sk.budget_chars,
            "full_chars": sk.full_chars,
            "sent_chars": sk.sent_chars,
            "entries": [
                {
                    "name": s.name,
                    "source": disp(s.source),
                    "scope": s.scope,
                    "listed": s.listed,
                    "description_dropped": s.description_dropped,
                    "chars": len(s.entry),
                    **({"hidden_reason": s.hidden_reason} if s.hidden_reason else {}),
                }
                for s in sk.skills
            ],
        }
    return out


BUDGET_SCHEMA = "ctxls.budget/1"


def budget_to_json(rep, top: int = 5) -> dict[str, Any]:
    """JSON form of a `BudgetReport` (docs/json-schema.md)."""
    from .budget import READ_TOKENS, TURN_TOKENS

    s = rep.settings
    rc, worst = rep.root_cost, rep.worst
    listing = rep.root_session.skills

    def dcost(d):
        return {"dir": rep.rel(d.dir) if d.dir != rep.root else ".", "startup_tokens": d.startup_tokens,
                "instruction_tokens": d.instruction_tokens, "files": d.files,
                "top_source": rep.rel(d.top_source) if d.top_source else None, "top_tokens": d.top_tokens,
                "percent_of_window": round(100 * d.startup_tokens / s.window, 2)}

    return {
        "schema": BUDGET_SCHEMA,
        "agent": rep.root_session.agent,
        "root": str(rep.root),
        "window": s.window,
        "token_method": rep.token_method,
        "fixed_tokens": rep.fixed_tokens,
        "scan": {"dirs": len(rep.index.dirs), "files": rep.index.file_count, "sources": len(rep.index.sources),
                 "skipped": [{"path": str(p), "reason": r} for p, r in rep.index.skipped]},
        "root_dir": dcost(rc),
        "directories": [dcost(d) for d in rep.dirs[:top]],
        "other_directories": [dcost(d) for d in rep.other_dirs[:top]],
        "largest_files": [{"source": rep.rel(f.path), "kind": f.kind, "tokens": f.tokens, "lines": f.lines}
                          for f in rep.files[:top]],
        "skills": None if listing is None else {
            "count": len(listing.skills), "listed": sum(1 for k in listing.skills if k.listed),
            "full_chars": listing.full_chars, "sent_chars": listing.sent_chars, "budget_chars": listing.budget_chars,
            "tokens": rep.skills_tokens,
            "descriptions_dropped": sum(1 for k in listing.skills if k.description_dropped)},
        "memory": None if rep.memory_source is None else {
            "source": rep.rel(rep.memory_source), "tokens": rep.memory_tokens, "cut": rep.memory_cut},
        "scenarios": {
            "read_tokens": READ_TOKENS, "turn_tokens": TURN_TOKENS,
            "autocompact_threshold": s.autocompact_threshold,
            "root": {"reads_until_half": rep.reads_until_half(rc), "turns_until_half": rep.turns_until_half(rc),
                     "tokens_until_compact": rep.tokens_until_compact(rc),
                     "turns_until_compact": rep.turns_until_compact(rc)},
            "worst": {"dir": rep.rel(worst.dir) if worst.dir != rep.root else ".",
                      "reads_until_half": rep.reads_until_half(worst), "turns_until_half": rep.turns_until_half(worst),
                      "tokens_until_compact": rep.tokens_until_compact(worst),
                      "turns_until_compact": rep.turns_until_compact(worst)},
        },
        "policy": rep.policy,
    }
