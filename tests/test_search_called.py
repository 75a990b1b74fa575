"""search_memory reads a name the others call an entity by as a mention of that entity.

In a chat the speakers are stored under their labels ("Tom"), but they call each other by other names
("Tommy"), and questions use those. A capitalised question word that names no entity, which the
namespace's messages write to someone (addressed, by the others) and which that someone answers, reads as
that entity's name. Real Neo4j, the real model, the store's own search.
"""

from __future__ import annotations

from kg_neo4j.store import GraphStore
from kg_neo4j.store.hybrid_search import mentioned
from support.stores import with_fusion, write_dialogue

DIALOGUE = [
    ("Maya", "Maya: Hey Tommy! How was your weekend?"),
    ("Tom", "Tom: Great, I cooked a huge pot of chili for my friends."),
    ("Maya", "Maya: That sounds lovely, Tommy."),
    ("Tom", "Tom: Thanks! Next week I want to try a Thai green curry."),
    ("Maya", "Maya: What about dessert Tommy?"),
    ("Tom", "Tom: Probably a lemon tart from my grandmother's recipe."),
    ("Maya", "Maya: I met Sarah at the market, she sells cheese."),
    ("Tom", "Tom: I like the market on Saturdays."),
    ("Maya", "Maya: Sarah says the goat cheese is the best."),
    ("Tom", "Tom: Then I will buy some."),
    ("Maya", "Maya: Sarah will be there next Saturday too."),
    ("Tom", "Tom: Great."),
]


async def test_a_name_the_others_call_an_entity_by_is_its_mention(semantic_store: GraphStore) -> None:
    await write_dialogue(semantic_store, DIALOGUE)
    names, text = await mentioned(semantic_store, "What does Tommy like to cook?", semantic_store.clock.now())
    assert names == ["Tom"] and "Tommy" not in text
    # a third person's name is talked about, not addressed: it stays a word of the question
    names, text = await mentioned(
        semantic_store, "What does Sarah sell at the market?", semantic_store.clock.now()
    )
    assert names == [] and "Sarah" in text


async def test_off_the_word_stays_in_the_question(semantic_store: GraphStore) -> None:
    await write_dialogue(semantic_store, DIALOGUE)
    off = with_fusion(semantic_store, called=False)
    names, text = await mentioned(off, "What does Tommy like to cook?", off.clock.now())
    assert names == [] and "Tommy" in text
    hits = (await semantic_store.search_memory("What does Tommy like to cook?", limit=3)).hits
    assert hits[0].name == "Tom" and hits[0].observation is not None
