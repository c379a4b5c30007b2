"""The connection pool of a model's HTTP client: how many connections, kept how long."""

from __future__ import annotations

from typing import Final

import httpx

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
