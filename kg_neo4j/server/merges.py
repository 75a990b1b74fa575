"""merge_entities and unmerge_entities: several entities made one, exactly undoable
(docs/entities.md#merging-and-undoing; the work is kg_neo4j/store/merges.py)."""

from __future__ import annotations

from kg_neo4j.server.declare import tool
from kg_neo4j.server.profiles import A, D
from kg_neo4j.server.registry import Runtime, ToolOutput, dump
from kg_neo4j.store.merges import Merged, MergeIn, Unmerged, UnmergeIn


@tool(
    "merge_entities",
    input=MergeIn,
    output=Merged,
    destructive=True,
    idempotent=False,
    profiles=(D, A),
    example={"into": "Ada Lovelace", "names": ["A. A. Lovelace"]},
    description=(
        "Merge entities that are one thing into the entity `into`, in one transaction: their observations "
        "move to it after its own (a text it has already is not repeated), their relations are re-pointed to "
        "it with type, weight, validity, reasoning and source (one it already has stays as it is; one between "
        "the merged entities is dropped), and their names become its aliases (open_nodes and search_nodes "
        "find it by them). Reads with asOf before the merge still show the entities as they were, "
        "entity_history shows the merge, and unmerge_entities undoes it exactly. Entities of another "
        'entityType need "force": true; knowledge merges only with knowledge and keeps the lowest trust.'
    ),
)
async def merge_entities(rt: Runtime, req: MergeIn) -> ToolOutput:
    result = await rt.store.merge_entities(req)
    data = result.model_dump()
    return dump(data), data


@tool(
    "unmerge_entities",
    input=UnmergeIn,
    output=Unmerged,
    destructive=True,
    idempotent=False,
    profiles=(D, A),
    example={"name": "Charles Babbage"},
    description=(
        "Undo a merge_entities into `name`: the merged entities, their observations and relations are back "
        "exactly as before it, and the aliases it added are gone. Undoes the last merge into `name` still "
        "standing (give `merge`, the id merge_entities answered, to be sure which); an earlier one after it."
    ),
)
async def unmerge_entities(rt: Runtime, req: UnmergeIn) -> ToolOutput:
    result = await rt.store.unmerge_entities(req)
    data = result.model_dump()
    return dump(data), data
