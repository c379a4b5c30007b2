"""A loopback HTTP/1.1 server that replays recorded model responses byte for byte.

Each request takes the next scripted ``Reply``: a status, headers and body pieces, each
piece written as its own chunk of a chunked response (so the client's parser sees the
stream cut where the test says). A reply can end normally, drop the connection without
finishing the body, or stall until the client goes away; the server records every
request it received and when a client disconnected from a stalled reply.

The server runs on asyncio: in the test's own loop on asyncio, on an asyncio loop of its
own in a thread on any other backend (trio), so the tests' clients run on either.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import socket
import struct
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

WIRE = Path(__file__).parent / "wire"
STALL_LIMIT = 10.0  # a stalled reply gives up by itself after this many seconds


def recorded(name: str) -> bytes:
    """A recorded response body from tests/core/llm/wire/."""
    return (WIRE / name).read_bytes()


def by_event(body: bytes) -> list[bytes]:
    """Split an SSE body into its events (each piece ends with the blank line)."""
    sep = b"\r\n\r\n" if b"\r\n\r\n" in body else b"\n\n"
    parts = body.split(sep)
    pieces = [part + sep for part in parts[:-1]]
    return [*pieces, parts[-1]] if parts[-1] else pieces


def every(body: bytes, size: int) -> list[bytes]:
    """Split bytes every ``size`` bytes (through lines and UTF-8 characters alike)."""
    return [body[i : i + size] for i in range(0, len(body), size)]


@dataclass
class Reply:
    status: int = 200
    body: bytes | list[bytes] = b""
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    #: after the body: "end" (a complete response), "drop" (close mid-body), "reset"
    #: (abort mid-body with a TCP reset: SO_LINGER 0) or "stall";
    #: status 0 sends nothing at all and stalls (with "drop": closes the connection)
    then: str = "end"
    pause: float = 0.0  # seconds between pieces (status 0: before closing or stalling)
    #: with "end": close the connection this many seconds after the response, without
    #: reading another request (llama-server's close after each streamed answer, which
    #: still says ``Keep-Alive``); None keeps the connection open
    close_after: float | None = None


def sse(body: bytes | list[bytes], **kwargs: Any) -> Reply:
    return Reply(200, body, **kwargs)


def error(status: int, payload: Any, headers: dict[str, str] | None = None) -> Reply:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return Reply(status, raw, {"content-type": "application/json", **(headers or {})})


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float
    #: every header line as sent, name lowercased (``headers`` keeps the last of a name)
    lines: tuple[tuple[str, str], ...] = ()

    def all(self, name: str) -> list[str]:
        """The values of every ``name`` header sent (two Authorization headers: two)."""
        return [value for key, value in self.lines if key == name.lower()]

    def json(self) -> Any:
        return json.loads(self.body)


class WireServer:
    """``async with WireServer([reply, ...]) as server:`` then use ``server.url``."""

    def __init__(self, replies: list[Reply] | None = None) -> None:
        self.replies = list(replies or [])
        self.requests: list[Received] = []
        self.connections = 0
        self.disconnected = Flag()  # a client left a stalled reply
        self.client_closed = Flag()  # a client closed an idle keep-alive connection
        self.disconnected_at: float | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None  # off asyncio: the server's loop
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._transports: set[asyncio.BaseTransport] = set()  # every connection accepted

    @property
    def url(self) -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/v1"

    async def __aenter__(self) -> WireServer:
        if _on_asyncio():
            await self._start()
            return self
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        await self._on_own_loop(self._start())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._thread is None:
            await self._stop()
            return
        assert self._loop is not None
        try:
            await self._on_own_loop(self._stop())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            await anyio.to_thread.run_sync(self._thread.join)
            self._loop.close()

    async def _on_own_loop(self, step: Coroutine[Any, Any, None]) -> None:
        assert self._loop is not None
        await anyio.to_thread.run_sync(asyncio.run_coroutine_threadsafe(step, self._loop).result)

    async def _start(self) -> None:
        def protocol() -> asyncio.StreamReaderProtocol:
            return _Tracked(self._transports, asyncio.StreamReader(), self._serve)

        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(protocol, "127.0.0.1", 0)

    async def _stop(self) -> None:
        assert self._server is not None
        # A connection accepted but not yet given its transport when close() runs fails
        # to get one (a closed server refuses it) and its socket is left open. So: accept
        # no more, let the accepts made so far reach their protocol (a bounded number of
        # loop turns once nothing new is accepted), close the server, and close those
        # connections that have no handler yet after.
        loop = asyncio.get_running_loop()
        for listener in self._server.sockets:
            loop.remove_reader(listener.fileno())
        await _turns()
        self._server.close()
        for writer in list(self._writers):
            writer.close()  # a handler waiting to read sees EOF and returns
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=STALL_LIMIT)
        await self._server.wait_closed()
        await _turns()
        for transport in self._transports:
            transport.abort()  # a no-op for those already closed
        await asyncio.sleep(0)  # the sockets close on the loop's next turn

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        self.connections += 1
        try:
            await self._handle(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            self._writers.discard(writer)
            self._tasks.discard(task)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one connection: each request takes the next scripted reply."""
        while (request := await read_request(reader)) is not None:
            self.requests.append(request)
            reply = self.replies.pop(0) if self.replies else error(500, {"error": "unscripted"})
            if not await self._write(reply, reader, writer):
                break
        else:
            self.client_closed.set()

    async def _write(
        self, reply: Reply, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Send ``reply``; False when the connection is done afterwards."""
        if reply.status == 0:
            await asyncio.sleep(reply.pause)  # working on it (then closes or stalls)
            if reply.then != "drop":
                await self._stall(reader)
            return False
        reason = (
            HTTPStatus(reply.status).phrase
            if reply.status in HTTPStatus._value2member_map_
            else "X"
        )
        head = [f"HTTP/1.1 {reply.status} {reason}", "transfer-encoding: chunked"]
        head += [f"{name}: {value}" for name, value in reply.headers.items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        pieces = reply.body if isinstance(reply.body, list) else [reply.body]
        for piece in pieces:
            if piece:
                writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                await writer.drain()
            if reply.pause:
                await asyncio.sleep(reply.pause)
        if reply.then == "end":
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            if reply.close_after is None:
                return True
            await asyncio.sleep(reply.close_after)
            return False
        if reply.then == "stall":
            await writer.drain()
            await self._stall(reader)
        if reply.then == "reset":
            await writer.drain()
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
        return False

    async def _stall(self, reader: asyncio.StreamReader) -> None:
        try:  # the client sends nothing more: read() returns b"" once it closes
            leftover = await asyncio.wait_for(reader.read(1), STALL_LIMIT)
        except TimeoutError:
            return
        if not leftover:
            self.disconnected_at = time.monotonic()
            self.disconnected.set()


async def _turns() -> None:
    """Let the loop run the turns from accepting a connection to its protocol's
    ``connection_made`` (the accept's task, the transport's ``call_soon``)."""
    for _ in range(3):
        await asyncio.sleep(0)


class _Tracked(asyncio.StreamReaderProtocol):
    """``asyncio.start_server``'s protocol, noting each connection's transport."""

    def __init__(self, transports: set[asyncio.BaseTransport], *args: Any) -> None:
        super().__init__(*args)
        self._transports = transports

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transports.add(transport)
        super().connection_made(transport)


class Flag:
    """What the server sets and a test waits on (``asyncio.Event``'s ``set``,
    ``is_set`` and ``wait``), on any backend and from the server's thread."""

    def __init__(self) -> None:
        self._flag = threading.Event()

    def set(self) -> None:
        self._flag.set()

    def is_set(self) -> bool:
        return self._flag.is_set()

    async def wait(self) -> None:
        # polled: the server's thread cannot set an event of the test's loop
        while not self._flag.is_set():  # noqa: ASYNC110
            await anyio.sleep(0.005)


def _on_asyncio() -> bool:
    try:
        return anyio.get_cancelled_exc_class() is asyncio.CancelledError
    except RuntimeError:  # no loop runs here
        return False


async def read_request(reader: asyncio.StreamReader) -> Received | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    sent: list[tuple[str, str]] = []
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
            sent.append((name.strip().lower(), value.strip()))
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return Received(method, path, headers, body, time.monotonic(), tuple(sent))


_HELD: list[Any] = []  # bound, never listening: until the test run ends


def _close_held() -> None:
    """Close the ports ``closed_port`` held, when the run's process exits: left to the
    interpreter's shutdown, each was an unclosed socket (a ResourceWarning after pytest's
    summary, where no test sees it)."""
    while _HELD:
        _HELD.pop().close()


atexit.register(_close_held)


def closed_port() -> str:
    """A loopback URL nothing listens on. Its port stays bound (without listening, so
    a connection is refused) until the test run ends: no other process can take it and
    answer in its place. The socket is closed at exit (``_close_held``)."""
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    _HELD.append(sock)
    return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


async def collect(model: Any, request: Any, *, keep_open: bool = False) -> tuple[list[Any], Any]:
    """Consume ``model.stream(request)`` as the loop does: (chunks, assembled message).
    The model's connections are closed afterwards unless ``keep_open``."""
    from contextlib import aclosing

    from dsh.llm import Assembler

    chunks: list[Any] = []
    assembler = Assembler()
    try:
        async with aclosing(model.stream(request)) as stream:
            async for chunk in stream:
                chunks.append(chunk)
                assembler.add(chunk)
    finally:
        if not keep_open:
            await model.aclose()
    return chunks, assembler.message(model.info.name)


# -- OpenAI-compatible streams built chunk by chunk ----------------------------------


def openai_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    """A ``chat.completion.chunk`` of one choice: its ``delta`` and ``finish_reason``."""
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def openai_body(*chunks: dict[str, Any]) -> bytes:
    """The event stream of ``chunks``, ended by ``[DONE]``."""
    lines = b"".join(b"data: %s\n\n" % json.dumps(c).encode() for c in chunks)
    return lines + b"data: [DONE]\n\n"


async def openai_answer(*chunks: dict[str, Any]) -> tuple[list[Any], Any]:
    """What an OpenAI-compatible model makes of a server streaming ``chunks`` when asked
    "hi": (its chunks, the assembled message), as ``collect`` gives them."""
    from dsh.config import ModelConfig
    from dsh.llm.openai import OpenAICompatibleModel
    from dsh.messages import ModelRequest, UserMessage

    async with WireServer([sse(openai_body(*chunks))]) as server:
        config = ModelConfig(provider="openai-compatible", model="m", base_url=server.url)
        ask = ModelRequest(messages=(UserMessage(content="hi"),))
        return await collect(OpenAICompatibleModel("wire", config), ask)


async def openai_unreadable(*chunks: dict[str, Any]) -> None:
    """A server streaming ``chunks`` fails the answer with MALFORMED_RESPONSE, naming an
    unreadable chunk (not dropped unseen)."""
    import pytest

    from dsh.errors import ModelError

    with pytest.raises(ModelError) as caught:
        await openai_answer(*chunks)
    assert caught.value.code == "MALFORMED_RESPONSE"
    assert "unreadable chunk" in caught.value.message


def unserved(message: str) -> str:
    """``message`` without the loopback server it names after what came (`` from the
    server at http://127.0.0.1:PORT``), for a test of the rest of its words; the naming
    itself is checked by test_errors_name_the_server.py."""
    import re

    return re.sub(r" from the server at http://127\.0\.0\.1:\d+", "", message)
