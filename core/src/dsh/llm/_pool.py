"""A model's HTTP client: its connection pool (how many connections, kept how long),
its proxies, and its loggers' filter."""

from __future__ import annotations

import os
from typing import Final
from urllib.parse import urlsplit

import httpx

from dsh._proxy_secrets import proxy_secrets, proxy_variables
from dsh._secrets import get_logger, remember
from dsh.errors import ModelError

# The HTTP client's own loggers get the core's filter too (``HideKeys``: every key dsh
# has read), in library use as under the dsh command (whose handler has it): httpx logs
# each request's URL, base_url's query included, at INFO; httpcore the response's
# headers at DEBUG (a server that echoes a key in one). A logger's filter sees only its
# own records, hence each of httpcore's by name.
for _client_logger in (
    "httpx",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
    "httpcore.socks",
):
    get_logger(_client_logger)

#: Connections a model keeps open at most (httpx's default pool); more requests at once
#: wait for a free one within the model's timeout.
MAX_CONNECTIONS: Final = 100
#: Seconds an idle pooled connection is reused for: below the 5 s after which servers
#: most often close one (llama-server's ``Keep-Alive: timeout=5``, uvicorn's default),
#: by more than a request takes to arrive, so that an idle connection is seldom used
#: just as it closes. It does not avoid the race: a server may close a connection at any
#: time (llama-server closes it right after each streamed answer, whatever its
#: ``Keep-Alive`` says), and a request lost so is sent again on a new connection
#: (``dsh.llm._resend``).
KEEPALIVE_EXPIRY: Final = 4.0


def limits() -> httpx.Limits:
    """The pool's limits, read when a client is made."""
    return httpx.Limits(
        max_connections=MAX_CONNECTIONS,
        max_keepalive_connections=20,
        keepalive_expiry=KEEPALIVE_EXPIRY,
    )


def client(model: str, timeout: httpx.Timeout) -> httpx.AsyncClient:
    """A new client for ``model`` with the pool's limits. It takes its proxies from the
    environment (``HTTPS_PROXY``, ``ALL_PROXY``, ...): a SOCKS one needs the socksio
    package (the ``socks`` extra), and without it the client cannot be made at all, even
    for a host ``NO_PROXY`` names: TRANSPORT, naming the variable and the extra. A proxy
    URL it cannot use (``socks4://``, a leading space) is TRANSPORT too, naming the
    variables in use, never their values (a proxy's URL may hold a password).

    The credentials in the proxy variables it reads, every name of the environment
    looked at now, are remembered as secrets (``dsh._secrets.remember``): those the
    keys gathered since missed (``dsh._proxy_secrets.proxy_secrets``) too."""
    try:
        made = httpx.AsyncClient(timeout=timeout, follow_redirects=False, limits=limits())
    except ValueError:
        used = [name for kind in ("http", "https", "all") if (name := _variable(kind))]
        if not used:
            raise
        said = " or ".join(sorted(set(used)))
        raise ModelError(
            "TRANSPORT",
            f"model {model!r}: the proxy URL in {said} is not one the HTTP client can use "
            "(an http://, https://, socks5:// or socks5h:// URL, without spaces)",
        ) from None  # httpx's message quotes the URL, password and all
    except ImportError as exc:
        names = socks_variables()
        if not names:
            raise
        said = " and ".join(names)
        raise ModelError(
            "TRANSPORT",
            f"model {model!r}: {said} names a SOCKS proxy, which needs the socksio package: "
            "pip install 'dsh-core[socks]' (or unset the variable)",
        ) from exc
    remember(proxy_secrets(os.environ))
    return made


def socks_variables() -> list[str]:
    """The proxy variables the HTTP client reads (``http_proxy``, ``https_proxy``,
    ``all_proxy``, any case) that name a SOCKS proxy, by name only (never the value: a
    proxy's address may hold a user name and password)."""
    env = os.environ
    return sorted(
        name for name in proxy_variables(env) if env[name].strip().lower().startswith("socks")
    )


def through(url: str, proxy: str | None) -> str:
    """How a message names ``proxy`` (``host:port``), the proxy a request to ``url``
    went through: `` through the proxy at host:port (from HTTPS_PROXY)``, the variable
    the HTTP client took it from (``url``'s scheme's own, else ``all_proxy``); "" without
    a proxy."""
    return "" if proxy is None else f" through {named(url, proxy)}"


def named(url: str, proxy: str) -> str:
    """``the proxy at host:port (from HTTPS_PROXY)``: ``proxy`` as ``through`` names it."""
    for kind in (urlsplit(url).scheme, "all"):
        if name := _variable(kind):
            return f"the proxy at {proxy} (from {name})"
    return f"the proxy at {proxy}"


def _variable(kind: str) -> str | None:
    """The variable the HTTP client takes the ``kind`` (``https``, ``all``) proxy from,
    as urllib reads them: the lower-case one if it is set, even empty (which drops that
    proxy), else one of any other case with a value; None without one."""
    lower = f"{kind}_proxy"
    if lower in os.environ:
        return lower if os.environ[lower] else None
    return next((n for n, v in os.environ.items() if n.lower() == lower and v), None)
