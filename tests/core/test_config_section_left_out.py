"""A section of dsh.yml for a plugin that is installed but left out of this run
(``DSH_LOAD_PLUGINS``, ``load_entry_points=False``) is refused as such: the message
said "not installed or not loaded" and listed the loaded plugins, as for a typo. So is
one for a plugin that is loaded but registers no settings, or registers them for another
section."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pydantic import BaseModel

from dsh import hookimpl
from dsh.errors import ConfigError
from dsh.plugins import PluginManager, create_plugin_manager
from dsh.testing import ScriptedModel, scripted_harness

SECTION = "permissions:\n  allow: [read]\n"
LEFT_OUT = (
    "<string>:1:1: permissions: section 'permissions' is for plugin 'permissions', which "
    "is installed but not loaded: load it (DSH_LOAD_PLUGINS, -p permissions) or remove "
    "the section"
)


async def config_error(
    config: str, pm: PluginManager | None = None, load_entry_points: bool = True
) -> str:
    model = ScriptedModel([])
    with pytest.raises(ConfigError) as caught:
        async with scripted_harness(
            model, pm=pm, load_entry_points=load_entry_points, config_text=config
        ):
            pass
    return str(caught.value)


@pytest.mark.plugins("permissions")
async def test_a_section_for_an_installed_plugin_left_out_says_so() -> None:
    pm = create_plugin_manager(env={"DSH_LOAD_PLUGINS": ""})  # none: each set has others
    assert await config_error(SECTION, pm=pm) == LEFT_OUT
    assert await config_error(SECTION, load_entry_points=False) == LEFT_OUT


async def test_a_section_for_a_plugin_not_installed_keeps_its_wording() -> None:
    pm = create_plugin_manager(env={"DSH_LOAD_PLUGINS": ""})
    message = await config_error("shell:\n  x: 1\n", pm=pm)
    assert message.startswith(
        "<string>:1:1: shell: section 'shell' is for a plugin that is not installed or not "
        "loaded (loaded plugins with settings: none)"
    )


async def test_a_section_for_a_loaded_plugin_without_settings_says_so() -> None:
    """It said "not installed or not loaded" while the plugin ran (and "ok" with
    ``-p no:quiet``): the plugin is loaded, it registers no settings."""
    model = ScriptedModel([])
    with pytest.raises(ConfigError) as caught:
        async with scripted_harness(
            model, plugins=[("quiet", _NoSettings())], config_text="quiet: {enabled: true}\n"
        ):
            pass
    assert str(caught.value) == (
        "<string>:1:1: quiet: plugin 'quiet' is loaded but takes no settings (it registers "
        "none); remove the section"
    )


class _NoSettings:
    """A plugin that registers no settings (as examples/dsh-shout)."""


class _Level(BaseModel):
    level: int = 1


@pytest.mark.parametrize("sections", [("tuning",), ("tuning", "more")])
async def test_a_section_for_a_loaded_plugin_reading_another_says_which(
    sections: tuple[str, ...],
) -> None:
    """It said "takes no settings (it registers none)" of a plugin that registers them
    for another section."""

    class Plugin:
        @hookimpl
        def register_settings(self, register: Callable[..., None]) -> None:
            for section in sections:
                register(_Level, section=section)

    model = ScriptedModel([])
    with pytest.raises(ConfigError) as caught:
        async with scripted_harness(
            model, plugins=[("fancy", Plugin())], config_text="fancy: {level: 2}\n"
        ):
            pass
    read = "section 'tuning'" if len(sections) == 1 else "sections 'tuning', 'more'"
    assert str(caught.value) == (
        f"<string>:1:1: fancy: plugin 'fancy' is loaded but reads its settings from "
        f"{read}, not 'fancy'; move them there"
    )


@pytest.mark.parametrize("name", ["compaction", "permissions", "persistence"])
def test_a_section_for_a_first_party_plugin_not_installed_names_what_to_install(
    name: str,
) -> None:
    """With dsh-core alone it said "not installed or not loaded (loaded plugins with
    settings: none)", naming nothing to install (new-user journey review); ``dsh
    sessions`` names dsh-persistence the same way."""
    from dsh.config import load_config

    with pytest.raises(ConfigError) as caught:
        load_config(text=f"{name}:\n  x: 1\n", settings={}, missing=lambda plugin: True)
    assert caught.value.reason == (
        f"section {name!r} is for dsh-{name}, which is not installed: install dsh-{name}, "
        "or remove the section"
    )


def test_a_section_for_another_plugin_not_installed_is_said_as_before() -> None:
    from dsh.config import load_config

    with pytest.raises(ConfigError) as caught:
        load_config(text="shell:\n  x: 1\n", settings={}, missing=lambda plugin: True)
    assert caught.value.reason == (
        "section 'shell' is for a plugin that is not installed or not loaded "
        "(loaded plugins with settings: none)"
    )


def test_agent_options_for_a_first_party_plugin_not_installed_are_refused() -> None:
    """With dsh-core alone, ``agents[].options.permissions`` was taken as a free key:
    the agent's deny rules applied to nothing, unsaid, while a ``permissions:`` section
    was refused."""
    from dsh.config import load_config

    text = "agents:\n  - id: main\n    options:\n      permissions: {deny: [bash]}\n"
    with pytest.raises(ConfigError) as caught:
        load_config(text=text, settings={}, missing=lambda plugin: True)
    assert caught.value.path == "agents[0].options.permissions"
    assert caught.value.reason == (
        "option 'permissions' is for dsh-permissions, which is not installed: install "
        "dsh-permissions, or remove the option"
    )
    # a command that starts no agent only warns; a free key of another name stays free
    load_config(text=text, settings={}, missing=lambda plugin: True, starts_agents=False)
    free = "agents:\n  - id: main\n    options:\n      shell: {x: 1}\n"
    load_config(text=free, settings={}, missing=lambda plugin: True)
