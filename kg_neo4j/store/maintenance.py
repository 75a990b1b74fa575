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

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

import neo4j
from neo4j import AsyncDriver

from kg_neo4j.clock import Clock, SystemClock
from kg_neo4j.knowledge import decay
from kg_neo4j.knowledge.trust import CAUSAL_EDGE_TYPES
from kg_neo4j.knowledge.vocabulary import EdgeType
from kg_neo4j.store.executor import Executor, Shared

#: Rows per committed transaction, and the sweep's chunk (names per statement) per batch.
DEFAULT_BATCH_SIZE = 2000
CHUNK_BATCHES = 10
#: How many names a report lists per finding.
SAMPLE = 10
#: prune: semantic edges between knowledge nodes weaker than this are closed
#: (spec 004, "Weak edge cleanup — weight < 0.3 → expire").
WEAK_EDGE_WEIGHT = 0.3
#: Session-start's duplicate report: spec 004's "Consolidation detection — vector similarity
#: < 0.25 node pairs" is a cosine *distance* below 0.25, i.e. cosine above 0.75.
DUPLICATE_REPORT_COSINE = 0.75
#: merge: only pairs at least this close are merged (choice: a near-duplicate, not merely a
#: related idea; the dry run lists the pairs so the threshold can be lowered knowingly).
MERGE_COSINE = 0.9
#: merge: neighbours asked of the vector index per node (the index is database-wide, so it
#: over-fetches and the statement keeps the namespace's own).
MERGE_NEIGHBOURS = 20
#: Spec 004's semantic edge types (the only relationships prune and validate look at).
SEMANTIC_TYPES = sorted(t.value for t in EdgeType)
CAUSAL_TYPES = sorted(t.value for t in CAUSAL_EDGE_TYPES)

Progress = Callable[[int], None]
#: A progress factory: ``factory(description) -> (on_total, on_progress)``.
ProgressFactory = Callable[[str], tuple[Callable[[int], None], Progress]]

#: maintain_graph's actions, in the order they run.
ACTIONS = ("prune", "merge", "validate", "orphans")


def cosine_to_score(cosine: float) -> float:
    """Neo4j's cosine score for a cosine similarity: ``(1 + cos) / 2``."""
    return (1.0 + cosine) / 2.0


@dataclass
class SweepReport:
    """What one decay sweep did (``apply=True``) or would do (dry run)."""

    applied: bool
    now: str
    scanned: int = 0
    #: nodes expired (R < 0.02 below level 3), or that a dry run would expire
    expired: int = 0
    #: nodes whose level went up (age-based promotion to 3, ...), or would
    promoted: int = 0
    #: nodes whose stored level was above what they have earned (e.g. category changed), re-levelled down
    demoted: int = 0
    #: nodes fading (R < 0.3) but not expiring
    fading: int = 0
    #: nodes written (0 in a dry run)
    written: int = 0
    #: False when a time budget stopped the sweep before the last chunk (``cursor`` says where)
    complete: bool = True
    cursor: str | None = None
    seconds: float = 0.0
    expire_names: list[str] = field(default_factory=list)
    level_changes: list[dict[str, Any]] = field(default_factory=list)
    #: the most faded of the fading nodes (name, retention), lowest R first
    fading_names: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _iso(value: Any) -> Any:
    if hasattr(value, "to_native"):
        value = value.to_native()
    if isinstance(value, datetime):
        return value.isoformat()
    return value


#: The statement that finds each kind of edge close_edges closes (cypher/maintenance.cypher).
_EDGES_FIND_STATEMENTS = {"weak": "weak_edges_find", "causal": "causal_edges_find", "dangling": "dangling_edges_find"}


