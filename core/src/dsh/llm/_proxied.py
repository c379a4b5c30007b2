"""A proxy's own failure, told from the server's, and named as the proxy's.

What the client can tell apart (``dsh.llm._resend.Attempt`` sees which way a request
went):

- To an https server through an HTTP proxy, the client asks the proxy for a tunnel
  (``CONNECT host:443``); any answer to it but 2xx is the proxy's own (the server was
  never reached), and so is a SOCKS proxy's refusal. Both are ``httpx.ProxyError``.
- To a plain http server through an HTTP proxy, the proxy relays the request and the
  server's answer. Only a 407 (Proxy Authentication Required) is surely the proxy's
  own: no server sends it. Any other error answer (a 502 the proxy wrote because it
  could not reach the server, or one the server itself sent, from behind its own
  gateway) looks the same to the client: the message keeps the server's error and says
  the proxy it came through, which may have sent it.

A proxy is named by ``host:port`` and the variable the client took it from, never its
user name or password (``dsh.llm._pool.named``). A proxy's refusal with a 4xx (407:
credentials; 403: the proxy does not allow the host) is not retried: asking again
gets the same answer.
"""

from __future__ import annotations

import re

import httpx

from dsh.errors import ModelError

_STATUS = re.compile(r"(\d{3})\b")


def refused_status(exc: httpx.HTTPError) -> int | None:
    """The status of the proxy's answer to a CONNECT ``exc`` reports (httpcore's
    ``ProxyError("407 Proxy Authentication Required")``); None for another failure (a
    SOCKS proxy's refusal, a failure that is not the proxy's)."""
    if not isinstance(exc, httpx.ProxyError):
        return None
    found = _STATUS.match(str(exc))
    return int(found.group(1)) if found else None


def refused(model: str, exc: httpx.ProxyError, proxy: str, server: str, detail: str) -> ModelError:
    """The error for a proxy (``proxy``: how ``dsh.llm._pool.named`` names it) that did
    not connect to ``server``; ``detail``: ``exc``'s text, secrets hidden."""
    said = f"model {model!r}: {proxy} did not connect to the server at {server}: {detail}"
    return ModelError("TRANSPORT", f"{said} (ProxyError){_asks(refused_status(exc))}")


def answered(model: str, status: int, proxy: str) -> ModelError | None:
    """The error for a forward proxy's (``proxy``) answer with ``status`` that is surely
    its own (407); None for one the server may have sent."""
    if status != 407:
        return None
    said = f"model {model!r}: {proxy} answered 407 Proxy Authentication Required"
    return ModelError("TRANSPORT", said + _asks(status))


def _asks(status: int | None) -> str:
    """What to do about ``status`` (407: the proxy's credentials); "" for another."""
    if status != 407:
        return ""
    return (
        "; give it a user name and password it accepts in the variable's URL "
        "(http://user:password@host:port)"
    )
