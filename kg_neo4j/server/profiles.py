"""Which profile shows which tool: the one table (README "Profiles"; tests/test_profiles.py checks the
README's table against it and against what ``serve --tools X`` lists).

Keys are declaration keys: a tool's name, or ``mesh.<name>`` for MemoryMesh's static tools (three of
them share a name with the reference's reads; in ``all`` those three appear renamed ``*_nodes_graph``).
"""

from __future__ import annotations

R, D, M, K, A = "reference", "default", "memorymesh", "knowledge", "all"

TOOL_PROFILES: dict[str, tuple[str, ...]] = {
    # the reference memory server's 9 tools (docs/reference-schemas.md)
    "create_entities": (R, D, A),
    "create_relations": (R, D, A),
    "add_observations": (R, D, A),
    "delete_entities": (R, D, A),
    "delete_observations": (R, D, A),
    "delete_relations": (R, D, A),
    "read_graph": (R, D, A),
    "search_nodes": (R, D, A),
    "open_nodes": (R, D, A),
    # recall, relations over time, exact history
    "search_memory": (D, K, A),
    "traverse_graph": (D, K, A),
    "update_relations": (D, A),
    "invalidate_relations": (D, A),
    "invalidate_observations": (D, A),
    "entity_history": (D, A),
    # MemoryMesh's static tools (docs/memorymesh.md): the 8 writes everywhere MemoryMesh is, its reads renamed in all
    "mesh.add_nodes": (M, A),
    "mesh.update_nodes": (M, A),
    "mesh.delete_nodes": (M, A),
    "mesh.add_edges": (M, A),
    "mesh.update_edges": (M, A),
    "mesh.delete_edges": (M, A),
    "mesh.add_metadata": (M, A),
    "mesh.delete_metadata": (M, A),
    "mesh.read_graph": (M,),
    "mesh.search_nodes": (M,),
    "mesh.open_nodes": (M,),
    "mesh.read_nodes_graph": (A,),
    "mesh.search_nodes_graph": (A,),
    "mesh.open_nodes_graph": (A,),
    # the knowledge layer (docs/knowledge-model.md)
    "store_knowledge": (K, A),
    "connect_knowledge": (K, A),
    "update_knowledge": (K, A),
    "forget_knowledge": (K, A),
    "list_knowledge": (K, A),
    "record_experience": (K, A),
    "recall_experience": (K, A),
    "memory_stats": (K, A),
    "maintain_graph": (K, A),
    "crystallize_skill": (K, A),
}

#: The tools each node schema generates (``add_<type>``, ``update_<type>``, ``delete_<type>``).
GENERATED_PROFILES: tuple[str, ...] = (M, A)


def tool_name(key: str) -> str:
    """The name a declaration key is listed under."""
    return key.removeprefix("mesh.")


def built_in_tools(profile: str) -> list[str]:
    """The names of the built-in tools of ``profile`` (schema-generated tools come on top)."""
    return [tool_name(k) for k, profiles in TOOL_PROFILES.items() if profile in profiles]
