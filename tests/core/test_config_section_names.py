"""``config.section(name)`` for a name no loaded plugin registers settings under (a
misspelt one) is a ``DshError`` naming those that do, as ``agent_settings`` refuses it:
it was None, so a plugin's guard read "no section" and silently did nothing. A
registered plugin whose section the file lacks still reads None."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from dsh import DshError, hookimpl
from dsh.config import load_config
from dsh.harness import Harness
from dsh.testing import ScriptedModel, scripted_harness


class Tokens(BaseModel):
    limit: int = 100


class Guard:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(Tokens)


@pytest.mark.parametrize("config_text", ["tokens: {limit: 5}\n", None])
async def test_a_name_no_plugin_registers_is_refused_naming_those_that_do(
    config_text: str | None,
) -> None:
    async with scripted_harness(
        ScriptedModel([]),
        plugins=[("tokens", Guard())],
        load_entry_points=False,
        config_text=config_text,
    ) as harness:
        with pytest.raises(DshError) as info:
            harness.config.section("tokns")
        assert str(info.value) == (
            "config.section('tokns'): no loaded plugin registers settings under 'tokns' "
            "(registered: tokens)"
        )
        with pytest.raises(DshError):
            harness.config.section("tokns", Tokens)
        expected = None if config_text is None else Tokens(limit=5)
        assert harness.config.section("tokens") == expected


def test_a_config_loaded_without_the_plugins_settings_does_not_know_the_names() -> None:
    # which plugins register settings is not known: no name can be refused
    assert load_config(text="agents: []\n").section("anything") is None
    with pytest.raises(DshError, match=r"\(registered: none\)"):
        load_config(text="agents: []\n", settings={}).section("anything")


class Other(BaseModel):
    path: str = "x"


async def test_a_config_loaded_for_some_plugins_knows_every_plugin_the_harness_loads() -> None:
    """``load_config(settings={"audit": ...})`` given to a harness that loads another
    plugin with settings: that plugin's ``section()`` was refused ("no loaded plugin
    registers settings under 'tokens' (registered: audit)"), and its guard failed."""
    config = load_config(text="audit: {path: y}\n", settings={"audit": Other})
    async with Harness(config=config, plugins=[("tokens", Guard())], load_entry_points=False) as h:
        assert h.config.section("tokens") is None
        with pytest.raises(DshError, match=r"registered: audit, tokens"):
            h.config.section("tokns")
