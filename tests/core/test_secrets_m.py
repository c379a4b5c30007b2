"""``dsh._secrets``, beyond tools/test_tools_secrets.py (found by a mutation review): the
length from which a value is hidden (8 characters), the environment given in place of
the process's, one key inside another, a key that appears more than once, and a
configured model that names no key variable."""

from __future__ import annotations

import pytest

from dsh._secrets import PROVIDER_KEY_VARIABLES, key_variables, redact, secret_values
from dsh.testing import ScriptedModel, scripted_harness


@pytest.fixture(autouse=True)
def no_keys_in_the_process(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROVIDER_KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_values_of_eight_characters_and_more_are_hidden_shorter_ones_are_not() -> None:
    env = {"OPENAI_API_KEY": "12345678", "ANTHROPIC_API_KEY": "1234567", "OTHER": "abcdefghij"}
    assert secret_values(None, env) == ("12345678",)
    assert secret_values(None) == ()  # the process's own environment has no key now


def test_a_key_inside_another_is_hidden_after_the_longer_one() -> None:
    env = {"OPENAI_API_KEY": "sk-abcdefgh", "DEEPSEEK_API_KEY": "sk-abcdefgh-and-more"}
    secrets = secret_values(None, env)
    assert secrets == ("sk-abcdefgh-and-more", "sk-abcdefgh")
    shown = redact("a=sk-abcdefgh-and-more b=sk-abcdefgh", secrets)
    assert shown == "a=*** b=***"


def test_every_occurrence_of_a_key_is_hidden() -> None:
    assert redact("KEY=sk-0123456789 again sk-0123456789.", ("sk-0123456789",)) == (
        "KEY=*** again ***."
    )


async def test_a_configured_model_without_a_key_variable_adds_none() -> None:
    config = (
        "models:\n"
        "  local: {provider: openai-compatible, base_url: 'http://127.0.0.1:9/v1', model: m}\n"
        "  gw: {provider: openai-compatible, base_url: 'http://127.0.0.1:9/v1', model: m,"
        " api_key_env: MY_GATEWAY_KEY}\n"
    )
    async with scripted_harness(ScriptedModel([]), config_text=config) as harness:
        names = key_variables(harness.config)
        values = secret_values(harness.config, {"MY_GATEWAY_KEY": "gw-secret-abcdefgh"})
    assert names == {*PROVIDER_KEY_VARIABLES, "MY_GATEWAY_KEY"}
    assert values == ("gw-secret-abcdefgh",)
