"""merge: near-duplicate knowledge found by its content embeddings, the weaker of each pair merged
into the stronger with merge_entities' merge (store/merges.py), one transaction per pair
(store/maintenance.py says how the sweeps run)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import neo4j

from kg_neo4j.errors import KgError
from kg_neo4j.store.maintenance_base import (
    MERGE_COSINE,
    MERGE_NEIGHBOURS,
    MaintenanceBase,
    cosine_to_score,
)
from kg_neo4j.store.merges import MergeIn
from kg_neo4j.store.progress import Count


class Merging(MaintenanceBase):
    async def has_vector_index(self) -> bool:
        records = await self.x.read("schema_vector_dimensions")
        return any(r["name"] == "kg_observation_embedding" for r in records)

    async def duplicate_pairs(
        self,
        *,
        min_cosine: float = MERGE_COSINE,
        page: int = 500,
        names: Sequence[str] | None = None,
        on_progress: Count | None = None,
    ) -> list[dict[str, Any]]:
        """Pairs of knowledge nodes whose content vectors are at least ``min_cosine`` alike,
        best first, each with the node to keep (the stronger: higher trust, then level,
        accesses, stability, then the older) and the duplicate.  Without the vector index
        (no embedding model) there are none.  ``names`` limits the search to pairs touching them."""
        if not await self.has_vector_index():
            return []
        score = cosine_to_score(min_cosine)
        raw: dict[tuple[str, str], float] = {}
        info: dict[str, dict[str, Any]] = {}
        after = ""
        if names is not None:
            ordered = sorted(set(names))
            for i in range(0, len(ordered), page):
                rec = (
                    await self.x.read(
                        "merge_candidates",
                        names=ordered[i : i + page],
                        after="",
                        page=page,
                        neighbours=MERGE_NEIGHBOURS,
                        min_score=score,
                    )
                )[0]
                self._collect_pairs(rec, raw, info)
        else:
            while True:
                rec = (
                    await self.x.read(
                        "merge_candidates",
                        names=None,
                        after=after,
                        page=page,
                        neighbours=MERGE_NEIGHBOURS,
                        min_score=score,
                    )
                )[0]
                if int(rec["scanned"]) == 0:
                    break
                self._collect_pairs(rec, raw, info)
                if on_progress:
                    on_progress(int(rec["scanned"]))
                after = str(rec["last"])
                if int(rec["scanned"]) < page:
                    break
        missing = sorted({n for pair in raw for n in pair} - set(info))
        if missing:
            for r in await self.x.read("knowledge_strength", names=missing):
                info[r["name"]] = dict(r)
        pairs = []
        for (a, b), sc in sorted(raw.items(), key=lambda kv: (-kv[1], kv[0])):
            if a not in info or b not in info:
                continue
            keep, dup = (a, b) if _strength(info[a]) >= _strength(info[b]) else (b, a)
            pairs.append({"keep": keep, "duplicate": dup, "similarity": round(2.0 * sc - 1.0, 6)})
        return pairs

    @staticmethod
    def _collect_pairs(
        rec: neo4j.Record, raw: dict[tuple[str, str], float], info: dict[str, dict[str, Any]]
    ) -> None:
        for n in rec["nodes"]:
            info[n["name"]] = dict(n)
        for p in rec["pairs"]:
            key = (min(p["a"], p["b"]), max(p["a"], p["b"]))
            raw[key] = max(raw.get(key, 0.0), float(p["score"]))

    async def recent_names(self, limit: int) -> list[str]:
        return list((await self.x.read("knowledge_recent", limit=limit))[0]["names"])

    async def merge(
        self,
        pairs: Sequence[dict[str, Any]],
        *,
        on_progress: Count | None = None,
    ) -> int:
        """Merge each duplicate into its keeper with merge_entities' merge (store/merges.py: one
        transaction per pair, undoable with unmerge_entities; the keeper keeps the lower trust of the
        two, so no content gains trust).  A node takes part in one merge per call, so chains (a ~ b ~ c)
        settle over successive runs; a pair whose nodes changed since they were read (no longer
        knowledge, merged, gone) is left out.  Each pair commits on its own.  Returns merges made."""
        used: set[str] = set()
        merged = 0
        for p in pairs:
            if p["keep"] in used or p["duplicate"] in used:
                continue
            used.update((p["keep"], p["duplicate"]))
            req = MergeIn(
                into=p["keep"],
                names=[p["duplicate"]],
                force=True,  # near-duplicate content is the test; types may differ (the keeper's stays)
                reason=f"maintain_graph merge: content similarity {p.get('similarity')}",
            )
            try:
                await self.graph.merge_entities(req)
                merged += 1
            except KgError:
                pass  # changed since the pairs were read: the next run sees it as it is
            if on_progress:
                on_progress(1)
        return merged


def _strength(n: dict[str, Any]) -> tuple[Any, ...]:
    """Which of two duplicates is kept: higher trust (principle > pattern > inference), then
    level, accesses, stability, then the older one, then the smaller name.

    Not find_duplicates' ranking (store/duplicates.py's ``rank``: most observations and relations, then
    the fuller name), on purpose: a knowledge node is one content (its first observation), so counting
    its observations says little, and its name is a title, not a name to parse.  What says which of two
    knowledge nodes is the established memory is its state under the knowledge model (trust, level,
    accesses, stability, age: docs/knowledge-model.md), which plain entities do not have."""
    rank = {"principle": 3, "pattern": 2, "inference": 1}.get(str(n.get("trust")), 0)
    created = n.get("created_at")
    created_key = -created.to_native().timestamp() if created is not None else float("-inf")
    return (
        rank,
        int(n.get("level") or 0),
        int(n.get("accesses") or 0),
        float(n.get("stability") or 0.0),
        created_key,
        _neg_name(str(n["name"])),
    )


def _neg_name(name: str) -> tuple[int, ...]:
    return tuple(-ord(ch) for ch in name)
