"""search_memory ranks an observation that only asks questions below the answers (fusion ``asking``).

A chat stored as observations holds many messages that only ask ("What are your plans for New Year's
Eve?"): they resemble a question put to the memory more than any answer does, and state nothing. Real
Neo4j, the real model, the store's own search; the figures that chose the weight are docs/recall.md's.
"""

from __future__ import annotations

from kg_neo4j.store import GraphStore
from support.stores import with_fusion, write_dialogue

DIALOGUE = [
    ("Maya", "Maya: What are your plans for New Year's Eve?"),
    ("Tom", "Tom: For New Year's Eve I booked a table at a sushi place with my family."),
    ("Maya", "Maya: Nice! Do you like sushi?"),
    ("Tom", "Tom: Yes, salmon nigiri is my favourite."),
    ("Maya", "Maya: I'm staying home and watching films with my sister."),
]
QUESTION = "What are the plans for New Year's Eve?"
ASKING = DIALOGUE[0][1]
ANSWER = DIALOGUE[1][1]


async def test_a_message_that_only_asks_ranks_below_the_answers(semantic_store: GraphStore) -> None:
    await write_dialogue(semantic_store, DIALOGUE)
    off = with_fusion(semantic_store, asking=0)
    without = {h.observation: h.score for h in (await off.search_memory(QUESTION, limit=5)).hits}
    hits = (await semantic_store.search_memory(QUESTION, limit=5)).hits
    with_penalty = {h.observation: h.score for h in hits}
    # the echo of the question leads when nothing weighs against it; the penalty closes most of its lead
    # over the answer (in a five-message namespace it may still lead: the score is a share of the top)
    assert max(without, key=lambda o: without[o]) == ASKING, without
    lead_without = without[ASKING] - without[ANSWER]
    lead_with = with_penalty[ASKING] - with_penalty[ANSWER]
    assert lead_with < lead_without / 2, (lead_without, lead_with)
