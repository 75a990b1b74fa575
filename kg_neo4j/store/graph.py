"""GraphStore: the reference memory operations on Neo4j, one namespace, one query per call.

Every method is one Cypher statement (``cypher/*.cypher``, called by name) run in
one managed transaction: a batch lands whole or not at all, and the driver retries
transient failures (deadlocks between concurrent writers) for us.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import copy
import gc
import json
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any, TypeVar

import neo4j
from neo4j import AsyncDriver, AsyncManagedTransaction, RoutingControl

from kg_neo4j.clock import Clock, SystemClock
from kg_neo4j.cypher import queries
from kg_neo4j.embeddings import Embedder
from kg_neo4j.errors import NotFoundError, TooLargeError, ValidationError
from kg_neo4j.fusion import FusionWeights, finish, pool, score_channels
from kg_neo4j.knowledge.decay import MEMORY_SCORE_MAX, elapsed_days, memory_score, retention
from kg_neo4j.knowledge.recall import facts_of
from kg_neo4j.models import (
    MAX_OBSERVATIONS_PER_CALL,
    Entity,
    EntityIn,
    KnowledgeGraph,
    ObservationAdd,
    ObservationDelete,
    ObservationResult,
    Relation,
    RelationFull,
    RelationIn,
    RelationInvalidate,
    RelationUpdate,
    SearchEntity,
    SearchHit,
    SearchResult,
    Traversal,
    TraversalEntity,
    TraversalPath,
    TraverseIn,
    reference_graph_text,
)
from kg_neo4j.store.answer_cache import AnswerCache
from kg_neo4j.store.capabilities import vector_statements
from kg_neo4j.store.history import memory_prior_at
from kg_neo4j.store.type_labels import type_labels
from kg_neo4j.text import fulltext_query, question_grams, strip_mentions

DEFAULT_MAX_ANSWER_BYTES = 8 * 1024 * 1024

#: Neo4j errors that mean "lost a race with a concurrent delete": the statement is retried.
RACE_CODES = frozenset({"Neo.ClientError.Statement.EntityNotFound", "Neo.ClientError.Schema.ConstraintValidationFailed"})
RACE_RETRIES = 3
T = TypeVar("T")

#: search_memory: candidates fetched per channel = OVERFETCH x limit (at least MIN_K; entity vectors:
#: ENTITY_OVERFETCH x limit, at least MIN_K_ENTITIES), grown 4x up to MAX_K while the namespace filter
#: starves a channel.
OVERFETCH = 10
MIN_K = 50
ENTITY_OVERFETCH = 3
MIN_K_ENTITIES = 20
#: A starved vector channel is ranked exactly (cosine over the namespace's own vectors) when the
#: namespace holds at most this many observations (resp. entities); past it, k grows.
EXACT_CAP = 2000
EXACT_RECHECK_S = 300.0
MAX_K = 10_000
NEIGHBOUR_CAP = 20
#: A create_entities batch with at least this many texts to embed (observations plus one per entity)
#: is written in PIPELINE_CHUNKS chunks inside its one transaction, each chunk's statement running
#: while the next chunk is embedded.
PIPELINE_MIN_TEXTS = 256
PIPELINE_CHUNKS = 4
#: The statement of each candidate channel (cypher/search.cypher).
_CHANNEL_STATEMENTS = {"vector": "search_memory_vector", "entity": "search_memory_entities",
                       "fulltext": "search_memory_fulltext"}


def _chunks_by_texts(rows: list[dict[str, Any]], n: int) -> list[list[dict[str, Any]]]:
    """``rows`` in at most ``n`` consecutive chunks of about the same number of texts to embed."""
    total = sum(_texts_to_embed(r) for r in rows)
    chunks: list[list[dict[str, Any]]] = [[]]
    done = 0
    for row in rows:
        # chunk j closes once the texts so far reach j/n of the total
        if chunks[-1] and len(chunks) < n and done >= len(chunks) * total / n:
            chunks.append([])
        chunks[-1].append(row)
        done += _texts_to_embed(row)
    return chunks


def _texts_to_embed(row: dict[str, Any]) -> int:
    """Texts create_entities embeds for one row: its observations and the entity's name/type."""
    return len(row["observations"]) + 1


