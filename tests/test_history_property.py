"""Issue 17, item 5: one property of the whole temporal design, tested on random write sequences.

For a sequence of writes through the tools, at moments t1 < t2 < ... taken between the steps, a read with
``asOf`` ti answers exactly what the same read of now answered right after the writes up to ti: for
read_graph, open_nodes, search_nodes and traverse_graph.  The writes are every non-erasing write tool of the
``all`` profile (create_entities, add_observations, create_relations, update_relations, invalidate_relations,
invalidate_observations, MemoryMesh update_nodes changing a type or replacing metadata in order,
store_knowledge, update_knowledge, connect_knowledge, forget_knowledge).  The erasing deletes are left out:
they erase by contract.  Each sequence runs in its own namespace through a real MCP stdio session; its
seed is printed (pytest -s), and KG_HISTORY_SEED=<seed> replays one.

Size: SEQUENCES sequences of STEPS steps, READS reads per step compared (docs/history.md#time-and-history).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from datetime import UTC, datetime
from typing import Any

from support.kg import retention_apart
from support.servers import Neo4jInfo, mcp_session

SEQUENCES = 4
STEPS = 16
ENTITIES = ["Ann", "Bob", "Cy", "Dee", "Eve"]
KNOWLEDGE = ["Kay", "Lou"]
TYPES = ["person", "robot", "wizard"]
WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma"]
RELATION_TYPES = ["knows", "likes"]
QUERIES = ["alpha", "wiz", "ka"]  # an observation word, a type fragment, a name fragment
#: reads compared per step: read_graph, open_nodes, one search_nodes per query, two traverse_graph
READS = 2 + len(QUERIES) + 2
#: writes made, by tool (printed: what the sequences exercised)
WRITES: dict[str, int] = {}


async def moment() -> str:
    """A moment strictly between the calls before and after it (the server's clock is the system clock)."""
    await asyncio.sleep(0.003)
    at = datetime.now(UTC).isoformat()
    await asyncio.sleep(0.003)
    return at


async def answer(s: Any, tool: str, args: dict[str, Any]) -> tuple[bool, Any]:
    result = await s.call_tool(tool, args)
    text = result.content[0].text
    return (False, text) if result.is_error else (True, json.loads(text))


def reads() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = [
        ("read_graph", {}),
        ("open_nodes", {"names": ENTITIES + KNOWLEDGE}),
    ]
    out += [("search_nodes", {"query": q}) for q in QUERIES]
    out += [
        ("traverse_graph", {"start": ENTITIES + KNOWLEDGE, "maxDepth": 3}),
        ("traverse_graph", {"start": ["Ann", "Kay"], "minWeight": 0.5, "direction": "out"}),
    ]
    assert len(out) == READS
    return out


def write(rng: random.Random, graph: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """One random write, chosen from what the graph of now holds (so most of them change something)."""
    ents = {e["name"]: e for e in graph["entities"]}
    plain = [n for n in ents if n in ENTITIES]
    know = [n for n in ents if n in KNOWLEDGE]
    rels = graph["relations"]
    text = " ".join(rng.sample(WORDS, 2))
    options: list[tuple[str, dict[str, Any]]] = [
        (
            "create_entities",
            {
                "entities": [
                    {"name": rng.choice(ENTITIES), "entityType": rng.choice(TYPES), "observations": [text]}
                ]
            },
        ),
        # mostly between entities of now (traverse_graph walks only those), sometimes to a new name (a placeholder)
        (
            "create_relations",
            {
                "relations": [
                    {
                        "from": rng.choice(
                            list(ents) if ents and rng.random() < 0.8 else ENTITIES + KNOWLEDGE
                        ),
                        "to": rng.choice(plain if plain and rng.random() < 0.8 else ENTITIES),
                        "relationType": rng.choice(RELATION_TYPES),
                        "weight": rng.choice([0.2, 0.6, 1.0]),
                        "reasoning": rng.choice(["seen", "told"]),
                    }
                ]
            },
        ),
        (
            "store_knowledge",
            {
                "name": rng.choice(KNOWLEDGE),
                "content": f"knowledge {text}",
                "type": rng.choice(["rule", "insight"]),
                "trust": "pattern",
            },
        ),
    ]
    if plain:
        n = rng.choice(plain)
        obs = ents[n]["observations"]
        options += [
            ("add_observations", {"observations": [{"entityName": n, "contents": [text]}]}),
            ("update_nodes", {"nodes": [{"name": n, "nodeType": rng.choice(TYPES)}]}),
        ]
        if obs:
            options += [
                (
                    "invalidate_observations",
                    {"observations": [{"entityName": n, "observations": [rng.choice(obs)]}]},
                ),
                # metadata replaced in order: some kept, one new text at the end (a reorder is not exact: README)
                (
                    "update_nodes",
                    {
                        "nodes": [
                            {
                                "name": n,
                                "metadata": [o for o in obs if rng.random() < 0.5]
                                + [text if text not in obs else f"{text} anew"],
                            }
                        ]
                    },
                ),
            ]
    if rels:
        r = rng.choice(rels)
        key = {"from": r["from"], "to": r["to"], "relationType": r["relationType"]}
        options += [
            (
                "update_relations",
                {
                    "relations": [
                        {
                            **key,
                            "weight": rng.choice([0.0, 0.4, 1.0]),
                            "reasoning": rng.choice(["re-checked", "doubted"]),
                        }
                    ]
                },
            ),
            ("invalidate_relations", {"relations": [key]}),
        ]
    if know:
        k = rng.choice(know)
        options += [
            (
                "update_knowledge",
                {
                    "name": k,
                    **rng.choice(
                        [{"type": "procedure"}, {"trust": "inference"}, {"content": f"revised {text}"}]
                    ),
                },
            ),
            (
                "connect_knowledge",
                {
                    "from": k,
                    "to": rng.choice(plain or ENTITIES[:1]),
                    "relationType": "observed_in",
                    "weight": rng.choice([0.3, 0.9]),
                    "reasoning": "noticed",
                },
            ),
            ("forget_knowledge", {"names": [k]}),
        ]
    return rng.choice(options)


async def run_sequence(neo4j_info: Neo4jInfo, namespace: str, seed: int) -> int:
    rng = random.Random(seed)
    compared = 0
    async with mcp_session(
        "stdio", neo4j_info, namespace, "--tools", "all", "--embedding-model", "none"
    ) as s:
        seen: list[tuple[str, list[tuple[bool, Any]]]] = []
        graph: dict[str, Any] = {"entities": [], "relations": []}
        log: list[str] = []
        for _ in range(STEPS):
            tool, args = write(rng, graph)
            done, out = await answer(s, tool, args)
            log.append(f"{tool} {json.dumps(args)} -> {'ok' if done else out[:80]}")
            WRITES[tool if done else f"{tool} (refused)"] = (
                WRITES.get(tool if done else f"{tool} (refused)", 0) + 1
            )
            at = await moment()
            now = [await answer(s, t, a) for t, a in reads()]
            graph = now[0][1]
            seen.append((at, now))
        for i, (at, now) in enumerate(seen):
            for (tool, args), expected in zip(reads(), now, strict=True):
                got = await answer(s, tool, {**args, "asOf": at})
                got, expected = retention_apart(got, expected, f"seed {seed}: {tool} step {i + 1}")
                assert got == expected, (
                    f"seed {seed}: {tool}({args}) asOf step {i + 1} differs from the read of now then\n"
                    f"writes:\n  " + "\n  ".join(log[: i + 1]) + f"\nthen: {expected}\nasOf: {got}"
                )
                compared += 1
    return compared


async def test_as_of_reads_equal_the_reads_of_that_moment(neo4j_info: Neo4jInfo, namespace: str) -> None:
    fixed = os.environ.get("KG_HISTORY_SEED")
    seeds = [int(fixed)] if fixed else [random.SystemRandom().randrange(1 << 30) for _ in range(SEQUENCES)]
    for k, seed in enumerate(seeds):
        print(f"history property: sequence {k + 1}/{len(seeds)} seed {seed} (replay: KG_HISTORY_SEED={seed})")
    # the sequences run side by side (one server and namespace each): most of a sequence's time is its
    # server starting
    compared = sum(
        await asyncio.gather(
            *(run_sequence(neo4j_info, f"{namespace}-{k}", seed) for k, seed in enumerate(seeds))
        )
    )
    print(
        f"history property: {len(seeds)} sequences x {STEPS} steps, {compared} asOf reads compared; "
        f"writes: {dict(sorted(WRITES.items()))}"
    )
    assert compared == len(seeds) * STEPS * READS
