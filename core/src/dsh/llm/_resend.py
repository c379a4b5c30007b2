"""One send of a request, as the HTTP client traces it: whether it went out on a reused
pooled connection the server had closed (then it is sent again), and through a proxy.

A server may close a kept-alive connection just as the next request goes out on it:
llama-server closes it right after each streamed answer although its response says
``Keep-Alive``, and any server closes an idle one after its keep-alive timeout. The
client puts a connection back in the pool once the body is complete and cannot tell it
was closed until it uses it: the request fails before any answer (the server
disconnected, reset the connection, or the send broke). The server's handler never saw
that request, so it is sent again at once on a new connection, as urllib3 does: without
a warning and without counting against ``max_retries``, once per request (see
``HttpModel._open``), and only when the connection was a reused one and nothing of the
response had arrived. A response whose head had arrived is never sent again silently:
the server may have done the work. (What the client cannot tell apart: a server that
wrote part of a status line and then closed. None does so after reading a request.)
"""

from __future__ import annotations

from typing import Any, Final

import httpx

__all__ = ["Attempt"]

#: How a request fails on a connection the server had closed: it disconnected
#: (RemoteProtocolError), or reset the connection (ReadError), or the send broke.
_LOST: Final = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


class Attempt:
    """The HTTP client's ``trace`` extension for one send of a request (httpcore calls
    it with each step: ``connection.connect_tcp.started``, ``socks.connect_tcp.started``
    for a SOCKS proxy, ``http11.receive_response_headers.complete``, ...)."""

    __slots__ = ("answered", "connected")

    def __init__(self) -> None:
        #: the host and port of the new connection this send opened (None: a pooled one)
        self.connected: tuple[str, int] | None = None
        #: the response's head arrived (of the request itself, or a proxy's CONNECT's)
        self.answered = False

    async def __call__(self, name: str, info: dict[str, Any]) -> None:
        # "connection." (direct, an HTTP proxy's tunnel, a forward proxy) or "socks."
        if name.endswith(".connect_tcp.started"):
            self.connected = (str(info.get("host")), int(info.get("port") or 0))
        elif name.endswith(".connect_unix_socket.started"):
            self.connected = ("", 0)
        elif name.endswith(".receive_response_headers.complete"):
            self.answered = True

    def lost(self, exc: httpx.HTTPError) -> bool:
        """``exc`` failed the request on a reused connection before any answer: the
        server had closed it, and never saw the request."""
        return self.connected is None and not self.answered and isinstance(exc, _LOST)

    def proxy(self, url: httpx.URL) -> str | None:
        """``host:port`` of the proxy this send connected to for ``url`` (a new
        connection to another address than ``url``'s); None without one. Never the
        proxy's user name or password: the client connects to a host and a port."""
        if self.connected is None or not self.connected[0]:
            return None
        host, port = self.connected
        own = url.raw_host.decode("ascii")  # as the client connects to it: IDNA, punycode
        if (host, port) == (own, url.port or (443 if url.scheme == "https" else 80)):
            return None
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
