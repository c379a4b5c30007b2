"""``dsh.config.agent_settings(agent, name)``: a plugin's settings for one agent, its
options laid over the plugin's section, validated by the plugin's model. A plugin
author had to layer the raw options over the section by hand (an agent's setting was
silently ignored, and a ``SecretStr`` there arrived as a plain ``str``)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, SecretStr, ValidationInfo, field_validator

from dsh import DshError, hookimpl
from dsh.config import agent_settings
from dsh.testing import ScriptedModel, scripted_harness


class VaultSettings(BaseModel):
    motto: str = "stay safe"
    limit: int = 3
    token: SecretStr = SecretStr("")


class Vault:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(VaultSettings)


def harness(config: str | None) -> Any:
    return scripted_harness(
        ScriptedModel([]), plugins=[("vault", Vault())], load_entry_points=False, config_text=config
    )


async def test_an_agent_s_options_replace_the_section_s_keys_one_by_one() -> None:
    config = "vault: {motto: from the file, limit: 5}\n"
    async with harness(config) as h:
        agent = await h.agents.create("a", options={"vault": {"limit": 9, "token": "t0k3n-long"}})
        settings = agent_settings(agent.agent, "vault")
        assert isinstance(settings, VaultSettings)
        assert (settings.motto, settings.limit) == ("from the file", 9)
        assert isinstance(settings.token, SecretStr)
        assert settings.token.get_secret_value() == "t0k3n-long"
        plain = await h.agents.create("b")  # no options: the section's own instance
        assert agent_settings(plain.agent, "vault") is h.config.section("vault")


async def test_options_without_a_section_and_neither() -> None:
    async with harness(None) as h:
        given = await h.agents.create("a", options={"vault": {"motto": "mine"}})
        assert agent_settings(given.agent, "vault") == VaultSettings(motto="mine")
        own = VaultSettings(limit=1)
        built = await h.agents.create("b", options={"vault": own})
        assert agent_settings(built.agent, "vault") is own
        plain = await h.agents.create("c")
        assert agent_settings(plain.agent, "vault") is None


async def test_a_name_no_plugin_registers_is_a_dsh_error() -> None:
    async with harness(None) as h:
        agent = await h.agents.create("a")
        with pytest.raises(DshError, match="no loaded plugin registers settings under 'vualt'"):
            agent_settings(agent.agent, "vualt")


def test_a_placeholder_agent_is_a_dsh_error_saying_so() -> None:
    """``agent_settings(None, ...)``, an impl reading settings called through the relay
    with the placeholder ``agent=None`` (docs/testing.md), raised ``AttributeError:
    'NoneType' object has no attribute 'harness'``, though a ``DshError`` is promised."""
    with pytest.raises(DshError) as caught:
        agent_settings(None, "vault")
    said = str(caught.value)
    assert said.startswith("agent_settings(None, 'vault'): the agent is None")
    assert "placeholder" in said and "scripted_harness" in said


class NoHarness:
    id = "fake"


def test_an_agent_without_a_harness_is_a_dsh_error() -> None:
    with pytest.raises(DshError, match="agent 'fake' has no harness: no settings to read"):
        agent_settings(NoHarness(), "vault")  # type: ignore[arg-type]


class CheckedSettings(VaultSettings):
    @field_validator("motto")
    @classmethod
    def _known(cls, value: str, info: ValidationInfo) -> str:
        harness = (info.context or {}).get("harness")
        if harness is not None and harness.tools.get(value) is None:
            raise ValueError(f"no tool {value!r} is registered")
        return value


class Checked:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(CheckedSettings)


async def test_options_that_fail_a_context_validator_are_a_dsh_error_naming_them() -> None:
    """A resumed session's options are validated without the harness in the context (or
    options are changed after the agent was made): a validator that checks names runs
    here, and its pydantic ValidationError escaped."""
    async with scripted_harness(
        ScriptedModel([]), plugins=[("vault", Checked())], load_entry_points=False
    ) as h:
        agent = await h.agents.create("y")
        agent.agent.options["vault"] = {"motto": "nosuch"}
        with pytest.raises(DshError) as caught:
            agent_settings(agent.agent, "vault")
    assert (
        str(caught.value)
        == "agent 'y': option vault.motto: Value error, no tool 'nosuch' is registered"
    )


async def test_an_instance_of_a_base_of_the_model_is_given_back() -> None:
    async with scripted_harness(
        ScriptedModel([]), plugins=[("vault", Checked())], load_entry_points=False
    ) as h:
        base = VaultSettings(limit=2)
        agent = await h.agents.create("a", options={"vault": base})
        assert agent_settings(agent.agent, "vault") is base


def test_an_object_with_neither_a_harness_nor_an_id_is_a_dsh_error() -> None:
    """Was: ``AttributeError`` (its ``id`` read to say which agent)."""

    class Bare:
        def __repr__(self) -> str:
            return "<bare>"

    with pytest.raises(DshError, match="agent <bare> has no harness: no settings to read"):
        agent_settings(Bare(), "vault")  # type: ignore[arg-type]
