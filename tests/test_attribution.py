"""Every write attributed (docs/team.md#attribution).

Through real MCP stdio sessions (``kg-neo4j serve --actor NAME`` or ``KG_NEO4J_ACTOR``):

- every write tool of the ``all`` profile (its declared example call, on the seed of
  ``kg_neo4j/server/examples.py`` written by another actor) records the server's actor on each node,
  observation and relationship it created (``created_by``) and in the attribution it changed on each it
  changed or retired (``changed_by``, ``retired_by``, ``closed_by``, ``expired_by``, or the last entry of
  ``v_by`` / ``type_by`` / ``ds_by``); the deletes erase and record nothing; ``merge_entities`` also
  records it on the merge's record (``by``), and ``unmerge_entities`` there (``undone_by``) while it
  puts back what the merge changed, attribution included;
- two actors writing one entity: ``entity_history`` names each for every event;
- ``export --format full`` and its ``import`` keep the attribution; a full file without it records the
  importing actor as creator (and a second import adds nothing); the other formats do not carry it;
- the ``reference`` profile answers byte for byte the same whoever the actor is;
- history written before attribution: its events say ``by: null`` and later changes line up;
- the CLI's writing commands (import-skills, maintain --apply) record ``--actor``/``KG_NEO4J_ACTOR``;
- over HTTP each write names the principal its token resolves to, and no token (nor its hash) is
  written to the graph.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from test_access_probe import write_grants
from test_export_formats import settings_for as export_settings

from kg_neo4j.clock import ManualClock
from kg_neo4j.commands.maintenance import run_maintain
from kg_neo4j.commands.skills import run_import_skills
from kg_neo4j.commands.transfer import run_export, run_import
from kg_neo4j.models import ConnectIn, EntityIn, KnowledgeIn, RelationIn, RelationUpdate
from kg_neo4j.schemas import load_schemas
from kg_neo4j.server.app import BUILTIN_TOOL_NAMES
from kg_neo4j.server.examples import write_seed, write_skill_files
from kg_neo4j.server.profiles import ALL
from kg_neo4j.settings import Settings
from kg_neo4j.store import GraphStore
from kg_neo4j.store.actor import acting_as, current_actor, default_actor
from kg_neo4j.store.history import HistoryIn, entity_history
from kg_neo4j.store.knowledge import KnowledgeStore
from support.kg import ent, ok, rel
from support.servers import Neo4jInfo, http_server, http_session, server_env, stdio_session
from support.sweep_cases import held, specs

SEEDER = "seeder"
#: the reference profile's tools
BUILTIN_REFERENCE = frozenset(
    {"create_entities", "create_relations", "add_observations", "delete_entities", "delete_observations"}
    | {"delete_relations", "read_graph", "search_nodes", "open_nodes"}
)
WRITER = "writer@example"

#: properties a write keeps up to date that say nothing about who (counters, locks, derived text)
BOOKKEEPING = frozenset(
    {"obs_next", "kg_lock", "seq", "text_lower", "name_lower", "type_lower", "type_labels", "embedding"}
    | {"embedding_model"}
)
#: where a change records who made it (a list: its last entry is the newest change)
ATTRIBUTION = (
    "created_by",
    "changed_by",
    "retired_by",
    "closed_by",
    "expired_by",
    "v_by",
    "type_by",
    "ds_by",
)

#: Everything the namespace holds that attribution is about: its nodes (entities, placeholders,
#: observations, expired knowledge) and the relationships between them (observation links excepted: the
#: observation itself records who added or retired it).
SNAPSHOT = """
MATCH (n) WHERE n.namespace = $ns AND NOT n:KgMeta
RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props
UNION ALL
MATCH (n)-[r]->() WHERE n.namespace = $ns AND NOT type(r) IN ['HAS_OBSERVATION', 'HAD_OBSERVATION']
RETURN elementId(r) AS id, [type(r)] AS labels, properties(r) AS props
"""

Snapshot = dict[str, tuple[list[str], dict[str, Any]]]


def snapshot(driver: Any, database: str, namespace: str) -> Snapshot:
    records = driver.execute_query(SNAPSHOT, ns=namespace, database_=database).records
    return {r["id"]: (list(r["labels"]), dict(r["props"])) for r in records}


def newest(value: Any) -> Any:
    return value[-1] if isinstance(value, list) and value else value


def attribution_of(
    before: Snapshot, after: Snapshot, actor: str, *, exempt: frozenset[str] = frozenset()
) -> tuple[int, int, list[str]]:
    """(elements created or changed, elements gone, what lacks ``actor``) between two snapshots.  A new
    element must say ``created_by = actor`` (a placeholder says nobody); a changed one must have changed
    attribution, every changed attribution naming ``actor``.  Changes of only the ``exempt`` properties
    are recorded elsewhere (a merge's aliases: on the merge's record)."""
    touched, problems = 0, []
    for eid, (labels, props) in after.items():
        what = f"{labels} {props.get('name', props.get('text', ''))!r}"
        if "KgMergeRecord" in labels:
            continue  # the merge's own record: checked by the caller
        if eid not in before:
            if "Placeholder" in labels:
                assert "created_by" not in props, f"a placeholder records a creator: {what}"
                continue
            touched += 1
            if props.get("created_by") != actor:
                problems.append(f"new {what}: created_by={props.get('created_by')!r}")
            continue
        old_labels, old = before[eid]
        diff = {k for k in old.keys() | props.keys() if k not in BOOKKEEPING and old.get(k) != props.get(k)}
        if (not diff and old_labels == labels) or (diff and diff <= exempt):
            continue
        touched += 1
        by = {k: newest(props.get(k)) for k in ATTRIBUTION if k in diff}
        if not by or any(v != actor for v in by.values()):
            problems.append(f"changed {what} ({sorted(diff)}): attribution {by}")
    return touched, len(before.keys() - after.keys()), problems


# ------------------------------------------------------------------------ every write tool of `all`


def write_tools() -> list[str]:
    return [name for name, spec in specs().items() if not spec.read_only]


#: also attributed on the merge's record (by, undone_by; docs/entities.md)
MERGE_TOOLS = frozenset({"merge_entities", "unmerge_entities"})

#: maintain_graph's example is a dry run: this call applies a prune to a weak edge made for it
MAINTAIN_PREP = {
    "from": "Small commits",
    "to": "Test before merging",
    "relationType": "implies",
    "weight": 0.1,
}
MAINTAIN_APPLY = {"actions": ["prune"], "dryRun": False}


@dataclass
class Seeded:
    session: Any
    driver: Any
    database: str
    namespace: str
    seed: Snapshot  # the namespace as the seeder left it

    def snapshot(self) -> Snapshot:
        return snapshot(self.driver, self.database, self.namespace)


@pytest.fixture(scope="module")
def skills_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_skill_files(tmp_path_factory.mktemp("attribution-skills"))


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def seeded(neo4j_info: Neo4jInfo, sync_driver: Any, skills_dir: Path) -> AsyncIterator[Seeded]:
    """The example seed written by SEEDER, then a ``--tools all`` server acting as WRITER on it."""
    namespace = f"test-attribution-{uuid.uuid4().hex[:8]}"
    args = ("--namespace", namespace, "--tools", ALL, "--skills-dir", str(skills_dir))
    try:
        async with held(stdio_session(neo4j_info, *args, "--actor", SEEDER)) as seeder:

            async def call(name: str, arguments: dict[str, Any]) -> None:
                result = await seeder.call_tool(name, arguments)
                assert not result.is_error, f"seeding {name} failed: {result.content}"

            await write_seed(call, load_schemas(reserved=BUILTIN_TOOL_NAMES))
        async with held(stdio_session(neo4j_info, *args, "--actor", WRITER)) as writer:
            seed = snapshot(sync_driver, neo4j_info.database, namespace)
            yield Seeded(writer, sync_driver, neo4j_info.database, namespace, seed)
    finally:
        sync_driver.execute_query(
            "MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=namespace, database_=neo4j_info.database
        )


async def test_the_seed_is_the_seeders(seeded: Seeded) -> None:
    """What the tests below compare against: the seed records its own writer, and only that one."""
    snap = seeded.seed
    entities = [p for labels, p in snap.values() if "Entity" in labels]
    assert entities and {p.get("created_by") for p in entities} == {SEEDER}
    assert {p.get("created_by") for _, p in snap.values()} <= {SEEDER, None}


@pytest.mark.parametrize("tool", write_tools())
async def test_write_tool_records_its_actor(seeded: Seeded, tool: str) -> None:
    spec = specs()[tool]
    args = spec.example
    assert args is not None
    if tool == "maintain_graph":
        await ok_call(seeded.session, "connect_knowledge", MAINTAIN_PREP)
        args = MAINTAIN_APPLY
    elif tool.startswith("update_") and tool not in BUILTIN_TOOL_NAMES:
        # a schema-generated update's example restates the seed's values (a call that changes nothing);
        # the same call with its free text changed
        args = json.loads(json.dumps(args).replace('"example value"', '"changed value"'))
        assert args != spec.example
    before = seeded.snapshot()
    await ok_call(seeded.session, tool, args)
    after = seeded.snapshot()
    if tool in MERGE_TOOLS:
        # a merge, and its undoing, names its actor on its record (cypher/merges.cypher; entity_history's
        # event); the merge's aliases are recorded there; an unmerge puts back what was, attribution too
        field = "by" if tool == "merge_entities" else "undone_by"
        records = [
            p
            for i, (labels, p) in after.items()
            if "KgMergeRecord" in labels and p != before.get(i, (0, {}))[1]
        ]
        assert [p.get(field) for p in records] == [WRITER], f"{tool}: {records}"
        if tool == "unmerge_entities":
            return
    touched, gone, problems = attribution_of(before, after, WRITER, exempt=frozenset({"aliases", "alias_at"}))
    assert not problems, f"{tool}: {problems}"
    if spec.destructive and tool.startswith("delete"):
        assert gone > 0, f"{tool}: its example erased nothing"  # deletes erase: nothing to record
    else:
        assert touched > 0, f"{tool}: its example wrote nothing"


async def ok_call(s: Any, tool: str, args: dict[str, Any]) -> Any:
    result = await s.call_tool(tool, args)
    text = " ".join(getattr(b, "text", "") for b in result.content)
    assert not result.is_error, f"{tool}({args}) failed: {text[:300]}"
    return result.structured_content


# --------------------------------------------------------------------- two actors, one entity's history


async def test_entity_history_names_each_actor(neo4j_info: Neo4jInfo, namespace: str) -> None:
    env = server_env(neo4j_info, KG_NEO4J_ACTOR="bob")  # the environment's way; alice uses the flag
    args = ("--namespace", namespace, "--tools", ALL)
    async with stdio_session(neo4j_info, *args, "--actor", "alice") as alice:
        await ok(alice, "create_entities", {"entities": [ent("Ada", "person", ["wrote notes"]), ent("Bab")]})
        await ok(alice, "create_relations", {"relations": [rel("Ada", "Bab", "knows")]})
    async with stdio_session(neo4j_info, *args, env=env) as bob:
        await ok(
            bob, "add_observations", {"observations": [{"entityName": "Ada", "contents": ["liked horses"]}]}
        )
        await ok_call(
            bob,
            "invalidate_observations",
            {"observations": [{"entityName": "Ada", "observations": ["wrote notes"]}]},
        )
        await ok_call(bob, "update_relations", {"relations": [{**rel("Ada", "Bab", "knows"), "weight": 0.5}]})
        await ok_call(bob, "update_nodes", {"nodes": [{"name": "Ada", "nodeType": "mathematician"}]})
        await ok_call(bob, "invalidate_relations", {"relations": [rel("Ada", "Bab", "knows")]})
        history = await ok_call(bob, "entity_history", {"name": "Ada"})
        relation = await ok_call(bob, "entity_history", {"relation": rel("Ada", "Bab", "knows")})
    got = sorted((e["event"], e["detail"].get("observation", ""), e["by"]) for e in history["events"])
    assert got == [
        ("created", "", "alice"),
        ("observation_added", "liked horses", "bob"),
        ("observation_added", "wrote notes", "alice"),
        ("observation_retired", "wrote notes", "bob"),
        ("relation_closed", "", "bob"),
        ("relation_opened", "", "alice"),
        ("relation_updated", "", "bob"),
        ("type_changed", "", "bob"),
    ]
    assert [(e["event"], e["by"]) for e in relation["events"]] == [
        ("relation_opened", "alice"),
        ("relation_updated", "bob"),
        ("relation_closed", "bob"),
    ]


async def test_history_before_attribution_says_nobody(store: GraphStore, clock: ManualClock) -> None:
    """A graph written before attribution (no created_by, version lists without their *_by): its events
    say ``by: null``, and a later change's actor lines up with its own version."""
    with acting_as("old"):
        await store.create_entities(
            [
                EntityIn(name="A", entityType="t", observations=[]),
                EntityIn(name="B", entityType="t", observations=[]),
            ]
        )
        await store.create_relations([RelationIn(**{"from": "A"}, to="B", relationType="r")])
        clock.advance(minutes=1)
        await store.update_relations([RelationUpdate(**{"from": "A"}, to="B", relationType="r", weight=0.5)])
    # what 0.2.x left: no attribution anywhere
    await store.driver.execute_query(
        "MATCH (a:KgNode {namespace: $ns})-[r]->() REMOVE a.created_by, r.created_by, r.changed_by, r.v_by",
        ns=store.namespace,
        database_=store.database,
    )
    clock.advance(minutes=1)
    with acting_as("new"):
        await store.update_relations([RelationUpdate(**{"from": "A"}, to="B", relationType="r", weight=0.5)])
    events = (await entity_history(store, HistoryIn(name="A"))).events
    assert [(e.event, e.by) for e in events] == [
        ("created", None),
        ("relation_opened", None),
        ("relation_updated", None),
        ("relation_updated", "new"),
    ]
    records = await store.driver.execute_query(
        "MATCH (:KgNode {namespace: $ns, name: 'A'})-[r]->() RETURN r.v_by AS v_by, r.changed_by AS changed_by",
        ns=store.namespace,
        database_=store.database,
    )
    assert (records.records[0]["v_by"], records.records[0]["changed_by"]) == (["", "new"], "new")