async def _retrying_races(once: Callable[[], Awaitable[T]]) -> T:
    """Run one whole transaction, again when it lost a race.

    A node found by MERGE/MATCH can be deleted by a concurrent call (e.g. a placeholder dropped with
    its last relation) before the statement locks it.  The transaction then wrote nothing, so running
    it again is safe."""
    for attempt in range(RACE_RETRIES + 1):
        try:
            return await once()
        except neo4j.exceptions.ClientError as exc:
            if exc.code not in RACE_CODES or attempt == RACE_RETRIES:
                raise
    raise AssertionError("unreachable")


async def _concurrently(runs: Sequence[Awaitable[Any]], *, sequential: bool = False) -> list[Any]:
    """Await ``runs`` together (each a separate read); if one fails the others are cancelled.
    ``sequential`` (inside one transaction, which runs one statement at a time) awaits them in order."""
    if sequential:
        out = []
        try:
            for r in runs:
                out.append(await r)
        finally:
            for r in runs[len(out) + 1:]:
                if asyncio.iscoroutine(r):
                    r.close()  # never started: no "was never awaited" warning
        return out
    tasks = [asyncio.ensure_future(r) for r in runs]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)  # let the cancelled reads finish their cleanup
        raise


_gc_pauses = [0, False]  # overlapping pauses, and whether the collector ran before the first one


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a big answer is built.

    A whole-graph answer is tens of thousands of lists and dicts that all stay alive until it is sent:
    each collection pass walks them (and the whole heap) and frees nothing; at 10k entities those passes
    cost about as much as building the answer (benchmarks/README.md, bench_peers).  Reference counting
    still frees everything as usual; the collector resumes when the last overlapping pause ends."""
    if _gc_pauses[0] == 0:
        _gc_pauses[1] = gc.isenabled()
        gc.disable()
    _gc_pauses[0] += 1
    try:
        yield
    finally:
        _gc_pauses[0] -= 1
        if _gc_pauses[0] == 0 and _gc_pauses[1]:
            gc.enable()


def _iso(value: Any) -> str | None:
    if value is None:
        return None
    if hasattr(value, "to_native"):
        value = value.to_native()
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def encode_cursor(after: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"after": after}).encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> str:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        after = data["after"]
        if not isinstance(after, str):
            raise TypeError
        return after
    except (ValueError, KeyError, TypeError, binascii.Error) as exc:
        raise ValidationError("cursor is not one this server returned; omit it to start from the beginning",
                              field="cursor") from exc


class GraphStore:
    """The graph of one namespace in one Neo4j database."""

    def __init__(
        self,
        driver: AsyncDriver,
        *,
        database: str = "neo4j",
        namespace: str = "default",
        clock: Clock | None = None,
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
        embedder: Embedder | None = None,
        fusion: FusionWeights | None = None,
    ) -> None:
        self.driver = driver
        self.database = database
        self.namespace = namespace
        self.clock = clock or SystemClock()
        self.max_answer_bytes = max_answer_bytes
        self.embedder = embedder
        self.fusion = fusion or FusionWeights()
        self.q = queries()
        self._tx: AsyncManagedTransaction | None = None
        self.last_search_rounds = 0
        self.last_search_k = 0
        self.last_search_filtered = False  # whether the last search ran the in-index filtered statements
        self.last_search_starved: list[list[str]] = []  # per extra round: the channels fetched again
        self._exact_big: dict[str, float] = {}  # channel -> when its namespace was found past EXACT_CAP
        self._answers = AnswerCache(driver, database)  # read_graph of now while nothing changed

    def within(self, tx: AsyncManagedTransaction) -> GraphStore:
        """A view of this store whose statements run inside ``tx``: several calls, one transaction
        (used by import, where a batch's entities and relations land together or not at all)."""
        view = copy.copy(self)
        view._tx = tx
        return view

    async def embed(self, texts: Sequence[str]) -> list[list[float]] | None:
        """Vectors for ``texts`` (None when semantic search is off); runs off the event loop."""
        if self.embedder is None or not texts:
            return None
        return await asyncio.to_thread(self.embedder.encode, list(texts))

    # -- plumbing --------------------------------------------------------------
    async def run(self, name: str, *, read: bool = False, **params: Any) -> list[neo4j.Record]:
        """Run one named statement as one managed transaction (reads routed to readers)."""
        params.setdefault("ns", self.namespace)
        params.setdefault("now", self.clock.now())
        params.setdefault("model", self.embedder.name if self.embedder else None)
        if params.get("at") is None:
            params["at"] = params["now"]
        if self._tx is not None:
            result = await self._tx.run(self.q[name], params)
            return [record async for record in result]

        async def once() -> list[neo4j.Record]:
            records, _, _ = await self.driver.execute_query(
                self.q[name],
                parameters_=params,
                database_=self.database,
                routing_=RoutingControl.READ if read else RoutingControl.WRITE,
            )
            return records

        return await _retrying_races(once)

    @property
    def _max_rows(self) -> int:
        # A cheap row guard before the byte check: no answer under the byte cap can hold more.
        return max(1, self.max_answer_bytes // 16)

    # -- writes ----------------------------------------------------------------
    async def create_entities(self, entities: Sequence[EntityIn]) -> list[Entity]:
        _check_observation_total(sum(len(e.observations) for e in entities))
        unique: dict[str, EntityIn] = {}
        for e in entities:
            unique.setdefault(e.name, e)
        rows: list[dict[str, Any]] = []
        for e in unique.values():
            obs = _dedupe(e.observations)
            rows.append({
                "name": e.name,
                "entityType": e.entityType,
                "name_lower": e.name.lower(),
                "type_lower": e.entityType.lower(),
                "type_labels": type_labels(e.entityType),
                "observations": obs,
                "observations_lower": [o.lower() for o in obs],
            })
        if not rows:
            return []
        n_texts = sum(_texts_to_embed(r) for r in rows)
        if self.embedder is None or self._tx is not None or n_texts < PIPELINE_MIN_TEXTS:
            await self._attach_vectors(rows, "observations")
            records = await self.run("create_entities", rows=rows)
            created = set(records[0]["created"]) if records else set()
        else:
            created = await self._create_entities_pipelined(rows)
        return [
            Entity(name=row["name"], entityType=row["entityType"], observations=row["observations"])
            for row in rows
            if row["name"] in created
        ]

    async def _create_entities_pipelined(self, rows: list[dict[str, Any]]) -> set[str]:
        """One transaction, written in chunks: each chunk's statement runs while the next chunk is
        embedded, so Neo4j's share of the write overlaps the encoding (the commit cannot).  All chunks
        share one ``now``; a retried transaction reuses the vectors already made."""
        now = self.clock.now()
        chunks = _chunks_by_texts(rows, PIPELINE_CHUNKS)
        await self._attach_vectors(chunks[0], "observations")  # before the transaction opens: none sits idle

        async def work(tx: AsyncManagedTransaction) -> list[str]:
            view = self.within(tx)
            created: list[str] = []
            pending: asyncio.Future[None] | None = None  # the next chunk's encode
            try:
                for i, chunk in enumerate(chunks):
                    if pending is not None:
                        await pending
                    pending = (asyncio.ensure_future(self._attach_vectors(chunks[i + 1], "observations"))
                               if i + 1 < len(chunks) else None)
                    records = await view.run("create_entities", rows=chunk, now=now)
                    created.extend(records[0]["created"] if records else [])
            finally:
                if pending is not None:
                    await asyncio.gather(pending, return_exceptions=True)  # never leave an encode behind
            return created

        async def once() -> list[str]:
            async with self.driver.session(database=self.database) as session:
                return await session.execute_write(work)

        return set(await _retrying_races(once))

    async def _attach_vectors(self, rows: list[dict[str, Any]], field: str) -> None:
        """Embed every text of the batch in one encode call and hang the vectors on the rows
        (rows that already carry their vectors are left as they are)."""
        if self.embedder is None:
            return
        rows = [row for row in rows if "vectors" not in row]
        if not rows:
            return
        texts: list[str] = []
        for row in rows:
            texts.extend(row[field])
            if "entityType" in row:
                texts.append(entity_text(row["name"], row["entityType"]))
        vectors = await self.embed(texts) or []
        i = 0
        for row in rows:
            n = len(row[field])
            row["vectors"] = vectors[i : i + n]
            i += n
            if "entityType" in row:
                row["entity_vector"] = vectors[i]
                i += 1

    async def create_relations(self, relations: Sequence[RelationIn]) -> list[RelationFull]:
        now = self.clock.now()
        unique: dict[tuple[str, str, str], RelationIn] = {}
        for r in relations:
            if r.validUntil is not None and r.validUntil <= now:
                raise ValidationError(
                    f"relation {r.from_} -[{r.relationType}]-> {r.to}: validUntil {r.validUntil.isoformat()} is not in "
                    "the future; a relation that has already ended cannot be created (history is recorded by "
                    "invalidate_relations); nothing was written", field="validUntil")
            unique.setdefault(r.key, r)
        rows: list[dict[str, Any]] = [
            {
                "from": r.from_,
                "to": r.to,
                "relationType": r.relationType,
                "weight": float(r.weight),
                "valid_from": r.validFrom,
                "valid_until": r.validUntil,
                "reasoning": r.reasoning,
                "source": r.source,
            }
            for r in unique.values()
        ]
        if not rows:
            return []
        records = await self.run("create_relations", rows=rows, now=now)
        created = {tuple(c) for c in records[0]["created"]} if records else set()
        return [
            RelationFull(**{"from": row["from"]}, to=row["to"], relationType=row["relationType"],
                         weight=row["weight"])
            for row in rows
            if (row["from"], row["to"], row["relationType"]) in created
        ]

    async def add_observations(self, additions: Sequence[ObservationAdd]) -> list[ObservationResult]:
        _check_observation_total(sum(len(a.contents) for a in additions))
        # One row per entity (the same entity may appear in several items of one call).
        merged: dict[str, list[str]] = {}
        for a in additions:
            merged.setdefault(a.entityName, []).extend(a.contents)
        rows = []
        for name, contents in merged.items():
            uniq = _dedupe(contents)
            rows.append({"entityName": name, "contents": uniq, "contents_lower": [c.lower() for c in uniq]})
        if not rows:
            return []
        await self._attach_vectors(rows, "contents")
        records = await self.run("add_observations", rows=rows)
        missing = records[0]["missing"]
        if missing:
            raise NotFoundError("entity", missing[0])
        added = {item["entityName"]: list(item["added"]) for item in records[0]["added"]}
        # Hand each input item the observations it added, in order, each text once.
        results = []
        for a in additions:
            pool = added.get(a.entityName, [])
            mine = []
            for c in _dedupe(a.contents):
                if c in pool:
                    pool.remove(c)
                    mine.append(c)
            results.append(ObservationResult(entityName=a.entityName, addedObservations=mine))
        return results

    async def delete_entities(self, names: Sequence[str]) -> int:
        names = _dedupe(names)
        if not names:
            return 0
        records = await self.run("delete_entities", names=names)
        return int(records[0]["deleted"]) if records else 0

    async def delete_observations(self, deletions: Sequence[ObservationDelete]) -> int:
        _check_observation_total(sum(len(d.observations) for d in deletions))
        rows = [{"entityName": d.entityName, "observations": _dedupe(d.observations)} for d in deletions]
        if not rows:
            return 0
        records = await self.run("delete_observations", rows=rows)
        if records and records[0]["blocked"]:
            raise ValidationError(
                f"'{records[0]['blocked'][0]}' is knowledge and the observation named is its content, which "
                "delete_observations cannot remove (knowledge keeps its content): change it with update_knowledge "
                "or expire it with forget_knowledge; nothing was deleted", field="observations")
        return int(records[0]["deleted"]) if records else 0

    async def delete_relations(self, relations: Sequence[RelationIn | Relation]) -> None:
        rows = _dedupe_rel_rows(relations)
        if rows:
            await self.run("delete_relations", rows=rows)

    async def invalidate_relations(self, items: Sequence[RelationInvalidate]) -> list[RelationFull]:
        """Close currently valid relations (``valid_until``); all or nothing."""
        rows: dict[tuple[str, str, str], dict[str, Any]] = {}
        for it in items:
            rows.setdefault(it.key, {"from": it.from_, "to": it.to, "relationType": it.relationType,
                                     "valid_until": it.validUntil})
        if not rows:
            return []
        records = await self.run("invalidate_relations", rows=list(rows.values()))
        self._raise_missing_relation(records[0]["missing"], records[0]["invalid"])
        return [_relation(r) for r in records[0]["changed"]]

    async def update_relations(self, items: Sequence[RelationUpdate]) -> list[RelationFull]:
        """Update currently valid relations; new weight = mean of current and given (spec 002 §10)."""
        rows = []
        seen: set[tuple[str, str, str]] = set()
        for it in items:
            if it.key in seen:
                raise ValidationError(f"relation {it.key} appears twice in one update; send it once", field="relations")
            seen.add(it.key)
            rows.append({"from": it.from_, "to": it.to, "relationType": it.relationType, "weight": it.weight,
                         "reasoning": it.reasoning, "source": it.source, "valid_from": it.validFrom,
                         "valid_until": it.validUntil, "clear_valid_until": it.clearValidUntil})
        if not rows:
            return []
        records = await self.run("update_relations", rows=rows)
        self._raise_missing_relation(records[0]["missing"], records[0]["invalid"])
        return [_relation(r) for r in records[0]["changed"]]

    @staticmethod
    def _raise_missing_relation(missing: list[dict[str, Any]], invalid: list[dict[str, Any]]) -> None:
        if missing:
            m = missing[0]
            key = f"{m['from']} -[{m['relationType']}]-> {m['to']}"
            raise NotFoundError("relation", key, f"No open (not yet invalidated) relation {key}; nothing was changed")
        if invalid:
            m = invalid[0]
            key = f"{m['from']} -[{m['relationType']}]-> {m['to']}"
            raise ValidationError(f"relation {key}: validUntil would be earlier than validFrom; nothing was changed",
                                  field="validUntil")

    async def traverse(self, req: TraverseIn) -> Traversal:
        """Breadth-first walk (one query); the per-hop fan-out cap is applied inside the query."""
        records = await self.run(
            "traverse_graph", read=True, start=_dedupe(req.start), max_depth=req.maxDepth,
            direction=req.direction, types=req.relationTypes, min_weight=req.minWeight,
            fanout=req.fanout, fanout_probe=req.fanout + 1, frontier_cap=req.limit + 1, at=req.asOf,
        )
        rec = records[0]
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
            if reached in keep and reached not in parent and reached not in start \
                    and depth.get(via, -1) == e["hop"] - 1 and depth[reached] == e["hop"]:
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
                    relations.append(_relation(e))
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
        return Traversal(start=start, entities=entities, relations=relations, paths=paths, truncated=truncated,
                         cappedAt=[c for c in rec["capped"] if c is not None])

    async def search_memory(
        self,
        query: str,
        *,
        limit: int = 10,
        entity_types: Sequence[str] | None = None,
        as_of: datetime | None = None,
        prior: dict[str, float] | None = None,
    ) -> SearchResult:
        """Hybrid recall: candidates of three channels (observation vectors, entity vectors, fulltext; one
        read each, run concurrently), fused in Python, then the graph around the few entities the answer
        can hold (one more small read).

        The indexes are database-wide, so each channel over-fetches and filters by namespace.  A channel
        is *starved* when a full raw page leaves fewer than ``limit`` own hits.  A starved vector channel
        (observations or entities) of a namespace with at most ``EXACT_CAP`` of them is then ranked
        exactly over the namespace's own vectors (one statement).  Otherwise only the starved channel is
        fetched again with k x4 (up to ``MAX_K``): the observation vectors (the main signal) until they
        fill, the entity and fulltext channels only while the fused candidates are fewer than ``limit``
        and their own hits still grow (a channel that found some and then no more stops).

        Knowledge entities (``:Knowledge``) get their memory score (spec 004) as the fusion prior;
        ``prior`` (entity name -> [0, 1]) given by the caller overrides it per name.
        """
        # Entities named in the question are the graph's business: found by name, they lend weight to
        # their own observations, and their names are removed from the text that is embedded and
        # keyword-searched (a name in an embedded question drags it towards every mention of the name).
        grams = question_grams(query)
        read_at = as_of or self.clock.now()  # one moment for every read of this search
        mentioned = await self.run("search_mentions", read=True, grams=grams, at=read_at) if grams else []
        mentions = [r["name"] for r in mentioned]
        content = strip_mentions(query, [r["name_lower"] for r in mentioned])
        ftq = fulltext_query(content)
        types = list(entity_types) if entity_types else None
        # On a server whose filtered vector indexes are ONLINE (2026.x) the vector channels find the top k
        # of this namespace inside the index; elsewhere they over-fetch and filter (README "Neo4j versions").
        plan = await vector_statements(self.driver, self.database)
        statements = {"vector": plan.observation, "entity": plan.entity_for(types),
                      "fulltext": _CHANNEL_STATEMENTS["fulltext"]}
        self.last_search_filtered = plan.filtered

        def fetch_channel(name: str, k: int, vector: list[float] | None) -> Awaitable[list[neo4j.Record]]:
            return self.run(statements[name], read=True, k=k, vector=vector, fulltext=ftq, types=types,
                            at=read_at)

        # The channels are separate reads run concurrently: the fulltext one while the question is embedded
        # (it needs no vector), the two vector ones together once the vector is there.
        k_first = max(limit * OVERFETCH, MIN_K)
        early = asyncio.ensure_future(fetch_channel("fulltext", k_first, None)) if ftq and self._tx is None else None
        try:
            vectors = await self.embed([content])
        except BaseException:
            if early is not None:
                early.cancel()
                await asyncio.gather(early, return_exceptions=True)  # its error (if any) is read, not lost
            raise
        vector = vectors[0] if vectors else None

        ks = {
            "vector": k_first if vector is not None else 0,
            "entity": max(limit * ENTITY_OVERFETCH, MIN_K_ENTITIES) if vector is not None else 0,
            "fulltext": k_first if ftq else 0,
        }
        found: dict[str, list[Any]] = {"vector": [], "entity": [], "fulltext": []}
        raw: dict[str, int] = {c: 0 for c in ks}
        fetch = {c: k for c, k in ks.items() if k > 0}
        self.last_search_rounds = 0
        self.last_search_starved = []
        exact_tried = False
        while fetch:
            self.last_search_rounds += 1
            names = list(fetch)
            runs = [early if c == "fulltext" and early is not None else fetch_channel(c, fetch[c], vector)
                    for c in names]
            early = None
            answers = await _concurrently(runs, sequential=self._tx is not None)
            grew: dict[str, bool] = {}
            for name, records in zip(names, answers, strict=True):
                rec = records[0]
                # "still finding more": its first fetch, nothing own found yet, or more than last time
                grew[name] = self.last_search_rounds == 1 or not found[name] or len(rec["hits"]) > len(found[name])
                found[name] = list(rec["hits"])
                raw[name] = int(rec["raw_count"])
            starved = {c for c, k in fetch.items() if raw[c] >= k and len(found[c]) < limit}
            want = {c for c in starved & {"vector", "entity"} if self._exact_big.get(c, -EXACT_RECHECK_S) <
                    time.monotonic() - EXACT_RECHECK_S}
            if not exact_tried and want:
                # A namespace small next to the index: rank its own vectors exactly (one cheap statement)
                # instead of growing k over everybody else's.  A namespace found too large is not asked
                # again for EXACT_RECHECK_S seconds.
                exact_tried = True
                self.last_search_rounds += 1
                self.last_search_starved.append(sorted(f"{c}:exact" for c in want))
                ex = (await self.run(
                    "search_memory_exact", read=True, vector=vector, types=types, at=read_at, cap=EXACT_CAP,
                    obs_scan=EXACT_CAP + 1 if "vector" in want else 0,
                    entity_scan=EXACT_CAP + 1 if "entity" in want else 0,
                    k_vector=ks["vector"], k_entities=ks["entity"],
                ))[0]
                for name, small_key, hits_key in (("vector", "obs_small", "vhits"),
                                                  ("entity", "entities_small", "ventities")):
                    if name not in want:
                        continue
                    if ex[small_key]:
                        found[name] = list(ex[hits_key])
                        starved.discard(name)
                    else:
                        self._exact_big[name] = time.monotonic()
            candidates = len({(h["name"], h["seq"]) for c in found.values() for h in c})
            nxt: dict[str, int] = {}
            for channel in starved:
                k = fetch[channel]
                # The observation vectors are the main signal: they grow until they fill (a namespace past
                # EXACT_CAP has enough).  The others only while the answer is short of candidates, and only
                # while they still find more.
                if k < MAX_K and (channel == "vector" or (candidates < limit and grew[channel])):
                    nxt[channel] = min(k * 4, MAX_K)
            if nxt:
                self.last_search_starved.append(sorted(nxt))
                ks.update(nxt)
            fetch = nxt
        self.last_search_k = max(ks.values())

        merged_prior = _memory_prior((*found["vector"], *found["entity"], *found["fulltext"]), read_at)
        if as_of is not None and merged_prior:
            # as of a past moment: the decay state each had then, not today's (README "Time and history")
            merged_prior = await memory_prior_at(self, merged_prior, read_at)
        if prior:
            merged_prior.update(prior)
        hits, top = score_channels(vector=found["vector"], fulltext=found["fulltext"], entity_vector=found["entity"],
                                   mentions=mentions, weights=self.fusion)
        around: dict[str, Any] = {}
        if hits:
            names = pool(hits, top, mentions=mentions, prior=merged_prior, weights=self.fusion, limit=limit)
            around = await self._around(names, as_of)
        fused = finish(hits, top, around=list(around.values()), mentions=mentions, prior=merged_prior,
                       weights=self.fusion, limit=limit, entity_types=types)
        final = list(dict.fromkeys(h.name for h in fused))
        missing = [n for n in final if n not in around]
        if missing:  # entities the graph or the prior lifted into the answer
            around.update(await self._around(missing, as_of))
        names_set = set(final)
        entities = []
        for name in final:
            a = around.get(name)
            etype = a["entityType"] if a and a["entityType"] is not None else \
                next(h.entityType for h in fused if h.name == name)
            entities.append(SearchEntity(name=name, entityType=etype,
                                         observationCount=int(a["observationCount"]) if a else 0,
                                         knowledge=facts_of(a["knowledge"], read_at) if a and a["knowledge"] else None))
        relations: list[RelationFull] = []
        seen: set[tuple[str, str, str]] = set()
        for name in final:
            a = around.get(name)
            for r in a["rels"] if a else ():
                key = (r["from"], r["to"], r["relationType"])
                if r["from"] in names_set and r["to"] in names_set and key not in seen:
                    seen.add(key)
                    relations.append(RelationFull(**{"from": r["from"]}, to=r["to"], relationType=r["relationType"],
                                                  weight=r["weight"]))
        return SearchResult(
            hits=[SearchHit(name=h.name, entityType=h.entityType, observation=h.observation,
                            score=round(h.score, 6)) for h in fused],
            entities=entities,
            relations=relations,
            mode="hybrid" if vector is not None else "fulltext+graph",
        )

    async def _around(self, names: Sequence[str], as_of: datetime | None) -> dict[str, Any]:
        """Type, observation count and strongest relations of the named entities (one statement)."""
        records = await self.run("search_memory_around", read=True, names=list(names), neighbour_cap=NEIGHBOUR_CAP,
                                 at=as_of)
        return {r["name"]: {"name": r["name"], "entityType": r["entityType"],
                            "observationCount": r["observationCount"], "rels": r["rels"],
                            "knowledge": r["knowledge"]} for r in records}

    # -- reads -----------------------------------------------------------------
    async def read_graph(
        self, *, limit: int | None = None, cursor: str | None = None, as_of: datetime | None = None
    ) -> KnowledgeGraph:
        if limit is None and cursor is None:
            cap = self._max_rows
            records = await self.run("read_graph", read=True, max_entities=cap + 1, max_relations=cap + 1, at=as_of)
            graph = self._graph(records[0])
            if len(graph.entities) > cap or len(graph.relations) > cap:
                raise self._too_large("read_graph")
            self._check_size(graph, "read_graph")
            return graph
        if limit is None:
            limit = 1000
        if limit < 1 or limit > 10_000:
            raise ValidationError("limit must be between 1 and 10000", field="limit")
        after = decode_cursor(cursor) if cursor else ""
        records = await self.run("read_graph_page", read=True, after=after, limit=limit, at=as_of)
        graph = self._graph(records[0])
        if len(graph.entities) == limit:
            graph.nextCursor = encode_cursor(graph.entities[-1].name)
        self._check_size(graph, "read_graph")
        return graph

    async def read_graph_answer(self, *, as_of: datetime | None = None) -> tuple[str, dict[str, Any]]:
        """The unpaged read_graph answer of the reference tools: its exact JSON text and structured copy.

        Built once from flat rows (two concurrent reads returning lists of strings, at one moment; no
        models, no relation properties the answer does not show); the byte cap is checked on the text
        itself.  The same graph as ``read_graph()``, which keeps the full relations for other callers.
        A read of now is kept while the database has not changed (store/answer_cache.py)."""
        if as_of is not None or self._tx is not None:
            answer, _ = await self._graph_answer(as_of or self.clock.now(), horizon=False)
            return answer
        at = self.clock.now()
        return await self._answers.get_or_build("read_graph", at, lambda: self._graph_answer(at, horizon=True))

    async def _graph_answer(self, at: datetime, *, horizon: bool) -> tuple[tuple[str, dict[str, Any]], datetime | None]:
        cap = self._max_rows
        reads = [self.run("read_graph_entities", read=True, max_entities=cap + 1, at=at),
                 self.run("read_graph_relations", read=True, max_relations=cap + 1, at=at)]
        if horizon:
            reads.append(self.run("read_graph_horizon", read=True, at=at))
        with _gc_paused():
            # the reads run concurrently: Neo4j works on them at once and each is decoded as it arrives
            results = await _concurrently(reads, sequential=self._tx is not None)
            entities, relations = results[0][0]["entities"], results[1][0]["relations"]
            if len(entities) > cap or len(relations) > cap:
                raise self._too_large("read_graph")
            text = reference_graph_text(entities, relations)
            if len(text.encode()) > self.max_answer_bytes:
                raise self._too_large("read_graph")
            structured = {
                "entities": [{"name": n, "entityType": t, "observations": o} for n, t, o in entities],
                "relations": [{"from": a, "to": b, "relationType": t} for a, b, t in relations],
            }
            until = results[2][0]["horizon"] if horizon else None
            return (text, structured), (None if until is None else until.to_native())

    async def search_nodes(self, query: str, *, as_of: datetime | None = None) -> KnowledgeGraph:
        cap = self._max_rows
        records = await self.run("search_nodes", read=True, q=query.lower(), max_entities=cap + 1, at=as_of)
        graph = self._graph(records[0])
        if len(graph.entities) > cap:
            raise self._too_large("search_nodes")
        self._check_size(graph, "search_nodes")
        return graph

    async def open_nodes(self, names: Sequence[str], *, as_of: datetime | None = None) -> KnowledgeGraph:
        records = await self.run("open_nodes", read=True, names=_dedupe(names), at=as_of)
        graph = self._graph(records[0])
        self._check_size(graph, "open_nodes")
        return graph

    # -- helpers ---------------------------------------------------------------
    @staticmethod
    def _graph(record: neo4j.Record) -> KnowledgeGraph:
        return KnowledgeGraph(
            entities=[Entity(**e) for e in record["entities"]],
            relations=[_relation(r) for r in record["relations"]],
        )

    def _too_large(self, tool: str) -> TooLargeError:
        return TooLargeError(
            f"{tool}: the answer would exceed this server's cap of {self.max_answer_bytes} bytes "
            "(--max-answer-bytes / KG_NEO4J_MAX_ANSWER_BYTES). Page with read_graph's `limit` and `cursor`, "
            "narrow the query (search_nodes with a longer query, open_nodes with fewer names), "
            "or use `kg-neo4j export` for the whole graph."
        )

    def _check_size(self, graph: KnowledgeGraph, tool: str) -> None:
        size = len(json.dumps(graph.reference(), ensure_ascii=False).encode())
        if size > self.max_answer_bytes:
            raise self._too_large(tool)


def _check_observation_total(n: int) -> None:
    if n > MAX_OBSERVATIONS_PER_CALL:
        raise ValidationError(f"{n} observations in one call; at most {MAX_OBSERVATIONS_PER_CALL} are accepted "
                              "(split the batch); nothing was written")


def entity_text(name: str, entity_type: str) -> str:
    """What an entity's own embedding encodes."""
    return f"{name} ({entity_type})" if entity_type else name




def _memory_prior(rows: Iterable[Any], at: datetime) -> dict[str, float]:
    """Entity name -> memory score / its maximum, for hits on knowledge entities (``memory`` not null).
    A knowledge entity whose stored state is incomplete or invalid gets no prior (search never fails on it)."""
    out: dict[str, float] = {}
    for h in rows:
        m = h.get("memory")
        if not m or h["name"] in out:
            continue
        try:
            since = m["since"]
            since = since.to_native() if hasattr(since, "to_native") else since
            r = retention(elapsed_days(since, at), float(m["stability"]), category=m["category"])
            out[h["name"]] = memory_score(r, int(m["level"])) / MEMORY_SCORE_MAX
        except (ValidationError, TypeError, ValueError, KeyError, AttributeError):
            continue
    return out


def _relation(r: Any) -> RelationFull:
    return RelationFull(
        **{"from": r["from"]},
        to=r["to"],
        relationType=r["relationType"],
        weight=r["weight"] if r.get("weight") is not None else 1.0,
        validFrom=_iso(r.get("validFrom")),
        validUntil=_iso(r.get("validUntil")),
        createdAt=_iso(r.get("createdAt")),
        reasoning=r.get("reasoning"),
        source=r.get("source"),
    )


def _dedupe_rel_rows(relations: Sequence[RelationIn | Relation]) -> list[dict[str, str]]:
    seen: dict[tuple[str, str, str], dict[str, str]] = {}
    for r in relations:
        key = (r.from_, r.to, r.relationType)
        seen.setdefault(key, {"from": key[0], "to": key[1], "relationType": key[2]})
    return list(seen.values())
