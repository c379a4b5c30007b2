"""Loopback proxies for the tests: a forward HTTP proxy and a SOCKS5 one.

``ForwardProxy`` is a ``WireServer`` that takes requests as a forward proxy does: a
request in absolute form (``GET http://host:port/path``, plain http through
``HTTP_PROXY``) is relayed to its server unless a reply is scripted, which the proxy
then sends itself (its own 502 or 407); a ``CONNECT host:port`` (https through
``HTTPS_PROXY``) gets the scripted reply, or 502 without one (it opens no tunnel: the
tests' servers speak plain http). Each relayed request is sent on a new connection to
the server, and the proxy closes the client's connection after relaying the answer.

``SocksProxy`` is a SOCKS5 server (RFC 1928) of the least kind: no authentication,
CONNECT only, to an IPv4 address or a name; it answers "connection refused" when it
cannot reach the target, else relays bytes both ways until either side closes.
"""

from __future__ import annotations

import asyncio
import socket
from urllib.parse import urlsplit

from llm_wire import Reply, WireServer, read_request


class _Proxy(WireServer):
    address = ""  # host:port, once started (and still after)

    async def __aenter__(self) -> _Proxy:
        await super().__aenter__()
        self.address = self.url.removeprefix("http://").removesuffix("/v1")
        return self


class ForwardProxy(_Proxy):
    """``async with ForwardProxy([own reply, ...]) as proxy:`` then ``proxy.address``
    (``127.0.0.1:port``) in ``HTTP_PROXY`` or ``HTTPS_PROXY``."""

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await read_request(reader)
        if request is None:
            return
        self.requests.append(request)
        if self.replies:
            await self._write(self.replies.pop(0), reader, writer)
        elif request.method == "CONNECT" or not request.path.startswith("http://"):
            await self._write(Reply(502, b"no tunnel here", {}), reader, writer)
        else:
            await _relay(request.method, request.path, request.lines, request.body, writer)


async def _relay(
    method: str,
    target: str,
    lines: tuple[tuple[str, str], ...],
    body: bytes,
    writer: asyncio.StreamWriter,
) -> None:
    """Send the request to its server on a new connection, and its answer back."""
    url = urlsplit(target)
    up_reader, up_writer = await asyncio.open_connection(url.hostname, url.port or 80)
    try:
        path = url.path + (f"?{url.query}" if url.query else "")
        kept = [f"{n}: {v}" for n, v in lines if not n.startswith("proxy-") and n != "connection"]
        head = "\r\n".join([f"{method} {path} HTTP/1.1", *kept, "connection: close"])
        up_writer.write(head.encode("latin-1") + b"\r\n\r\n" + body)
        up_writer.write_eof()  # the server answers, then sees no other request coming
        await up_writer.drain()
        while piece := await up_reader.read(65536):
            writer.write(piece)
            await writer.drain()
    finally:
        up_writer.close()
        await asyncio.gather(up_writer.wait_closed(), return_exceptions=True)


class SocksProxy(_Proxy):
    """``async with SocksProxy() as proxy:`` then ``socks5://{proxy.address}`` in
    ``ALL_PROXY``; ``proxy.targets``: the (host, port) of every CONNECT asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.targets: list[tuple[str, int]] = []

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        _, count = await reader.readexactly(2)  # version 5, how many methods
        await reader.readexactly(count)
        writer.write(b"\x05\x00")  # no authentication
        _, command, _, kind = await reader.readexactly(4)
        if kind == 1:
            host = socket.inet_ntoa(await reader.readexactly(4))
        elif kind == 3:
            host = (await reader.readexactly((await reader.readexactly(1))[0])).decode()
        else:  # IPv6: not needed by the tests
            writer.write(_reply(8))  # address type not supported
            return
        port = int.from_bytes(await reader.readexactly(2), "big")
        self.targets.append((host, port))
        if command != 1:
            writer.write(_reply(7))  # command not supported
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(host, port)
        except OSError:
            writer.write(_reply(5))  # connection refused
            return
        writer.write(_reply(0))  # connected
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            up_writer.close()
            await asyncio.gather(up_writer.wait_closed(), return_exceptions=True)


def _reply(code: int) -> bytes:
    """A SOCKS5 reply with ``code`` (0: succeeded), bound to 0.0.0.0:0."""
    return bytes([5, code, 0, 1]) + bytes(6)


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    """Copy ``source`` to ``sink`` until it ends, then end ``sink`` too."""
    try:
        while piece := await source.read(65536):
            sink.write(piece)
            await sink.drain()
        if sink.can_write_eof():
            sink.write_eof()
    except ConnectionError:
        sink.close()
