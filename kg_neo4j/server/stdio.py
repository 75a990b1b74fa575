"""MCP over stdio, one JSON-RPC message per line, with every bad message answered
(docs/connecting.md#protocol-errors).

Like the SDK's own stdio transport, it takes the process's stdin and stdout for the protocol and
points file descriptors 0 and 1 elsewhere while it serves (0 at the null device, 1 at stderr), so
a stray ``print`` from any library can never corrupt the protocol stream.  Unlike it, each line is
checked by :func:`kg_neo4j.server.wire.check_message` and parsed once; a rejected line is answered
here and never reaches the server.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import BinaryIO

import anyio
import mcp.types as types
from mcp.shared.message import SessionMessage

from kg_neo4j.server.wire import INVALID_REQUEST, Rejection, check_message, usable_id

log = logging.getLogger(__name__)

#: The lines of the input (without their newline) and the writer of one output line.
LineSource = Callable[[], AsyncIterator[bytes]]
LineSink = Callable[[bytes], Awaitable[None]]

Streams = tuple[
    anyio.abc.ObjectReceiveStream[SessionMessage | Exception], anyio.abc.ObjectSendStream[SessionMessage]
]


@contextlib.contextmanager
def _claim_std_fds() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """Private duplicates of fds 0 and 1 for the protocol; fd 0 then reads the null device and fd 1
    writes to stderr until the transport ends."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        sys.stdout.flush()
        os.dup2(devnull, 0)
        os.dup2(2, 1)
        # closefd=False on the input: the reader thread may still block on it after the transport ends.
        with os.fdopen(wire_in, "rb", closefd=False) as rin, os.fdopen(wire_out, "wb") as rout:
            yield rin, rout
    finally:
        with contextlib.suppress(OSError):
            sys.stdout.flush()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        for fd in (saved_in, saved_out, devnull):
            os.close(fd)


def _to_session_message(obj: dict[str, object]) -> tuple[SessionMessage | None, Rejection | None]:
    """The SDK's message model of a checked object; what it still refuses is an invalid request."""
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(obj, by_name=False)), None
    except ValueError as exc:
        first = str(exc).splitlines()
        detail = first[0] if first else type(exc).__name__
        return None, Rejection(
            INVALID_REQUEST, f"Invalid request: {detail}", usable_id(obj), "method" not in obj or "id" in obj
        )


@contextlib.asynccontextmanager
async def _thread_pipes(raw_in: BinaryIO, raw_out: BinaryIO) -> AsyncIterator[tuple[LineSource, LineSink]]:
    """Blocking reads and writes in worker threads, as the SDK's transport does: they work on whatever
    stdin and stdout are (pipes, regular files, a terminal).  Reading the pipes on the event loop itself
    saved a thread hand-off per message, far below what the product rule asks of a speed mechanism
    (docs/performance.md, "Speed mechanisms"), so it was removed."""
    wire_out = anyio.wrap_file(raw_out)

    async def lines() -> AsyncIterator[bytes]:
        while line := await anyio.to_thread.run_sync(raw_in.readline, abandon_on_cancel=True):
            yield line.rstrip(b"\n")

    async def emit(line: bytes) -> None:
        await wire_out.write(line + b"\n")
        await wire_out.flush()

    yield lines, emit


@contextlib.asynccontextmanager
async def stdio_transport() -> AsyncIterator[Streams]:
    """Read and write streams for ``Server.run`` over this process's stdin and stdout."""
    with _claim_std_fds() as (raw_in, raw_out):
        async with _thread_pipes(raw_in, raw_out) as (lines, write_line):
            read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
            write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)
            out_lock = anyio.Lock()

            async def emit(line: bytes) -> None:
                async with out_lock:
                    await write_line(line)

            async def reader() -> None:
                async with read_send:
                    async for line in lines():
                        line = line.rstrip(b"\r")
                        if not line.strip():
                            continue
                        obj, rejected = check_message(line)
                        msg = None
                        if rejected is None:
                            msg, rejected = _to_session_message(obj)
                        if rejected is not None:
                            log.warning("refused a message: %s", rejected.message[:500])
                            if rejected.answer:
                                await emit(rejected.response_bytes())
                            continue
                        await read_send.send(msg)  # type: ignore[arg-type]
                # EOF: the client has gone

            async def writer() -> None:
                async with write_recv:
                    async for message in write_recv:
                        text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                        await emit(text.encode())

            async with anyio.create_task_group() as tg:
                tg.start_soon(reader)
                tg.start_soon(writer)
                try:
                    yield read_recv, write_send
                finally:
                    tg.cancel_scope.cancel()
