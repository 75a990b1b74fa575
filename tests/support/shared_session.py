"""One real MCP client session shared by the tests of a module (one per transport), so that a table
of cases can run as one test per case without starting a server per case.

The session is opened and closed inside a task of its own: the MCP client's task groups must be
entered and left by the same task, and a fixture's setup and teardown run in different tasks.
Calls from the tests (other tasks on the same event loop) go through it as usual.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from support.kg import session


class SharedSession:
    """``await open()`` in a module-scoped async fixture, ``await close()`` after its ``yield``."""

    def __init__(self, transport: str, info: Any, label: str, *serve_args: str) -> None:
        self.transport = transport
        self.info = info
        self.namespace = f"test-{label}-{transport}-{uuid.uuid4().hex[:8]}"
        self.serve_args = serve_args
        self._stop = asyncio.Event()
        self._ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._task: asyncio.Task[None] | None = None
        self.session: Any = None

    async def _hold(self) -> None:
        try:
            async with session(self.transport, self.info, self.namespace, *self.serve_args) as s:
                self._ready.set_result(s)
                await self._stop.wait()
        except BaseException as e:
            if self._ready.done():
                raise
            self._ready.set_exception(e)

    async def open(self) -> Any:
        self._task = asyncio.create_task(self._hold())
        self.session = await self._ready
        return self.session

    async def close(self) -> None:
        self._stop.set()
        if self._task is not None:
            await self._task
