"""KnowledgeStore: the knowledge layer (docs/knowledge-model.md) on the graph the other tools use.

Knowledge nodes are entities with the extra label ``:Knowledge`` (docs/knowledge-model.md),
so the reference tools, ``search_memory`` and ``traverse_graph`` see them.  Each method is
one transaction; the statements are in ``cypher/knowledge.cypher``.  The rules (initial
stability, growth, levels, anti-fabrication) are the pure functions of
``kg_neo4j.knowledge``: Python applies them before writing, or hands their constants to
Cypher as parameters (``decay.cypher_params()``), never a second copy of the numbers.
"""

from __future__ import annotations

import builtins
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

import neo4j

from kg_neo4j.errors import NotFoundError, ValidationError
from kg_neo4j.knowledge import decay, trust
from kg_neo4j.knowledge.vocabulary import AccessGrade, Category, EdgeType, KnowledgeType, Trust, parse
from kg_neo4j.models import (
    ConnectIn,
    KnowledgeIn,
    KnowledgeItem,
    KnowledgeUpdate,
    RelationFull,
    SimilarKnowledge,
    StoredKnowledge,
)
from kg_neo4j.store.aliases import resolve_names
from kg_neo4j.store.executor import Executor, Records
from kg_neo4j.store.experiences import Experiences
from kg_neo4j.store.graph import GraphStore
from kg_neo4j.store.records import entity_text, knowledge_item, relation
from kg_neo4j.store.type_labels import knowledge_labels
from kg_neo4j.text import fulltext_query

__all__ = ["KnowledgeIn", "KnowledgeStore", "StoredKnowledge"]

#: store_knowledge's "similar" suggestions: exact cosine over the namespace's knowledge up to
#: SIMILAR_SCAN nodes, else SIMILAR_K vector-index candidates (the index spans every namespace);
#: SIMILAR_TEXT_K fulltext candidates without embeddings; the minimum Neo4j cosine score
#: ((1 + cos) / 2; 0.8 is cos 0.6), and how many are returned.
SIMILAR_SCAN = 20_000
SIMILAR_K = 200
SIMILAR_TEXT_K = 1000
SIMILAR_MIN_SCORE = 0.8
SIMILAR_LIMIT = 3
#: sessions kept on a node (level 2 needs 3 distinct ones; the list must not grow forever)
MAX_SESSIONS = 50

Sort = Literal["time", "access", "strength"]


