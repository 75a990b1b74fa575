"""The profile names.  Which profile shows which tool is said on each tool's declaration
(``@tool(..., profiles=(D, A))``, server/declare.py); what a profile lists is derived from the
declarations (``server.app.profile_tools``).

In ``all``, MemoryMesh's three reads that share a name with the reference's appear renamed
``*_nodes_graph`` (server/memorymesh.py).
"""

from __future__ import annotations

REFERENCE, DEFAULT, MEMORYMESH, KNOWLEDGE, ALL = "reference", "default", "memorymesh", "knowledge", "all"
#: short forms for the declarations' ``profiles=`` tuples
R, D, M, K, A = REFERENCE, DEFAULT, MEMORYMESH, KNOWLEDGE, ALL

#: The tools each node schema generates (``add_<type>``, ``update_<type>``, ``delete_<type>``).
GENERATED_PROFILES: tuple[str, ...] = (M, A)
