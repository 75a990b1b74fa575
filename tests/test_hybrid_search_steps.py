"""The database-free steps of search_memory (store/hybrid_search.py): the memory prior of knowledge hits
and the answer built from the fused hits and the graph read around them.  The steps that read Neo4j
(mentions, candidates with their starvation rounds, around) run end to end in test_search_memory.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kg_neo4j.fusion import Hit
from kg_neo4j.knowledge.decay import MEMORY_SCORE_MAX, memory_score, retention
from kg_neo4j.knowledge.recall import facts_of
from kg_neo4j.knowledge.vocabulary import Category
from kg_neo4j.store.hybrid_search import answer, memory_prior

#: No Neo4j, no server process, no network: the fast tier (pytest -m unit).
pytestmark = pytest.mark.unit

AT = datetime(2026, 6, 1, tzinfo=UTC)


def knowledge_hit(
    name: str, *, days: float, stability: float = 10.0, level: int = 1, category: str = "creative"
) -> dict[str, object]:
    return {
        "name": name,
        "memory": {
            "since": AT - timedelta(days=days),
            "stability": stability,
            "category": category,
            "level": level,
        },
    }


def test_memory_prior_is_the_memory_score_over_its_maximum() -> None:
    rows = [knowledge_hit("K", days=3.0), {"name": "plain", "memory": None}]
    expected = memory_score(retention(3.0, 10.0, category=Category.CREATIVE), 1) / MEMORY_SCORE_MAX
    assert memory_prior(rows, AT) == {"K": pytest.approx(expected, abs=1e-12)}


def test_memory_prior_takes_each_name_once_and_skips_broken_state() -> None:
    rows = [
        knowledge_hit("K", days=1.0),
        knowledge_hit("K", days=50.0),
        {"name": "broken", "memory": {"since": AT, "stability": "x", "category": "creative", "level": 1}},
        {
            "name": "unknown-category",
            "memory": {"since": AT, "stability": 1.0, "category": "nope", "level": 1},
        },
    ]
    prior = memory_prior(rows, AT)
    assert list(prior) == ["K"]
    assert prior["K"] == pytest.approx(
        memory_score(retention(1.0, 10.0, category=Category.CREATIVE), 1) / MEMORY_SCORE_MAX
    )


def test_answer_keeps_the_fused_order_and_the_relations_among_its_entities() -> None:
    fused = [
        Hit("A", "person", "A says hi", 1, score=0.91234567),
        Hit("B", "", None, None, score=0.5),
        Hit("A", "person", "A again", 2, score=0.4),
    ]
    state = {
        "trust": "pattern",
        "level": 1,
        "quote": None,
        "category": "creative",
        "stability": 10.0,
        "since": AT - timedelta(days=2),
    }
    near = {
        "A": {
            "entityType": "person",
            "observationCount": 2,
            "knowledge": None,
            "rels": [
                {"from": "A", "to": "B", "relationType": "knows", "weight": 0.5},
                {"from": "A", "to": "C", "relationType": "knows", "weight": 1.0},
            ],
        },  # C is not in the answer
        "B": {
            "entityType": "company",
            "observationCount": 0,
            "knowledge": state,
            "rels": [{"from": "A", "to": "B", "relationType": "knows", "weight": 0.5}],
        },  # the same relation, seen twice
    }
    result = answer(fused, ["A", "B"], near, AT, hybrid=True)
    assert [(h.name, h.observation, h.score) for h in result.hits] == [
        ("A", "A says hi", round(0.91234567, 6)),
        ("B", None, 0.5),
        ("A", "A again", 0.4),
    ]
    assert [(e.name, e.entityType, e.observationCount) for e in result.entities] == [
        ("A", "person", 2),
        ("B", "company", 0),
    ]
    assert result.entities[1].knowledge == facts_of(state, AT) and result.entities[0].knowledge is None
    assert [(r.from_, r.to, r.weight) for r in result.relations] == [("A", "B", 0.5)]
    assert result.mode == "hybrid"


def test_answer_without_a_graph_read_takes_the_type_of_the_hit() -> None:
    result = answer([Hit("Z", "thing", None, None, score=0.1)], ["Z"], {}, AT, hybrid=False)
    assert [(e.name, e.entityType, e.observationCount, e.knowledge) for e in result.entities] == [
        ("Z", "thing", 0, None)
    ]
    assert result.relations == [] and result.mode == "fulltext+graph"
