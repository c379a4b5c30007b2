"""Options given in code (``agents.create(options=...)``, ``agents.resume(..., options)``)
follow the rules of ``dsh.yml``'s ``agents[].options`` (docs/config.md): a typo of a core
option or of a loaded plugin's name, and a bad value under a plugin's name, are a
DshError before anything starts, instead of being ignored (``max_step: 2`` ran 50 steps).
Other keys stay free for plugins and programs, whatever their values."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import BaseModel

from dsh import DshError, hookimpl
from dsh.testing import InMemoryPersistence, ScriptedModel, run_turn, scripted_harness, text


class Tone(BaseModel):
    level: int
    style: Literal["plain", "warm"] = "plain"


class TonePlugin:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(Tone)


async def refused(options: dict[str, Any], config: str | None = None) -> str:
    model = ScriptedModel([])
    plugins = [("tone", TonePlugin())]
    async with scripted_harness(model, plugins=plugins, config_text=config) as harness:
        with pytest.raises(DshError) as caught:
            await harness.agents.create("a", options={"model": "scripted", **options})
        assert harness.agents.list() == []  # nothing started
        assert harness.sessions.list() == []
        assert model.requests == []
    return str(caught.value)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"max_step": 2},
            "'max_step' (not a core option or a loaded plugin's name); did you mean 'max_steps'?",
        ),
        ({"max_tokns": 9}, "did you mean 'max_tokens'?"),
        ({"quuee_mode": "batch"}, "did you mean 'queue_mode'?"),
        ({"tnoe": {"level": 1}}, "did you mean 'tone'?"),
        ({"tone": {"level": "loud"}}, "option tone.level: Input should be a valid integer"),
        (
            {"tone": {"levle": 2}},
            "option tone.levle: unknown key (expected one of: level, style); did you mean 'level'?",
        ),
        (
            {"tone": {"level": 1, "style": "wram"}},
            "option tone.style: Input should be 'plain' or 'warm'; did you mean 'warm'?",
        ),
        ({"tone": ["level"]}, "option tone: Input should be a valid dictionary"),
    ],
)
async def test_a_bad_option_in_code_is_refused_before_anything_starts(
    options: dict[str, Any], message: str
) -> None:
    assert message in await refused(options)
    assert (await refused(options)).startswith("agent 'a': ")


async def test_a_plugin_option_is_checked_over_its_section_of_the_file() -> None:
    """The section gives ``level``, so the agent's own options need not; a bad value in
    the agent's options is still refused."""
    config = "tone:\n  level: 3\n"
    model = ScriptedModel([text("ok")])
    async with scripted_harness(model, plugins=[("tone", TonePlugin())], config_text=config) as h:
        agent = await h.agents.create("a", options={"model": "scripted", "tone": {"style": "warm"}})
        assert agent.agent.options["tone"] == {"style": "warm"}
    assert "tone.style" in await refused({"tone": {"style": "cold"}}, config)


async def test_a_required_field_neither_the_options_nor_a_section_give_is_refused() -> None:
    """As for the file: with no section for the plugin, nothing gives ``level`` (it was
    let through as "the plugin's to supply", for the plugin's own check to fail later);
    with one, the section gives it."""
    message = await refused({"tone": {"style": "warm"}})
    assert message == (
        "agent 'a': option tone.level: Field required (plugin 'tone' has no section in the "
        "configuration to give it)"
    )
    assert "option tone.style: Input should be" in await refused({"tone": {"style": "wram"}})
    model = ScriptedModel([])
    plugins = [("tone", TonePlugin())]
    async with scripted_harness(model, plugins=plugins, config_text="tone: {level: 2}\n") as h:
        await h.agents.create("a", options={"model": "scripted", "tone": {"style": "warm"}})


async def test_other_keys_are_free_whatever_their_values() -> None:
    database = object()  # a program's own object, for its tools
    model = ScriptedModel([text("ok")])
    async with scripted_harness(model, plugins=[("tone", TonePlugin())]) as h:
        options = {"model": "scripted", "max_turns": 3, "prompt": "x", "db": database}
        agent = await h.agents.create("a", options=options)
        assert agent.agent.options["db"] is database
        await run_turn(agent, "hi")


