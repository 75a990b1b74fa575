"""``kg-neo4j import --from mcp-neo4j-memory|graphiti|memento`` (docs/moving-over.md, kg_neo4j/peers/).

The sources are graphs written BY THE REAL PEER PACKAGES (benchmarks/peer_graphs/capture.py dumped them to
tests/data/peers/), replayed into this worker's private Neo4j (emptied first: it is the source, the
namespace written is on the shared test Neo4j).  What each import should bring is computed here from the
dump itself (counts in) and compared with the report and with what read_graph shows (counts out).  The
coexistence test puts the three peers' graphs and a kg-neo4j namespace in ONE database and checks that
bootstrap (with its migrations), the tools, maintain, reembed and the imports leave the foreign nodes as
they were.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from neo4j import GraphDatabase

from kg_neo4j.store.value_codec import decode_value
from support.kg import ok, rel_keys, session
from support.servers import KG, Neo4jInfo, server_env, stdio_session, wipe_neo4j

DATA = Path(__file__).parent / "data" / "peers"
PEERS = ("mcp-neo4j-memory", "graphiti", "memento")
GRAPHITI_KNOWN = {"uuid", "name", "group_id", "summary", "created_at", "labels", "name_embedding"}


# --------------------------------------------------------------------------- the sources


def connect(info: Neo4jInfo) -> Any:
    return GraphDatabase.driver(
        info.uri, auth=(info.username, info.password), notifications_min_severity="OFF"
    )


def load(peer: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / f"{peer}.json").read_text(encoding="utf-8"))
    return data


def replay(info: Neo4jInfo, data: dict[str, Any]) -> set[str]:
    """Write a dump into ``info``'s database as the peer wrote it; returns the new nodes' and relationships'
    element ids."""
    ids: dict[int, str] = {}
    rel_ids: set[str] = set()
    with connect(info) as drv:
        for n in data["nodes"]:
            props = {k: decode_value(v) for k, v in n["properties"].items()}
            rec = drv.execute_query(
                "CREATE (n) SET n:$($labels) SET n = $props RETURN elementId(n) AS id",
                labels=n["labels"],
                props=props,
            ).records
            ids[n["id"]] = rec[0]["id"]
        for r in data["relationships"]:
            rec = drv.execute_query(
                "MATCH (a) WHERE elementId(a) = $a MATCH (b) WHERE elementId(b) = $b "
                "CREATE (a)-[r:$($type)]->(b) SET r = $props RETURN elementId(r) AS id",
                a=ids[r["start"]],
                b=ids[r["end"]],
                type=r["type"],
                props={k: decode_value(v) for k, v in r["properties"].items()},
            ).records
            rel_ids.add(rec[0]["id"])
    return set(ids.values()) | rel_ids


def foreign_state(info: Neo4jInfo) -> list[Any]:
    """Every node that is not kg-neo4j's (no :KgNode / :KgMeta / :Observation), with its labels, properties
    and relationships, in a stable order: what must not change."""
    with connect(info) as drv:
        records = drv.execute_query(
            "MATCH (n) WHERE NOT n:KgNode AND NOT n:KgMeta AND NOT n:Observation AND NOT n:ExpiredKnowledge "
            "OPTIONAL MATCH (n)-[r]->(m) "
            "WITH n, collect([type(r), properties(r), elementId(m)]) AS out "
            "RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props, out ORDER BY id"
        ).records
    return [
        [r["id"], sorted(r["labels"]), sorted(r["props"].items(), key=str), sorted(r["out"], key=str)]
        for r in records
    ]


# --------------------------------------------------------------------------- counts in, from the dump


def expected(peer: str, data: dict[str, Any]) -> dict[str, Any]:
    """What the import must bring: entities {name: (type, observations)}, current and closed relation keys,
    and what is not carried."""
    nodes = {n["id"]: n for n in data["nodes"]}
    rels = data["relationships"]
    entities: dict[str, tuple[str, list[str]]] = {}
    current: list[tuple[str, str, str]] = []
    closed: list[tuple[str, str, str]] = []
    not_carried: dict[str, int] = {}
    if peer == "mcp-neo4j-memory":
        for n in nodes.values():
            p = n["properties"]
            entities[p["name"]] = (p["type"], list(p.get("observations", [])))
        current = [
            (nodes[r["start"]]["properties"]["name"], nodes[r["end"]]["properties"]["name"], r["type"])
            for r in rels
        ]
    elif peer == "graphiti":
        for n in nodes.values():
            if "Entity" not in n["labels"]:
                continue
            p = n["properties"]
            labels = sorted(set(n["labels"]) - {"Entity"})
            obs = [p["summary"]] if p.get("summary", "").strip() else []
            obs += [f"labels: {', '.join(labels)}"] if len(labels) > 1 else []
            obs += [
                f"{k}: {v}"
                for k, v in sorted(p.items())
                if k not in GRAPHITI_KNOWN and not k.endswith("_embedding")
            ]
            entities[p["name"]] = (labels[0] if labels else "Entity", obs)
        for r in rels:
            if r["type"] != "RELATES_TO":
                continue
            key = (
                nodes[r["start"]]["properties"]["name"],
                nodes[r["end"]]["properties"]["name"],
                r["properties"]["name"],
            )
            ended = r["properties"].get("invalid_at") or r["properties"].get("expired_at")
            (closed if ended else current).append(key)
        not_carried = {
            "episodes": sum("Episodic" in n["labels"] for n in nodes.values()),
            "mentions": sum(r["type"] == "MENTIONS" for r in rels),
        }
    else:
        for n in nodes.values():
            p = n["properties"]
            if p.get("validTo") is None:
                entities[p["name"]] = (p["entityType"], json.loads(p["observations"]))
        versions: dict[str, Any] = {}
        for r in rels:
            versions.setdefault(r["properties"]["id"], r)
        for r in versions.values():
            if r["properties"].get("validTo") is None:
                key = (nodes[r["start"]]["properties"]["name"], nodes[r["end"]]["properties"]["name"])
                current.append((*key, r["properties"]["relationType"]))
        not_carried = {
            "older_entity_versions": sum(n["properties"].get("validTo") is not None for n in nodes.values()),
            "older_relation_versions": sum(
                r["properties"].get("validTo") is not None for r in versions.values()
            ),
        }
    return {
        "entities": entities,
        "observations": sum(len(obs) for _, obs in entities.values()),
        "current": sorted(current),
        "closed": sorted(closed),
        "not_carried": not_carried,
    }


# --------------------------------------------------------------------------- running it


def kg_import(target: Neo4jInfo, source: Neo4jInfo | None, peer: str, namespace: str, *extra: str) -> Any:
    """``kg-neo4j import --from peer`` as users run it (the installed entry point), the source's password in
    SOURCE_NEO4J_PASSWORD; ``source`` None: the source is kg-neo4j's own database."""
    args = [KG, "import", "--from", peer, "--namespace", namespace, "--no-progress", *extra]
    env = server_env(target)
    if source is not None:
        args += ["--source-uri", source.uri]
        env |= {"SOURCE_NEO4J_USERNAME": source.username, "SOURCE_NEO4J_PASSWORD": source.password}
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)


