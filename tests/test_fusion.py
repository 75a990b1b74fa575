"""kg_neo4j.fusion and kg_neo4j.text: pure ranking and question handling, no database."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from kg_neo4j.fusion import FusionWeights, Hit, finish, only_asks, pool, score_channels, strong_entities
from kg_neo4j.text import fulltext_words, question_grams, replace_mention, strip_mentions

#: No Neo4j, no server process, no network: the fast tier (pytest -m unit).
pytestmark = pytest.mark.unit

DEFAULT = FusionWeights()


def fuse(
    *,
    vector: Sequence[Mapping[str, Any]] = (),
    fulltext: Sequence[Mapping[str, Any]] = (),
    around: Sequence[Mapping[str, Any]] = (),
    mentions: Sequence[str] = (),
    prior: Mapping[str, float] | None = None,
    weights: FusionWeights = DEFAULT,
    limit: int = 10,
) -> list[Hit]:
    """The two scoring phases search_memory runs around its graph read (store/hybrid_search.py)."""
    hits, top = score_channels(vector=vector, fulltext=fulltext, mentions=mentions, weights=weights)
    return finish(hits, top, around=around, mentions=mentions, prior=prior, weights=weights, limit=limit)


def obs(name: str, seq: int, score: float, etype: str = "person") -> dict[str, object]:
    return {"name": name, "entityType": etype, "observation": f"{name} #{seq}", "seq": seq, "score": score}


def test_relative_scores_keep_the_gap_that_ranks_lose() -> None:
    # The vector channel is sure about A#1; BM25 has three weak, nearly equal matches led by B#1.
    vector = [obs("A", 1, 0.80), obs("B", 1, 0.30), obs("C", 1, 0.29)]
    fulltext = [obs("B", 1, 1.02), obs("C", 1, 1.01), obs("A", 1, 1.00)]
    hits = fuse(vector=vector, fulltext=fulltext)
    assert [h.name for h in hits] == ["A", "B", "C"]
    assert hits[0].channels == {"vector": 1.0, "fulltext": round(1.00 / 1.02, 6)}


def test_each_key_once_best_first_and_limited() -> None:
    vector = [obs("A", i, 0.9 - i / 100) for i in range(20)] + [obs("A", 0, 0.1)]
    hits = fuse(vector=vector, limit=5, weights=FusionWeights())
    assert len(hits) == 5
    assert [h.seq for h in hits] == [0, 1, 2, 3, 4]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_mentioned_entity_lends_weight_to_its_observations() -> None:
    vector = [obs("Bob", 1, 0.60), obs("Alice", 1, 0.58), obs("Carol", 1, 0.10)]
    assert fuse(vector=vector)[0].name == "Bob"
    hits = fuse(vector=vector, mentions=["Alice"])
    assert hits[0].name == "Alice" and hits[0].channels["mention"] == 1.0


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("Emi: What about you Kate?", True),
        ("How was the trip? Did you ski?", True),
        ("I went skiing. Did you?", False),
        ("We went to Miami!", False),
        ("What a day.", False),
        ("", False),
    ],
)
def test_only_asks(text: str, asks: bool) -> None:
    assert only_asks(text) is asks


def test_an_observation_that_only_asks_loses_a_share_of_the_top_score() -> None:
    # "What are your plans for New Year's Eve?" echoes the question; the answer shares fewer words
    vector = [
        {**obs("B", 1, 0.90), "observation": "B: What are your plans for New Year's Eve?"},
        {**obs("A", 2, 0.80), "observation": "A: A sushi place with my family. And you?"},
        {**obs("A", 3, 0.20), "observation": "A: Fine."},
    ]
    plain = fuse(vector=vector, weights=FusionWeights(asking=0))
    assert [h.key for h in plain] == [("B", 1), ("A", 2), ("A", 3)]
    hits = fuse(vector=vector)
    assert [h.key for h in hits][:2] == [("A", 2), ("B", 1)]
    by = {h.key: h for h in hits}
    top = max(h.score for h in plain)
    assert by[("B", 1)].score == pytest.approx(
        {h.key: h.score for h in plain}[("B", 1)] - FusionWeights().asking * top
    )
    assert by[("B", 1)].channels["asking"] == 1.0 and "asking" not in by[("A", 2)].channels


def test_proximity_follows_relation_weight_and_adds_neighbours() -> None:
    vector = [obs("Alice", 1, 0.9), obs("Bob", 1, 0.5), obs("Carol", 1, 0.5)]
    around = [
        {
            "name": "Alice",
            "entityType": "person",
            "rels": [
                {
                    "from": "Alice",
                    "to": "Carol",
                    "relationType": "knows",
                    "weight": 1.0,
                    "other": "Carol",
                    "otherType": "person",
                },
                {
                    "from": "Alice",
                    "to": "Bob",
                    "relationType": "knows",
                    "weight": 0.1,
                    "other": "Bob",
                    "otherType": "person",
                },
                {
                    "from": "Alice",
                    "to": "Acme",
                    "relationType": "works_at",
                    "weight": 0.9,
                    "other": "Acme",
                    "otherType": "company",
                },
            ],
        }
    ]
    w = FusionWeights(strong_entities=1)
    hits = fuse(vector=vector, around=around, weights=w)
    by = {(h.name, h.seq): h for h in hits}
    assert by[("Carol", 1)].score > by[("Bob", 1)].score  # same similarity, stronger relation
    assert ("Acme", None) in by and by[("Acme", None)].observation is None
    assert by[("Acme", None)].channels == {"graph": 1.0}


def test_prior_multiplies() -> None:
    vector = [obs("A", 1, 0.5), obs("B", 1, 0.49), obs("C", 1, 0.1)]
    hits = fuse(vector=vector, prior={"B": 1.0}, weights=FusionWeights(prior=1.0))
    assert hits[0].name == "B"


def test_prior_is_an_additive_share_of_the_top_score() -> None:
    # A near tie: the remembered entity wins; its bonus is exactly prior weight x top x prior.
    vector = [obs("A", 1, 0.80), obs("B", 1, 0.79), obs("C", 1, 0.10)]
    plain = {h.name: h.score for h in fuse(vector=vector)}
    hits = fuse(vector=vector, prior={"B": 0.5, "C": 1.0})
    assert FusionWeights().prior == 0.1
    assert hits[0].name == "B" and hits[0].channels["prior"] == 0.5
    top = max(plain.values())
    assert abs(hits[0].score - (plain["B"] + 0.1 * top * 0.5)) < 1e-9
    # ... but a clearly better match is not outranked, even by a full prior.
    assert [h.name for h in fuse(vector=vector, prior={"C": 1.0})] == ["A", "B", "C"]
    # No prior, no change; an entity missing from the prior gets nothing.
    assert {h.name: h.score for h in fuse(vector=vector, prior={})} == plain
    assert {h.name: h.score for h in hits}["A"] == plain["A"]


def test_no_candidates_no_hits() -> None:
    assert fuse() == []


def test_entity_vector_channel_adds_entity_hits_at_its_weight() -> None:
    entity = [
        {"name": "Acme", "entityType": "company", "score": 0.9},
        {"name": "Initech", "entityType": "company", "score": 0.5},
    ]
    hits, top = score_channels(entity_vector=entity)
    assert {k: h.channels for k, h in hits.items()} == {
        ("Acme", None): {"entity": 1.0},
        ("Initech", None): {"entity": 0.0},
    }
    assert top == FusionWeights().entity


def test_pool_holds_the_best_by_score_then_the_strong_then_the_named() -> None:
    vector = [obs("A", 1, 0.9), obs("B", 1, 0.8), obs("C", 1, 0.7), obs("D", 1, 0.6), obs("E", 1, 0.5)]
    hits, top = score_channels(vector=vector)
    w = FusionWeights(strong_entities=3)
    # limit 2: A, B by score; then the strong ones not yet in (C), then the named (Z: no hit at all)
    assert pool(hits, top, mentions=["Z"], prior=None, weights=w, limit=2) == ["A", "B", "C", "Z"]
    assert pool(hits, top, mentions=[], prior=None, weights=w, limit=0) == ["A", "B", "C"]
    assert strong_entities(hits, ["Z"], w) == {"A", "B", "C", "Z"}


def test_pool_ranks_with_the_prior_so_remembered_knowledge_gets_its_graph_read() -> None:
    vector = [obs("A", 1, 0.9), obs("B", 1, 0.8), obs("C", 1, 0.7), obs("D", 1, 0.69)]
    hits, top = score_channels(vector=vector, weights=FusionWeights())
    w = FusionWeights(strong_entities=1)
    assert pool(hits, top, mentions=[], prior=None, weights=w, limit=2) == ["A", "B"]
    lifted = pool(
        hits,
        top,
        mentions=[],
        prior={"D": 1.0},
        weights=FusionWeights(strong_entities=1, prior=1.0),
        limit=2,
    )
    assert lifted == ["A", "D"]  # D (lowest by cosine, + prior x top = 1.0) ties A and passes B (0.52)
    # no prior weight: the prior is ignored
    assert pool(
        hits,
        top,
        mentions=[],
        prior={"D": 1.0},
        weights=FusionWeights(strong_entities=1, prior=0),
        limit=2,
    ) == ["A", "B"]


def test_pool_names_each_entity_once_best_observation_counting() -> None:
    vector = [obs("A", 1, 0.9), obs("A", 2, 0.85), obs("B", 1, 0.3)]
    hits, top = score_channels(vector=vector)
    assert pool(hits, top, mentions=["A"], prior=None, weights=FusionWeights(), limit=5) == ["A", "B"]


def test_finish_bounds_added_neighbours_by_entity_type() -> None:
    vector = [obs("Alice", 1, 0.9)]
    around = [
        {
            "name": "Alice",
            "rels": [
                {"other": "Acme", "otherType": "company", "weight": 1.0},
                {"other": "Bob", "otherType": "person", "weight": 1.0},
            ],
        }
    ]
    hits, top = score_channels(vector=vector)
    names = {h.name for h in finish(hits, top, around=around, entity_types=["person"])}
    assert names == {"Alice", "Bob"}


def test_question_grams_cover_multiword_and_possessive_names() -> None:
    grams = question_grams("Where did Maya O'Brien's sister move after New York?")
    assert {"maya", "o'brien", "new york", "maya o'brien"} <= set(grams)
    assert len(question_grams("word " * 1000)) <= 256


def test_strip_mentions() -> None:
    assert strip_mentions("What did Maya's dog eat?", ["maya"]) == "What did dog eat?"
    assert strip_mentions("when did maya  o'brien move", ["maya o'brien"]) == "when did move"
    # nothing but stop words would be left: keep the question as it is
    assert strip_mentions("Who is Initech?", ["initech"]) == "Who is Initech?"


def test_replace_mention() -> None:
    # an alias read as its entity's name (search_memory, docs/entities.md#merging-and-undoing)
    assert (
        replace_mention("What did bertie's  dog eat?", "bertie", "Robert Jones")
        == "What did Robert Jones's  dog eat?"
    )
    assert replace_mention("Bertie and Albertie", "bertie", "R") == "R and Albertie"


def test_fulltext_words_are_words_only() -> None:
    assert fulltext_words('x AND (y) OR "z" NOT w*') == "x and y or z not w"
    assert fulltext_words("?!:/") == ""


def test_capitalised_words_past_the_first_that_name_no_entity() -> None:
    from kg_neo4j.text import capitalised_words

    assert capitalised_words("What are Kate's hobbies?", ["emi", "elise"]) == ["Kate"]
    assert capitalised_words("When did Elise visit Miami with Kate?", ["elise"]) == ["Miami", "Kate"]
    assert capitalised_words("Kate likes it. Does Bob?", []) == ["Bob"]  # a sentence's first word is no clue
    assert capitalised_words("what did they say", []) == []


ADDRESSED = [
    ("Elise", "Emi", "Elise: What about you Kate?"),
    ("Elise", "Emi", "Elise: Hey Kate! How was the class?"),
    ("Elise", "Emi", "Elise: I think so too, Kate."),
    ("Elise", "Emi", "Elise: Kate, look at this photo"),
]


@pytest.mark.parametrize(
    ("word", "uses", "entity"),
    [
        ("Kate", ADDRESSED, "Emi"),  # written by the other, addressed, answered by Emi
        ("Kate", ADDRESSED[:2], None),  # too few uses to tell
        ("Kate", [*ADDRESSED, *[("Emi", "Elise", "Emi: I am Kate.")] * 2], None),  # she writes it herself
        (
            "Sarah",
            [("Elise", "Emi", f"Elise: I met Sarah at the {p} today") for p in "gym pool shop".split()],
            None,
        ),
        ("Kate", [("Elise", None, t) for _, _, t in ADDRESSED], None),  # nobody answers
        ("Kat", ADDRESSED, None),  # a word inside the name is not the name
    ],
)
def test_called_name_reads_who_is_addressed_and_answers(
    word: str, uses: list[tuple[str, str | None, str]], entity: str | None
) -> None:
    from kg_neo4j.text import called_name

    assert called_name(word, uses) == entity
