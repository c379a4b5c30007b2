"""An idle pooled connection is not reused once the common 5 s server keep-alive
timeout may have closed it (llama.cpp's and uvicorn's): a request on a connection idle
for almost 5 s raced the server's close, ``closed the connection before answering
(RemoteProtocolError); retrying`` (found by a new-user journey review against
llama-server, whose ``Keep-Alive: timeout=5`` equals httpx's default expiry)."""

from __future__ import annotations

import anyio
from llm_wire import WireServer, collect, sse
from test_llm_http import ASK, TEXT, openai

from dsh.llm import _pool

SERVERS_IDLE_TIMEOUT = 5.0  # llama-server's and uvicorn's default


def test_the_expiry_is_below_the_servers_idle_timeout() -> None:
    assert 0 < _pool.KEEPALIVE_EXPIRY <= SERVERS_IDLE_TIMEOUT - 1.0


async def test_a_connection_idle_longer_than_the_expiry_is_not_reused() -> None:
    async with WireServer([sse(TEXT), sse(TEXT), sse(TEXT)]) as server, openai(server.url) as model:
        await collect(model, ASK, keep_open=True)
        await collect(model, ASK, keep_open=True)  # at once: reused
        assert server.connections == 1
        await anyio.sleep(_pool.KEEPALIVE_EXPIRY + 0.3)  # still under the server's 5 s
        await collect(model, ASK, keep_open=True)
        assert server.connections == 2