def namespace_state(info: Neo4jInfo, namespace: str) -> list[Any]:
    """The namespace as stored (nodes with labels and properties, relationships): the test owns it."""
    with connect(info) as drv:
        records = drv.execute_query(
            "MATCH (n {namespace: $ns}) OPTIONAL MATCH (n)-[r]->(m) "
            "WITH n, collect([type(r), properties(r), m.name, m.text]) AS out "
            "RETURN labels(n) AS labels, [k IN keys(n) WHERE k <> 'embedding' | [k, n[k]]] AS props, out",
            ns=namespace,
        ).records
    return sorted(
        ([sorted(r["labels"]), sorted(r["props"], key=str), sorted(r["out"], key=str)] for r in records),
        key=str,
    )


def sources(info: Neo4jInfo, namespace: str) -> dict[str, list[Any]]:
    """The ``source`` of every entity, observation and relation of the namespace."""
    with connect(info) as drv:
        ents = drv.execute_query(
            "MATCH (e:Entity {namespace: $ns}) RETURN e.source AS s", ns=namespace
        ).records
        obs = drv.execute_query(
            "MATCH (:Entity {namespace: $ns})-[:HAS_OBSERVATION]->(o) RETURN o.source AS s", ns=namespace
        ).records
        rels = drv.execute_query(
            "MATCH (a:KgNode {namespace: $ns})-[r]->(:KgNode) RETURN r.source AS s, r.valid_until AS until, "
            "r.created_by AS by, "
            "[a.name, endNode(r).name, type(r)] AS key",
            ns=namespace,
        ).records
    return {
        "entities": [r["s"] for r in ents],
        "observations": [r["s"] for r in obs],
        "relations": [r["s"] for r in rels],
        "closed": sorted(tuple(r["key"]) for r in rels if r["until"] is not None),
        "unattributed": [r["key"] for r in rels if not r["by"]],
    }