# -------------------------------------------------------------------------------- export and import


def settings_for(info: Neo4jInfo, namespace: str, actor: str | None = None) -> Settings:
    return export_settings(info, namespace).model_copy(update={"actor": actor})


def creators(driver: Any, database: str, namespace: str) -> dict[str, Any]:
    """Who created each entity, observation and relation of the namespace (by name / text / key)."""
    out: dict[str, Any] = {}
    for labels, props in snapshot(driver, database, namespace).values():
        if "Observation" in labels:
            out[f"obs:{props['text']}"] = props.get("created_by")
        elif "Entity" in labels:
            out[f"entity:{props['name']}"] = props.get("created_by")
        elif "Placeholder" not in labels:
            out[f"rel:{labels[0]}:{props.get('weight')}"] = props.get("created_by")
    return out


@contextlib.asynccontextmanager
async def cleanup(driver: Any, database: str, *namespaces: str) -> AsyncIterator[None]:
    try:
        yield
    finally:
        for ns in namespaces:
            driver.execute_query(
                "MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=ns, database_=database
            )


async def test_full_export_and_import_keep_attribution(
    tmp_path: Path, neo4j_info: Neo4jInfo, store: GraphStore, sync_driver: Any, clock: ManualClock
) -> None:
    ns, db = store.namespace, neo4j_info.database
    with acting_as("alice"):
        await store.create_entities([EntityIn(name="Ada", entityType="person", observations=["wrote notes"])])
        await store.create_relations(
            [RelationIn(**{"from": "Ada"}, to="Bab", relationType="knows", weight=0.5)]
        )
    with acting_as("bob"):
        await store.update_relations(
            [RelationUpdate(**{"from": "Ada"}, to="Bab", relationType="knows", weight=1.0)]
        )
    original = creators(sync_driver, db, ns)
    assert original == {"entity:Ada": "alice", "obs:wrote notes": "alice", "rel:knows:0.75": "alice"}
    full = tmp_path / "full.jsonl"
    await run_export(settings_for(neo4j_info, ns), full, fmt="full", progress=False, clock=clock)
    copy, bare, plain = f"{ns}-copy", f"{ns}-bare", f"{ns}-plain"
    async with cleanup(sync_driver, db, copy, bare, plain):
        # the file's attribution is kept, whoever imports it; the history's actors too
        await run_import(settings_for(neo4j_info, copy, actor="carol"), full, progress=False, clock=clock)
        assert creators(sync_driver, db, copy) == original
        history = await entity_history(
            GraphStore(store.driver, database=db, namespace=copy, clock=clock), HistoryIn(name="Ada")
        )
        assert {(e.event, e.by) for e in history.events} >= {
            ("relation_updated", "bob"),
            ("created", "alice"),
        }
        # a full file without attribution (an export of an older graph): the importer created what it brought
        stripped = tmp_path / "stripped.jsonl"
        stripped.write_text(
            "".join(json.dumps(strip_by(json.loads(line))) + "\n" for line in full.read_text().splitlines()),
            encoding="utf-8",
        )
        assert "_by" not in stripped.read_text()
        for _ in range(2):  # the second import finds everything there (the importer's created_by aside)
            report = await run_import(
                settings_for(neo4j_info, bare, actor="dave"), stripped, progress=False, clock=clock
            )
        assert report["rejected"] == 0
        assert creators(sync_driver, db, bare) == dict.fromkeys(original, "dave")
        # another format does not carry it: the import records its own actor
        jsonl = tmp_path / "reference.jsonl"
        await run_export(settings_for(neo4j_info, ns), jsonl, fmt="jsonl", progress=False, clock=clock)
        assert "alice" not in jsonl.read_text()
        await run_import(settings_for(neo4j_info, plain, actor="erin"), jsonl, progress=False, clock=clock)
        assert set(creators(sync_driver, db, plain).values()) == {"erin"}


