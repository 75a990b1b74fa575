"""Maintenance of the knowledge layer: the decay sweep and maintain_graph's actions.

These are the only writes that are not one transaction: each runs its statement
(``cypher/maintenance.cypher``) in an auto-commit session, where ``CALL { ... } IN
TRANSACTIONS OF $batch ROWS`` commits every batch on its own.  Every statement writes a
node or relationship only when its state changes, so a second run writes nothing and an
interrupted run leaves its committed batches for the next run to build on (idempotent,
resumable).  With ``apply=False`` the same statements run as a dry run: they count and
name exactly the rows they would write, and nothing enters their writing subqueries.

The decay sweep walks the namespace's entities in name order, one chunk of
``chunk_size`` names per statement (the cursor is the last name of the chunk), so a
progress bar can follow it and a time budget can stop it between chunks; with
``resume=True`` it starts where the last budgeted run stopped (the cursor is kept on a
``:KgMeta`` node, with the figures of the last run).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from kg_neo4j.store.decay_sweep import DecaySweep
from kg_neo4j.store.maintenance_base import (
    ACTIONS,
    CAUSAL_TYPES,
    CHUNK_BATCHES,
    DEFAULT_BATCH_SIZE,
    DUPLICATE_REPORT_COSINE,
    MERGE_COSINE,
    SAMPLE,
    SEMANTIC_TYPES,
    WEAK_EDGE_WEIGHT,
)
from kg_neo4j.store.merging import Merging
from kg_neo4j.store.progress import Count, Progress

__all__ = [
    "ACTIONS",
    "DEFAULT_BATCH_SIZE",
    "DUPLICATE_REPORT_COSINE",
    "MERGE_COSINE",
    "SAMPLE",
    "SEMANTIC_TYPES",
    "WEAK_EDGE_WEIGHT",
    "MaintenanceStore",
    "summarize",
]

#: The statement that finds each kind of edge close_edges closes (cypher/maintenance.cypher).
_EDGES_FIND_STATEMENTS = {
    "weak": "weak_edges_find",
    "causal": "causal_edges_find",
    "dangling": "dangling_edges_find",
}


class MaintenanceStore(DecaySweep, Merging):
    """Maintenance of one namespace's knowledge (on ``graph``, a StoreCore): the decay sweep, merge,
    and maintain_graph's edge closing."""

    # -- maintain_graph ---------------------------------------------------------------------------
    async def close_edges(
        self,
        kind: str,
        *,
        apply: bool,
        batch_size: int = DEFAULT_BATCH_SIZE,
        sample: int = SAMPLE,
        on_total: Count | None = None,
        on_progress: Count | None = None,
    ) -> dict[str, Any]:
        """Close open relationships of one ``kind``: ``weak`` (semantic edges between knowledge
        nodes with weight < 0.3), ``causal`` (must_precede / reason_for from an inference),
        ``dangling`` (edges still open on expired knowledge).  A dry run counts and names them."""
        if kind not in _EDGES_FIND_STATEMENTS:
            raise ValueError(f"unknown edge kind {kind!r}")
        params = {
            "types": SEMANTIC_TYPES,
            "causal": CAUSAL_TYPES,
            "min_weight": WEAK_EDGE_WEIGHT,
            "sample": sample,
        }
        find = _EDGES_FIND_STATEMENTS[kind]
        first_page = (await self.x.read(find, page=batch_size * CHUNK_BATCHES, **params))[0]
        total = int(first_page["total"])
        found: dict[str, Any] = {"count": total, "edges": [dict(e) for e in first_page["sample"]]}
        if on_total:
            on_total(total)
        if not apply:
            return found
        closed = 0
        page = first_page
        while page["ids"]:
            now = self.graph.clock.now()
            done = int(
                (await self.x.auto("expire_edges_apply", ids=list(page["ids"]), batch=batch_size, now=now))[
                    0
                ]["closed"]
                or 0
            )
            closed += done
            if on_progress:
                on_progress(done)
            if done == 0:  # nothing left that this run can change (a concurrent writer got there first)
                break
            page = (await self.x.read(find, page=batch_size * CHUNK_BATCHES, **params))[0]
        found["closed"] = closed
        return found

    async def findings(self, *, orphans: bool, sample: int = SAMPLE) -> dict[str, Any]:
        """Report-only findings: principles without a quote, and (with ``orphans``) knowledge
        with no open relationship."""
        rec = (await self.x.read("knowledge_findings", orphans=orphans, sample=sample))[0]
        out = {"unquotedPrinciples": {"count": int(rec["unquoted"]), "names": list(rec["unquoted_names"])}}
        if orphans:
            out["orphans"] = {"count": int(rec["orphans"]), "names": list(rec["orphan_names"])}
        return out

    async def maintain(
        self,
        actions: Sequence[str] = ACTIONS,
        *,
        apply: bool = False,
        batch_size: int = DEFAULT_BATCH_SIZE,
        sample: int = SAMPLE,
        min_similarity: float = MERGE_COSINE,
        progress: Progress | None = None,
    ) -> dict[str, Any]:
        """maintain_graph: run ``actions`` (prune, merge, validate, orphans) and say what each
        changed, or with ``apply=False`` (the default) what it would change: counts and the
        first ``sample`` names.  Applying commits per batch; every action is idempotent."""
        unknown = [a for a in actions if a not in ACTIONS]
        if unknown:
            raise ValueError(f"unknown action {unknown[0]!r}; choose from {', '.join(ACTIONS)}")
        started = time.monotonic()

        def bar(desc: str) -> tuple[Count | None, Count | None]:
            return progress(desc) if progress else (None, None)

        out: dict[str, Any] = {
            "dryRun": not apply,
            "namespace": self.graph.namespace,
            "now": self.graph.clock.now().isoformat(),
            "actions": {},
        }
        for action in [a for a in ACTIONS if a in actions]:
            if action == "prune":
                on_total, on_progress = bar("prune: decay")
                sweep = await self.decay_sweep(
                    apply=apply,
                    batch_size=batch_size,
                    sample=sample,
                    on_total=on_total,
                    on_progress=on_progress,
                )
                on_total, on_progress = bar("prune: weak edges")
                weak = await self.close_edges(
                    "weak",
                    apply=apply,
                    batch_size=batch_size,
                    sample=sample,
                    on_total=on_total,
                    on_progress=on_progress,
                )
                out["actions"]["prune"] = {
                    "expire": {"count": sweep.expired, "names": sweep.expire_names},
                    "levels": {
                        "count": sweep.promoted + sweep.demoted,
                        "promoted": sweep.promoted,
                        "demoted": sweep.demoted,
                        "changes": sweep.level_changes,
                    },
                    "fading": {"count": sweep.fading, "nodes": sweep.fading_names},
                    "weakEdges": weak,
                    "scanned": sweep.scanned,
                }
            elif action == "merge":
                on_total, on_progress = bar("merge: candidates")
                if not await self.has_vector_index():
                    out["actions"]["merge"] = {
                        "count": 0,
                        "pairs": [],
                        "minSimilarity": min_similarity,
                        "note": "no vector index: merge compares stored content "
                        "embeddings, so it needs an embedding model",
                    }
                    continue
                if on_total:
                    on_total(await self.count_knowledge())
                pairs = await self.duplicate_pairs(min_cosine=min_similarity, on_progress=on_progress)
                entry: dict[str, Any] = {
                    "count": len(pairs),
                    "pairs": pairs[:sample],
                    "minSimilarity": min_similarity,
                }
                if apply:
                    on_total, on_progress = bar("merge: apply")
                    entry["merged"] = await self.merge(pairs, on_progress=on_progress)
                out["actions"]["merge"] = entry
            elif action == "validate":
                found = await self.findings(orphans=False, sample=sample)
                entry = {"unquotedPrinciples": found["unquotedPrinciples"]}
                for kind, key in (("causal", "inferenceCausalEdges"), ("dangling", "danglingEdges")):
                    on_total, on_progress = bar(f"validate: {key}")
                    entry[key] = await self.close_edges(
                        kind,
                        apply=apply,
                        batch_size=batch_size,
                        sample=sample,
                        on_total=on_total,
                        on_progress=on_progress,
                    )
                out["actions"]["validate"] = entry
            else:
                out["actions"]["orphans"] = (await self.findings(orphans=True, sample=sample))["orphans"]
        out["seconds"] = round(time.monotonic() - started, 3)
        out["summary"] = summarize(out)
        return out


