"""Several ``kg-neo4j serve`` processes started side by side (tests/test_access_probe.py,
tests/test_replicas.py): a start is mostly Python importing, so five at once cost about two."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, ExitStack


def starting(servers: Mapping[str, AbstractContextManager[str]], stack: ExitStack) -> dict[str, Future[str]]:
    """Start the servers (e.g. ``support.servers.http_server``), each entered in a thread (it waits for its
    process to answer): their URLs, as they come.  ``stack`` stops every one that started, whatever
    happens meanwhile."""
    pool = stack.enter_context(ThreadPoolExecutor(len(servers)))
    futures = {}
    for key, cm in servers.items():
        futures[key] = future = pool.submit(cm.__enter__)
        stack.callback(lambda f=future, cm=cm: f.exception() is None and cm.__exit__(None, None, None))
    return futures


def started(servers: Mapping[str, AbstractContextManager[str]], stack: ExitStack) -> dict[str, str]:
    """:func:`starting`, waiting for every URL."""
    return {key: future.result() for key, future in starting(servers, stack).items()}
