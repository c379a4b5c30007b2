"""One send of a request, as the HTTP client traces it: whether it went out on a reused
pooled connection the server had closed (then it is sent again), and through a proxy.

A server may close a kept-alive connection just as the next request goes out on it:
llama-server closes it right after each streamed answer although its response says
``Keep-Alive``, and any server closes an idle one after its keep-alive timeout. The
client puts a connection back in the pool once the body is complete and cannot tell it
was closed until it uses it: the request fails before any answer (the server
disconnected, reset the connection, or the send broke). Such a request is sent again
at once, without a warning and without counting against ``max_retries`` (see
``HttpModel._open``), when the connection was a reused one, nothing of the response had
arrived, and the failure came within ``QUICK`` seconds of the request's end (or while
it was being sent): a close that fast is the server's close crossing the request (a
model's answer takes far longer, llama-server's close comes within milliseconds). A
later failure is the ordinary retry, counted and said: the server may have read the
request and worked on it (a model call is costly, and may be billed). Not what urllib3
does (it does not resend a POST by itself) nor Go's net/http (which replays a request
only if nothing of it was written): dsh's requests are model calls, and a lost one
would otherwise fail a turn or spend a retry at every llama-server step. A response
whose head had arrived is never sent again silently. (What the client cannot tell
apart: a server that wrote part of a status line and then closed. None does so after
reading a request.)
"""

from __future__ import annotations

import time
from typing import Any, Final

import httpx

from dsh.llm._proxied import refused_status

__all__ = ["QUICK", "Attempt", "worth_another_try"]

#: Seconds after the request was sent within which a lost request on a reused
#: connection is taken for the server's close crossing it (and resent silently).
QUICK: Final = 0.5

#: How a request fails on a connection the server had closed: it disconnected
#: (RemoteProtocolError), or reset the connection (ReadError), or the send broke.
_LOST: Final = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


class Attempt:
    """The HTTP client's ``trace`` extension for one send of a request (httpcore calls
    it with each step: ``connection.connect_tcp.started``, ``socks.connect_tcp.started``
    for a SOCKS proxy, ``http11.receive_response_headers.complete``, ...)."""

    __slots__ = ("answered", "connected", "forwarded", "sent")

    def __init__(self) -> None:
        #: the host and port of the new connection this send opened (None: a pooled one)
        self.connected: tuple[str, int] | None = None
        #: the response's head arrived (of the request itself, or a proxy's CONNECT's)
        self.answered = False
        #: when (``time.monotonic``) the request's body was sent; None: not yet
        self.sent: float | None = None
        #: ``host:port`` of the forward proxy the request was sent to (in absolute form,
        #: ``POST http://host/path``: plain http through an HTTP proxy), on a new
        #: connection or a pooled one; None: sent to the server, or through a tunnel
        self.forwarded: str | None = None

    async def __call__(self, name: str, info: dict[str, Any]) -> None:
        # "connection." (direct, an HTTP proxy's tunnel, a forward proxy) or "socks."
        if name.endswith(".connect_tcp.started"):
            self.connected = (str(info.get("host")), int(info.get("port") or 0))
        elif name.endswith(".connect_unix_socket.started"):
            self.connected = ("", 0)
        elif name.endswith(".send_request_headers.started"):
            sent: Any = info.get("request")  # to a forward proxy: its forwarding request
            url = getattr(sent, "url", None)
            if url is not None and not url.target.startswith(b"/") and sent.method != b"CONNECT":
                self.forwarded = _address(url.host.decode("ascii"), url.port or 80)
        elif name.endswith(".send_request_body.complete"):
            self.sent = time.monotonic()
        elif name.endswith(".receive_response_headers.complete"):
            self.answered = True

    def lost(self, exc: httpx.HTTPError) -> bool:
        """``exc`` failed the request on a reused connection before any answer, while it
        was sent or within ``QUICK`` seconds: the server had closed the connection."""
        if self.connected is not None or self.answered or not isinstance(exc, _LOST):
            return False
        return self.sent is None or time.monotonic() - self.sent <= QUICK

    def proxy(self, url: httpx.URL) -> str | None:
        """``host:port`` of the proxy this send went through for ``url`` (a forward
        proxy, or a new connection to another address than ``url``'s); None without one.
        Never the proxy's user name or password: the client connects to a host and a
        port."""
        if self.forwarded is not None:
            return self.forwarded
        if self.connected is None or not self.connected[0]:
            return None
        host, port = self.connected
        own = url.raw_host.decode("ascii")  # as the client connects to it: IDNA, punycode
        if (host, port) == (own, url.port or (443 if url.scheme == "https" else 80)):
            return None
        return _address(host, port)


def _address(host: str, port: int) -> str:
    """``host:port``, an IPv6 address in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def worth_another_try(exc: httpx.HTTPError) -> bool:
    """Whether a request that failed with ``exc`` before any answer is retried: not on
    a read timeout (the server may be working on it), nor when the client refused to
    send it (``LocalProtocolError``: it never went), nor on a proxy's refusal with a 4xx
    (407, 403: its answer to another try too; ``dsh.llm._proxied``)."""
    if isinstance(exc, httpx.TimeoutException | httpx.LocalProtocolError):
        return isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout)
    return not 400 <= (refused_status(exc) or 0) < 500