class MaintenanceStore:
    """Maintenance of one namespace's knowledge (the driver, database, namespace and clock of a
    GraphStore, or given directly)."""

    def __init__(self, driver: AsyncDriver, *, database: str = "neo4j", namespace: str = "default",
                 clock: Clock | None = None) -> None:
        self.driver = driver
        self.database = database
        self.namespace = namespace
        self.clock = clock or SystemClock()
        # statements in auto-commit sessions (x.auto) are the only place CALL IN TRANSACTIONS may run
        self.x = Executor(driver, database, Shared(namespace=namespace, clock=self.clock,
                                                   constants=decay.cypher_params()))

    @classmethod
    def of(cls, graph: Any) -> MaintenanceStore:
        """The maintenance of a ``GraphStore``'s namespace."""
        return cls(graph.driver, database=graph.database, namespace=graph.namespace, clock=graph.clock)

    # -- plumbing ---------------------------------------------------------------------------
    async def read(self, name: str, **params: Any) -> list[neo4j.Record]:
        """Run a named read statement with this namespace's shared parameters (also used by the hooks)."""
        return await self.x.read(name, **params)

    async def write(self, name: str, **params: Any) -> list[neo4j.Record]:
        """Run a named write statement, one transaction, with this namespace's shared parameters."""
        return await self.x.write(name, **params)

    @property
    def _meta_key(self) -> str:
        return f"decay_sweep:{self.namespace}"

    # -- the decay sweep ----------------------------------------------------------------------
    async def count_knowledge(self) -> int:
        return int((await self.x.read("decay_count"))[0]["knowledge"])

    async def decay_sweep(
        self,
        *,
        apply: bool = True,
        batch_size: int = DEFAULT_BATCH_SIZE,
        chunk_size: int | None = None,
        resume: bool = False,
        deadline: float | None = None,
        max_chunks: int | None = None,
        on_total: Callable[[int], None] | None = None,
        on_progress: Progress | None = None,
        sample: int = SAMPLE,
    ) -> SweepReport:
        """Re-level every knowledge node to the level it has earned by now and expire those with
        R < 0.02 below level 3 (``decay.expiry_due``), one chunk of names at a time.

        ``deadline`` (a ``time.monotonic()`` value) or ``max_chunks`` stops the sweep between chunks; with
        ``resume`` it starts after the name where the last stopped sweep ended.  ``now`` is
        read from the clock once, so every chunk decides at the same moment.
        """
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        chunk = chunk_size or batch_size * CHUNK_BATCHES
        started = time.monotonic()
        now = self.clock.now()
        report = SweepReport(applied=apply, now=now.isoformat())
        after = ""
        if resume:
            meta = await self.x.read("decay_progress_read", key=self._meta_key)
            if meta and meta[0]["cursor"]:
                after = str(meta[0]["cursor"])
        if on_total:
            on_total(await self.count_knowledge())
        async def scan(after: str) -> tuple[int, str, neo4j.Record | None]:
            """The chunk after ``after``: its size in entities, its last name, what the scan found."""
            bounds = (await self.x.read("decay_chunk_bounds", after=after, chunk=chunk))[0]
            if int(bounds["entities"]) == 0:
                return 0, after, None
            upto = str(bounds["upto"])
            rec = (await self.x.read("decay_scan_chunk", after=after, upto=upto, now=now, sample=sample))[0]
            return int(bounds["entities"]), upto, rec

        # The next chunk is read while this one is written (the scan is read-only and covers other
        # names, and every write re-checks the node it writes): two server threads, not one.
        chunks = 0
        ahead: asyncio.Task[tuple[int, str, neo4j.Record | None]] | None = None
        try:
            while True:
                if (deadline is not None and time.monotonic() >= deadline) or (
                        max_chunks is not None and chunks >= max_chunks):
                    report.complete = False
                    break
                chunks += 1
                entities, upto, rec = await (ahead if ahead is not None else scan(after))
                ahead = None
                if rec is None:
                    break
                last = entities < chunk
                if not last:
                    ahead = asyncio.ensure_future(scan(upto))
                written = None
                ids = list(rec["ids"])
                if apply and ids:
                    written = (await self.x.auto("decay_apply", ids=ids, now=now, batch=batch_size))[0]
                self._add_chunk(report, rec, written, sample)
                after = upto
                if apply:  # where a stopped sweep resumes
                    await self.x.write("decay_progress_write", key=self._meta_key, cursor=after, report=None, now=now)
                if on_progress:
                    on_progress(int(rec["scanned"]))
                if last:
                    break
        finally:
            if ahead is not None:  # read ahead, not needed (stopped): drop it
                ahead.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await ahead
        report.cursor = None if report.complete else after
        report.seconds = round(time.monotonic() - started, 3)
        if apply:
            await self.x.write("decay_progress_write", key=self._meta_key, cursor=report.cursor,
                              report=_meta_report(report), now=now)
        return report

    async def progress(self) -> dict[str, Any]:
        """The sweep's record for this namespace: cursor (None when the last run completed) and the
        figures of the last run."""
        rec = (await self.x.read("decay_progress_read", key=self._meta_key))[0]
        return {k: _iso(v) for k, v in dict(rec).items()}

    @staticmethod
    def _add_chunk(report: SweepReport, rec: neo4j.Record, written: neo4j.Record | None, sample: int) -> None:
        report.scanned += int(rec["scanned"])
        report.fading += int(rec["fading"])
        if report.applied:
            if written is not None:
                report.expired += int(written["expired"] or 0)
                report.promoted += int(written["promoted"] or 0)
                report.demoted += int(written["demoted"] or 0)
                report.written += int(written["written"] or 0)
        else:
            report.expired += int(rec["expire"])
            report.promoted += int(rec["promote"])
            report.demoted += int(rec["demote"])
        report.expire_names = (report.expire_names + list(rec["expire_names"]))[:sample]
        report.level_changes = (report.level_changes + [dict(x) for x in rec["level_names"]])[:sample]
        fading = report.fading_names + [{"name": x["name"], "retention": float(x["retention"])}
                                        for x in rec["fading_names"]]
        report.fading_names = sorted(fading, key=lambda x: (x["retention"], x["name"]))[:sample]


    # -- maintain_graph ---------------------------------------------------------------------------
    async def close_edges(self, kind: str, *, apply: bool, batch_size: int = DEFAULT_BATCH_SIZE,
                          sample: int = SAMPLE, on_total: Callable[[int], None] | None = None,
                          on_progress: Progress | None = None) -> dict[str, Any]:
        """Close open relationships of one ``kind``: ``weak`` (semantic edges between knowledge
        nodes with weight < 0.3), ``causal`` (must_precede / reason_for from an inference),
        ``dangling`` (edges still open on expired knowledge).  A dry run counts and names them."""
        if kind not in _EDGES_FIND_STATEMENTS:
            raise ValueError(f"unknown edge kind {kind!r}")
        params = {"types": SEMANTIC_TYPES, "causal": CAUSAL_TYPES, "min_weight": WEAK_EDGE_WEIGHT, "sample": sample}
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
            now = self.clock.now()
            done = int((await self.x.auto("expire_edges_apply", ids=list(page["ids"]), batch=batch_size,
                                         now=now))[0]["closed"] or 0)
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

    async def has_vector_index(self) -> bool:
        records = await self.x.read("schema_vector_dimensions")
        return any(r["name"] == "kg_observation_embedding" for r in records)

    async def duplicate_pairs(self, *, min_cosine: float = MERGE_COSINE, page: int = 500,
                              names: Sequence[str] | None = None,
                              on_progress: Progress | None = None) -> list[dict[str, Any]]:
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
                rec = (await self.x.read("merge_candidates", names=ordered[i:i + page], after="", page=page,
                                        neighbours=MERGE_NEIGHBOURS, min_score=score))[0]
                self._collect_pairs(rec, raw, info)
        else:
            while True:
                rec = (await self.x.read("merge_candidates", names=None, after=after, page=page,
                                        neighbours=MERGE_NEIGHBOURS, min_score=score))[0]
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
    def _collect_pairs(rec: neo4j.Record, raw: dict[tuple[str, str], float], info: dict[str, dict[str, Any]]) -> None:
        for n in rec["nodes"]:
            info[n["name"]] = dict(n)
        for p in rec["pairs"]:
            key = (min(p["a"], p["b"]), max(p["a"], p["b"]))
            raw[key] = max(raw.get(key, 0.0), float(p["score"]))

    async def recent_names(self, limit: int) -> list[str]:
        return list((await self.x.read("knowledge_recent", limit=limit))[0]["names"])

    async def merge(self, pairs: Sequence[dict[str, Any]], *, batch_size: int = DEFAULT_BATCH_SIZE,
                    on_progress: Progress | None = None) -> int:
        """Merge each duplicate into its keeper (see ``merge_apply``); a node takes part in one
        merge per call, so chains (a ~ b ~ c) settle over successive runs.  Returns merges made."""
        used: set[str] = set()
        todo = []
        for p in pairs:
            if p["keep"] in used or p["duplicate"] in used:
                continue
            used.update((p["keep"], p["duplicate"]))
            todo.append({"keep": p["keep"], "dup": p["duplicate"]})
        merged = 0
        step = batch_size * CHUNK_BATCHES
        for i in range(0, len(todo), step):
            part = todo[i:i + step]
            done = int((await self.x.auto("merge_apply", pairs=part, batch=batch_size, causal=CAUSAL_TYPES))[0]["merged"]
                       or 0)
            merged += done
            if on_progress:
                on_progress(len(part))
        return merged


    async def maintain(self, actions: Sequence[str] = ACTIONS, *, apply: bool = False,
                       batch_size: int = DEFAULT_BATCH_SIZE, sample: int = SAMPLE,
                       min_similarity: float = MERGE_COSINE,
                       progress: ProgressFactory | None = None) -> dict[str, Any]:
        """maintain_graph: run ``actions`` (prune, merge, validate, orphans) and say what each
        changed, or with ``apply=False`` (the default) what it would change: counts and the
        first ``sample`` names.  Applying commits per batch; every action is idempotent."""
        unknown = [a for a in actions if a not in ACTIONS]
        if unknown:
            raise ValueError(f"unknown action {unknown[0]!r}; choose from {', '.join(ACTIONS)}")
        started = time.monotonic()

        def bar(desc: str) -> tuple[Callable[[int], None] | None, Progress | None]:
            return progress(desc) if progress else (None, None)

        out: dict[str, Any] = {"dryRun": not apply, "namespace": self.namespace,
                               "now": self.clock.now().isoformat(), "actions": {}}
        for action in [a for a in ACTIONS if a in actions]:
            if action == "prune":
                on_total, on_progress = bar("prune: decay")
                sweep = await self.decay_sweep(apply=apply, batch_size=batch_size, sample=sample,
                                               on_total=on_total, on_progress=on_progress)
                on_total, on_progress = bar("prune: weak edges")
                weak = await self.close_edges("weak", apply=apply, batch_size=batch_size, sample=sample,
                                              on_total=on_total, on_progress=on_progress)
                out["actions"]["prune"] = {
                    "expire": {"count": sweep.expired, "names": sweep.expire_names},
                    "levels": {"count": sweep.promoted + sweep.demoted, "promoted": sweep.promoted,
                               "demoted": sweep.demoted, "changes": sweep.level_changes},
                    "fading": {"count": sweep.fading, "nodes": sweep.fading_names},
                    "weakEdges": weak,
                    "scanned": sweep.scanned,
                }
            elif action == "merge":
                on_total, on_progress = bar("merge: candidates")
                if not await self.has_vector_index():
                    out["actions"]["merge"] = {"count": 0, "pairs": [], "minSimilarity": min_similarity,
                                               "note": "no vector index: merge compares stored content "
                                                       "embeddings, so it needs an embedding model"}
                    continue
                if on_total:
                    on_total(await self.count_knowledge())
                pairs = await self.duplicate_pairs(min_cosine=min_similarity, on_progress=on_progress)
                entry: dict[str, Any] = {"count": len(pairs), "pairs": pairs[:sample], "minSimilarity": min_similarity}
                if apply:
                    on_total, on_progress = bar("merge: apply")
                    entry["merged"] = await self.merge(pairs, batch_size=batch_size, on_progress=on_progress)
                out["actions"]["merge"] = entry
            elif action == "validate":
                found = await self.findings(orphans=False, sample=sample)
                entry = {"unquotedPrinciples": found["unquotedPrinciples"]}
                for kind, key in (("causal", "inferenceCausalEdges"), ("dangling", "danglingEdges")):
                    on_total, on_progress = bar(f"validate: {key}")
                    entry[key] = await self.close_edges(kind, apply=apply, batch_size=batch_size, sample=sample,
                                                        on_total=on_total, on_progress=on_progress)
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
        shown = [i if isinstance(i, str) else i.get("name") or f"{i['from']} -[{i['relationType']}]-> {i['to']}"
                 for i in items]
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
            f" weak edges (weight < {WEAK_EDGE_WEIGHT}){names(p['weakEdges']['edges'])}")
    if "merge" in acts:
        m = acts["merge"]
        pairs = ", ".join(f"{x['duplicate']} -> {x['keep']} ({x['similarity']:.3f})" for x in m["pairs"])
        lines.append(f"merge: {verb('would merge', 'merged')} {m['count'] if dry else m.get('merged', 0)} near-duplicate "
                     f"pairs (cosine >= {m['minSimilarity']})" + (f" ({pairs})" if pairs else "")
                     + (f"; {m['note']}" if m.get("note") else ""))
    if "validate" in acts:
        v = acts["validate"]
        c, d, u = v["inferenceCausalEdges"], v["danglingEdges"], v["unquotedPrinciples"]
        lines.append(
            f"validate: {verb('would close', 'closed')} {c['count'] if dry else c.get('closed', 0)} must_precede/reason_for "
            f"edges from inferences{names(c['edges'])} and {d['count'] if dry else d.get('closed', 0)} open edges of "
            f"expired knowledge{names(d['edges'])}; {u['count']} principles without the expert's quote"
            f"{names(u['names'])} (report only: add the quote with update_knowledge, or lower trust to pattern)")
    if "orphans" in acts:
        o = acts["orphans"]
        lines.append(f"orphans: {o['count']} knowledge nodes without an open relationship{names(o['names'])} "
                     "(report only: connect them with connect_knowledge, or forget them)")
    lines.append("Dry run: nothing was changed; apply with dryRun false (kg-neo4j maintain --apply)." if dry
                 else "Applied (committed per batch).")
    return "\n".join(lines)


def _strength(n: dict[str, Any]) -> tuple[Any, ...]:
    """Which of two duplicates is kept: higher trust (principle > pattern > inference), then
    level, accesses, stability, then the older one, then the smaller name."""
    rank = {"principle": 3, "pattern": 2, "inference": 1}.get(str(n.get("trust")), 0)
    created = n.get("created_at")
    created_key = -created.to_native().timestamp() if created is not None else float("-inf")
    return (rank, int(n.get("level") or 0), int(n.get("accesses") or 0), float(n.get("stability") or 0.0),
            created_key, _neg_name(str(n["name"])))


def _neg_name(name: str) -> tuple[int, ...]:
    return tuple(-ord(ch) for ch in name)


def _meta_report(report: SweepReport) -> dict[str, Any]:
    """The figures a sweep records on its :KgMeta node (read back by benchmarks and stats)."""
    return {"scanned": report.scanned, "expired": report.expired, "promoted": report.promoted,
            "demoted": report.demoted, "written": report.written, "complete": report.complete,
            "seconds": report.seconds}
