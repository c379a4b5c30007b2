"""A proxy that cannot be reached is named as the way to the server, by its host, port
and variable, never its user name or password (found by a review of the providers: an
unreachable HTTPS_PROXY was reported as ``cannot reach the server at
https://api.example.test``, the server it was never asked to reach)."""

from __future__ import annotations

import pytest
from llm_wire import WireServer, closed_port, collect, sse
from test_llm_http import ASK, TEXT, fails, openai


async def test_an_unreachable_proxy_is_named(proxy_env: pytest.MonkeyPatch) -> None:
    hostport = closed_port().removeprefix("http://").removesuffix("/v1")
    proxy_env.setenv("HTTPS_PROXY", f"http://proxyuser:proxypass@{hostport}")
    err = await fails(openai("https://api.example.test/v1", max_retries=0))
    assert err.code == "TRANSPORT"
    assert f"through the proxy at {hostport} (from HTTPS_PROXY)" in err.message
    assert "https://api.example.test" in err.message
    assert "proxypass" not in err.message and "proxyuser" not in err.message


async def test_without_a_proxy_the_server_alone_is_named(proxy_env: pytest.MonkeyPatch) -> None:
    url = closed_port()
    err = await fails(openai(url, max_retries=0))
    assert err.code == "TRANSPORT"
    assert "proxy" not in err.message


async def test_a_host_no_proxy_names_is_reached_directly(proxy_env: pytest.MonkeyPatch) -> None:
    proxy_env.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    proxy_env.setenv("NO_PROXY", "127.0.0.1")
    async with WireServer([sse(TEXT)]) as server:
        _, message = await collect(openai(server.url), ASK)
    assert message.content
