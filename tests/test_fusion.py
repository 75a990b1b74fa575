"""kg_neo4j.fusion and kg_neo4j.text: pure ranking and question handling, no database."""

from __future__ import annotations

from kg_neo4j.fusion import FusionWeights, fuse
from kg_neo4j.text import fulltext_query, question_grams, strip_mentions


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
    hits = fuse(vector=vector, limit=5, weights=FusionWeights(context=0))  # context: the next test
    assert len(hits) == 5
    assert [h.seq for h in hits] == [0, 1, 2, 3, 4]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_mentioned_entity_lends_weight_to_its_observations() -> None:
    vector = [obs("Bob", 1, 0.60), obs("Alice", 1, 0.58), obs("Carol", 1, 0.10)]
    assert fuse(vector=vector)[0].name == "Bob"
    hits = fuse(vector=vector, mentions=["Alice"])
    assert hits[0].name == "Alice" and hits[0].channels["mention"] == 1.0


def test_an_observation_after_a_strong_one_of_its_entity_shares_its_score() -> None:
    # "Lena looked at the flat on Mill Road" (A#4, a strong match) ... "She said it was too far" (A#5, weak
    # alone): the answer follows its setup in the entity's own sequence.
    vector = [obs("A", 4, 0.80), obs("B", 9, 0.50), obs("A", 7, 0.46), obs("A", 5, 0.45), obs("C", 1, 0.10)]
    plain = fuse(vector=vector, weights=FusionWeights(context=0))
    assert [h.key for h in plain][:4] == [("A", 4), ("B", 9), ("A", 7), ("A", 5)]
    hits = fuse(vector=vector)
    assert [h.key for h in hits][:2] == [("A", 4), ("A", 5)]
    by = {h.key: h for h in hits}
    before = {h.key: h.score for h in plain}
    w = FusionWeights().context
    assert abs(by[("A", 5)].score - (before[("A", 5)] + w * before[("A", 4)])) < 1e-9
    assert by[("A", 5)].channels["context"] == 1.0
    # no previous observation among the candidates (A#6 is not), another entity's, or an entity hit: nothing
    assert by[("A", 7)].score == before[("A", 7)] and "context" not in by[("A", 7)].channels
    assert by[("B", 9)].score == before[("B", 9)]

def test_proximity_follows_relation_weight_and_adds_neighbours() -> None:
    vector = [obs("Alice", 1, 0.9), obs("Bob", 1, 0.5), obs("Carol", 1, 0.5)]
    around = [{"name": "Alice", "entityType": "person", "rels": [
        {"from": "Alice", "to": "Carol", "relationType": "knows", "weight": 1.0, "other": "Carol", "otherType": "person"},
        {"from": "Alice", "to": "Bob", "relationType": "knows", "weight": 0.1, "other": "Bob", "otherType": "person"},
        {"from": "Alice", "to": "Acme", "relationType": "works_at", "weight": 0.9, "other": "Acme",
         "otherType": "company"},
    ]}]
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


def test_question_grams_cover_multiword_and_possessive_names() -> None:
    grams = question_grams("Where did Maya O'Brien's sister move after New York?")
    assert {"maya", "o'brien", "new york", "maya o'brien"} <= set(grams)
    assert len(question_grams("word " * 1000)) <= 256


def test_strip_mentions() -> None:
    assert strip_mentions("What did Maya's dog eat?", ["maya"]) == "What did dog eat?"
    assert strip_mentions("when did maya  o'brien move", ["maya o'brien"]) == "when did move"
    # nothing but stop words would be left: keep the question as it is
    assert strip_mentions("Who is Initech?", ["initech"]) == "Who is Initech?"


def test_fulltext_query_words_only() -> None:
    assert fulltext_query('x AND (y) OR "z" NOT w*') == "x and y or z not w"
    assert fulltext_query("?!:/") == ""