def summarize(report: dict[str, Any]) -> str:
    """One line per action: what was (or, in a dry run, would be) changed, with the first names."""
    dry = report["dryRun"]
    lines = []

    def names(items: Sequence[Any]) -> str:
        shown = [
            i if isinstance(i, str) else i.get("name") or f"{i['from']} -[{i['relationType']}]-> {i['to']}"
            for i in items
        ]
        return f" ({', '.join(shown)})" if shown else ""

    def verb(would: str, did: str) -> str:
        return would if dry else did

    acts = report["actions"]
    if "prune" in acts:
        p = acts["prune"]
        lines.append(
            f"prune: {verb('would expire', 'expired')} {p['expire']['count']} decayed knowledge nodes"
            f"{names(p['expire']['names'])}; {verb('would re-level', 're-levelled')} {p['levels']['count']}"
            f"{names(p['levels']['changes'])}; {verb('would close', 'closed')} {p['weakEdges']['count'] if dry else p['weakEdges'].get('closed', 0)}"
            f" weak edges (weight < {WEAK_EDGE_WEIGHT}){names(p['weakEdges']['edges'])}"
        )
    if "merge" in acts:
        m = acts["merge"]
        pairs = ", ".join(f"{x['duplicate']} -> {x['keep']} ({x['similarity']:.3f})" for x in m["pairs"])
        lines.append(
            f"merge: {verb('would merge', 'merged')} {m['count'] if dry else m.get('merged', 0)} near-duplicate "
            f"pairs (cosine >= {m['minSimilarity']})"
            + (f" ({pairs})" if pairs else "")
            + (f"; {m['note']}" if m.get("note") else "")
        )
    if "validate" in acts:
        v = acts["validate"]
        c, d, u = v["inferenceCausalEdges"], v["danglingEdges"], v["unquotedPrinciples"]
        lines.append(
            f"validate: {verb('would close', 'closed')} {c['count'] if dry else c.get('closed', 0)} must_precede/reason_for "
            f"edges from inferences{names(c['edges'])} and {d['count'] if dry else d.get('closed', 0)} open edges of "
            f"expired knowledge{names(d['edges'])}; {u['count']} principles without the expert's quote"
            f"{names(u['names'])} (report only: add the quote with update_knowledge, or lower trust to pattern)"
        )
    if "orphans" in acts:
        o = acts["orphans"]
        lines.append(
            f"orphans: {o['count']} knowledge nodes without an open relationship{names(o['names'])} "
            "(report only: connect them with connect_knowledge, or forget them)"
        )
    lines.append(
        "Dry run: nothing was changed; apply with dryRun false (kg-neo4j maintain --apply)."
        if dry
        else "Applied (committed per batch)."
    )
    return "\n".join(lines)
