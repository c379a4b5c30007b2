"""An API key pasted where a model's name goes is not quoted in the error refusing it,
whichever way it came: ``dsh -m <key>``, ``options={"model": <key>}`` given in code, a
plugin's ``ModelName`` setting given in code, or a model asked for by name at a turn
(``ModelRegistry.get``). Each says the name looks like an API key, as dsh.yml's
``model:`` does, and still lists the models there are. A misspelt name is quoted.

Before: only dsh.yml's ``model:`` hid it; the others quoted the key whole."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from dsh import DshError, ModelName, hookimpl
from dsh.errors import ModelError
from dsh.harness import Harness
from dsh.llm.choose import choose_model
from dsh.testing import ScriptedModel, scripted_harness

KEY = "sk-proj-Q3xv9LkT2mWp8RzN4bYc7HdJ1fGs6EaK0uVo5iXy"
SAID = "unknown model (the name given looks like an API key, not shown"


def not_shown(error: BaseException) -> str:
    said = str(error)
    assert KEY not in said and KEY[:12] not in said and KEY[-12:] not in said, said
    assert SAID in said, said
    return said


FAST = "models:\n  fast: {provider: openai-compatible, base_url: 'http://127.0.0.1:9'}\n"


@pytest.mark.parametrize("config", [None, FAST])
async def test_a_key_given_with_dash_m(config: str | None) -> None:
    async with Harness(load_entry_points=False, config_text=config) as harness:
        with pytest.raises(DshError) as refused:
            choose_model(harness, KEY, {})
    said = not_shown(refused.value)
    assert said.startswith("-m: ")
    assert "models defined: fast" in said if config else "no model is defined" in said


async def test_a_key_given_as_the_model_option_in_code() -> None:
    async with scripted_harness(ScriptedModel([]), load_entry_points=False) as harness:
        with pytest.raises(DshError) as refused:
            await harness.agents.create("a", options={"model": KEY})
    assert "registered: scripted" in not_shown(refused.value)


class _Summaries(BaseModel):
    model: ModelName | None = None


class _SummariesPlugin:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(_Summaries, section="summaries")


async def test_a_key_given_as_a_plugins_model_setting_in_code() -> None:
    plugins: list[Any] = [("summaries", _SummariesPlugin())]
    async with scripted_harness(ScriptedModel([]), plugins=plugins) as harness:
        options = {"model": "scripted", "summaries": {"model": KEY}}
        with pytest.raises(DshError) as refused:
            await harness.agents.create("a", options=options)
    said = not_shown(refused.value)
    assert "option summaries.model" in said and "registered: scripted" in said


async def test_a_key_asked_for_at_a_turn() -> None:
    async with scripted_harness(ScriptedModel([]), load_entry_points=False) as harness:
        with pytest.raises(ModelError) as refused:
            harness.models.get(KEY, agent="a")
    said = not_shown(refused.value)
    assert "agent 'a' asks for an unknown model (" in said and "registered: scripted" in said


async def test_a_misspelt_name_is_still_quoted() -> None:
    async with scripted_harness(ScriptedModel([]), load_entry_points=False) as harness:
        with pytest.raises(DshError) as refused:
            await harness.agents.create("a", options={"model": "scriptd"})
        with pytest.raises(DshError) as chosen:
            choose_model(harness, "scriptd", {})
    assert "'scriptd'" in str(refused.value) and "'scriptd'" in str(chosen.value)
