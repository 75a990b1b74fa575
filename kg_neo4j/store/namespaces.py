"""The namespaces of one database, for an operator: what each holds, and erasing one (``kg-neo4j namespace``,
docs/team.md#namespaces-of-a-team-service; the statements and what a namespace holds: cypher/namespaces.cypher).

Erasing is a sweep of bounded transactions, never one: it reads a page of the namespace's nodes with their
degrees and groups them so that no transaction erases more than ``batch`` nodes and relationships (a node
with more than that is trimmed by transactions of its own first).  Erased nodes are gone, so the sweep keeps
no cursor: a run stopped anywhere is finished by the next, and a run on an erased namespace erases nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from kg_neo4j.store.executor import Executor

Progress = Callable[[int], None]


@dataclass(frozen=True)
class NamespaceCounts:
    """What one namespace holds (``nodes``: its named, merged and forgotten nodes, observations apart)."""

    namespace: str
    entities: int
    observations: int
    retired_observations: int
    relations: int
    placeholders: int
    aliases: int
    expired: int
    merges: int
    nodes: int
    last_write: str | None

    @property
    def empty(self) -> bool:
        return self.nodes == 0 and self.merges == 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Erased:
    """What one run of :func:`erase_namespace` did (``complete``: nothing of the namespace left)."""

    namespace: str
    nodes: int = 0
    observations: int = 0
    records: int = 0
    transactions: int = 0
    complete: bool = False


class Stopped(Exception):
    """The run reached its ``max_transactions`` (what it committed stays; the next run goes on)."""


async def namespace_names(x: Executor) -> list[str]:
    return [str(r["ns"]) for r in await x.read("namespace_names")]


#: Namespaces counted by one statement (a bounded read, however many the database holds).
COUNTS_PER_READ = 1000


async def counts_of(x: Executor, namespaces: list[str]) -> list[NamespaceCounts]:
    """What each of ``namespaces`` holds, in their order (an erased or unknown one: all zero)."""
    rows: dict[str, dict[str, Any]] = {}
    for i in range(0, len(namespaces), COUNTS_PER_READ):
        page = namespaces[i : i + COUNTS_PER_READ]
        rows |= {str(r["ns"]): dict(r) for r in await x.read("namespace_counts", namespaces=page)}
    return [_counts(ns, rows[ns]) for ns in namespaces]


def _counts(namespace: str, r: dict[str, Any]) -> NamespaceCounts:
    last = r["last_write"]
    return NamespaceCounts(
        namespace=namespace,
        entities=int(r["entities"]),
        observations=int(r["current"]),
        retired_observations=int(r["retired"]),
        relations=int(r["relations"]),
        placeholders=int(r["placeholders"]),
        aliases=int(r["aliases"]),
        expired=int(r["expired"]),
        merges=int(r["merges"]),
        nodes=int(r["nodes"]),
        last_write=None if last is None else _iso(last),
    )


async def namespace_counts(x: Executor, namespace: str) -> NamespaceCounts:
    return (await counts_of(x, [namespace]))[0]


async def list_namespaces(x: Executor) -> list[NamespaceCounts]:
    """Every namespace of the database that holds something, in name order, with its counts."""
    return await counts_of(x, await namespace_names(x))


async def erase_namespace(
    x: Executor,
    namespace: str,
    *,
    batch: int = 5000,
    on_progress: Progress | None = None,
    max_transactions: int | None = None,
) -> Erased:
    """Erase everything of ``namespace`` in transactions of at most ``batch`` nodes and relationships.
    ``on_progress`` gets the nodes (observations among them) each transaction erased; ``max_transactions``
    stops the run after that many (raising :class:`Stopped`): the next run finishes it."""
    if batch < 1:
        raise ValueError(f"batch must be >= 1; got {batch}")
    done = Erased(namespace)

    async def commit(name: str, **params: Any) -> Any:
        if max_transactions is not None and done.transactions >= max_transactions:
            raise Stopped(f"stopped after {done.transactions} transactions")
        record = (await x.write(name, ns=namespace, **params))[0]
        done.transactions += 1
        return record

    async def erase(ids: list[str]) -> None:
        r = await commit("namespace_delete_nodes", ids=ids)
        nodes, observations = int(r["nodes"]), int(r["observations"] or 0)
        done.nodes += nodes
        done.observations += observations
        if on_progress:
            on_progress(nodes + observations)

    while page := await x.read("namespace_delete_page", ns=namespace, page=batch):
        group: list[str] = []
        size = 0
        for r in page:
            cost = 1 + int(r["degree"])
            if cost > batch:  # too many for one transaction: trimmed by several, then erased alone
                while True:
                    t = await commit("namespace_delete_trim", id=r["id"], batch=batch)
                    trimmed = int(t["observations"])
                    done.observations += trimmed
                    if on_progress and trimmed:
                        on_progress(trimmed)
                    if trimmed == 0 and int(t["relationships"]) == 0:
                        break
                await erase([r["id"]])
                continue
            if size + cost > batch:
                await erase(group)
                group, size = [], 0
            group.append(r["id"])
            size += cost
        if group:
            await erase(group)
    while True:
        r = await commit("namespace_delete_records", batch=batch)
        done.records += int(r["records"])
        if int(r["records"]) < batch:
            break
    done.complete = True
    return done


def _iso(moment: Any) -> str:
    """A stored moment as ISO 8601 (Neo4j's DateTime; a string as stored)."""
    return str(moment.iso_format()) if hasattr(moment, "iso_format") else str(moment)
