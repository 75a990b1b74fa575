"""traverse_graph: a breadth-first walk in one statement (``cypher/traverse.cypher``), with the per-hop
fan-out cap applied inside the query; here the reached entities get their depth and first path."""

from __future__ import annotations

from typing import Any

from kg_neo4j.models import Traversal, TraversalEntity, TraversalPath, TraverseIn
from kg_neo4j.store.aliases import alias_entities, resolved
from kg_neo4j.store.core import StoreCore
from kg_neo4j.store.records import dedupe, relation


class Traversing(StoreCore):
    async def traverse(self, req: TraverseIn) -> Traversal:
        """Breadth-first walk (one query); the per-hop fan-out cap is applied inside the query."""
        wanted = dedupe(req.start)
        rec = await self._walk(req, wanted)
        # a start name that found nothing may be an alias: it starts at the entity it names (store/aliases.py);
        # a walk from entities' own names stays one statement
        missing = [n for n in wanted if n not in set(rec["start"])]
        aliases = await alias_entities(self.x, missing, req.asOf) if missing else {}
        if aliases:
            rec = await self._walk(req, resolved(wanted, aliases))
        start = list(rec["start"])
        depth: dict[str, int] = {s: 0 for s in start}
        for hop, level in enumerate(rec["levels"], 1):
            for name in level:
                depth.setdefault(name, hop)
        truncated = bool(rec["capped"])
        reached_order = [n for n in depth if n not in start]
        if len(reached_order) > req.limit or any(len(level) > req.limit for level in rec["levels"]):
            truncated = True
        reached_order = reached_order[: req.limit]
        keep = set(start) | set(reached_order)
        # Each reached entity's path runs through the first edge that discovered it.
        parent: dict[str, tuple[str, str]] = {}
        for e in rec["edges"]:
            reached, via = e["reached"], e["via"]
            if (
                reached in keep
                and reached not in parent
                and reached not in start
                and depth.get(via, -1) == e["hop"] - 1
                and depth[reached] == e["hop"]
            ):
                parent[reached] = (via, e["relationType"])
        details = {e["name"]: e for e in rec["entities"]}
        entities = [TraversalEntity(**details[n], depth=depth[n]) for n in [*start, *reached_order]]
        rel_seen: set[tuple[str, str, str, Any]] = set()
        relations = []
        for e in rec["edges"]:
            if e["from"] in keep and e["to"] in keep:
                k = (e["from"], e["to"], e["relationType"], e["createdAt"])
                if k not in rel_seen:
                    rel_seen.add(k)
                    relations.append(relation(e))
        paths = []
        for n in reached_order:
            nodes, types = [n], []
            cur = n
            while cur in parent:
                prev, rtype = parent[cur]
                nodes.append(prev)
                types.append(rtype)
                cur = prev
            paths.append(TraversalPath(nodes=nodes[::-1], relationTypes=types[::-1]))
        return Traversal(
            start=start,
            entities=entities,
            relations=relations,
            paths=paths,
            truncated=truncated,
            cappedAt=[c for c in rec["capped"] if c is not None],
        )

    async def _walk(self, req: TraverseIn, start: list[str]) -> Any:
        records = await self.x.read(
            "traverse_graph",
            start=start,
            max_depth=req.maxDepth,
            direction=req.direction,
            types=req.relationTypes,
            min_weight=req.minWeight,
            fanout=req.fanout,
            fanout_probe=req.fanout + 1,
            frontier_cap=req.limit + 1,
            at=req.asOf,
        )
        return records[0]
