"""A proxy variable's user name and password (``HTTP_PROXY=http://user:pass@host:port``)
are hidden as the model API keys are (found by a review of the proxies: a proxy, or a
server behind a forward proxy, echoing ``Proxy-Authorization: Basic <base64>`` or the
password in an error body had it quoted in the ModelError's message, which dsh logs
and the session file keeps)."""

from __future__ import annotations

import base64
import logging

import httpx
import pytest
from llm_wire import WireServer, error, sse
from proxy_wire import ForwardProxy
from test_llm_http import TEXT, fails, openai

from dsh._proxy_secrets import proxy_secrets
from dsh._secrets import HideKeys, known_keys, redact
from dsh.harness import Harness
from dsh.llm import _pool

USER = "proxyuser:proxypass"
B64 = base64.b64encode(USER.encode()).decode()
#: written percent-encoded in the URL; the client sends it decoded
ENCODED = "proxy%40user:pa%3Ass%21word"
DECODED = "proxy@user:pa:ss!word"


@pytest.mark.anyio
# Http_Proxy: the client reads a name in any case; only upper and lower were looked up
@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "Http_Proxy"])
async def test_an_error_echoing_the_proxy_credentials_hides_them(
    proxy_env: pytest.MonkeyPatch, variable: str
) -> None:
    # the variable's own password: one sent by an earlier test is remembered, hidden
    user = f"proxyuser:pass-{variable}"
    b64 = base64.b64encode(user.encode()).decode()
    said = f"header Proxy-Authorization: Basic {b64}, user {user}, password pass-{variable}"
    async with WireServer([sse(TEXT)]) as server, ForwardProxy([error(400, body(said))]) as proxy:
        proxy_env.setenv(variable, f"http://{user}@{proxy.address}")
        err = await fails(openai(server.url, max_retries=0))
    assert "Proxy-Authorization: Basic ***" in err.message  # the error is still told
    for secret in (b64, user, f"pass-{variable}"):
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


#: Names a proxy variable may be given, read by the HTTP client or not: any case of
#: http_proxy, https_proxy, all_proxy is; NO_PROXY (hosts reached directly), another
#: scheme's (wss, ftp, socks) and a longer name are not.
NAMES = [
    *("HTTP_PROXY", "http_proxy", "Http_Proxy", "hTTPs_pRoXy", "All_Proxy", "aLL_PROXY"),
    *("NO_PROXY", "no_proxy", "No_Proxy", "WSS_PROXY", "wss_proxy", "WS_PROXY"),
    *("FTP_PROXY", "SOCKS_PROXY", "socks5_proxy", "HTTP_PROXY_URL", "MY_HTTP_PROXY", "HTTP"),
]


@pytest.mark.parametrize("name", NAMES)
def test_exactly_the_variables_the_client_takes_a_proxy_from_are_read(
    proxy_env: pytest.MonkeyPatch, name: str
) -> None:
    """As httpx reads them (``get_environment_proxies``, private: an httpx that reads
    them otherwise fails this test, as it should)."""
    from httpx._utils import get_environment_proxies

    proxy_env.setenv(name, "http://proxyuser:longpassword1@127.0.0.1:3128")
    used = any(get_environment_proxies().values())  # NO_PROXY's hosts map to None
    assert ("longpassword1" in proxy_secrets()) is used
    assert ("longpassword1" in proxy_secrets({name: "http://u:longpassword1@h"})) is used


async def test_a_proxy_variable_of_another_case_is_hidden_as_soon_as_it_is_read(
    proxy_env: pytest.MonkeyPatch,
) -> None:
    """From tool results and session files when a harness starts; from log records
    (which look up the names in lower and upper case only) once the HTTP client, which
    reads it, is made."""
    proxy_env.setenv("Https_Proxy", "http://proxyuser:case-pass-1@127.0.0.1:3128")
    text = "the password case-pass-1"
    async with Harness(load_entry_points=False, env={}) as harness:
        assert redact(text, harness.secrets()) == "the password ***"
    await _pool.client("m", httpx.Timeout(1.0)).aclose()
    assert redact(text) == "the password ***"


async def test_a_proxy_variable_set_in_place_of_another_is_hidden_in_errors(
    proxy_env: pytest.MonkeyPatch,
) -> None:
    """However the environment changed since the keys were last gathered: the HTTP
    client's credentials are those it reads when it is made."""
    said = f"header Proxy-Authorization: Basic {PLACE_B64}, password place-pass-1"
    async with WireServer([sse(TEXT)]) as server, ForwardProxy([error(400, body(said))]) as proxy:
        proxy_env.setenv("DSH_TEST_PLACE", "x")
        known_keys()
        proxy_env.delenv("DSH_TEST_PLACE")
        proxy_env.setenv("Http_Proxy", f"http://{PLACE_USER}@{proxy.address}")
        err = await fails(openai(server.url, max_retries=0))
    assert "Proxy-Authorization: Basic ***" in err.message
    assert PLACE_B64 not in err.message and "place-pass-1" not in err.message


PLACE_USER = "proxyuser:place-pass-1"
PLACE_B64 = base64.b64encode(PLACE_USER.encode()).decode()


def body(message: str) -> dict[str, object]:
    """An OpenAI-style error answer saying ``message``."""
    return {"error": {"message": message}}