@pytest.fixture
def source(private_neo4j_server: Neo4jInfo) -> Neo4jInfo:
    """This worker's private Neo4j, emptied: the peer's database."""
    wipe_neo4j(private_neo4j_server)
    return private_neo4j_server


# --------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("peer", PEERS)
async def test_counts_in_equal_counts_out_provenance_and_a_second_run_adds_nothing(
    peer: str, source: Neo4jInfo, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    data = load(peer)
    ids = replay(source, data)
    want = expected(peer, data)
    n_current, n_closed = len(want["current"]), len(want["closed"])
    assert want["entities"] and want["observations"] and n_current  # the capture is not empty

    done = kg_import(neo4j_info, source, peer, namespace)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["from"] == peer and report["namespace"] == namespace and report["dry_run"] is False
    n = len(want["entities"])
    assert report["entities"] == {"read": n, "added": n, "skipped": 0, "rejected": 0}
    obs = want["observations"]
    assert report["observations"] == {"read": obs, "added": obs, "skipped": 0, "rejected": 0}
    rels = n_current + n_closed
    assert report["relations"] == {"read": rels, "added": rels, "skipped": 0, "rejected": 0}
    assert report["not_carried"] == want["not_carried"]
    assert report["rejected_items"] == [] and report["ignored_nodes"] == 0

    # counts out, through a real MCP session on the namespace
    async with session("stdio", neo4j_info, namespace) as s:
        graph = await ok(s, "read_graph")
        opened = await ok(s, "open_nodes", {"names": sorted(want["entities"])})
    got = {e["name"]: (e["entityType"], sorted(e["observations"])) for e in graph["entities"]}
    assert got == {k: (t, sorted(o)) for k, (t, o) in want["entities"].items()}
    assert sorted(e["name"] for e in opened["entities"]) == sorted(want["entities"])
    assert sorted(rel_keys(graph)) == want["current"]  # read_graph shows the relations holding now

    # provenance: every item names the system and an element id of the source
    stored = sources(neo4j_info, namespace)
    assert stored["closed"] == want["closed"]  # a relation that ended is history
    assert stored["unattributed"] == []  # the importing actor created them (docs/team.md#attribution)
    for group in ("entities", "observations", "relations"):
        for s_ in stored[group]:
            system, _, element_id = s_.partition(":")
            assert system == peer and element_id in ids, (group, s_)
    assert (
        len(stored["entities"]) == n
        and len(stored["observations"]) == obs
        and len(stored["relations"]) == rels
    )

    before = namespace_state(neo4j_info, namespace)
    again = kg_import(neo4j_info, source, peer, namespace)
    assert again.returncode == 0, again.stderr
    second = json.loads(again.stdout)
    for group, total in (("entities", n), ("observations", obs), ("relations", rels)):
        assert second[group] == {"read": total, "added": 0, "skipped": total, "rejected": 0}, group
    assert namespace_state(neo4j_info, namespace) == before


@pytest.mark.parametrize("peer", PEERS)
def test_dry_run_counts_and_writes_nothing(
    peer: str, source: Neo4jInfo, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    data = load(peer)
    replay(source, data)
    want = expected(peer, data)
    done = kg_import(neo4j_info, source, peer, namespace, "--dry-run")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["dry_run"] is True
    assert report["entities"]["read"] == len(want["entities"]) and report["entities"]["added"] == 0
    assert report["observations"]["read"] == want["observations"]
    assert report["relations"]["read"] == len(want["current"]) + len(want["closed"])
    assert report["relations"]["added"] == 0
    assert namespace_state(neo4j_info, namespace) == []


def _drop(data: dict[str, Any], where: str, key: str) -> dict[str, Any]:
    """The dump with property ``key`` removed from every node (``where`` 'nodes') or relationship."""
    out = json.loads(json.dumps(data))
    for item in out[where]:
        item["properties"].pop(key, None)
    return out


def _labelled(data: dict[str, Any], label: str) -> int:
    return sum(label in n["labels"] for n in data["nodes"])


def _typed(data: dict[str, Any], rtype: str) -> int:
    return sum(r["type"] == rtype for r in data["relationships"])


MISMATCHES: list[tuple[str, Any, Any]] = [
    # (peer to import, the source's dump, the words the refusal must contain given that dump)
    (
        "mcp-neo4j-memory",
        lambda: _drop(load("mcp-neo4j-memory"), "nodes", "type"),
        lambda d: [f"type on {_labelled(d, 'Memory')}"],
    ),
    ("mcp-neo4j-memory", lambda: load("graphiti"), lambda d: ["no :Memory nodes"]),
    (
        "graphiti",
        lambda: _drop(load("graphiti"), "relationships", "fact"),
        lambda d: ["RELATES_TO", f"fact on {_typed(d, 'RELATES_TO')} of {_typed(d, 'RELATES_TO')}"],
    ),
    (
        "graphiti",
        lambda: load("memento"),
        lambda d: [
            f"none of the {_labelled(d, 'Entity')} :Entity nodes",
            f"uuid on {_labelled(d, 'Entity')}",
        ],
    ),
    (
        "memento",
        lambda: _drop(load("memento"), "nodes", "observations"),
        lambda d: [f"observations on {_labelled(d, 'Entity')}"],
    ),
    ("memento", lambda: {"nodes": [], "relationships": []}, lambda d: ["no :Entity nodes"]),
]


@pytest.mark.parametrize(
    ("peer", "make", "words"), MISMATCHES, ids=[f"{m[0]}-{i}" for i, m in enumerate(MISMATCHES)]
)
def test_a_source_of_another_shape_is_refused_naming_what_is_missing(
    peer: str, make: Any, words: Any, source: Neo4jInfo, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    data = make()
    replay(source, data)
    done = kg_import(neo4j_info, source, peer, namespace)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == ""
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("kg-neo4j import: error: ") and "nothing was written" in line
    for w in words(data):
        assert w in line, line
    assert namespace_state(neo4j_info, namespace) == []


MEMENTO_SCHEMA = [  # what Memento 0.3.9's Neo4jSchemaManager creates (its dist/storage/neo4j/)
    "CREATE CONSTRAINT entity_name IF NOT EXISTS FOR (e:Entity) REQUIRE (e.name, e.validTo) IS UNIQUE",
    "CREATE VECTOR INDEX entity_embeddings IF NOT EXISTS FOR (n:Entity) ON (n.embedding) "
    "OPTIONS {indexConfig: {`vector.dimensions`: 1536, `vector.similarity_function`: 'cosine'}}",
]


async def test_peers_and_kg_neo4j_coexist_in_one_database(source: Neo4jInfo) -> None:
    """The three peers' graphs and kg-neo4j in one database (the private Neo4j, emptied; Memento's schema made
    first, as on a database Memento ran on): kg-neo4j's bootstrap with its database-wide migrations, its
    tools, search, maintain, reembed and the three imports (the source being the same database) change no
    foreign node, label, property or relationship, and kg-neo4j works beside them."""
    info = source
    with connect(info) as drv:
        for statement in MEMENTO_SCHEMA:
            drv.execute_query(statement)
    for peer in PEERS:
        replay(info, load(peer))
    before = foreign_state(info)
    peers_entities = _labelled(load("graphiti"), "Entity") + _labelled(load("memento"), "Entity")
    assert Counter(label for n in before for label in n[1])["Entity"] == peers_entities

    ns = f"coexist-{uuid.uuid4().hex[:8]}"
    model_env = {"KG_NEO4J_EMBEDDING_MODEL": "all-MiniLM-L6-v2"}
    async with stdio_session(info, "--namespace", ns, env=server_env(info, **model_env)) as s:
        await ok(
            s,
            "create_entities",
            {
                "entities": [
                    {"name": "Alice Smith", "entityType": "person", "observations": ["Plays the cello"]},
                    {"name": "Munich", "entityType": "city", "observations": ["On the Isar"]},
                ]
            },
        )
        await ok(
            s,
            "create_relations",
            {"relations": [{"from": "Alice Smith", "to": "Munich", "relationType": "lives_in"}]},
        )
    # as a graph of an earlier version: kg-neo4j's entities without :KgText and type labels, the migrations
    # not done, so the next start runs them over the whole database
    with connect(info) as drv:
        drv.execute_query(
            "MATCH (e:KgNode:Entity {namespace: $ns}) REMOVE e:KgText, e:$(e.type_labels) SET e.type_labels = null",
            ns=ns,
        )
        drv.execute_query("MATCH (m:KgMeta) WHERE m.key IN ['text_index', 'type_labels'] DELETE m")
        index = drv.execute_query(
            "SHOW VECTOR INDEXES YIELD name, labelsOrTypes WHERE name = 'kg_entity_embedding' RETURN labelsOrTypes"
        ).records
    assert index and index[0]["labelsOrTypes"] == ["KgNode"]  # made beside Memento's (:Entity).embedding

    async with stdio_session(
        info, "--namespace", ns, env=server_env(info, **model_env)
    ) as s:  # the migrations run
        graph = await ok(s, "read_graph")
        assert sorted(e["name"] for e in graph["entities"]) == ["Alice Smith", "Munich"]
        assert [e["name"] for e in (await ok(s, "search_nodes", {"query": "alice"}))["entities"]] == [
            "Alice Smith"
        ]
        found = await s.call_tool("search_memory", {"query": "who plays the cello"})
        assert not found.is_error and "Alice Smith" in str(found.structured_content)
        opened = await ok(s, "open_nodes", {"names": ["Alice Smith", "Acme Corp", "Bob Jones"]})
        assert [e["name"] for e in opened["entities"]] == ["Alice Smith"]  # the peers' namesakes are not ours
    with connect(info) as drv:
        migrated = drv.execute_query(
            "MATCH (e:KgNode:Entity {namespace: $ns}) RETURN e:KgText AND e.type_labels IS NOT NULL AS done",
            ns=ns,
        ).records
    assert [r["done"] for r in migrated] == [True, True]

    env = server_env(info, **model_env)
    for args in (["maintain", "--apply", "--namespace", ns, "--no-progress"], ["reembed", "--no-progress"]):
        done = subprocess.run([KG, *args], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (args, done.stderr)
    for peer in PEERS:  # the source is kg-neo4j's own database
        done = kg_import(info, None, peer, f"{ns}-{peer}")
        assert done.returncode == 0, (peer, done.stderr)
        report = json.loads(done.stdout)
        assert report["entities"]["added"] == len(expected(peer, load(peer))["entities"])
        # Graphiti's and Memento's :Entity nodes are told apart; kg-neo4j's are never read
        others = {"mcp-neo4j-memory": "", "graphiti": "memento", "memento": "graphiti"}[peer]
        assert report["ignored_nodes"] == (_labelled(load(others), "Entity") if others else 0)

    assert foreign_state(info) == before