def strip_by(item: Any) -> Any:
    if isinstance(item, dict):
        return {k: strip_by(v) for k, v in item.items() if not k.endswith("_by")}
    if isinstance(item, list):
        return [strip_by(v) for v in item]
    return item


# ------------------------------------------------------------------------------ the reference profile

REFERENCE_SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("create_entities", {"entities": [ent("Ada", "person", ["wrote notes"]), ent("Bab", "person")]}),
    ("create_relations", {"relations": [rel("Ada", "Bab", "knows"), rel("Ada", "Cy", "met")]}),
    ("add_observations", {"observations": [{"entityName": "Bab", "contents": ["built engines"]}]}),
    ("read_graph", {}),
    ("search_nodes", {"query": "engines"}),
    ("open_nodes", {"names": ["Ada", "Bab"]}),
    ("delete_observations", {"deletions": [{"entityName": "Ada", "observations": ["wrote notes"]}]}),
    ("delete_relations", {"relations": [rel("Ada", "Cy", "met")]}),
    ("delete_entities", {"entityNames": ["Bab"]}),
    ("read_graph", {}),
]


async def reference_answers(info: Neo4jInfo, driver: Any, actor: str) -> list[tuple[Any, Any, bool]]:
    """The 9 reference tools' answers (content blocks, structured output, error flag) to one script."""
    namespace = f"test-attribution-reference-{uuid.uuid4().hex[:8]}"
    async with (
        cleanup(driver, info.database, namespace),
        stdio_session(info, "--namespace", namespace, "--tools", "reference", "--actor", actor) as s,
    ):
        out = []
        for tool, args in REFERENCE_SCRIPT:
            result = await s.call_tool(tool, args)
            out.append(([b.model_dump() for b in result.content], result.structured_content, result.is_error))
        return out


