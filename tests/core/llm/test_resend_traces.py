"""What ``dsh.llm._resend.Attempt`` makes of the HTTP client's trace (found by a
review of the provider fixes: a new connection to a SOCKS proxy, traced by httpcore as
``socks.connect_tcp.started``, counted as a reused one, so that a failure on it was
resent silently even with ``max_retries: 0`` and the proxy was never named; an IDN host
without a proxy was said to go "through the proxy at xn--...").

The trace names are given directly, at the unit level (test_socks_end_to_end.py goes
through a SOCKS proxy for real). httpcore names a step after its logger's last part:
``connection.`` for a direct connection, an HTTP proxy's tunnel (CONNECT) and a forward
proxy alike (all three open an ``httpcore.connection`` connection), ``socks.`` for a
SOCKS proxy."""

from __future__ import annotations

import httpx
import pytest

from dsh.llm._resend import Attempt

LOST = httpx.RemoteProtocolError("Server disconnected without sending a response.")


@pytest.mark.parametrize("prefix", ["connection", "socks"])
async def test_a_new_connection_is_not_reused_and_names_its_proxy(prefix: str) -> None:
    sent = Attempt()
    await sent(f"{prefix}.connect_tcp.started", {"host": "10.1.2.3", "port": 1080})
    assert not sent.lost(LOST)
    assert sent.proxy(httpx.URL("https://api.example.com/v1")) == "10.1.2.3:1080"


async def test_a_pooled_connection_is_reused() -> None:
    sent = Attempt()
    await sent("http11.send_request_headers.started", {})
    assert sent.lost(LOST)


async def test_an_idn_host_without_a_proxy_has_no_proxy() -> None:
    url = httpx.URL("https://bücher.example/v1/chat/completions")
    sent = Attempt()
    await sent("connection.connect_tcp.started", {"host": url.raw_host.decode(), "port": 443})
    assert sent.proxy(url) is None
