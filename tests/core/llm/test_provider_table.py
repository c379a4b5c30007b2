"""The built-in providers' facts (default base_url, key variable, the header the key
travels in) are written once, in ``dsh._provider_table``: the adapters, ``PROVIDERS``,
the check of ``models.<name>.headers`` (``dsh._config_models``) and the key variables
hidden from tool results (``dsh._secrets``) all read them there.

Before: ``dsh._config_models`` kept its own table of each provider's key header and of
the providers that send a key of their own, which a new provider (or header) had to be
added to by hand, or a ``headers:`` entry duplicating the key's header went unchecked."""

from __future__ import annotations

from typing import Any

import pytest
from llm_wire import WireServer, error
from pydantic import ValidationError

from dsh import _provider_table
from dsh._secrets import PROVIDER_KEY_VARIABLES
from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.llm.providers import PROVIDERS, build_model
from dsh.messages import ModelRequest, UserMessage

KEY = "sk-table-aB3dE5gH7jK9mN1pQ3sT5v"
ASK = ModelRequest(messages=(UserMessage(content="hi"),))


def test_providers_and_the_secret_variables_are_the_tables() -> None:
    assert {
        name: (p.base_url, p.api_key_env, p.adapter.protocol) for name, p in PROVIDERS.items()
    } == {
        name: (f.base_url, f.api_key_env, f.protocol)
        for name, f in _provider_table.BUILT_IN.items()
    }
    assert set(PROVIDER_KEY_VARIABLES) == {
        f.api_key_env for f in _provider_table.BUILT_IN.values() if f.api_key_env
    }


@pytest.mark.parametrize("provider", list(PROVIDERS))
async def test_the_header_checked_in_headers_is_the_one_the_key_travels_in(
    provider: str,
) -> None:
    async with WireServer([error(400, {"error": {"message": "no"}})]) as server:
        config = ModelConfig(
            provider=provider, model="m", base_url=server.url, api_key_env="K", max_retries=0
        )
        model = build_model("t", config, env={"K": KEY})
        async with model:
            with pytest.raises(ModelError):
                async for _ in model.stream(ASK):
                    pass
    [carrier] = [name for name, value in server.requests[0].lines if KEY in value]
    with pytest.raises(ValidationError, match="carries the key"):
        ModelConfig(provider=provider, api_key_env="K", headers={carrier.upper(): "x"})


def test_the_check_of_headers_reads_the_table(monkeypatch: Any) -> None:
    monkeypatch.setitem(_provider_table.KEY_HEADERS, "anthropic", "x-other-key")
    ModelConfig(provider="anthropic", api_key_env="K", headers={"X-Api-Key": "x"})
    with pytest.raises(ValidationError, match="carries the key"):
        ModelConfig(provider="anthropic", api_key_env="K", headers={"X-Other-Key": "x"})


def test_the_table_is_plain_tuples() -> None:
    # a frozen slotted dataclass cost ~0.6 ms at every `dsh` start (the config and the
    # secrets import the table): its rows are NamedTuples
    assert issubclass(_provider_table.Facts, tuple)
    assert _provider_table.BUILT_IN["openai"].api_key_env == "OPENAI_API_KEY"


def test_the_providers_tried_by_their_keys_read_the_table() -> None:
    from dsh.llm.choose import ENV_PROVIDERS

    for variable, shorthand in ENV_PROVIDERS:
        assert _provider_table.BUILT_IN[shorthand.partition(":")[0]].api_key_env == variable
    assert {variable for variable, _ in ENV_PROVIDERS} == set(_provider_table.KEY_VARIABLES)