async def test_resume_checks_options_given_but_not_the_stored_ones() -> None:
    store = InMemoryPersistence()
    model = ScriptedModel([text("one"), text("two")])
    async with scripted_harness(model, plugins=[("mem", store), ("tone", TonePlugin())]) as h:
        agent = await h.agents.create("a", options={"model": "scripted", "tone": {"level": 1}})
        await run_turn(agent, "hi")
        session_id = agent.session.id
        await agent.dispose()
        with pytest.raises(DshError, match="did you mean 'max_steps'"):
            await h.agents.resume("b", session_id, options={"model": "scripted", "max_step": 1})
        assert h.agents.list() == []
        resumed = await h.agents.resume("b", session_id)  # its stored options
        assert resumed.agent.options["tone"] == {"level": 1}


async def test_a_model_no_one_registered_is_refused_with_the_names_there_are() -> None:
    model = ScriptedModel([text("ok")])
    async with scripted_harness(model) as h:
        with pytest.raises(DshError) as caught:
            await h.agents.create("a", options={"model": "scripte"})
        assert str(caught.value) == (
            "agent 'a': model 'scripte' is not registered (registered: scripted); "
            "did you mean 'scripted'?"
        )
        assert h.agents.list() == []
        await h.agents.create("a", options={"model": "scripted"})


@pytest.mark.plugins("permissions")
async def test_settings_for_an_installed_plugin_left_out_are_refused() -> None:
    """Per-agent permission rules with dsh-permissions installed but not loaded would be
    enforced by nothing; a plugin turned off explicitly (``no:permissions``) may have a
    stand-in registered under another name, so its key stays free."""
    from dsh.plugins import create_plugin_manager

    options = {"model": "scripted", "permissions": {"allow": ["read"]}}
    left_out = create_plugin_manager(env={"DSH_LOAD_PLUGINS": ""})
    async with scripted_harness(ScriptedModel([]), pm=left_out) as h:
        with pytest.raises(DshError) as caught:
            await h.agents.create("a", options=options)
    assert str(caught.value) == (
        "agent 'a': option 'permissions': plugin 'permissions' is installed but not loaded, "
        "so nothing would apply these settings"
    )
    turned_off = create_plugin_manager(select=["no:permissions"])
    async with scripted_harness(ScriptedModel([]), pm=turned_off) as h:
        await h.agents.create("a", options=options)


@pytest.mark.plugins("permissions")
async def test_without_entry_points_an_installed_plugins_settings_still_need_it() -> None:
    """``load_entry_points=False`` leaves dsh-permissions out too: its rules would apply
    to nothing. A Permissions object of the same package, registered under another
    name, stands in for it; the plugin's own settings object is taken as it is."""
    from dsh_permissions import Permissions, PermissionSettings

    options = {"model": "scripted", "permissions": {"deny": ["bash"]}}
    async with scripted_harness(ScriptedModel([]), load_entry_points=False) as h:
        with pytest.raises(DshError, match="plugin 'permissions' is installed but not loaded"):
            await h.agents.create("a", options=options)
    stand_in = [("my-permissions", Permissions())]
    async with scripted_harness(ScriptedModel([]), plugins=stand_in, load_entry_points=False) as h:
        await h.agents.create("a", options=options)
        settings = PermissionSettings(deny=("bash",))
        await h.agents.create("b", options={"model": "scripted", "permissions": settings})


@pytest.mark.plugins("permissions")
async def test_stored_settings_for_a_plugin_left_out_refuse_a_resume_without_options() -> None:
    """Checked as ``create`` checks them (were said to be ignored, and the agent went on
    without its rules): the way on is to load the plugin or to pass options without
    them."""
    from dsh_permissions import Permissions

    store = InMemoryPersistence()
    options = {"model": "scripted", "permissions": {"deny": ["bash"]}}
    plugins = [("mem", store), ("my-permissions", Permissions())]
    async with scripted_harness(
        ScriptedModel([text("ok")]), plugins=plugins, load_entry_points=False
    ) as h:
        agent = await h.agents.create("a", options=options)
        await run_turn(agent, "hi")
        session_id = agent.session.id
    async with scripted_harness(
        ScriptedModel([]), plugins=[("mem", store)], load_entry_points=False
    ) as h:
        with pytest.raises(DshError) as caught:
            await h.agents.resume("a", session_id)
        await h.agents.resume("a", session_id, {"model": "scripted"})
    assert str(caught.value) == (
        "agent 'a': option 'permissions': plugin 'permissions' is installed but not loaded, "
        "so nothing would apply these settings (the 'permissions' options stored with "
        f"session {session_id}: load it, or pass options= without them)"
    )
