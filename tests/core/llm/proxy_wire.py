"""A loopback forward HTTP proxy for the tests.

``ForwardProxy`` is a ``WireServer`` that takes requests as a forward proxy does: a
request in absolute form (``GET http://host:port/path``, plain http through
``HTTP_PROXY``) is relayed to its server unless a reply is scripted, which the proxy
then sends itself (its own 502 or 407); a ``CONNECT host:port`` (https through
``HTTPS_PROXY``) gets the scripted reply, or 502 without one (it opens no tunnel: the
tests' servers speak plain http). Each relayed request is sent on a new connection to
the server, and the proxy closes the client's connection after relaying the answer.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

from llm_wire import Reply, WireServer, read_request


class ForwardProxy(WireServer):
    """``async with ForwardProxy([own reply, ...]) as proxy:`` then ``proxy.address``
    (``127.0.0.1:port``) in ``HTTP_PROXY`` or ``HTTPS_PROXY``."""

    address = ""  # host:port, once started (and still after)

    async def __aenter__(self) -> ForwardProxy:
        await super().__aenter__()
        self.address = self.url.removeprefix("http://").removesuffix("/v1")
        return self

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
