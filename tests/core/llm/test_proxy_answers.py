"""A forward proxy's own failure names the proxy, never the server it could not reach
(found by a review of the providers: a proxy's 502, when it could not reach the server,
was blamed on the server and retried as a 5xx, the proxy not named).

What tells the proxy's answer from the server's: to an https server the client asks the
proxy for a tunnel (CONNECT), and any answer but 2xx is the proxy's own; to a plain
http server the proxy relays the request, and only a 407 is surely its own (no server
sends it). Any other error answer through such a proxy may be either's: its message
says the proxy it came through."""

from __future__ import annotations

import pytest
from llm_wire import Reply, WireServer, collect, error, sse
from proxy_wire import ForwardProxy
from test_llm_http import ASK, TEXT, fails, openai

USER = "proxyuser:proxypass"
ASKS_FOR_CREDENTIALS = Reply(407, b"", {"proxy-authenticate": 'Basic realm="proxy"'})


async def test_a_proxy_that_cannot_open_the_tunnel_is_named(
    proxy_env: pytest.MonkeyPatch,
) -> None:
    async with ForwardProxy([error(502, b"cannot reach"), error(502, b"cannot reach")]) as proxy:
        proxy_env.setenv("HTTPS_PROXY", f"http://{USER}@{proxy.address}")
        err = await fails(openai("https://api.example.test/v1", max_retries=1))
        assert [r.method for r in proxy.requests] == ["CONNECT", "CONNECT"]  # retried
    assert err.code == "TRANSPORT"
    assert err.message.startswith(f"model 'wire': the proxy at {proxy.address} (from HTTPS_PROXY)")
    assert "cannot reach the server" not in err.message  # it was the proxy that could not
    assert "502 Bad Gateway" in err.message
    assert "https://api.example.test" in err.message
    assert "proxypass" not in err.message and "proxyuser" not in err.message


async def test_a_proxy_asking_for_credentials_on_connect_is_named_and_not_retried(
    proxy_env: pytest.MonkeyPatch,
) -> None:
    async with ForwardProxy([ASKS_FOR_CREDENTIALS] * 3) as proxy:
        proxy_env.setenv("HTTPS_PROXY", f"http://{USER}@{proxy.address}")
        err = await fails(openai("https://api.example.test/v1", max_retries=2))
        assert len(proxy.requests) == 1
    assert err.code == "TRANSPORT"
    assert f"the proxy at {proxy.address} (from HTTPS_PROXY)" in err.message
    assert "407 Proxy Authentication Required" in err.message
    assert "proxypass" not in err.message


async def test_a_forward_proxy_asking_for_credentials_is_named_and_not_retried(
    proxy_env: pytest.MonkeyPatch,
) -> None:
    async with WireServer([sse(TEXT)]) as server, ForwardProxy([ASKS_FOR_CREDENTIALS]) as proxy:
        proxy_env.setenv("HTTP_PROXY", f"http://{USER}@{proxy.address}")
        err = await fails(openai(server.url, max_retries=2))
        assert len(proxy.requests) == 1
        assert server.requests == []
    assert err.code == "TRANSPORT"
    assert f"the proxy at {proxy.address} (from HTTP_PROXY)" in err.message
    assert "407 Proxy Authentication Required" in err.message
    assert "proxypass" not in err.message


async def test_an_error_answer_through_a_forward_proxy_names_the_proxy(
    proxy_env: pytest.MonkeyPatch,
) -> None:
    # the proxy's own 502 or one the server sent: the client cannot tell them apart
    async with WireServer([sse(TEXT)]) as server, ForwardProxy([error(502, b"")]) as proxy:
        proxy_env.setenv("HTTP_PROXY", f"http://{USER}@{proxy.address}")
        err = await fails(openai(server.url, max_retries=0))
    assert err.code == "SERVER"
    assert f"through the proxy at {proxy.address} (from HTTP_PROXY)" in err.message
    assert "proxypass" not in err.message


async def test_a_forward_proxy_relays_the_answer(proxy_env: pytest.MonkeyPatch) -> None:
    async with WireServer([sse(TEXT)]) as server, ForwardProxy() as proxy:
        proxy_env.setenv("HTTP_PROXY", f"http://{proxy.address}")
        _, message = await collect(openai(server.url), ASK)
        assert proxy.requests[0].path.startswith(server.url)
        assert len(server.requests) == 1
    assert message.content
