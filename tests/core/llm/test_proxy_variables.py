"""Which proxy variable a message names, and a proxy URL the HTTP client cannot use
(found by a review of the provider fixes: with ``https_proxy=""`` urllib drops the
HTTPS proxy and ``ALL_PROXY`` is used, yet the message said ``from HTTPS_PROXY``;
``ALL_PROXY=socks4://...`` or a value with a leading space failed with httpx's raw
``ValueError: Unknown scheme for proxy URL``, quoting the proxy's password)."""

from __future__ import annotations

import pytest
from llm_wire import WireServer, sse
from test_llm_http import TEXT, fails, openai

from dsh.llm import _pool


def test_an_empty_lower_case_variable_hands_over_to_all_proxy(
    proxy_env: pytest.MonkeyPatch,
) -> None:
    proxy_env.setenv("https_proxy", "")
    proxy_env.setenv("HTTPS_PROXY", "http://10.0.0.1:3128")
    proxy_env.setenv("ALL_PROXY", "http://10.0.0.2:3128")
    said = _pool.through("https://api.example.com/v1", "10.0.0.2:3128")
    assert said == " through the proxy at 10.0.0.2:3128 (from ALL_PROXY)"


def test_the_schemes_own_variable_is_named(proxy_env: pytest.MonkeyPatch) -> None:
    proxy_env.setenv("HTTPS_PROXY", "http://10.0.0.1:3128")
    proxy_env.setenv("ALL_PROXY", "http://10.0.0.2:3128")
    said = _pool.through("https://api.example.com/v1", "10.0.0.1:3128")
    assert said.endswith("(from HTTPS_PROXY)")


@pytest.mark.parametrize(
    "value", ["socks4://user:sekrit@10.0.0.1:1080", " socks5://user:sekrit@10.0.0.1:1080"]
)
async def test_a_proxy_url_the_client_cannot_use_is_a_one_line_error(
    proxy_env: pytest.MonkeyPatch, value: str
) -> None:
    proxy_env.setenv("ALL_PROXY", value)
    proxy_env.setenv("NO_PROXY", "127.0.0.1")
    async with WireServer([sse(TEXT)]) as server:
        err = await fails(openai(server.url))
    assert err.code == "TRANSPORT"
    assert "ALL_PROXY" in err.message
    assert "sekrit" not in err.message and "user" not in err.message
    assert "\n" not in err.message
