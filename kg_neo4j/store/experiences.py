"""Experiences (docs/knowledge.md): workflow traces stored as ``:Experience`` entities whose observations
are embedded, found again by a similar context.  A part of :class:`kg_neo4j.store.knowledge.KnowledgeStore`
(the statements are in ``cypher/knowledge.cypher``)."""

from __future__ import annotations

import builtins
import uuid
from datetime import datetime
from typing import Any

from kg_neo4j.errors import ValidationError
from kg_neo4j.models import Experience, ExperienceIn
from kg_neo4j.store.executor import Executor
from kg_neo4j.store.graph import GraphStore
from kg_neo4j.store.records import entity_text, iso
from kg_neo4j.store.type_labels import type_labels

#: the entityType of recorded experiences
EXPERIENCE_TYPE = "experience"


class Experiences:
    """record_experience and recall_experience over the knowledge store's graph and executor."""

    graph: GraphStore
    x: Executor

    async def record_experience(self, exp: ExperienceIn, *, session: str | None = None) -> Experience:
        """Store one workflow trace as an :Experience entity (one transaction); its
        observations are embedded, so ``recall_experience`` finds it by a similar context."""
        now = self.graph.clock.now()
        name = exp.name or _experience_name(now)
        observations = [f"Context: {exp.context}"]
        observations += [f"Step {i}: {s}" for i, s in enumerate(exp.steps, 1)]
        observations += [f"Decision: {d}" for d in exp.decisions]
        observations.append(f"Outcome: {exp.outcome}")
        observations = list(dict.fromkeys(observations))
        sess = exp.sessionId or session
        row: dict[str, Any] = {
            "name": name,
            "entityType": EXPERIENCE_TYPE,
            "name_lower": name.lower(),
            "type_lower": EXPERIENCE_TYPE,
            "observations": observations,
            "observations_lower": [o.lower() for o in observations],
            "context": exp.context,
            "steps": list(exp.steps),
            "decisions": list(exp.decisions),
            "outcome": exp.outcome,
            "success": exp.success,
            "session": sess,
            "vectors": None,
            "entity_vector": None,
            "type_labels": type_labels(EXPERIENCE_TYPE),
        }
        vectors = await self.graph.embed(observations + [entity_text(name, EXPERIENCE_TYPE)])
        if vectors:
            row["vectors"], row["entity_vector"] = vectors[:-1], vectors[-1]
        records = await self.x.write("experience_record", rows=[row])
        if records[0]["taken"]:
            raise ValidationError(
                f"an entity named {name!r} already exists; choose another name; nothing was written",
                field="name",
            )
        return Experience(
            name=name,
            context=exp.context,
            steps=list(exp.steps),
            decisions=list(exp.decisions),
            outcome=exp.outcome,
            success=exp.success,
            session=sess,
            createdAt=now.isoformat(),
        )

    async def recall_experience(self, context: str, *, limit: int = 5) -> builtins.list[Experience]:
        """Past experiences whose trace is most like ``context``: search_memory restricted to
        experiences (vector + fulltext + graph), best first, each with its best hit's score."""
        result = await self.graph.search_memory(
            context, limit=min(100, limit * 5), entity_types=[EXPERIENCE_TYPE]
        )
        scores: dict[str, float] = {}
        for hit in result.hits:
            scores.setdefault(hit.name, hit.score)
        names = list(scores)
        if not names:
            return []
        records = await self.x.read("experience_get", names=names)
        out = [
            Experience(
                name=r["name"],
                context=r["context"],
                steps=list(r["steps"] or []),
                decisions=list(r["decisions"] or []),
                outcome=r["outcome"],
                success=r["success"],
                session=r["session"],
                createdAt=iso(r["created_at"]),
                score=scores[r["name"]],
            )
            for r in records
        ]
        return out[:limit]


def _experience_name(now: datetime) -> str:
    return f"experience {now.strftime('%Y-%m-%dT%H:%M:%S')} {uuid.uuid4().hex[:8]}"
