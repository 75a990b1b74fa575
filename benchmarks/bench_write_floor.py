"""What in the data model sets create_entities' floor: the same bare UNWIND under index layouts, side by side.

Each layout gets its own labels (``KgNode_<v>``, ``Entity_<v>``, ``Observation_<v>``, ``KgText_<v>``) and its own
constraint and indexes, so all of them live in one database and their calls interleave (same noise for
every layout; the order is shuffled each round).  Each layout is first filled with ``--n`` entities (3
observations each), then ``--calls`` rounds time one batch of 100 entities and one single entity per
layout.  The statement is create_entities' own shape (MERGE on the key, the type as a label, observation
nodes); embeddings off.  Everything it made (nodes, indexes, constraints) is removed at the end.

Layouts (``--layouts``):

* ``before``: the layout before session 10: three text indexes (entity name, entity type, observation
  text) and a fulltext index that is not eventually consistent;
* ``ec``: the same with the fulltext index eventually consistent;
* ``merged``: ``ec`` with one text index over the entity's name and type instead of two;
* ``one``: the shipped layout: one text index over ``:KgText(text_lower)`` on entities and observations,
  the fulltext index eventually consistent;
* ``one_no_fulltext``: ``one`` without the fulltext index (what BM25 recall costs a write);
* ``keyword``: ``one`` with the text index replaced by an eventually consistent fulltext index over the
  same ``:KgText(text_lower)`` with the ``keyword`` analyzer (one term per text; substring search is a
  wildcard query ``*...*`` over those terms, read after waiting for pending writes);
* ``no_lucene``: the key constraint and range indexes only (no substring search, no BM25).

``--search`` also times a substring search on ``one``, ``keyword`` and ``no_lucene`` (those given),
interleaved, with the hits each found.

    .venv/bin/python benchmarks/bench_write_floor.py --n 10000 --calls 60
    .venv/bin/python benchmarks/bench_write_floor.py --n 10000 --calls 60 --layouts one,keyword,no_lucene --search
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import connection, log  # noqa: E402

LAYOUTS = ("before", "ec", "merged", "one", "one_no_fulltext", "keyword", "no_lucene")
EC = "OPTIONS {indexConfig: {`fulltext.eventually_consistent`: true}}"
EC_KEYWORD = "OPTIONS {indexConfig: {`fulltext.analyzer`: 'keyword', `fulltext.eventually_consistent`: true}}"


def schema(v: str) -> list[str]:
    k, e, o, t = f"KgNode_{v}", f"Entity_{v}", f"Observation_{v}", f"KgText_{v}"
    out = [
        f"CREATE CONSTRAINT floor_key_{v} IF NOT EXISTS FOR (n:{k}) REQUIRE (n.namespace, n.name) IS UNIQUE",
        f"CREATE INDEX floor_ns_name_{v} IF NOT EXISTS FOR (n:{e}) ON (n.namespace, n.name)",
        f"CREATE INDEX floor_ns_lower_{v} IF NOT EXISTS FOR (n:{e}) ON (n.namespace, n.name_lower)",
        f"CREATE INDEX floor_ns_turn_{v} IF NOT EXISTS FOR (o:{o}) ON (o.namespace, o.turn)",
    ]
    if v in ("before", "ec"):
        out += [
            f"CREATE TEXT INDEX floor_name_{v} IF NOT EXISTS FOR (n:{e}) ON (n.name_lower)",
            f"CREATE TEXT INDEX floor_type_{v} IF NOT EXISTS FOR (n:{e}) ON (n.type_lower)",
        ]
    if v == "merged":
        out.append(f"CREATE TEXT INDEX floor_name_type_{v} IF NOT EXISTS FOR (n:{e}) ON (n.text_lower)")
    if v in ("before", "ec", "merged"):
        out.append(f"CREATE TEXT INDEX floor_obs_{v} IF NOT EXISTS FOR (o:{o}) ON (o.text_lower)")
    if v in ("one", "one_no_fulltext"):
        out.append(f"CREATE TEXT INDEX floor_text_{v} IF NOT EXISTS FOR (n:{t}) ON (n.text_lower)")
    if v == "keyword":
        out.append(
            f"CREATE FULLTEXT INDEX floor_text_{v} IF NOT EXISTS FOR (n:{t}) ON EACH [n.text_lower] {EC_KEYWORD}"
        )
    if v in ("before", "ec", "merged", "one", "keyword"):
        out.append(
            f"CREATE FULLTEXT INDEX floor_fulltext_{v} IF NOT EXISTS FOR (n:{e}|{o}) "
            f"ON EACH [n.name, n.entityType, n.text] {EC if v != 'before' else ''}"
        )
    return out


def statement(v: str) -> str:
    k, e, o = f"KgNode_{v}", f"Entity_{v}", f"Observation_{v}"
    return f"""
