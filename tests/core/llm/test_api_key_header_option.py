"""``api_key_header`` (the header the API key travels in) and ``max_wait`` (the longest
server-asked wait that is waited for) set from dsh.yml, as ``models.<name>.*``.

Before: the OpenAI-compatible adapter always sent ``Authorization: Bearer <key>`` and the
Anthropic one ``x-api-key``, so Azure OpenAI (which wants ``api-key: <key>``) was out of
reach of a dsh.yml; and ``max_wait`` (60 s) was a constructor argument only. Real
requests over the loopback server; the request's headers show where the key went."""

from __future__ import annotations

import logging

import pytest
from llm_wire import Received, Reply, WireServer, error, sse, unserved
from test_providers_study_openai import answer

from dsh._secrets import redact
from dsh.errors import ConfigError
from dsh.harness import Harness
from dsh.testing import run_turn

KEY = "sk-azure-aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3"
ENV = {"DSH_WIRE_KEY": KEY}


def config(url: str, extra: str = "", provider: str = "openai-compatible") -> str:
    return (
        f"models:\n  wire:\n    provider: {provider}\n    model: m\n"
        f"    base_url: {url}\n    api_key_env: DSH_WIRE_KEY\n{extra}"
        "agents:\n  - id: main\n    model: wire\n"
    )


async def turn(
    replies: list[Reply], extra: str, provider: str = "openai-compatible", query: str = ""
) -> tuple[list[Received], dict[str, object]]:
    """The requests one turn sends, and its turn/end data."""
    async with WireServer(replies) as server:
        text = config(server.url + query, extra, provider)
        async with Harness(config_text=text, load_entry_points=False, env=ENV) as h:
            agent = h.agents.get("main")
            assert agent is not None
            events = await run_turn(agent, "hello")
        return server.requests, events[-1].data


async def refused(extra: str) -> ConfigError:
    text = config("http://127.0.0.1:9/v1", extra)
    with pytest.raises(ConfigError) as caught:
        async with Harness(config_text=text, load_entry_points=False, env=ENV):
            pass
    assert KEY not in str(caught.value)
    return caught.value


# -- api_key_header ---------------------------------------------------------------------


async def test_azure_s_api_key_header_carries_the_bare_key_and_no_authorization() -> None:
    requests, end = await turn(
        [sse(answer("hi."))], "    api_key_header: api-key\n", query="?api-version=2024-10-21"
    )
    assert end["reason"] == "completed"
    [request] = requests
    assert request.headers["api-key"] == KEY
    assert "authorization" not in request.headers
    assert request.path == "/v1/chat/completions?api-version=2024-10-21"


async def test_without_api_key_header_the_key_is_a_bearer_token() -> None:
    requests, _ = await turn([sse(answer("hi."))], "")
    assert requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert "api-key" not in requests[0].headers


@pytest.mark.parametrize(
    ("setting", "name", "value"),
    [
        ("", "x-api-key", KEY),  # Anthropic's own
        ("    api_key_header: Authorization\n", "authorization", f"Bearer {KEY}"),
        ("    api_key_header: api-key\n", "api-key", KEY),
    ],
)
async def test_api_key_header_on_an_anthropic_model(setting: str, name: str, value: str) -> None:
    settings = setting + "    max_retries: 0\n"
    requests, _ = await turn([error(500, b"x")], settings, provider="anthropic")
    [request] = requests
    assert request.headers[name] == value
    others = {"x-api-key", "authorization", "api-key"} - {name}
    assert not others & set(request.headers)


@pytest.mark.parametrize(
    ("setting", "reason"),
    [
        (
            "api key",
            "must be an HTTP header name (letters, digits and - mostly), e.g. api-key",
        ),
        ("'api-key:'", "must be an HTTP header name (letters, digits and - mostly), e.g. api-key"),
        ("Content-Type", "must not be 'Content-Type': dsh sets that header itself"),
        ("''", "must be an HTTP header name (letters, digits and - mostly), e.g. api-key"),
        ("7", "Input should be a string, not a number"),
    ],
)
async def test_a_bad_api_key_header_names_the_line_and_the_key(setting: str, reason: str) -> None:
    caught = await refused(f"    api_key_header: {setting}\n")
    assert (caught.source, caught.path) == ("<string>:7:5", "models.wire.api_key_header")
    assert caught.reason == reason


