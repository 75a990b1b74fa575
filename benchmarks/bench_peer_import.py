"""``kg-neo4j import --from mcp-neo4j-memory`` at size: N :Memory nodes (3 observations each) and N
relationships, written in mcp-neo4j-memory's shape into the scratch Neo4j of
``benchmarks/peer_graphs/capture.py`` (never the project's: the benchmark empties it), imported by the real
command into a fresh ``bench-...`` namespace of the project's Neo4j (no embedding model, then the default
one), timed, checked (counts in = counts out) and deleted.

    .venv/bin/python benchmarks/bench_peer_import.py --sizes 10000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "peer_graphs"))

from _common import KG, connection, delete_namespace, log, new_namespace, server_env, sync_driver, table  # noqa: E402
from capture import scratch_neo4j, wipe  # noqa: E402
from neo4j import GraphDatabase  # noqa: E402

SEED = """
UNWIND range(0, $n - 1) AS i
CREATE (:Memory:person {name: 'person-' + i, type: 'person',
        observations: ['works on ' + (i % 97), 'likes ' + (i % 89), 'met ' + ((i * 7919) % $n)]})
"""
LINK = """
MATCH (m:Memory) WITH m, toInteger(substring(m.name, 7)) AS i
MATCH (t:Memory {name: 'person-' + ((i * 7919 + 1) % $n)})
CREATE (m)-[:KNOWS]->(t)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    ap.add_argument("--models", nargs="+", default=["none", "all-MiniLM-L6-v2"])
    a = ap.parse_args()
    scratch_neo4j("start")
    src = {k: v.strip("'\"") for k, v in scratch_neo4j("env").items()}
    conn = connection()
    rows = []
    for n in a.sizes:
        wipe(src)
        with GraphDatabase.driver(
            src["NEO4J_URI"], auth=(src["NEO4J_USERNAME"], src["NEO4J_PASSWORD"])
        ) as drv:
            drv.execute_query("CREATE INDEX memory_name IF NOT EXISTS FOR (m:Memory) ON (m.name)")
            drv.execute_query("CALL db.awaitIndexes()")
            drv.execute_query(SEED, n=n)
            drv.execute_query(LINK, n=n)
            drv.execute_query(
                "DROP INDEX memory_name"
            )  # mcp-neo4j-memory makes none: the import reads without it
        for model in a.models:
            ns = new_namespace("peer-import", n)
            env = server_env(conn) | {
                "KG_NEO4J_EMBEDDING_MODEL": model,
                "SOURCE_NEO4J_USERNAME": src["NEO4J_USERNAME"],
                "SOURCE_NEO4J_PASSWORD": src["NEO4J_PASSWORD"],
            }
            args = [KG, "import", "--from", "mcp-neo4j-memory", "--source-uri", src["NEO4J_URI"]]
            args += ["--namespace", ns, "--no-progress"]
            t0 = time.perf_counter()
            done = subprocess.run(args, env=env, capture_output=True, text=True)
            seconds = time.perf_counter() - t0
            if done.returncode != 0:
                raise SystemExit(done.stderr)
            report = json.loads(done.stdout)
            ok = (
                report["entities"]["added"] == n
                and report["observations"]["added"] == 3 * n
                and report["relations"]["added"] == n
            )
            log(f"{n} entities, model {model}: {seconds:.1f} s, counts in = out: {ok}")
            rows.append(
                [n, model, f"{seconds:.1f}", f"{(n + 3 * n + n) / seconds:,.0f}", "yes" if ok else "NO"]
            )
            with sync_driver(conn) as drv:
                delete_namespace(drv, conn.database, ns)
    wipe(src)
    print(table(["entities", "model", "seconds (whole command)", "items/s", "counts in = out"], rows))


if __name__ == "__main__":
    main()
