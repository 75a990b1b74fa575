"""``kg-neo4j import --from ...`` keeps the peer's own dates (docs/moving-over.md): the entities, observations
and relations imported are dated when the source graph says they were made (Graphiti: nodes' and edges'
``created_at``, facts' ``valid_at``; Memento: ``createdAt`` in milliseconds, each observation by the
``validFrom`` of the oldest version of the run holding it), and at the import where the source records no
time (mcp-neo4j-memory).  The dates expected are computed here from the dumps the real peer packages wrote
(tests/data/peers/), and ``asOf`` reads of those moments, through a real MCP session, show what the peer knew
then."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from test_peer_import import PEERS, connect, expected, kg_import, load, replay

from kg_neo4j.store.value_codec import decode_value
from support.kg import ok, rel_keys, session
from support.servers import Neo4jInfo, wipe_neo4j

IMPORT = "the import's moment"  # expected where the source records no time
Moment = datetime | str | None


@pytest.fixture
def source(private_neo4j_server: Neo4jInfo) -> Neo4jInfo:
    """This worker's private Neo4j, emptied: the peer's database."""
    wipe_neo4j(private_neo4j_server)
    return private_neo4j_server


def _time(value: Any) -> datetime:
    """A dump's time: Graphiti's ``{"$datetime": ...}``, Memento's milliseconds."""
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value / 1000.0, tz=UTC)
    native: datetime = decode_value(value).to_native()
    return native.astimezone(UTC)


def dates(peer: str, data: dict[str, Any]) -> dict[str, dict[Any, Any]]:
    """The dates the import must give: entities {name: created}, observations {(name, text): created},
    relations {(from, to, type): (created, valid_from, valid_until)}; IMPORT where the peer records no time."""
    want = expected(peer, data)
    nodes = {n["id"]: n for n in data["nodes"]}
    ents: dict[str, Moment] = {}
    obs: dict[tuple[str, str], Moment] = {}
    rels: dict[tuple[str, str, str], tuple[Moment, Moment, Moment]] = {}
    if peer == "mcp-neo4j-memory":
        ents = dict.fromkeys(want["entities"], IMPORT)
        obs = {(n, t): IMPORT for n, (_, texts) in want["entities"].items() for t in texts}
        rels = {k: (IMPORT, IMPORT, None) for k in want["current"]}
    elif peer == "graphiti":
        for n in nodes.values():
            if "Entity" in n["labels"]:
                name, at = n["properties"]["name"], _time(n["properties"]["created_at"])
                ents[name] = at
                obs.update({(name, t): at for t in want["entities"][name][1]})
        for r in data["relationships"]:
            if r["type"] == "RELATES_TO":
                p = r["properties"]
                key = (
                    nodes[r["start"]]["properties"]["name"],
                    nodes[r["end"]]["properties"]["name"],
                    p["name"],
                )
                created = _time(p["created_at"])
                until = p.get("invalid_at") or p.get("expired_at")
                rels[key] = (
                    created,
                    _time(p["valid_at"]) if "valid_at" in p else created,
                    _time(until) if until else None,
                )
    else:
        versions: dict[str, list[dict[str, Any]]] = {}
        for n in nodes.values():
            versions.setdefault(n["properties"]["name"], []).append(n["properties"])
        for name, vs in versions.items():
            vs.sort(key=lambda p: p["version"], reverse=True)  # the current version first
            ents[name] = _time(vs[0]["createdAt"])
            for text in json.loads(vs[0]["observations"]):
                run = 0  # the unbroken run of versions holding it, newest first
                while run < len(vs) and text in json.loads(vs[run]["observations"]):
                    run += 1
                obs[(name, text)] = _time(vs[run - 1]["validFrom"])
        for r in data["relationships"]:
            p = r["properties"]
            if p.get("validTo") is None:
                key = (
                    nodes[r["start"]]["properties"]["name"],
                    nodes[r["end"]]["properties"]["name"],
                    p["relationType"],
                )
                rels[key] = (_time(p["createdAt"]), _time(p["createdAt"]), None)
    return {"entities": ents, "observations": obs, "relations": rels}


def stored_dates(info: Neo4jInfo, namespace: str) -> dict[str, dict[Any, Any]]:
    """The dates the namespace holds, keyed as :func:`dates`."""
    with connect(info) as drv:
        ents = drv.execute_query(
            "MATCH (e:Entity {namespace: $ns}) RETURN e.name AS name, e.created_at AS at", ns=namespace
        ).records
        obs = drv.execute_query(
            "MATCH (e:Entity {namespace: $ns})-[:HAS_OBSERVATION]->(o) RETURN e.name AS name, o.text AS text, "
            "o.created_at AS at",
            ns=namespace,
        ).records
        rels = drv.execute_query(
            "MATCH (a:KgNode {namespace: $ns})-[r]->(b:KgNode) RETURN a.name AS a, b.name AS b, type(r) AS t, "
            "r.created_at AS at, r.valid_from AS since, r.valid_until AS until",
            ns=namespace,
        ).records

    def native(v: Any) -> Moment:
        return None if v is None else v.to_native().astimezone(UTC)

    return {
        "entities": {r["name"]: native(r["at"]) for r in ents},
        "observations": {(r["name"], r["text"]): native(r["at"]) for r in obs},
        "relations": {
            (r["a"], r["b"], r["t"]): (native(r["at"]), native(r["since"]), native(r["until"])) for r in rels
        },
    }