async def test_reference_answers_do_not_depend_on_the_actor(neo4j_info: Neo4jInfo, sync_driver: Any) -> None:
    alice = await reference_answers(neo4j_info, sync_driver, "alice")
    bob = await reference_answers(neo4j_info, sync_driver, "bob")
    assert {tool for tool, _ in REFERENCE_SCRIPT} == set(BUILTIN_REFERENCE)
    assert alice == bob
    assert not any(failed for _, _, failed in alice)
    assert "alice" not in json.dumps([a[:2] for a in alice])


# ------------------------------------------------------------------------------ the CLI's own writes


async def test_cli_writes_record_the_configured_actor(
    tmp_path: Path, neo4j_info: Neo4jInfo, store: GraphStore, sync_driver: Any, clock: ManualClock
) -> None:
    ns, db = store.namespace, neo4j_info.database
    report = await run_import_skills(
        settings_for(neo4j_info, ns, actor="skills-bot"),
        write_skill_files(tmp_path),
        progress=False,
        clock=clock,
    )
    assert report["stored"] > 0
    made = creators(sync_driver, db, ns)
    assert made and set(made.values()) == {"skills-bot"}
    # maintain --apply: a weak edge from the skill to other knowledge, closed by the prune, records its closer
    (skill,) = (k.removeprefix("entity:") for k in made if k.startswith("entity:"))
    k = KnowledgeStore(store)
    with acting_as("hand"):
        await k.store([KnowledgeIn(name="Rule", content="run the tests", type="rule", trust="pattern")])
        await k.connect([ConnectIn(**{"from": skill}, to="Rule", relationType="implies", weight=0.1)])
    await run_maintain(
        settings_for(neo4j_info, ns, actor="cron"), actions=["prune"], apply=True, progress=False, clock=clock
    )
    closed = sync_driver.execute_query(
        "MATCH (a:KgNode {namespace: $ns})-[r:implies]->() RETURN r.closed_by AS by, r.created_by AS creator",
        ns=ns,
        database_=db,
    ).records
    assert [(r["by"], r["creator"]) for r in closed] == [("cron", "hand")]
    # a year later the prune expires the knowledge nobody used: the expiry and the level it replaced name cron
    clock.advance(days=400)
    await run_maintain(
        settings_for(neo4j_info, ns, actor="cron"), actions=["prune"], apply=True, progress=False, clock=clock
    )
    events = (await entity_history(store, HistoryIn(name="Rule"))).events
    assert [(e.event, e.by) for e in events if e.event in ("created", "expired")] == [
        ("created", "hand"),
        ("expired", "cron"),
    ]
    assert current_actor.get() is None  # the commands leave the caller's context as it was


