#!/usr/bin/env python3
"""Generate a monorepo of templated CLAUDE.md files: the shape of issue 15's "quiet and fast" case.

    python bench/gen_templated.py OUT_DIR [--files 500] [--nested 40] [--seed 1] [--home DIR] [--force]

A scaffolder stamped one template into every package: ``packages/<group>/<area>/CLAUDE.md`` (``--files`` in all,
the root included), each filled with its area's number and names. Every file holds lists and tables whose items
are *parallel*, not versions of one rule: they differ only in the numbers and names that enumerate them

* ``Rule 3 for area 12: the handler 33 validates every incoming payload first.`` (numbers enumerate),
* ``The billing worker of area 12 reads the billing queue, ...`` (a name enumerates),
* endpoint table rows and numbered limits of the same kind.

``--nested`` of the areas get a sub-package (``<area>/plugins/<name>/CLAUDE.md``, from the same template) that
loads together with its parent area's file, so templated lists of two co-loading files meet too.

The root CLAUDE.md is written by hand (not templated) and each area copies two or three of its shared rules
verbatim (CTX201). Every 16th area alters one of them (a changed number, a MUST turned into should, a negation
dropped): those are real disagreements, and CTX202 must still report each of them (the summary counts them as
``altered_copies``). Nothing else in the tree should give a CTX202.

Deterministic: the same arguments give the same tree (except ``.git/``, written by ``git init``). The fake home
(default ``OUT_DIR/../home``) holds an empty ``.claude/``. Standard library only; importable: ``generate(...)``
returns the summary dict.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_monorepo import _prepare_targets, print_summary  # noqa: E402  (the same refusals and summary)

NOUNS = (
    "account alert audit batch billing cart catalog checkout coupon customer delivery device email event export "
    "feed gateway identity inventory invoice job ledger locale media metric order payment payout pipeline plan "
    "policy price profile queue quota receipt refund report review risk route schedule search session shipment "
    "signal storage stream subscription tax tenant token transfer upload usage vendor webhook workflow"
).split()
# (Not "queue": "the queue worker reads the queue queue" would not be an instance of the workers' template.)
WORKER_NOUNS = [n for n in NOUNS if n not in ("queue", "table", "bus")]
GROUPS = ("core", "commerce", "finance", "growth", "identity", "infra", "media", "ops", "platform", "search",
          "support", "data", "edge", "mobile", "web", "partners", "risk", "billing", "content", "labs")

# The root's shared rules: areas copy some of them verbatim, and a few alter one (see _ALTERED).
SHARED = (
    "Requests to internal services time out after 30 seconds and retry at most 2 times.",
    "Database migrations MUST be reversible and reviewed by the platform team before merging.",
    "Never log access tokens, session cookies or customer email addresses at any level.",
    "Run `pnpm test --filter <package>` and `pnpm lint` before pushing a change to main.",
    "Feature flags are removed within 4 weeks of a full rollout, with the code paths they guarded.",
    "Public API changes need a changelog entry and a version bump in the package manifest.",
    "Background jobs must be idempotent: a retried job never charges, emails or ships twice.",
    "Secrets come from the vault at runtime; do not commit them to the repository or the images.",
)
# One real disagreement per altered copy: (index in SHARED, the altered text).
_ALTERED = (
    (0, "Requests to internal services time out after 60 seconds and retry at most 2 times."),
    (1, "Database migrations should be reversible and reviewed by the platform team before merging."),
    (2, "Log access tokens, session cookies or customer email addresses only at debug level."),
    (4, "Feature flags are removed within 8 weeks of a full rollout, with the code paths they guarded."),
    (6, "Background jobs should be idempotent: a retried job never charges, emails or ships twice."),
)


def _root_text() -> str:
    lines = ["# acme platform", "", "A monorepo of packages stamped from `templates/area/`; each package's",
             "CLAUDE.md fills the template for its own area.", "", "## Shared rules", ""]
    lines += [f"- {r}" for r in SHARED]
    lines += ["", "## Layout", "", "- `packages/<group>/<area>/` holds one area: its handlers, workers and API.",
              "- `templates/area/` is the scaffold; run `pnpm new-area <name>` to stamp a new one.", ""]
    return "\n".join(lines)


def _area_text(rng: random.Random, area: int, group: str, name: str, shared: list[str]) -> str:
    """One filled-in template: lists and tables of parallel items, and the copied shared rules."""
    lines = [f"# Area {area}: {name} ({group})", "",
             f"Scaffolded from `templates/area/` for the {name} area; the rules below apply to it.", ""]
    lines += ["## Rules", ""]
    base = rng.randint(1, 40)
    for r in range(1, rng.randint(12, 20) + 1):
        lines.append(f"- Rule {r} for area {area}: the handler {base + 7 * r} validates every incoming payload first.")
    lines += ["", "## Workers", ""]
    for noun in rng.sample(WORKER_NOUNS, rng.randint(8, 12)):
        lines.append(f"- The {noun} worker of area {area} reads the {noun} queue, writes the {noun} table and "
                     f"publishes {noun} events to the bus.")
    lines += ["", "## Endpoints", "", "| Endpoint | Handler | Behaviour |", "|---|---|---|"]
    for i in range(1, rng.randint(8, 14) + 1):
        lines.append(f"| `GET /v1/{name}/items/{{id}}` | handler {base + 7 * i} | returns item {i} of area {area} "
                     f"with its owner, its audit trail and its {i * 10} latest events |")
    lines += ["", "## Limits", ""]
    for b in range(1, rng.randint(6, 10) + 1):
        lines.append(f"{b}. Batch {b} of area {area} holds at most {b * 250} records and flushes after {b * 5} "
                     f"seconds or on shutdown.")
    lines += ["", "## Shared rules (from the root)", ""]
    lines += [f"- {r}" for r in shared]
    lines.append("")
    return "\n".join(lines)


def generate(out_dir: Path, *, files: int = 500, nested: int = 40, seed: int = 1, home: Path | None = None,
             force: bool = False) -> dict:
    """Write the repository (and an empty fake home); return a summary."""
    root = out_dir.resolve()
    home = (home or root.parent / "home").resolve()
    _prepare_targets([root, home / ".claude"], force)
    root.mkdir(parents=True, exist_ok=True)
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        (root / ".git").mkdir(exist_ok=True)  # a workspace marker is all ctxls needs
    rng = random.Random(seed)
    (root / ".gitignore").write_text(".ctxls/\n")
    (root / "CLAUDE.md").write_text(_root_text())
    (root / "templates" / "area").mkdir(parents=True)
    (root / "templates" / "area" / "README.md").write_text("# The area scaffold\n\n`pnpm new-area <name>`.\n")
    n_areas = max(0, files - 1)
    nested = min(nested, n_areas // 2)
    n_top = n_areas - nested
    altered = verbatim = 0
    written = 1
    tops = []
    for a in range(1, n_top + nested + 1):
        name = f"{rng.choice(NOUNS)}-{a}"
        picks = rng.sample(range(len(SHARED)), rng.randint(2, 3))
        shared = [SHARED[i] for i in picks]
        verbatim += len(shared)
        if a % 16 == 0:
            i, text = _ALTERED[(a // 16) % len(_ALTERED)]
            shared.append(text)  # (a copy of SHARED[i] that disagrees with the root)
            altered += 1
        if a <= n_top:
            d = root / "packages" / GROUPS[a % len(GROUPS)] / name
            tops.append(d)
        else:  # a sub-package of an earlier area: loads with that area's file
            d = tops[(a - n_top - 1) * max(1, n_top // max(1, nested)) % len(tops)] / "plugins" / name
        d.mkdir(parents=True, exist_ok=True)
        (d / "CLAUDE.md").write_text(_area_text(rng, a, GROUPS[a % len(GROUPS)], name, shared))
        (d / "handler.py").write_text(f"def handle(payload):\n    return {a}\n")
        written += 1
    return {"repo": str(root), "home": str(home), "seed": seed, "claude_md_files": written,
            "nested_areas": nested, "shared_copies_verbatim": verbatim, "altered_copies": altered}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--files", type=int, default=500, help="CLAUDE.md files, the root included (default 500)")
    ap.add_argument("--nested", type=int, default=40, help="areas nested in another area (default 40)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--home", type=Path, default=None, help="fake home dir (default OUT_DIR/../home)")
    ap.add_argument("--force", action="store_true", help="replace OUT_DIR and HOME/.claude if they exist")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = ap.parse_args(argv)
    summary = generate(args.out_dir, files=args.files, nested=args.nested, seed=args.seed, home=args.home,
                       force=args.force)
    print_summary(summary, as_json=args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
