"""A proxy variable's user name and password (``HTTP_PROXY=http://user:pass@host:port``)
are hidden as the model API keys are (found by a review of the proxies: a proxy, or a
server behind a forward proxy, echoing ``Proxy-Authorization: Basic <base64>`` or the
password in an error body had it quoted in the ModelError's message, which dsh logs
and the session file keeps)."""

from __future__ import annotations

import base64
import logging

import pytest
from llm_wire import WireServer, error, sse
from proxy_wire import ForwardProxy
from test_llm_http import TEXT, fails, openai

from dsh._proxy_secrets import proxy_secrets
from dsh._secrets import HideKeys, known_keys, redact
from dsh.harness import Harness

USER = "proxyuser:proxypass"
B64 = base64.b64encode(USER.encode()).decode()
#: written percent-encoded in the URL; the client sends it decoded
ENCODED = "proxy%40user:pa%3Ass%21word"
DECODED = "proxy@user:pa:ss!word"


@pytest.mark.anyio
@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy", "ALL_PROXY"])
async def test_an_error_echoing_the_proxy_credentials_hides_them(
    proxy_env: pytest.MonkeyPatch, variable: str
) -> None:
    said = f"header Proxy-Authorization: Basic {B64}, user {USER}, password proxypass"
    body = {"error": {"message": said}}
    async with WireServer([sse(TEXT)]) as server, ForwardProxy([error(400, body)]) as proxy:
        proxy_env.setenv(variable, f"http://{USER}@{proxy.address}")
        err = await fails(openai(server.url, max_retries=0))
    assert "Proxy-Authorization: Basic ***" in err.message  # the error is still told
    for secret in (B64, USER, "proxypass"):
        assert secret not in err.message


@pytest.mark.anyio
async def test_percent_encoded_credentials_are_hidden_as_sent(
    proxy_env: pytest.MonkeyPatch,
) -> None:
    sent = base64.b64encode(DECODED.encode()).decode()
    body = {"error": {"message": f"Basic {sent} for {DECODED} ({ENCODED}) pa:ss!word"}}
    async with WireServer([sse(TEXT)]) as server, ForwardProxy([error(400, body)]) as proxy:
        proxy_env.setenv("HTTP_PROXY", f"http://{ENCODED}@{proxy.address}")
        err = await fails(openai(server.url, max_retries=0))
        assert proxy.requests[0].headers["proxy-authorization"] == f"Basic {sent}"
    for secret in (sent, DECODED, ENCODED, "pa:ss!word", "pa%3Ass%21word"):
        assert secret not in err.message


async def test_log_records_and_a_harness_hide_the_proxy_credentials(
    proxy_env: pytest.MonkeyPatch,
) -> None:
    proxy_env.setenv("HTTPS_PROXY", f"http://{USER}@127.0.0.1:3128")
    text = f"Basic {B64} {USER} proxypass"
    hidden = "Basic *** proxyuser:*** ***"
    assert redact(text) == hidden  # known_keys: what log records hide
    assert {B64, "proxypass"} <= set(known_keys())
    record = logging.LogRecord("dsh", logging.WARNING, __file__, 1, text, None, None)
    HideKeys().filter(record)
    assert record.getMessage() == hidden
    async with Harness(load_entry_points=False, env={}) as harness:  # session files
        assert redact(text, harness.secrets()) == hidden


def test_the_proxy_user_name_is_not_hidden(proxy_env: pytest.MonkeyPatch) -> None:
    """Only the password and the Basic value are secrets: with ``user:pass`` one too, a
    long enough start of it, the user name (often the login), was *** in every path."""
    proxy_env.setenv("HTTPS_PROXY", "http://jsmith-corporate:pw-1234567@proxy.corp:3128")
    said = "cd /home/jsmith-corporate/src && whoami -> jsmith-corporate (pw-1234567)"
    assert redact(said) == "cd /home/jsmith-corporate/src && whoami -> jsmith-corporate (***)"


def test_a_proxy_without_a_password_or_with_a_short_one_gives_nothing_to_hide() -> None:
    assert proxy_secrets({"HTTP_PROXY": "http://proxyuser@127.0.0.1:3128"}) == set()
    assert proxy_secrets({"NO_PROXY": "http://a:verylongpassword@x"}) == set()
    found = proxy_secrets({"all_proxy": "socks5://u:pw@[::1"})  # unsplittable, still read
    assert "pw" in found  # short: dropped by longest_first later
