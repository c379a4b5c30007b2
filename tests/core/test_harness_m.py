"""Harness details the numbered behaviours leave open: each test here fails on a concrete
mutant of ``dsh.harness`` that the other tests let through."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from pydantic import BaseModel

from dsh import DshError, hookimpl
from dsh.config import load_config
from dsh.harness import Harness
from dsh.messages import Message, UserMessage
from dsh.session import CORE_REDUCERS, SessionEvent
from dsh.testing import ScriptedModel, run_turn, scripted_harness

LIMIT = 5  # seconds; a broken exit fails instead of hanging

CONFIG = """
model: scripted
models:
  scripted: {provider: scripted}
agents:
  - id: helper
"""


class Lifecycle:
    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl
    def agent_disposed(self, agent: Any) -> None:
        self.seen.append(f"disposed {agent.id}")

    @hookimpl
    def harness_stopping(self, harness: Harness) -> None:
        self.seen.append("stopping")


class Level(BaseModel):
    level: int = 1


def settings_plugin(*sections: str | None) -> object:
    class Plugin:
        @hookimpl
        def register_settings(self, register: Any) -> None:
            for section in sections:
                register(Level) if section is None else register(Level, section)

    return Plugin()


async def test_a_plugin_may_name_its_settings_section() -> None:
    plugins = [("loud", settings_plugin("volume"))]
    text = "volume: {level: 3}\n"
    async with Harness(plugins=plugins, load_entry_points=False, config_text=text) as h:
        assert h.config.section("volume") == Level(level=3)
        assert set(h.settings) == {"volume"}


async def test_a_settings_section_registered_twice_stops_start_up_naming_the_plugin() -> None:
    plugins = [("loud", settings_plugin(None, None))]
    with pytest.raises(DshError, match="plugin 'loud' registers settings for section 'loud' twice"):
        async with Harness(plugins=plugins, load_entry_points=False):
            pass


def reducer_plugin(event_type: str) -> object:
    def reduce(history: list[Message], event: SessionEvent) -> None:
        history.append(UserMessage(content=f"({event.type})"))

    class Plugin:
        @hookimpl
        def register_history_reducers(self, register: Any) -> None:
            register(event_type, reduce)

    return Plugin()


async def test_a_history_reducer_is_per_harness_and_cannot_take_a_core_type() -> None:
    core = dict(CORE_REDUCERS)
    plugins = [("notes", reducer_plugin("notes/added"))]
    for _ in range(2):  # a second harness may register it again: nothing leaked
        async with scripted_harness(ScriptedModel(), plugins=plugins, load_entry_points=False) as h:
            session = (await h.agents.create("a")).session
            session.append("notes/added", {})
            assert [m.content for m in session.history] == ["(notes/added)"]
    assert dict(CORE_REDUCERS) == core
    plugins = [("rude", reducer_plugin("user/message"))]
    with pytest.raises(DshError, match="'rude' registers a history reducer for 'user/message'"):
        async with Harness(plugins=plugins, load_entry_points=False):
            pass
    assert dict(CORE_REDUCERS) == core


async def test_a_loaded_config_object_is_used_as_it_is() -> None:
    config = load_config(text="agents:\n  - {id: helper, system_prompt: Mine.}\n")
    async with Harness(config=config, load_entry_points=False) as h:
        assert h.config is config
        helper = h.agents.get("helper")
        assert helper is not None
        assert helper.agent.options["system_prompt"] == "Mine."


async def test_config_agents_without_a_model_get_the_default_model() -> None:
    text = "model: scripted\nmodels:\n  scripted: {provider: scripted}\nagents:\n  - id: a\n"
    async with scripted_harness(ScriptedModel(), load_entry_points=False, config_text=text) as h:
        helper = h.agents.get("a")
        assert helper is not None
        assert helper.agent.options["model"] == "scripted"


async def test_an_agent_created_in_code_gets_the_configs_default_model() -> None:
    text = "model: scripted\nmodels:\n  scripted: {provider: scripted}\n"
    model = ScriptedModel(["hi"])
    async with scripted_harness(model, load_entry_points=False, config_text=text) as h:
        agent = await h.agents.create("a")
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "hello")
    assert events[-1].data["reason"] == "completed"
    assert model.requests[0].model == "scripted"


async def test_config_models_are_closed_when_the_harness_exits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dsh.llm._http import HttpModel

    closed: list[str] = []

    async def aclose(self: HttpModel) -> None:
        closed.append(self.name)

    monkeypatch.setattr(HttpModel, "aclose", aclose)
    text = "models:\n  fast: {provider: openai-compatible, base_url: 'http://h/v1'}\n"
    async with Harness(config_text=text, load_entry_points=False) as h:
        assert "fast" in h.models
        assert closed == []
    assert closed == ["fast"]


async def test_a_relative_workspace_is_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path)
    harness = Harness(load_entry_points=False, workspace="work/../work")
    assert harness.workspace == (tmp_path / "work").resolve()
    assert os.path.isabs(Harness(load_entry_points=False).workspace)


async def test_an_observer_registered_before_the_harness_starts_sees_events() -> None:
    seen: list[str] = []

    class Observer:
        @hookimpl
        def session_event(self, event: SessionEvent) -> None:
            seen.append(event.type)

    harness = Harness(load_entry_points=False)
    harness.pm.register(Observer(), "observer")  # after __init__, before __aenter__
    async with harness as h:
        (await h.agents.create("a")).session._record("user/message", {"content": "hi"})
    assert seen == ["user/message"]


async def test_a_start_up_cut_short_still_disposes_the_agents_it_started() -> None:
    life = Lifecycle()

    class Cut:
        @hookimpl
        async def agent_created(self, agent: Any) -> None:
            scope.cancel()
            await anyio.lowlevel.checkpoint()

    plugins = [("life", life), ("cut", Cut())]
    with anyio.fail_after(LIMIT), anyio.CancelScope() as scope:
        async with scripted_harness(
            ScriptedModel(), plugins=plugins, load_entry_points=False, config_text=CONFIG
        ):
            pytest.fail("the start-up was cancelled")  # pragma: no cover
    assert scope.cancelled_caught
    assert life.seen == ["disposed helper", "stopping"]


async def test_leaving_a_cancelled_scope_still_disposes_every_agent() -> None:
    life = Lifecycle()
    plugins = [("life", life)]
    with anyio.fail_after(LIMIT), anyio.CancelScope() as scope:
        async with scripted_harness(ScriptedModel(), plugins=plugins, load_entry_points=False) as h:
            await h.agents.create("a")
            scope.cancel()
            await anyio.lowlevel.checkpoint()
    assert life.seen == ["disposed a", "stopping"]
    assert h.agents.list() == []


async def test_the_config_is_there_only_once_the_harness_has_started() -> None:
    harness = Harness(load_entry_points=False, config_text="agents: []\n")
    with pytest.raises(DshError, match=r"not started: use `async with Harness\(...\)`"):
        _ = harness.config
    async with harness:
        assert harness.config.agents == []


async def test_leaving_twice_is_harmless() -> None:
    life = Lifecycle()
    harness = Harness(plugins=[("life", life)], load_entry_points=False)
    await harness.__aenter__()
    await harness.__aexit__(None, None, None)
    assert await harness.__aexit__(None, None, None) is None
    assert life.seen == ["stopping"]
    assert harness.pm.dispatcher.listeners == []
