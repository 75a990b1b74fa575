"""search_memory ranks the observations of the person a question names first (fusion ``mention``).

In a chat both people talk about the same things: asked "What sports does Tom play?", the other
speaker's message that says "sports" outright resembles the question more than Tom's own answers,
which name the sports instead.  On real chats (REALTALK) nearly all the evidence of a question that
names one person is that person's own messages, so the person named weighs more than a closer wording
by someone else.  Real Neo4j, the real model, the store's own search; the figures that chose the weight
are docs/recall.md's.
"""

from __future__ import annotations

from kg_neo4j.store import GraphStore
from support.stores import with_fusion, write_dialogue

DIALOGUE = [
    ("Maya", "Maya: I think sports are great, I watch all kinds of sports on TV with my sister."),
    ("Tom", "Tom: Yesterday I had basketball practice with my team, we won the scrimmage."),
    ("Maya", "Maya: Sports on TV are my favourite way to relax after work."),
    ("Tom", "Tom: On Sundays I go to the park for a volleyball game with friends."),
    ("Maya", "Maya: My sister and I cooked lasagna for dinner."),
]
QUESTION = "What sports does Tom play?"
TOMS = {text for who, text in DIALOGUE if who == "Tom"}


async def test_the_named_persons_observations_rank_first(semantic_store: GraphStore) -> None:
    await write_dialogue(semantic_store, DIALOGUE)
    off = with_fusion(semantic_store, mention=0)
    without = [h.observation for h in (await off.search_memory(QUESTION, limit=5)).hits]
    ranked = [h.observation for h in (await semantic_store.search_memory(QUESTION, limit=5)).hits]
    # by wording alone the other speaker's "sports" leads; the person named puts their own answers first
    assert without[0] not in TOMS, without
    assert set(ranked[:2]) == TOMS, ranked
