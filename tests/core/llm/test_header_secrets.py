"""A credential written into a model's ``headers:`` (a gateway's ``Authorization: Bearer
...``, a ``Proxy-Authorization``, an ``X-Api-Key``, an ``X-Auth-Token``) is a secret
like the model's API key: hidden from the model's errors (behaviour 13: the turn ends
``error`` with the provider's message, which goes into turn/end and the session file),
from tool results (``Harness.secrets``: a command that reads dsh.yml) and from log
records.

Before: header values were never secrets: a gateway's 401 quoting the token it was sent
put it whole into turn/end, the session file and the logs.

Also: the keys a plugin's model wrapping an ``HttpModel`` (a router, a fallback) wrote
into its inner model's ``base_url`` query are in ``Harness.secrets``; they used to be
only in the secrets of models registered as they were built (hidden from logs, not from
tool results)."""

from __future__ import annotations

from typing import Any

import pytest
from llm_wire import WireServer, error
from secrets_support import Inner, gateway

from dsh._secrets import known_keys, redact, secret_values
from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.harness import Harness
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import ModelRequest, UserMessage
from dsh.testing import run_turn

ASK = ModelRequest(messages=(UserMessage(content="hi"),))
TOKEN = "gwtok-Zq81Lm03Xv55Pp27Rr90"


def shows(text: str, secret: str = TOKEN) -> bool:
    return any(part in text for part in (secret, secret[:13], secret[-13:]))


async def test_a_gateways_401_quoting_its_authorization_header_hides_the_token() -> None:
    said = f"invalid credentials: Bearer {TOKEN}"
    async with WireServer([error(401, {"error": {"message": said}})]) as server:
        text = (
            f"models:\n  gw:\n    provider: openai\n    model: m\n    base_url: {server.url}\n"
            f"    headers: {{Authorization: 'Bearer {TOKEN}'}}\n"
            "agents:\n  - id: main\n    model: gw\n"
        )
        async with Harness(config_text=text, load_entry_points=False, env={}) as harness:
            agent = harness.agents.get("main")
            assert agent is not None
            events = await run_turn(agent, "go")
        [request] = server.requests
    assert request.all("authorization") == [f"Bearer {TOKEN}"]  # sent as given
    end: Any = events[-1]
    assert end.type == "turn/end" and end.data["reason"] == "error"
    assert "invalid credentials: Bearer ***" in end.data["error"]["message"]
    assert not shows(repr([e.data for e in events]))


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Api-Key": TOKEN},
        {"api-key": TOKEN},
        {"X-Auth-Token": TOKEN},
        {"Proxy-Authorization": f"Basic {TOKEN}"},
    ],
)
async def test_the_error_of_a_model_quoting_a_credential_header_hides_it(
    headers: dict[str, str],
) -> None:
    [(name, value)] = headers.items()
    reply = error(403, {"error": {"message": f"refused {name}: {value}"}})
    async with WireServer([reply]) as server:
        config = ModelConfig(
            provider="openai-compatible",
            model="m",
            base_url=server.url,
            headers=headers,
            max_retries=0,
        )
        async with OpenAICompatibleModel("gw", config) as model:
            with pytest.raises(ModelError) as caught:
                async for _ in model.stream(ASK):
                    pass
    assert caught.value.code == "AUTH"
    # (a scheme or a space before it may go too: with a run that ends another secret
    # known by then, "Bearer <token>", hidden first as longer)
    assert f"refused {name}:" in caught.value.message and "***" in caught.value.message
    assert not shows(caught.value.message)
    assert TOKEN in known_keys()  # log records hide it too


@pytest.mark.parametrize(
    ("name", "value", "hidden"),
    [
        ("Authorization", f"Bearer {TOKEN}", (TOKEN,)),  # the token, not the scheme
        ("authorization", f"Token  {TOKEN}", (TOKEN,)),
        ("Proxy-Authorization", f"Basic {TOKEN}", (TOKEN,)),
        ("X-Api-Key", TOKEN, (TOKEN,)),
        ("api-key", TOKEN, (TOKEN,)),
        ("X-Gateway-Secret", TOKEN, (TOKEN,)),
        ("anthropic-beta", "interleaved-thinking-2025-05-14", ()),
        ("X-Request-Source", "dsh-gateway-0123456789", ("dsh-gateway-0123456789",)),
        ("X-Title", "My gateway application", ()),
    ],
)
def test_secret_values_of_a_config_hold_its_credential_headers(
    name: str, value: str, hidden: tuple[str, ...]
) -> None:
    from dsh.config import load_config

    text = (
        "models:\n  gw:\n    provider: openai-compatible\n    model: m\n"
        f"    base_url: http://127.0.0.1:1/v1\n    headers: {{{name}: '{value}'}}\n"
    )
    config = load_config(text=text)
    found = secret_values(config, {})
    for secret in hidden:
        assert secret in found
    if not hidden:
        assert value not in found


async def test_a_command_reading_dsh_yml_shows_the_header_token_hidden() -> None:
    text = (
        "models:\n  gw:\n    provider: openai-compatible\n    model: m\n"
        "    base_url: http://127.0.0.1:1/v1\n"
        f"    headers: {{Authorization: 'Bearer {TOKEN}'}}\n"
    )
    async with Harness(config_text=text, load_entry_points=False, env={}) as harness:
        assert redact(text, harness.secrets()).endswith("headers: {Authorization: 'Bearer ***'}\n")


async def test_the_harness_secrets_know_the_keys_of_an_http_model_a_plugin_wraps() -> None:
    query = "router-SECRET-Kq93Lz01"
    async with Harness(load_entry_points=False, env={}) as harness:
        assert query not in harness.secrets()  # asked for before: not kept stale
        harness.models.add("router-plugin", Inner(gateway(TOKEN, query)), "router")
        assert query in harness.secrets()
        assert TOKEN in harness.secrets()
