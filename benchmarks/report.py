"""docs/performance.md's tables, rendered from the results files (``benchmarks/results/*.json``).

A block in the page names a results file and one of its tables::

    <!-- results:begin peers-10k#10000 -->
    (generated: the table, then what produced it)
    <!-- results:end -->

``python -m benchmarks.report`` rewrites every block from the files; ``--check`` only says which
differ (tests/test_generated_docs.py runs the same check).  Standard library only, so that the
test can load this file without the benchmarks' dependencies.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
FILES = [ROOT / "docs" / "performance.md", ROOT / "docs" / "recall.md"]
BLOCK = re.compile(
    r"(?P<open><!-- results:begin (?P<file>[\w.-]+)#(?P<table>[\w.-]+) -->\n)(?P<body>.*?)(?P<close><!-- results:end -->)",
    re.S,
)


def load(name: str) -> dict[str, Any]:
    path = RESULTS / f"{name}.json"
    if not path.exists():
        raise SystemExit(f"results block names {name!r}: no file {path.relative_to(ROOT)}")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def cell(value: Any) -> str:
    """A value as the text tables show it: thousands separated, '-' for none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(
        value, float
    ):  # as recorded up to 3 decimals (0.987, 26.36), else 2; no decimals from 1,000
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:,}" if round(value, 3) == value else f"{value:,.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value).replace("|", "\\|")


def provenance(result: dict[str, Any]) -> str:
    """One line saying what produced a result: the command, the commit, the versions and the load."""
    t = result["tags"]
    commit = (t.get("commit") or "unknown")[:7] + (
        "+dirty" if str(t.get("commit", "")).endswith("+dirty") else ""
    )
    load = t.get("loadavg")
    parts = [
        f"`{result['command']}`",
        f"at {commit}",
        f"kg-neo4j {t.get('kg_neo4j') or 'unknown'}",
        f"Neo4j {t.get('neo4j') or 'unknown'}",
    ]
    if load:
        parts.append(f"load {load[0]:.1f} on {t.get('cpus') or '?'} cores")
    if t.get("date"):
        parts.append(str(t["date"])[:10])
    return "Produced by " + ", ".join(parts) + f" (`benchmarks/results/{result['name']}.json`)."


def render_table(name: str, key: str) -> str:
    result = load(name) | {"name": name}
    found = [t for t in result["tables"] if t["key"] == key]
    if not found:
        keys = ", ".join(t["key"] for t in result["tables"])
        raise SystemExit(f"results block {name}#{key}: no table {key!r} (the file has {keys})")
    table = found[0]
    lines = [
        "| " + " | ".join(cell(h) for h in table["headers"]) + " |",
        "| " + " | ".join(["---"] + ["---:"] * (len(table["headers"]) - 1)) + " |",
    ]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in table["rows"]]
    return "\n".join(lines) + "\n\n" + provenance(result) + "\n"


def render(text: str) -> str:
    return BLOCK.sub(
        lambda m: m["open"] + render_table(m["file"], m["table"]) + m["close"],
        text,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--check", action="store_true", help="only say which pages differ (exit 1)")
    args = ap.parse_args(argv)
    stale = []
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        new = render(text)
        if new != text:
            stale.append(path)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    for path in stale:
        print(f"{path.relative_to(ROOT)}: {'differs' if args.check else 'rewritten'}", file=sys.stderr)
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    raise SystemExit(main())
