"""A built-in provider (openai, anthropic) pointed at another ``base_url`` sends its
default variable's key (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``) only if it is set;
its ``headers:`` may then carry a gateway's own credentials in the header the key would
travel in. The header given in ``headers:`` wins, whatever its case, and is sent once.

Before: both went: ``authorization: Bearer <OPENAI_API_KEY>`` from the adapter and
``Authorization: Bearer <gateway token>`` from ``headers:`` (two Authorization headers,
the server free to pick either; the provider's key sent to a server that was not the
provider's). The same for a header the adapter sets, such as ``anthropic-version``,
given in another case. Real requests over the loopback server, every header line seen."""

from __future__ import annotations

import pytest
from llm_wire import Received, WireServer, recorded, sse
from test_providers_study_openai import answer

from dsh.harness import Harness
from dsh.testing import run_turn

KEY = "sk-provider-aB3dE5gH7jK9mN1pQ3sT5v"
TOKEN = "gateway-token-0123456789"


async def sent(provider: str, headers: str, variable: str) -> tuple[Received, dict[str, object]]:
    """The request one turn sends, and its turn/end data."""
    reply = sse(answer("hi") if provider == "openai" else recorded("anthropic_max_tokens.sse"))
    async with WireServer([reply]) as server:
        text = (
            f"models:\n  gw:\n    provider: {provider}\n    model: m\n"
            f"    base_url: {server.url}\n    headers: {headers}\n"
            "agents:\n  - id: main\n    model: gw\n"
        )
        env = {variable: KEY}
        async with Harness(config_text=text, load_entry_points=False, env=env) as h:
            agent = h.agents.get("main")
            assert agent is not None
            events = await run_turn(agent, "hello")
        [request] = server.requests
        return request, events[-1].data


@pytest.mark.parametrize("name", ["Authorization", "authorization", "AUTHORIZATION"])
async def test_openai_s_authorization_in_headers_is_sent_once_in_place_of_the_key(
    name: str,
) -> None:
    request, end = await sent("openai", f"{{{name}: 'Bearer {TOKEN}'}}", "OPENAI_API_KEY")
    assert end["reason"] != "error", end
    assert request.all("authorization") == [f"Bearer {TOKEN}"]
    assert KEY not in str(request.lines)


@pytest.mark.parametrize("name", ["X-Api-Key", "x-api-key"])
async def test_anthropic_s_x_api_key_in_headers_is_sent_once_in_place_of_the_key(
    name: str,
) -> None:
    request, end = await sent("anthropic", f"{{{name}: {TOKEN}}}", "ANTHROPIC_API_KEY")
    assert end["reason"] != "error", end
    assert request.all("x-api-key") == [TOKEN]
    assert KEY not in str(request.lines)


async def test_a_header_the_adapter_sets_given_in_another_case_is_sent_once() -> None:
    request, end = await sent("anthropic", "{Anthropic-Version: '2099-01-01'}", "X_UNSET")
    assert end["reason"] != "error", end
    assert request.all("anthropic-version") == ["2099-01-01"]
    assert request.all("x-api-key") == []  # no key set: none sent


async def test_without_it_in_headers_the_default_variables_key_is_sent() -> None:
    request, end = await sent("openai", "{X-Title: dsh}", "OPENAI_API_KEY")
    assert end["reason"] != "error", end
    assert request.all("authorization") == [f"Bearer {KEY}"]
    assert request.all("x-title") == ["dsh"]