class KnowledgeStore(Experiences):
    """The knowledge of one namespace (the namespace, clock and embedder of ``graph``)."""

    def __init__(self, graph: GraphStore) -> None:
        self.graph = graph
        # the graph's executor with the decay constants as shared parameters (cypher/knowledge.cypher)
        self.x: Executor = graph.x.with_shared(constants=decay.cypher_params())

    @property
    def now(self) -> datetime:
        return self.graph.clock.now()

    # -- store ----------------------------------------------------------------------------
    async def store(
        self,
        items: Sequence[KnowledgeIn],
        *,
        session: str | None = None,
        existing: Literal["error", "skip"] = "error",
    ) -> list[StoredKnowledge]:
        """Store new knowledge in one transaction.  Every anti-fabrication rule is checked
        first; with ``existing="error"`` a name that is already an entity writes nothing,
        with ``"skip"`` such items are left as they are (and not returned)."""
        now = self.now
        rows: list[dict[str, Any]] = []
        seen: set[str] = set()
        for item in items:
            trust.require_quote(item.trust, item.quote)
            if item.name in seen:
                raise ValidationError(
                    f"knowledge {item.name!r} appears twice in one call; nothing was written", field="name"
                )
            seen.add(item.name)
            state = decay.new_memory(item.trust, item.category, now=now, session=item.sessionId or session)
            rows.append(
                {
                    "name": item.name,
                    "name_lower": item.name.lower(),
                    "type": item.type.value,
                    "content": item.content,
                    "content_lower": item.content.lower(),
                    "trust": item.trust.value,
                    "category": item.category.value,
                    "quote": item.quote,
                    "source": item.source,
                    "stability": state.stability,
                    "memory_level": int(state.memory_level),
                    "sessions": list(state.sessions),
                    "fulltext": fulltext_query(item.content, self.graph.namespace),
                    "vector": None,
                    "entity_vector": None,
                    "type_labels": knowledge_labels(item.type.value, item.trust.value),
                }
            )
        if not rows:
            return []
        vectors = await self.graph.embed(
            [r["content"] for r in rows] + [entity_text(r["name"], r["type"]) for r in rows]
        )
        if vectors:
            for i, row in enumerate(rows):
                row["vector"], row["entity_vector"] = vectors[i], vectors[len(rows) + i]
        params: dict[str, Any] = {
            **decay.cypher_params(),
            "rows": rows,
            "existing": existing,
            "similar_k": SIMILAR_K,
            "similar_scan": SIMILAR_SCAN,
            "similar_text_k": SIMILAR_TEXT_K,
            "similar_min_score": SIMILAR_MIN_SCORE,
            "similar_limit": SIMILAR_LIMIT,
        }

        async def work(tx: neo4j.AsyncManagedTransaction) -> list[neo4j.Record]:
            records = await self.x.bound(tx).write("knowledge_store", **params)
            taken = list(records[0]["taken"])
            if existing == "error":
                # a name taken between the check and the lock is taken too: the transaction rolls back
                made = {c["name"] for c in records[0]["created"]}
                taken += [r["name"] for r in rows if r["name"] not in made and r["name"] not in taken]
                if taken:
                    raise ValidationError(
                        f"an entity named {taken[0]!r} already exists; change it with update_knowledge (if it is "
                        "knowledge) or store under another name; nothing was written",
                        field="name",
                    )
            return records

        records = await self.x.transaction(work)
        created = {c["name"]: c["similar"] for c in records[0]["created"]}
        return [
            StoredKnowledge(
                name=r["name"],
                type=r["type"],
                trust=r["trust"],
                category=r["category"],
                stability=r["stability"],
                memoryLevel=r["memory_level"],
                similar=[
                    SimilarKnowledge(name=s["name"], score=round(float(s["score"]), 6))
                    for s in created[r["name"]]
                ],
            )
            for r in rows
            if r["name"] in created
        ]

    # -- edges -----------------------------------------------------------------------------
    async def connect(self, edges: Sequence[ConnectIn]) -> list[RelationFull]:
        """Create semantic edges, all or nothing.  The source must be knowledge (its trust is
        what the anti-fabrication rule checks); the target may be any entity.  An edge whose
        open copy exists is left as it is (and not returned)."""
        rows: dict[tuple[str, str, str], dict[str, Any]] = {}
        for e in edges:
            rows.setdefault(
                (e.from_, e.to, e.relationType.value),
                {
                    "from": e.from_,
                    "to": e.to,
                    "relationType": e.relationType.value,
                    "weight": float(e.weight),
                    "reasoning": e.reasoning,
                    "source": e.source,
                },
            )
        if not rows:
            return []
        records = await self.x.write(
            "knowledge_connect",
            rows=[rows[key] for key in sorted(rows)],
            causal=sorted(t.value for t in trust.CAUSAL_EDGE_TYPES),
        )
        rec = records[0]
        if rec["missing_from"]:
            raise NotFoundError(
                "knowledge",
                rec["missing_from"][0],
                f"Knowledge with name {rec['missing_from'][0]} not found (an edge starts at "
                "knowledge stored with store_knowledge); nothing was written",
            )
        if rec["missing_to"]:
            raise NotFoundError("entity", rec["missing_to"][0])
        for b in rec["blocked"]:  # the rule's own message says what to do instead
            trust.check_edge_source(b["relationType"], b["trust"])
        return [relation(r) for r in rec["created"]]

    # -- update ----------------------------------------------------------------------------
    async def update(self, change: KnowledgeUpdate, *, session: str | None = None) -> KnowledgeItem:
        """Change one knowledge node in place, in one transaction: identity, edges and access
        history stay.

        The node is locked before its state is read, so concurrent accesses are not lost.
        Trust only goes up with ``expertConfirmed``, and to principle only with the expert's
        quote given in the same call.  A change of category resets stability to the table's
        value for the new category and restarts the decay clock; a change of level caused by
        it may not come with a change of trust.  New content replaces the content observation
        (re-embedded, re-indexed).  ``feedback`` records an access of grade 4 (applied) or 1
        (corrected) in the same transaction; it cannot come with a change of trust.
        """
        if change.feedback is not None and change.trust is not None:
            raise ValidationError(
                "send feedback and a change of trust in separate updates: an access may raise "
                "the memory level, and level and trust change independently",
                field="feedback",
            )
        vectors = None
        texts = [change.content] if change.content is not None else []
        if change.type is not None:
            texts.append(entity_text(change.name, change.type.value))
        if texts:
            vectors = await self.graph.embed(texts)

        async def work(tx: neo4j.AsyncManagedTransaction) -> KnowledgeItem:
            view = self.x.bound(tx)
            found = await view.write("knowledge_lock", knowledge=change.name)
            if not found:
                raise NotFoundError("knowledge", change.name)
            cur = found[0]
            now = self.now
            quote = change.quote if change.quote is not None else cur["quote"]
            new_trust = parse(Trust, cur["trust"], field="trust")
            if change.trust is not None:
                new_trust = trust.check_trust_change(
                    cur["trust"], change.trust, expert_confirmed=change.expertConfirmed, quote=change.quote
                )
            trust.require_quote(new_trust, quote)
            old_category = parse(Category, cur["category"], field="category")
            category = change.category or old_category
            recategorised = category is not old_category
            stability = (
                decay.initial_stability(new_trust, category) if recategorised else float(cur["stability"])
            )
            created = cur["created_at"].to_native()

            def earned(cat: Category) -> int:
                return int(
                    decay.memory_level(
                        category=cat,
                        access_count=int(cur["access_count"]),
                        session_count=len(cur["sessions"] or []),
                        age_days=decay.elapsed_days(created, now),
                    )
                )

            level = earned(category)
            trust.check_level_keeps_trust(
                trust_before=cur["trust"],
                trust_after=new_trust,
                level_before=earned(old_category),
                level_after=level,
            )
            content = change.content if change.content is not None else cur["content"]
            ktype = change.type.value if change.type is not None else cur["type"]
            vector = entity_vector = None
            if vectors:
                if change.content is not None:
                    vector = vectors[0]
                if change.type is not None:
                    entity_vector = vectors[-1]
            await view.write(
                "knowledge_update",
                knowledge=change.name,
                type=ktype,
                trust=new_trust.value,
                category=category.value,
                quote=quote,
                source=change.source if change.source is not None else cur["source"],
                stability=stability,
                memory_level=level,
                content=content,
                content_lower=content.lower(),
                content_changed=content != cur["content"],
                vector=vector,
                entity_vector=entity_vector,
                restart_decay=recategorised,
                type_labels=knowledge_labels(ktype, new_trust.value),
            )
            if change.feedback is not None:
                grade = AccessGrade.APPLIED if change.feedback == "applied" else AccessGrade.CORRECTED
                params: dict[str, Any] = {
                    **decay.cypher_params(),
                    "names": [change.name],
                    "session": change.sessionId or session,
                    "grade_multiplier": decay.GRADE_MULTIPLIER[grade],
                    "max_sessions": MAX_SESSIONS,
                }
                await view.write("knowledge_record_access", **params)
            return (await self._items(await view.write("knowledge_get", names=[change.name])))[0]

        return await self.x.transaction(work)

    async def _items(self, records: Sequence[neo4j.Record]) -> builtins.list[KnowledgeItem]:
        now = self.now
        out = []
        for r in records:
            since = (r["last_access"] or r["created_at"]).to_native()
            out.append(
                knowledge_item(
                    {
                        **dict(r),
                        "sessions": len(r["sessions"] or []),
                        "expired": False,
                        "retention": decay.retention(
                            decay.elapsed_days(since, now), float(r["stability"]), category=r["category"]
                        ),
                    }
                )
            )
        return out

    async def get(self, names: Sequence[str]) -> list[KnowledgeItem]:
        """Current knowledge by name (in the order found; unknown names are absent)."""
        return await self._items(await self.x.read("knowledge_get", names=list(names)))

    # -- forget ----------------------------------------------------------------------------
    async def forget(self, names: Sequence[str], *, reason: str | None = None) -> list[dict[str, Any]]:
        """Expire knowledge (all or nothing): it leaves every read of the current graph, its
        open edges are closed at now, its vectors are dropped; node, content and edges stay
        as history (``list_knowledge`` with ``includeExpired``)."""
        names = sorted(set(names))  # sorted: locks in one order, no deadlock between calls
        if not names:
            return []
        records = await self.x.write("knowledge_forget", names=names, note=reason)
        if records[0]["missing"]:
            raise NotFoundError(
                "knowledge",
                records[0]["missing"][0],
                f"Knowledge with name {records[0]['missing'][0]} not found; nothing was forgotten",
            )
        return [dict(f) for f in records[0]["forgotten"]]

    # -- access ----------------------------------------------------------------------------
    async def record_access(
        self,
        names: Sequence[str],
        *,
        grade: AccessGrade | int = AccessGrade.ACCESSED,
        session: str | None = None,
    ) -> list[dict[str, Any]]:
        """One access of each named knowledge node (other names are ignored): stability
        grows by e^(1-R) x m(grade), count and sessions grow, the level is recomputed.
        A separate write, made after the read that found the knowledge has answered."""
        names = sorted(set(names))  # sorted: locks in one order, no deadlock between calls
        if not names:
            return []
        g = parse(AccessGrade, grade, field="grade")
        records = await self.x.write(
            "knowledge_record_access",
            names=names,
            session=session,
            grade_multiplier=decay.GRADE_MULTIPLIER[g],
            max_sessions=MAX_SESSIONS,
        )
        return [dict(r) for r in records]

    # -- list and stats ----------------------------------------------------------------------
    async def list(
        self,
        *,
        trust: Trust | str | None = None,
        type: KnowledgeType | str | None = None,
        category: Category | str | None = None,
        source: str | None = None,
        names: list[str] | None = None,
        element: str | None = None,
        include_expired: bool = False,
        sort: Sort = "time",
        limit: int = 50,
    ) -> list[KnowledgeItem]:
        """``element``: a skill element, i.e. knowledge imported from ``.../elements/<element>/`` of a
        skills directory (docs/knowledge.md#skill-files-import-skills-and-crystallize_skill)."""
        if sort not in ("time", "access", "strength"):
            raise ValidationError("sortBy must be one of time, access, strength", field="sortBy")

        params: dict[str, Any] = dict(
            include_expired=include_expired,
            sort=sort,
            limit=limit,
            trust=parse(Trust, trust, field="trust").value if trust is not None else None,
            type=parse(KnowledgeType, type, field="type").value if type is not None else None,
            category=parse(Category, category, field="category").value if category is not None else None,
            source=source,
            element=f"/elements/{element}/" if element is not None else None,
        )

        async def work(tx: neo4j.AsyncManagedTransaction) -> Records:
            x = self.x.bound(tx)
            # a name merged into other knowledge also lists the knowledge it names now (store/aliases.py);
            # the merged node itself stays listed with includeExpired
            wanted = None if names is None else list(dict.fromkeys([*names, *await resolve_names(x, names)]))
            return await x.read("knowledge_list", names=wanted, **params)

        records = await self.x.transaction(work, read=True)
        return [knowledge_item(dict(r)) for r in records]

    async def stats(self) -> dict[str, Any]:
        """Counts of the namespace's knowledge (memory_stats)."""
        rec = (await self.x.read("knowledge_stats", edge_types=[t.value for t in EdgeType]))[0]
        by: dict[str, Counter[Any]] = {k: Counter() for k in ("trust", "type", "category", "level")}
        total = fading = accesses = 0
        stability = 0.0
        for g in rec["groups"]:
            n = int(g["n"])
            total += n
            fading += int(g["fading"])
            accesses += int(g["accesses"] or 0)
            stability += float(g["stability"] or 0.0)
            for key in by:
                by[key][str(g[key])] += n
        expired = {str(e["reason"]): int(e["n"]) for e in rec["expired"]}
        return {
            "knowledge": total,
            "byTrust": dict(sorted(by["trust"].items())),
            "byType": dict(sorted(by["type"].items())),
            "byCategory": dict(sorted(by["category"].items())),
            "byLevel": dict(sorted(by["level"].items())),
            "fading": fading,
            "averageStabilityDays": round(stability / total, 3) if total else None,
            "accesses": accesses,
            "expired": sum(expired.values()),
            "expiredByReason": dict(sorted(expired.items())),
            "edges": sum(int(e["n"]) for e in rec["edges"]),
            "edgesByType": {e["type"]: int(e["n"]) for e in sorted(rec["edges"], key=lambda e: e["type"])},
            "experiences": int(rec["experiences"]),
        }
