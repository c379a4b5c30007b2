"""Options given in code (``dsh._code_options``, ``dsh._config_keys``), beyond
test_agent_options_in_code.py (found by a mutation review): a plugin's options are
checked over its section of the file (a validator across fields sees both), ``None``
stands for no settings, a nested required field is required, a model that forbids
extras lists its keys, a valid value with a stray key is still refused, a choice given
a non-str says so plainly, a field read by name counts, no registered model says
``none``; a key for a plugin turned off is warned about and the keys after it are still
checked; a plugin of another package registered under the plugin's name, or the
plugin's module under another name, stands in for it; two distributions claiming one
name do not break the check."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, model_validator

from dsh import DshError, hookimpl
from dsh.testing import ScriptedModel, scripted_harness


class Range(BaseModel):
    low: int = 0
    high: int = 10

    @model_validator(mode="after")
    def _ordered(self) -> Range:
        if self.high < self.low:
            raise ValueError("high must not be below low")
        return self


class Pitch(BaseModel):
    hz: int


class Voice(BaseModel):
    pitch: Pitch | None = None
    style: Literal["plain", "warm"] = "plain"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    size: int = 1


class Named(BaseModel):
    model_config = ConfigDict(validate_by_name=True)
    max_size: int = Field(default=1, alias="maxSize")


class Settings:
    """Registers each settings model under its plugin's name."""

    def __init__(self, model: type[BaseModel]) -> None:
        self.model = model

    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(self.model)


PLUGINS = [
    ("range", Settings(Range)),
    ("voice", Settings(Voice)),
    ("strict", Settings(Strict)),
    ("named", Settings(Named)),
]


async def create(options: dict[str, Any], config: str | None = None) -> dict[str, Any]:
    """The agent's options once created; a refusal raises DshError."""
    async with scripted_harness(ScriptedModel([]), plugins=PLUGINS, config_text=config) as h:
        agent = await h.agents.create("a", options={"model": "scripted", **options})
        return dict(agent.agent.options)


async def refused(options: dict[str, Any], config: str | None = None) -> str:
    with pytest.raises(DshError) as caught:
        await create(options, config)
    return str(caught.value)


async def test_a_plugins_options_are_validated_over_its_section() -> None:
    config = "range:\n  low: 5\n"
    assert await refused({"range": {"high": 3}}, config) == (
        "agent 'a': option range: high must not be below low"
    )
    await create({"range": {"high": 3}})  # without the section, 3 is above low's 0


async def test_none_is_no_settings() -> None:
    assert (await create({"voice": None}))["voice"] is None


async def test_a_nested_required_field_left_out_is_refused() -> None:
    """Only a required field at the top is the plugin's to supply."""
    assert await refused({"voice": {"pitch": {}}}) == (
        "agent 'a': option voice.pitch.hz: Field required"
    )


async def test_a_model_that_forbids_extras_lists_its_keys() -> None:
    assert await refused({"strict": {"sise": 2}}) == (
        "agent 'a': option strict.sise: unknown key (expected one of: size); did you mean 'size'?"
    )


async def test_a_valid_value_with_a_key_no_field_reads_is_refused() -> None:
    assert await refused({"voice": {"style": "warm", "stlye": "plain"}}) == (
        "agent 'a': option voice.stlye: unknown key (expected one of: pitch, style); "
        "did you mean 'style'?"
    )


async def test_a_choice_given_a_non_str_is_refused_plainly() -> None:
    assert await refused({"voice": {"style": 5}}) == (
        "agent 'a': option voice.style: Input should be 'plain' or 'warm'"
    )


async def test_a_field_read_by_its_name_is_not_an_unknown_key() -> None:
    assert (await create({"named": {"max_size": 3}}))["named"] == {"max_size": 3}
    assert (await create({"named": {"maxSize": 3}}))["named"] == {"maxSize": 3}


async def test_with_no_model_registered_the_message_says_none() -> None:
    async with scripted_harness() as h:
        with pytest.raises(DshError) as caught:
            await h.agents.create("a", options={"model": "gpt"})
    assert str(caught.value) == "agent 'a': model 'gpt' is not registered (registered: none)"


class Other(BaseModel):
    pitch: int = 1


async def test_a_settings_object_of_another_model_is_refused() -> None:
    assert "option voice" in await refused({"voice": Other()})


@pytest.mark.plugins("permissions")
async def test_a_plugin_turned_off_is_warned_about_and_the_other_keys_are_still_checked(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from dsh.plugins import create_plugin_manager

    turned_off = create_plugin_manager(select=["no:permissions"])
    options = {"model": "scripted", "permissions": {"deny": ["bash"]}, "max_step": 2}
    async with scripted_harness(ScriptedModel([]), pm=turned_off) as h:
        with caplog.at_level(logging.WARNING, logger="dsh.config"):
            with pytest.raises(DshError, match="did you mean 'max_steps'"):
                await h.agents.create("a", options=options)
            del options["max_step"]
            await h.agents.create("a", options=options)
    assert [r.getMessage() for r in caplog.records if r.name == "dsh.config"] == [
        "option 'permissions' is ignored: plugin 'permissions' is turned off (-p no:permissions)"
    ] * 2


class OwnRules:
    """A program's own plugin, registered under the installed plugin's name."""

    @hookimpl
    def agent_created(self, agent: Any) -> None:
        pass


@pytest.mark.plugins("permissions")
async def test_a_plugin_of_another_package_under_the_plugins_name_stands_in() -> None:
    options = {"model": "scripted", "permissions": {"deny": ["bash"]}}
    plugins = [("permissions", OwnRules())]
    async with scripted_harness(ScriptedModel([]), plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a", options=options)
        assert agent.agent.options["permissions"] == {"deny": ["bash"]}


@pytest.mark.plugins("permissions")
async def test_the_plugins_module_under_another_name_stands_in() -> None:
    """(The plugin reads an agent's ``permissions`` options under whatever name it is
    registered.)"""
    import dsh_permissions

    options = {"model": "scripted", "permissions": {"deny": ["bash"]}}
    plugins = [("guard", dsh_permissions)]
    async with scripted_harness(ScriptedModel([]), plugins=plugins, load_entry_points=False) as h:
        await h.agents.create("a", options=options)


async def test_options_for_a_name_two_distributions_claim_apply_to_nothing(
    install: Callable[..., None],
) -> None:
    """Neither distribution's plugin ever loads under a clashing name (``dsh version -v``
    marks both): its options are refused as a plugin's that is not loaded. (Was: the
    clash made the check see nothing installed, and the options were taken.)"""
    install("dsh-dup-one", "dup", "dsh_dup_one")
    install("dsh-dup-two", "dup", "dsh_dup_two")
    async with scripted_harness(ScriptedModel([]), load_entry_points=False) as h:
        with pytest.raises(DshError, match="plugin 'dup' is installed but not loaded"):
            await h.agents.create("a", options={"model": "scripted", "dup": {"x": 1}})
