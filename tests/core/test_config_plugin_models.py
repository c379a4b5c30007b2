"""A model a plugin registers (``register_models``) is named in dsh.yml once ``models:``
declares it with a provider dsh does not build (docs/testing.md, docs/models.md). A name
that is not declared was refused as "unknown model 'scripted' (models defined: none;
local is built in)" while ``dsh -m scripted`` and ``dsh models`` knew it: the refusal now
names the plugin and the entry to add."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_m_args_support import Install
from cli_m_args_support import _quiet_env as _quiet_env  # an autouse fixture
from loop_support import Models
from pydantic import BaseModel

from dsh import ModelName, hookimpl
from dsh.cli import main
from dsh.errors import ConfigError
from dsh.llm.base import ModelInfo
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text

DECLARE = (
    "model 'scripted' is registered by plugin 'scripted-models' but not declared in "
    "models: (dsh.yml names the models it declares, and local); add models: {scripted: "
    "{provider: scripted}}"
)


async def refused(config: str, *models: ScriptedModel) -> str:
    with pytest.raises(ConfigError) as caught:
        async with scripted_harness(*models, config_text=config):
            pass
    return str(caught.value)


async def test_an_agent_s_model_registered_by_a_plugin_is_said_to_be_one() -> None:
    said = await refused("model: scripted\n", ScriptedModel([]))
    assert said == f"<string>:1:1: model: {DECLARE}"
    said = await refused("agents:\n  - {id: a, model: scripted}\n", ScriptedModel([]))
    assert said == f"<string>:2:13: agents[0].model: {DECLARE}"


async def test_declared_as_the_message_says_the_model_answers() -> None:
    model = ScriptedModel([text("hi")])
    config = "models: {scripted: {provider: scripted}}\nmodel: scripted\n"
    async with scripted_harness(model, config_text=config) as harness:
        await run_turn(await harness.agents.create("a"), "hello")
    assert len(model.requests) == 1


class _SummarySettings(BaseModel):
    model: ModelName | None = None


class _Summaries:
    @hookimpl
    def register_settings(self, register: Callable[..., None]) -> None:
        register(_SummarySettings)


async def test_a_plugin_setting_naming_a_plugin_model_is_told_the_same() -> None:
    with pytest.raises(ConfigError) as caught:
        async with scripted_harness(
            ScriptedModel([]),
            plugins=[("summ", _Summaries())],
            config_text="summ: {model: scripted}\n",
        ):
            pass
    assert str(caught.value) == f"<string>:1:8: summ.model: {DECLARE}"


class _Gateway(ScriptedModel):
    """A plugin's model that says it speaks a provider dsh builds: declared under that
    provider, dsh would build its own model of the same name (registered twice)."""

    @property
    def info(self) -> ModelInfo:
        return ModelInfo(self.name, "openai")


async def test_a_plugin_model_of_a_built_in_provider_is_declared_with_another() -> None:
    said = await refused("model: gw\n", _Gateway([], name="gw"))
    assert said.endswith("add models: {gw: {provider: scripted-models}}")


def test_config_check_says_which_plugin_registers_the_model(
    with_plugins: Install, capsys: pytest.CaptureFixture[str]
) -> None:
    with_plugins(("scr", Models(ScriptedModel([]))))
    Path("dsh.yml").write_text("model: scripted\n")
    assert main(["config", "check"]) == 1
    said = DECLARE.replace("'scripted-models'", "'scr'")
    assert capsys.readouterr().err == f"dsh: {Path.cwd() / 'dsh.yml'}:1:1: model: {said}\n"
    Path("dsh.yml").write_text("models: {scripted: {provider: scripted}}\nmodel: scripted\n")
    assert main(["config", "check"]) == 0


@pytest.mark.parametrize(
    "name",
    ["1.5", "yes", "on", "null", "0x1F", "2024-01-01", "~", 'a"b', "a: b", "it's", "m\U0001f600"],
)
async def test_the_entry_to_add_reads_back_as_the_name(name: str) -> None:
    # YAML reads a plain 1.5, yes, null or 2024-01-01 as a number, true, null or a date,
    # and "a"b" was quoted unescaped: following the message was refused again
    model = ScriptedModel([text("hi")], name=name)
    chosen = f"model: {json.dumps(name, ensure_ascii=False)}\n"
    said = await refused(chosen, model)
    entry = said.split("add ", 1)[1]
    async with scripted_harness(model, config_text=entry + "\n" + chosen) as harness:
        await run_turn(await harness.agents.create("a"), "hello")
    assert len(model.requests) == 1
