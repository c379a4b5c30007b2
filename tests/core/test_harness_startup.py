"""The harness at start-up: registration, plugin sections checked by their settings
models, config-driven agents, ``harness_started``, clean exit.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from harness_support import CONFIG
from pydantic import BaseModel

from dsh import ConfigError, DshError, hookimpl
from dsh.errors import HookError
from dsh.harness import Harness
from dsh.testing import ScriptedModel, run_turn, scripted_harness


async def test_agents_in_config_start_with_the_harness_and_are_disposed_on_exit() -> None:
    model = ScriptedModel(["hi"])
    async with scripted_harness(model, config_text=CONFIG, load_entry_points=False) as h:
        helper = h.agents.get("helper")
        assert helper is not None
        assert helper.agent.options["max_steps"] == 3
        events = await run_turn(helper, "hello")
        assert events[-1].data["reason"] == "completed"
        assert model.requests[0].system == "You help."
        assert model.requests[0].model == "scripted"
    assert helper.agent.status == "disposed"
    assert h.agents.list() == []
    assert h.sessions.list() == []


async def test_plugin_settings_section_is_validated_by_its_model() -> None:
    class Settings(BaseModel):
        level: int

    class Plugin:
        @hookimpl
        def register_settings(self, register: Any) -> None:
            register(Settings)

    ok = Harness(
        plugins=[("loud", Plugin())], load_entry_points=False, config_text="loud: {level: 3}"
    )
    async with ok as h:
        assert h.config.section("loud") == Settings(level=3)
    bad = Harness(
        plugins=[("loud", Plugin())], load_entry_points=False, config_text="loud: {level: high}"
    )
    with pytest.raises(ConfigError, match=r"loud\.level"):
        async with bad:
            pass


class Level(BaseModel):
    level: int = 0


@pytest.mark.parametrize(
    ("registered", "error"),
    [
        ((dict,), "registered settings dict, a class that is not a pydantic model; it must be"),
        ((Level(),), "plugin 'loud' registered settings an instance of Level, which is not a"),
        ((Level, 3), "plugin 'loud' registered settings for section 3, not a name"),
        ((Level, ""), "plugin 'loud' registered settings for section '', not a name"),
        ((Level, "x", Level, "x"), "plugin 'loud' registers settings for section 'x' twice"),
    ],
    ids=["not-a-model", "instance", "section-int", "section-empty", "twice"],
)
async def test_settings_that_cannot_be_a_section_are_refused_naming_the_plugin(
    registered: tuple[Any, ...], error: str
) -> None:
    class Plugin:
        @hookimpl
        def register_settings(self, register: Any) -> None:
            for at in range(0, len(registered), 2):
                register(*registered[at : at + 2])

    harness = Harness(plugins=[("loud", Plugin())], load_entry_points=False)
    with pytest.raises(DshError, match=re.escape(error)):
        async with harness:
            pass


async def test_duplicate_agent_id_is_refused() -> None:
    async with scripted_harness(ScriptedModel(), load_entry_points=False) as h:
        await h.agents.create("a")
        with pytest.raises(DshError, match="agent 'a' already exists"):
            await h.agents.create("a")


async def test_agents_need_a_started_harness() -> None:
    with pytest.raises(DshError, match="not started"):
        _ = Harness(load_entry_points=False).agents


async def test_harness_started_sees_validated_config_before_agents_start() -> None:
    seen: list[str] = []

    class Settings(BaseModel):
        level: int

    class Plugin:
        @hookimpl
        def register_settings(self, register: Any) -> None:
            register(Settings)

        @hookimpl
        def harness_started(self, harness: Harness) -> None:
            section = harness.config.section("watch")
            seen.append(f"started level={section.level} agents={len(harness.agents.list())}")

        @hookimpl
        def agent_created(self, agent: Any) -> None:
            seen.append(f"created {agent.id}")

        @hookimpl
        def agent_disposed(self, agent: Any) -> None:
            seen.append(f"disposed {agent.id}")

        @hookimpl
        async def harness_stopping(self, harness: Harness) -> None:
            seen.append(f"stopping agents={len(harness.agents.list())}")

    config = CONFIG + "watch: {level: 2}\n"
    async with scripted_harness(
        ScriptedModel(), plugins=[("watch", Plugin())], load_entry_points=False, config_text=config
    ):
        pass
    assert seen == [
        "started level=2 agents=0",
        "created helper",
        "disposed helper",
        "stopping agents=0",
    ]


async def test_the_section_of_a_blocked_plugin_is_left_unchecked() -> None:
    from dsh import create_plugin_manager

    class Settings(BaseModel):
        level: int = 1

    class Shouty:
        @hookimpl
        def register_settings(self, register: Any) -> None:
            register(Settings)

    text = "shouty:\n  level: not-a-number\n"
    with pytest.raises(ConfigError, match=r"shouty\.level"):  # loaded: checked
        async with Harness(plugins=[("shouty", Shouty())], config_text=text):
            pass
    pm = create_plugin_manager([], load_entry_points=False)
    pm.set_blocked("shouty")
    async with Harness(pm=pm, config_text=text) as harness:  # -p no:shouty: left alone
        assert "shouty" not in harness.config.sections  # left alone, not validated
    with pytest.raises(ConfigError, match="section 'shouty' is for a plugin that is not"):
        async with Harness(config_text=text, load_entry_points=False):
            pass


async def test_a_failing_harness_started_stops_start_up_naming_the_plugin() -> None:
    seen: list[str] = []

    class Broken:
        @hookimpl
        def harness_started(self) -> None:
            seen.append("broken started")
            raise OSError("cannot open the audit log")

        @hookimpl
        def harness_stopping(self) -> None:
            seen.append("broken stopping")

    class After:
        @hookimpl
        def harness_started(self) -> None:
            seen.append("after started")

        @hookimpl
        def agent_created(self, agent: Any) -> None:
            seen.append(f"created {agent.id}")

    model = ScriptedModel()
    # pluggy calls the last registered first: "broken" runs before "after"
    plugins = [("after", After()), ("broken", Broken())]
    with pytest.raises(HookError) as caught:
        async with scripted_harness(
            model, plugins=plugins, load_entry_points=False, config_text=CONFIG
        ):
            seen.append("entered")
    assert (caught.value.plugin, caught.value.hook) == ("broken", "harness_started")
    assert "OSError: cannot open the audit log" in str(caught.value)
    # later impls and the config's agents never start; the harness stops again
    assert seen == ["broken started", "broken stopping"]
    assert model.requests == []