UNWIND $rows AS row
MERGE (n:{k} {{namespace: $ns, name: row.name}})
REMOVE n.kg_lock
WITH n, row WHERE NOT n:{e}
SET n:{e}, n:$($text_label), n.entityType = row.entityType, n.name_lower = row.name_lower,
    n.type_lower = row.type_lower, n.created_at = $now,
    n.text_lower = CASE WHEN $entity_text THEN row.name_lower + '\\n' + row.type_lower END,
    n.obs_next = size(row.observations)
SET n:$(row.type_labels), n.type_labels = row.type_labels
WITH n, row
CALL (n, row) {{
  UNWIND range(0, size(row.observations) - 1) AS i
  CREATE (n)-[:HAS_OBSERVATION]->(x:{o} {{namespace: $ns, text: row.observations[i],
                                          text_lower: row.observations_lower[i], seq: i, created_at: $now}})
  SET x:$($text_label)
}}
RETURN collect(row.name) AS created"""


WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa".split()


class Rows:
    def __init__(self) -> None:
        self.rng, self.i = random.Random(1), 0

    def __call__(self, k: int) -> list[dict[str, Any]]:
        out = []
        for _ in range(k):
            self.i += 1
            name = f"entity-{self.i:07d}-{self.rng.choice(WORDS)}"
            obs = [" ".join(self.rng.choice(WORDS) for _ in range(8)) + f" {self.i}-{j}" for j in range(3)]
            t = self.rng.choice(["person", "project", "place", "tool"])
            out.append(
                {
                    "name": name,
                    "entityType": t,
                    "name_lower": name.lower(),
                    "type_lower": t,
                    "type_labels": [t],
                    "observations": obs,
                    "observations_lower": [x.lower() for x in obs],
                }
            )
        return out


async def cleanup(drv: Any, layouts: list[str]) -> None:
    async with drv.session() as session:  # CALL ... IN TRANSACTIONS needs an implicit transaction
        for v in layouts:
            for label in (f"Observation_{v}", f"KgNode_{v}"):
                result = await session.run(
                    f"MATCH (n:{label}) CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF 5000 ROWS"
                )
                await result.consume()
    records = (await drv.execute_query("SHOW INDEXES YIELD name, owningConstraint")).records
    for r in records:
        if r["name"].startswith("floor_"):
            if r["owningConstraint"]:
                await drv.execute_query(f"DROP CONSTRAINT {r['owningConstraint']} IF EXISTS")
            else:
                await drv.execute_query(f"DROP INDEX {r['name']} IF EXISTS")


async def run(a: argparse.Namespace) -> None:
    from neo4j import AsyncGraphDatabase

    conn = connection()
    layouts = [v for v in a.layouts.split(",") if v]
    drv = AsyncGraphDatabase.driver(
        conn.uri, auth=(conn.username, conn.password), notifications_min_severity="OFF"
    )
    # each layout writes the same rows (same seed), so its searches must find the same nodes
    rows, ns = {v: Rows() for v in layouts}, f"floor-{int(time.time())}"
    try:
        await cleanup(drv, layouts)
        for v in layouts:
            for s in schema(v):
                await drv.execute_query(s)
        await drv.execute_query("CALL db.awaitIndexes(300)")
        text = {v: statement(v) for v in layouts}

        async def write(v: str, k: int) -> float:
            params = {
                "text_label": [f"KgText_{v}"] if v.startswith("one") or v == "keyword" else [],
                "entity_text": v in ("merged", "one", "one_no_fulltext", "keyword"),
            }
            t0 = time.perf_counter()
            await drv.execute_query(text[v], rows=rows[v](k), ns=ns, now=datetime.now(UTC), **params)
            return (time.perf_counter() - t0) * 1000

        for v in layouts:
            t0 = time.perf_counter()
            for _ in range(a.n // 100):
                await write(v, 100)
            log(f"{v}: {a.n} entities in {time.perf_counter() - t0:.1f} s")
        res: dict[tuple[str, int], list[float]] = {(v, k): [] for v in layouts for k in (100, 1)}
        order = list(layouts)
        for _ in range(a.calls):
            random.shuffle(order)
            for v in order:
                for k in (100, 1):
                    res[(v, k)].append(await write(v, k))
        base = layouts[0]
        print(
            f"create_entities' bare UNWIND, {a.n:,} entities per layout already written, {a.calls} interleaved "
            f"rounds (p50 ms; ratio to {base!r})"
        )
        print("| layout | 100 entities | ratio | 1 entity | ratio |\n| --- | --- | --- | --- | --- |")
        for v in layouts:
            p100, p1 = statistics.median(res[(v, 100)]), statistics.median(res[(v, 1)])
            b100, b1 = statistics.median(res[(base, 100)]), statistics.median(res[(base, 1)])
            print(f"| {v} | {p100:.1f} | {p100 / b100:.2f} | {p1:.1f} | {p1 / b1:.2f} |")
        if a.search:
            await search_costs(drv, [v for v in layouts if v in SEARCHED], a.calls)
    finally:
        await cleanup(drv, layouts)
        await drv.close()


#: the layouts whose substring search is timed, and how each one answers "which texts contain $q"
SEARCHED = ("one", "keyword", "no_lucene")
QUERIES = ("entity-0004321", "charlie", "lima mike", "zzz")


def _wildcard(q: str) -> str:
    """``*q*`` with every Lucene query-syntax character (and whitespace) escaped: one term, any position."""
    return "*" + re.sub(r'([+\-!(){}\[\]^"~*?:\\/&|\s])', r"\\\1", q) + "*"


def search_statement(v: str) -> str:
    if v == "keyword":
        return (
            "CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh() "
            f"CALL db.index.fulltext.queryNodes('floor_text_{v}', $wildcard) YIELD node "
            "RETURN count(node) AS hits"
        )
    label = f"KgText_{v}" if v == "one" else f"Observation_{v}"  # no_lucene: a label scan of the texts
    return f"MATCH (n:{label}) WHERE n.text_lower CONTAINS $q RETURN count(n) AS hits"


async def search_costs(drv: Any, layouts: list[str], calls: int) -> None:
    """Substring search on each layout (interleaved): the cost side of a cheaper write."""
    res: dict[tuple[str, str], list[float]] = {(v, q): [] for v in layouts for q in QUERIES}
    hits: dict[tuple[str, str], int] = {}
    for _ in range(calls):
        for q in QUERIES:
            order = list(layouts)
            random.shuffle(order)
            for v in order:
                t0 = time.perf_counter()
                records = (await drv.execute_query(search_statement(v), q=q, wildcard=_wildcard(q))).records
                res[(v, q)].append((time.perf_counter() - t0) * 1000)
                hits[(v, q)] = records[0]["hits"]
    print(
        f"\nsubstring search over each layout's texts ({calls} interleaved rounds, p50 ms, hits); "
        "no_lucene counts observations only (a label scan)"
    )
    print("| query | " + " | ".join(layouts) + " |\n| --- |" + " --- |" * len(layouts))
    for q in QUERIES:
        cells = [f"{statistics.median(res[(v, q)]):.1f} ({hits[(v, q)]:,})" for v in layouts]
        print(f"| {q!r} | " + " | ".join(cells) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10_000, help="entities written per layout before timing")
    ap.add_argument(
        "--calls", type=int, default=60, help="interleaved rounds (one 100-batch and one single each)"
    )
    ap.add_argument(
        "--search",
        action="store_true",
        help=f"also time a substring search on the layouts {', '.join(SEARCHED)} (those given)",
    )
    ap.add_argument(
        "--layouts", default=",".join(LAYOUTS), help=f"comma-separated subset of {', '.join(LAYOUTS)}"
    )
    a = ap.parse_args()
    bad = [v for v in a.layouts.split(",") if v and v not in LAYOUTS]
    if bad:
        ap.error(f"--layouts: unknown {bad}; allowed: {', '.join(LAYOUTS)}")
    asyncio.run(run(a))


if __name__ == "__main__":
    main()
