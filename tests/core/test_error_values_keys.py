"""Errors of the Python API that quote a value given: a key given as the value (pasted
into the wrong place) is ``***`` and a long value is cut, as a config error quotes one
(``dsh._quoted.shown``). Was: quoted whole, key and all (``_options.py``
core_option_problem, ``_code_options.py`` model_problem, ``llm/providers.py``'s
unknown provider, of a ``models:`` entry and of ``-m provider:model``)."""

from __future__ import annotations

import pytest

from dsh import DshError
from dsh.config import ConfigError, ModelConfig
from dsh.llm.providers import build_model, parse_model_shorthand
from dsh.testing import ScriptedModel, scripted_harness

KEY = "sk-test-Wq9eRt4yUi2oPa6sDf8gHj1kLz3xCv5bNm7qWe0rT"  # sk-test- and 40 more


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def _hidden(text: str) -> None:
    for piece in (KEY[:16], KEY[16:32], KEY[-16:]):
        assert piece not in text, text


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"queue_mode": f"x-api-key: {KEY}"}, "option 'queue_mode' must be "),
        ({"model": KEY}, "unknown model (the name given looks like an API key, not shown"),
    ],
    ids=["core option", "model"],
)
async def test_an_option_holding_a_key_is_refused_with_the_key_hidden(
    options: dict[str, str], said: str
) -> None:
    async with scripted_harness(ScriptedModel([]), load_entry_points=False) as harness:
        with pytest.raises(DshError) as info:
            await harness.agents.create("a", options=options)
    assert said in str(info.value)
    _hidden(str(info.value))


def test_a_core_options_long_value_is_not_quoted() -> None:
    # a core option's value is named by its kind only (not cut: not quoted at all)
    from dsh._options import core_option_problem

    problem = core_option_problem({"queue_mode": "q" * 500})
    assert problem == "option 'queue_mode' must be 'batch' or 'one-at-a-time'"
    problem = core_option_problem({"max_tokens": "q" * 500})
    assert problem == "option 'max_tokens' must be an int > 0, not a str"


@pytest.mark.parametrize("provider", [KEY, f"{KEY}{'x' * 100}"], ids=["key", "long"])
def test_an_unknown_provider_is_named_with_a_key_hidden(provider: str) -> None:
    with pytest.raises(ConfigError) as info:
        build_model("m", ModelConfig(provider=provider, base_url="http://127.0.0.1:9/v1"))
    assert "unknown provider '***" in str(info.value)
    _hidden(str(info.value))


def test_an_unknown_provider_of_m_is_named_with_a_key_hidden() -> None:
    with pytest.raises(ConfigError) as info:
        parse_model_shorthand(f"{KEY}:tiny@http://127.0.0.1:9/v1")
    assert "unknown provider '***'" in str(info.value)
    _hidden(str(info.value))
