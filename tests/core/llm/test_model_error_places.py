"""A model's errors say what is wrong and where it is set (a first-run review): the key's
variable as the entry names it (whatever its name), the wait a server asked for over
``max_wait``, the server that cannot be reached or closed the connection, the timeout
that ran out and its setting, and where a refused key came from. A ``-m
provider:model`` has no entry: its messages give the values alone."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from llm_wire import Reply, WireServer, by_event, closed_port, collect, error, sse, unserved
from test_llm_http import ASK, KEY, TEXT

from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.harness import Harness
from dsh.llm._errors import error_from_transport
from dsh.llm._http import HttpModel
from dsh.llm.choose import choose_model
from dsh.llm.openai import OpenAICompatibleModel
from dsh.llm.providers import build_model

ENV = {"WIRE_KEY": KEY}


def entry(name: str, url: str, **settings: Any) -> HttpModel:
    """The model of a ``models:`` entry ``name`` (as the harness builds it)."""
    settings.setdefault("api_key_env", "WIRE_KEY")
    config = ModelConfig(provider="openai", model="m", base_url=url, **settings)
    model = build_model(name, config, env=ENV)
    model._backoff = 0.01
    return model


async def fails(model: HttpModel) -> ModelError:
    with pytest.raises(ModelError) as caught:
        await collect(model, ASK)
    assert KEY not in caught.value.message and "\n" not in caught.value.message
    return caught.value


async def shorthand(harness: Harness, url: str) -> HttpModel:
    """``-m openai:m@url`` as the command line registers it."""
    name = choose_model(harness, f"openai:m@{url}", ENV).name
    model = harness.models.get(name, agent="a")
    assert isinstance(model, HttpModel)
    model._backoff = 0.01
    return model


# -- 1. an unset variable an entry names ----------------------------------------------------


@pytest.mark.parametrize("provider", ["openai-compatible", "openai"])
def test_an_unset_variable_an_entry_names_is_the_entrys_even_a_providers_own_name(
    provider: str,
) -> None:
    """docs/config.md's example names OPENAI_API_KEY: it was said to be no entry's
    ("api_key_env in a models: entry of dsh.yml names another", "the
    openai-compatible API key")."""
    config = ModelConfig(
        provider=provider,
        model="gpt-4.1-mini",
        base_url="https://api.openai.com/v1",
        api_key_env="OPENAI_API_KEY",
    )
    expected = (
        "model 'fast': the environment variable OPENAI_API_KEY (models.fast.api_key_env) "
        "is not set (it holds the API key)"
    )
    for model in (build_model("fast", config, env={}), OpenAICompatibleModel("fast", config)):
        model._env = {}
        with pytest.raises(ModelError) as caught:
            model.api_key()
        assert (caught.value.code, caught.value.message) == ("AUTH", expected)


def test_a_providers_own_variable_no_entry_names_is_said_as_the_providers() -> None:
    model = build_model("ds", ModelConfig(provider="deepseek"), env={})
    with pytest.raises(ModelError) as caught:
        model.api_key()
    assert caught.value.message == (
        "model 'ds': the environment variable DEEPSEEK_API_KEY is not set (it holds "
        "deepseek's API key; api_key_env in a models: entry of dsh.yml names another)"
    )


# -- 2. a wait longer than max_wait -------------------------------------------------------


async def test_a_wait_over_max_wait_says_so_and_names_the_setting() -> None:
    limited = error(429, {"error": {"message": "Rate limit reached"}}, {"retry-after": "120"})
    async with WireServer([limited]) as server:
        err = await fails(entry("rlbig", server.url))
        assert len(server.requests) == 1
    assert (err.code, err.retry_after) == ("RATE_LIMIT", 120)
    assert unserved(err.message) == (
        "model 'rlbig': HTTP 429: Rate limit reached (the server asks to wait 120 s, more "
        "than max_wait 60 s: models.rlbig.max_wait)"
    )


async def test_a_wait_over_max_wait_of_a_shorthand_gives_the_seconds_alone() -> None:
    limited = error(429, {"error": {"message": "later"}}, {"retry-after": "90.5"})
    async with WireServer([limited]) as server, Harness(load_entry_points=False) as harness:
        err = await fails(await shorthand(harness, server.url))
    assert err.message.endswith(": later (the server asks to wait 90.5 s, more than max_wait 60 s)")


# -- 3, 4. a server that cannot be reached, or closes the connection ------------------------


async def test_a_server_that_cannot_be_reached_is_named_by_its_address_alone() -> None:
    url = closed_port().replace("/v1", "/v1/secret-path?api-key=k-0123456789abcdef")
    err = await fails(entry("down", url, max_retries=0))
    server = url.split("/v1")[0]
    assert err.code == "TRANSPORT"
    assert err.message.startswith(f"model 'down': cannot reach the server at {server}: ")
    assert "secret-path" not in err.message and "0123456789" not in err.message


async def test_a_connection_closed_before_any_answer_is_said_so() -> None:
    async with WireServer([Reply(status=0, then="drop")]) as server:
        err = await fails(entry("gone", server.url, max_retries=0))
        at = server.url.removesuffix("/v1")
    assert (err.code, err.message) == (
        "TRANSPORT",
        f"model 'gone': the server at {at} closed the connection before answering "
        "(RemoteProtocolError)",
    )


@pytest.mark.parametrize(
    ("exc", "said"),
    [
        (
            httpx.ReadError("[Errno 104] Connection reset by peer"),
            "the connection to the server at http://h:8 broke before it answered: "
            "[Errno 104] Connection reset by peer (ReadError)",
        ),
        (  # no words (asyncio's reset): what it most likely was, as mid-stream
            httpx.ReadError(""),
            "the connection to the server at http://h:8 broke before it answered: "
            "the server reset or closed the connection (ReadError)",
        ),
        (
            httpx.RemoteProtocolError("illegal status line: bytearray(b'SSH-2.0')"),
            "the server at http://h:8 did not answer in HTTP: illegal status line: "
            "bytearray(b'SSH-2.0')",
        ),
    ],
)
def test_a_connection_that_broke_before_an_answer_is_not_said_unreachable(
    exc: httpx.HTTPError, said: str
) -> None:
    error = error_from_transport("m", exc, streaming=False, server="http://h:8")
    assert (error.code, error.message) == ("TRANSPORT", f"model 'm': {said}")


# -- 5. timeouts: how long, and which setting ----------------------------------------------


async def test_no_response_within_the_timeout_names_the_seconds_and_the_setting() -> None:
    async with WireServer([Reply(status=0)]) as server:
        at = server.url.removesuffix("/v1")
        err = await fails(entry("slow", server.url, timeout=0.3))
    assert (err.code, err.message) == (
        "TIMEOUT",
        f"model 'slow': no response from the server at {at} within 0.3 s "
        "(models.slow.timeout; ReadTimeout)",
    )


async def test_no_data_within_the_read_timeout_names_read_timeout() -> None:
    async with WireServer([sse(by_event(TEXT)[:2], then="stall")]) as server:
        at = server.url.removesuffix("/v1")
        err = await fails(entry("stall", server.url, timeout=30, read_timeout=0.3))
    assert err.message == (
        f"model 'stall': no data from the server at {at} "
        "within 0.3 s (models.stall.read_timeout; ReadTimeout)"
    )


async def test_a_timeout_of_a_shorthand_gives_the_seconds_alone() -> None:
    async with WireServer([Reply(status=0)]) as server, Harness(load_entry_points=False) as harness:
        model = await shorthand(harness, server.url)
        model._timeout.read = 0.3  # -m has no setting of it: its default is 60 s
        model.config = model.config.model_copy(update={"timeout": 0.3})
        err = await fails(model)
    assert err.message.endswith(" within 0.3 s (ReadTimeout)")


def test_a_connect_timeout_says_so_and_names_the_server() -> None:
    """A firewalled or mistyped host (the connection never opens) was said as `no
    response within 1 s (...; ConnectTimeout)`, with no address to check."""
    exc = httpx.ConnectTimeout("timed out")
    within = ((1.0, "models.far.timeout"), (1.0, "models.far.timeout"))
    error = error_from_transport("far", exc, streaming=False, server="http://h:8", within=within)
    assert (error.code, error.message) == (
        "TIMEOUT",
        "model 'far': could not connect to the server at http://h:8 within 1 s "
        "(models.far.timeout; ConnectTimeout)",
    )


# -- 6. a refused key: where it came from -----------------------------------------------


async def test_a_refused_key_names_its_variable_never_its_value() -> None:
    refused = error(401, {"error": {"message": "Incorrect API key", "code": "invalid_api_key"}})
    async with WireServer([refused]) as server:
        err = await fails(entry("wrongkey", server.url))
    assert unserved(err.message) == (
        "model 'wrongkey': HTTP 401: invalid_api_key: Incorrect API key (the key from WIRE_KEY)"
    )