def matches(got: Any, want: Any, t0: datetime, t1: datetime) -> bool:
    """``got`` is ``want``, or for IMPORT (no time at the source) a moment of the import."""
    if isinstance(want, tuple):
        return len(got) == len(want) and all(matches(g, w, t0, t1) for g, w in zip(got, want, strict=True))
    return got is not None and t0 <= got <= t1 if want == IMPORT else got == want


def known(w: Moment, at: datetime) -> bool:
    """Whether a moment ``w`` the source records is at or before ``at`` (the import's is after every one)."""
    return isinstance(w, datetime) and w <= at


@pytest.mark.parametrize("peer", PEERS)
async def test_imported_items_keep_the_peers_dates(
    peer: str, source: Neo4jInfo, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    data = load(peer)
    replay(source, data)
    want = dates(peer, data)
    t0 = datetime.now(UTC)
    done = kg_import(neo4j_info, source, peer, namespace)
    t1 = datetime.now(UTC)
    assert done.returncode == 0, done.stderr
    got = stored_dates(neo4j_info, namespace)
    for group in ("entities", "observations", "relations"):
        assert set(got[group]) == set(want[group]), group
        wrong = {
            k: (got[group][k], w) for k, w in want[group].items() if not matches(got[group][k], w, t0, t1)
        }
        assert not wrong, (group, wrong)
    if peer != "mcp-neo4j-memory":  # the source's dates are used, not the import's
        assert all(isinstance(w, datetime) for w in want["entities"].values())

    # asOf each moment the source records (and one before the import): what the peer knew then
    moments = sorted(
        {w for w in [*want["entities"].values(), *want["observations"].values()] if isinstance(w, datetime)}
        | {t0}
    )
    async with session("stdio", neo4j_info, namespace) as s:
        for at in moments:
            graph = await ok(s, "read_graph", {"asOf": at.isoformat()})
            shown = {e["name"]: sorted(e["observations"]) for e in graph["entities"]}
            assert shown == {
                name: sorted(t for (n, t), w in want["observations"].items() if n == name and known(w, at))
                for name, w in want["entities"].items()
                if known(w, at)
            }, at
            holding = sorted(
                k
                for k, (created, since, until) in want["relations"].items()
                if known(created, at) and known(since, at) and not known(until, at)
            )
            assert sorted(rel_keys(graph)) == holding, at


async def test_a_name_held_twice_is_dated_by_its_earliest_node_and_no_date_is_after_the_import(
    source: Neo4jInfo, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    """Graphiti keeps exact-name duplicates: a second "Alice Smith" node a month older than the first, in
    the same page and read before it, makes one entity dated by the older node (its summary dated with it, the other's by its
    own node); a fact whose created_at is a day after the import (the source's clock ahead) is dated at
    the import, so reads of now show it."""
    data = load("graphiti")
    nodes = data["nodes"]
    first = next(n for n in nodes if n["properties"].get("name") == "Alice Smith")
    twin = json.loads(json.dumps(first))
    twin["id"] = max(n["id"] for n in nodes) + 1
    twin["properties"] |= {
        "uuid": "0b9d3b7e-5e63-4b4e-9d55-0d7e7c1e2f11",
        "created_at": {"$datetime": "2025-02-01T00:00:00.000000000+00:00"},
        "summary": "Alice Smith ran the Berlin office before Munich.",
    }
    nodes.insert(0, twin)  # read first (element id order): the older node is not simply the last written
    fact = next(r for r in data["relationships"] if r["type"] == "RELATES_TO" and r["start"] == first["id"])
    ahead = datetime.now(UTC) + timedelta(days=1)
    fact["properties"] |= {"created_at": {"$datetime": ahead.isoformat()}, "valid_at": None}
    fact["properties"] = {k: v for k, v in fact["properties"].items() if v is not None}
    replay(source, data)
    t0 = datetime.now(UTC)
    done = kg_import(neo4j_info, source, "graphiti", namespace)
    t1 = datetime.now(UTC)
    assert done.returncode == 0, done.stderr
    got = stored_dates(neo4j_info, namespace)
    older = datetime(2025, 2, 1, tzinfo=UTC)
    assert got["entities"]["Alice Smith"] == older
    assert got["observations"][("Alice Smith", twin["properties"]["summary"])] == older
    assert got["observations"][("Alice Smith", first["properties"]["summary"])] == _time(
        first["properties"]["created_at"]
    )
    key = (
        "Alice Smith",
        next(n for n in nodes if n["id"] == fact["end"])["properties"]["name"],
        fact["properties"]["name"],
    )
    created, since, _ = got["relations"][key]
    assert created is not None and t0 <= created <= t1
    assert since == created  # no valid_at: it holds from its (capped) creation
    async with session("stdio", neo4j_info, namespace) as s:
        assert key in rel_keys(await ok(s, "read_graph", {}))
