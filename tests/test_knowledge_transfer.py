"""A full export carries the knowledge layer: labels, trust, decay state, sessions and the
semantic edges come back identical, and the imported knowledge keeps decaying and growing."""

from __future__ import annotations

from pathlib import Path

from test_transfer import dump, import_file, other_store, settings_for

from kg_neo4j.clock import ManualClock
from kg_neo4j.commands.transfer import run_export
from kg_neo4j.models import ConnectIn, ExperienceIn, KnowledgeIn
from kg_neo4j.store import GraphStore
from kg_neo4j.store.knowledge import KnowledgeStore
from support.servers import Neo4jInfo


async def test_full_round_trip_keeps_knowledge(
    tmp_path: Path, neo4j_info: Neo4jInfo, store: GraphStore, namespace: str, clock: ManualClock
) -> None:
    ks = KnowledgeStore(store)
    await ks.store(
        [
            KnowledgeIn(
                name="rule",
                content="Review every migration",
                type="rule",
                trust="principle",
                quote="Every migration gets a second pair of eyes.",
                source="teacher",
            ),
            KnowledgeIn(
                name="guess", content="Large migrations fail at night", type="insight", trust="inference"
            ),
        ],
        session="s1",
    )
    await ks.connect(
        [
            ConnectIn(
                **{"from": "rule", "to": "guess"},
                relationType="reason_for",
                weight=0.7,
                reasoning="night runs are unattended",
            )
        ]
    )
    await ks.record_experience(
        ExperienceIn(name="night run", context="migration at 2am", outcome="rolled back")
    )
    clock.advance(days=2)
    await ks.record_access(["guess"], session="s2")
    original = await dump(store.driver, namespace)

    out = tmp_path / "full.jsonl"
    await run_export(settings_for(neo4j_info, namespace), out, fmt="full", progress=False, clock=clock)
    copy = other_store(store)
    report = await import_file(neo4j_info, copy.namespace, out, clock)
    assert report["rejected"] == 0
    assert await dump(store.driver, copy.namespace) == original

    moved = KnowledgeStore(copy)
    assert [(i.name, i.trust, i.accessCount, i.sessions) for i in await moved.list(sort="access")] == [
        ("guess", "inference", 1, 2),
        ("rule", "principle", 0, 1),
    ]
    assert await moved.list() == await ks.list()  # same state, same retention now
    clock.advance(days=1)
    [after] = await moved.record_access(["guess"])
    [there] = await ks.record_access(["guess"])
    assert after == there  # the copy grows exactly as the original does
    assert (await moved.stats())["edgesByType"] == {"reason_for": 1}
