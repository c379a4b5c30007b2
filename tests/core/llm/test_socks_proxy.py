"""A SOCKS proxy in the environment without the socksio package is a one-line
TRANSPORT error naming the variable and the ``socks`` extra, never the proxy's address
(found by a review of the providers: ``ALL_PROXY=socks5://...`` failed every request
with code UNKNOWN, httpx's ImportError, even for a host ``NO_PROXY`` names).

socksio is made unimportable here (``sys.modules["socksio"] = None``), so the test
means the same whether or not it is installed (the test group installs it, for
test_socks_end_to_end.py)."""

from __future__ import annotations

import sys

import pytest
from llm_wire import WireServer, collect, sse
from test_llm_http import ASK, KEY, TEXT, fails, openai

PROXY = "socks5://proxyuser:proxypass@127.0.0.1:1080"


@pytest.fixture
def no_socksio(proxy_env: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    proxy_env.setitem(sys.modules, "socksio", None)  # `import socksio` fails
    return proxy_env


@pytest.mark.parametrize("variable", ["ALL_PROXY", "https_proxy"])
async def test_a_socks_proxy_without_socksio_says_what_to_install(
    no_socksio: pytest.MonkeyPatch, variable: str
) -> None:
    no_socksio.setenv(variable, PROXY)
    no_socksio.setenv("NO_PROXY", "127.0.0.1")
    async with WireServer([sse(TEXT)]) as server:
        err = await fails(openai(server.url))
        assert server.requests == []
    assert err.code == "TRANSPORT"
    assert variable in err.message
    assert "pip install 'dsh-core[socks]'" in err.message
    assert "proxypass" not in err.message and "proxyuser" not in err.message
    assert KEY not in err.message


async def test_a_plain_proxy_variable_is_not_blamed(no_socksio: pytest.MonkeyPatch) -> None:
    no_socksio.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    no_socksio.setenv("NO_PROXY", "127.0.0.1")
    async with WireServer([sse(TEXT)]) as server:
        _, message = await collect(openai(server.url), ASK)
    assert message.content