async def test_access_records_its_reader(store: GraphStore, clock: ManualClock) -> None:
    """An access (search_memory or open_nodes in the knowledge profiles) keeps the decay state it replaced,
    and who caused the change beside it (ds_by)."""
    k = KnowledgeStore(store)
    with acting_as("writer"):
        await k.store([KnowledgeIn(name="Rule", content="run the tests", type="rule", trust="pattern")])
    clock.advance(days=1)
    with acting_as("reader"):
        await k.record_access(["Rule"])
    rec = (
        await store.driver.execute_query(
            "MATCH (k:KgNode {namespace: $ns, name: 'Rule'}) RETURN k.ds_by AS ds_by, k.created_by AS by",
            ns=store.namespace,
            database_=store.database,
        )
    ).records[0]
    assert (rec["ds_by"], rec["by"]) == (["reader"], "writer")


@pytest.mark.unit
def test_default_actor_is_the_configured_name_else_the_os_user() -> None:
    assert default_actor("ci-bot") == "ci-bot"
    assert default_actor(None) == default_actor("") and default_actor(None)


# ----------------------------------------------------------------------------------- no token stored


async def test_http_writes_record_the_principal_never_its_token(
    tmp_path: Path, neo4j_info: Neo4jInfo, namespace: str, sync_driver: Any
) -> None:
    """Two principals of one grants file write one entity over HTTP: each write names its principal, and
    neither token nor its SHA-256 is anywhere in the graph."""
    grants = tmp_path / "grants.toml"
    tokens = write_grants(grants, {"alice": [f"{namespace}:write"], "bob": [f"{namespace}:write"]})
    args = ("--namespace", namespace, "--grants", str(grants), "--tools", ALL)
    async with cleanup(sync_driver, neo4j_info.database, namespace):
        with http_server(neo4j_info, *args) as url:
            async with http_session(url, headers={"Authorization": f"Bearer {tokens['alice']}"}) as s:
                await ok(s, "create_entities", {"entities": [ent("Ada", "person", ["wrote notes"])]})
            async with http_session(url, headers={"Authorization": f"Bearer {tokens['bob']}"}) as s:
                await ok(
                    s,
                    "add_observations",
                    {"observations": [{"entityName": "Ada", "contents": ["liked horses"]}]},
                )
                await ok_call(s, "update_nodes", {"nodes": [{"name": "Ada", "nodeType": "mathematician"}]})
                history = await ok_call(s, "entity_history", {"name": "Ada"})
        assert [(e["event"], e["by"]) for e in history["events"]] == [
            ("created", "alice"),
            ("observation_added", "alice"),
            ("observation_added", "bob"),
            ("type_changed", "bob"),
        ]
        stored = json.dumps(
            [
                [labels, props]
                for labels, props in snapshot(sync_driver, neo4j_info.database, namespace).values()
            ],
            default=str,
        )
        for token in tokens.values():
            assert token not in stored and hashlib.sha256(token.encode()).hexdigest() not in stored