async def test_api_key_header_also_in_headers_is_refused() -> None:
    caught = await refused("    headers: {API-Key: x}\n    api_key_header: api-key\n")
    assert (caught.source, caught.path) == ("<string>:8:5", "models.wire.api_key_header")
    assert caught.reason == (
        "names a header that headers also sets ('API-Key'): the key would be replaced; "
        "drop it from headers"
    )


async def test_api_key_header_without_a_key_to_send_is_refused() -> None:
    text = (
        "models:\n  wire:\n    provider: openai-compatible\n    model: m\n"
        "    base_url: http://127.0.0.1:9/v1\n    api_key_header: api-key\n"
    )
    with pytest.raises(ConfigError) as caught:
        async with Harness(config_text=text, load_entry_points=False, env=ENV):
            pass
    assert (caught.value.source, caught.value.path) == (
        "<string>:6:5",
        "models.wire.api_key_header",
    )
    assert "sends no key without api_key_env" in caught.value.reason


async def test_a_key_in_the_api_key_header_stays_out_of_logs_and_errors(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Leak paths: a server echoing the header back (httpcore's DEBUG record of the
    response headers) and quoting it in a 401's body (the error, turn/end)."""
    echoed = {"content-type": "application/json", "api-key": KEY}
    denied = Reply(401, b'{"error": {"message": "bad api-key ' + KEY.encode() + b'"}}', echoed)
    with caplog.at_level(logging.DEBUG):
        requests, end = await turn([denied], "    api_key_header: api-key\n")
    assert requests[0].headers["api-key"] == KEY
    assert any("api-key" in r.getMessage() for r in caplog.records if r.name.startswith("httpcore"))
    for record in caplog.records:
        assert redact(record.getMessage(), (KEY,)) == record.getMessage(), record.name
    assert end["reason"] == "error"
    assert KEY not in str(end["error"]) and "bad api-key" in str(end["error"])


# -- max_wait ---------------------------------------------------------------------------


async def test_max_wait_from_dsh_yml_bounds_the_wait_for_a_retry_after() -> None:
    """A retry-after of 2 s is waited for by default (60 s) but not with max_wait: 1."""
    limited = error(429, {"error": {"message": "slow down"}}, {"retry-after": "2"})
    requests, end = await turn([limited, sse(answer("hi."))], "    max_wait: 1\n")
    assert len(requests) == 1
    assert {**end["error"], "message": unserved(end["error"]["message"])} == {
        "code": "RATE_LIMIT",
        "message": "model 'wire': HTTP 429: slow down (the server asks to wait 2 s, more "
        "than max_wait 1 s: models.wire.max_wait)",
        "retry_after": 2.0,
    }


async def test_a_retry_after_within_max_wait_is_waited_for() -> None:
    limited = error(429, {"error": {"message": "slow down"}}, {"retry-after": "0.2"})
    requests, end = await turn([limited, sse(answer("hi."))], "    max_wait: 0.5\n")
    assert end["reason"] == "completed"
    first, second = requests
    assert second.at - first.at >= 0.15  # a lower bound only: a slow machine waits longer


async def test_max_wait_zero_waits_for_no_retry_after() -> None:
    limited = error(429, {"error": {"message": "slow down"}}, {"retry-after": "0.1"})
    requests, end = await turn([limited, sse(answer("hi."))], "    max_wait: 0\n")
    assert len(requests) == 1 and end["reason"] == "error"


async def test_max_wait_is_the_models_info() -> None:
    text = config("http://127.0.0.1:9/v1", "    max_wait: 12.5\n")
    async with Harness(config_text=text, load_entry_points=False, env=ENV) as h:
        assert h.models.get("wire", agent="main").info.max_wait == 12.5
    async with Harness(
        config_text=config("http://127.0.0.1:9/v1"), load_entry_points=False, env=ENV
    ) as h:
        assert h.models.get("wire", agent="main").info.max_wait == 60.0


@pytest.mark.parametrize(
    ("setting", "reason"),
    [
        ("-1", "Input should be greater than or equal to 0"),
        ("'60'", "Input should be a valid number"),
        ("yes", "Input should be a valid number"),
    ],
)
async def test_a_bad_max_wait_names_the_line_and_the_key(setting: str, reason: str) -> None:
    caught = await refused(f"    max_wait: {setting}\n")
    assert (caught.source, caught.path) == ("<string>:7:5", "models.wire.max_wait")
    assert caught.reason.startswith(reason)
