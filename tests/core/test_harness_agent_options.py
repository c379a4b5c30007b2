"""Agents the harness creates and resumes: which options and creation time their sessions
keep, and what ``agent_created`` names as their source.
"""

from __future__ import annotations

from typing import Any

import pytest
from harness_support import CONFIG

from dsh import hookimpl
from dsh.testing import ScriptedModel, run_turn, scripted_harness


async def test_resume_without_options_reuses_the_stored_ones() -> None:
    from dsh.testing import InMemoryPersistence

    store = InMemoryPersistence()
    model = ScriptedModel(["one", "two"])
    options = {"model": "scripted", "system_prompt": "Be kind.", "max_steps": 4}
    plugins = [("mem", store)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a", options=options)
        await run_turn(agent, "hi")
        session_id = agent.session.id
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        resumed = await h.agents.resume("a", session_id)
        assert resumed.agent.options == options
        await run_turn(resumed, "again")
    assert model.requests[1].system == "Be kind."


async def test_options_that_are_not_json_are_left_out_of_the_session_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import datetime

    from dsh.testing import InMemoryPersistence

    store = InMemoryPersistence()
    model = ScriptedModel(["one", "two"])
    when = datetime.date(2026, 11, 30)  # a YAML date in agents[].options reads as this
    options = {"model": "scripted", "system_prompt": "Be kind.", "since": when}
    plugins = [("mem", store)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a", options=options)
        await run_turn(agent, "hi")
        session_id = agent.session.id
    assert "'since' is not stored with the session" in caplog.text
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        resumed = await h.agents.resume("a", session_id)
        assert resumed.agent.options == {"model": "scripted", "system_prompt": "Be kind."}
        await run_turn(resumed, "again")
    assert model.requests[1].system == "Be kind."


async def test_b40_a_resumed_session_keeps_its_stored_creation_time() -> None:
    import dataclasses

    from dsh.testing import InMemoryPersistence

    store = InMemoryPersistence()
    model = ScriptedModel(["one"])
    plugins = [("mem", store)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a")
        await run_turn(agent, "hi")
        session_id = agent.session.id
    store.stored[session_id] = dataclasses.replace(store.stored[session_id], created=1000.5)
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        resumed = await h.agents.resume("a", session_id)
        assert resumed.session.created == 1000.5


async def test_resume_with_explicit_options_uses_them_not_the_stored_ones() -> None:
    from dsh.testing import InMemoryPersistence

    store = InMemoryPersistence()
    model = ScriptedModel(["one", "two"])
    plugins = [("mem", store)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted", "system_prompt": "Old."})
        await run_turn(agent, "hi")
        session_id = agent.session.id
    explicit = {"model": "scripted", "system_prompt": "New."}
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        resumed = await h.agents.resume("a", session_id, options=explicit)
        assert resumed.agent.options == explicit
        await run_turn(resumed, "again")
    assert model.requests[1].system == "New."


async def test_agent_created_names_its_source() -> None:
    from dsh.testing import InMemoryPersistence

    seen: list[tuple[str, str]] = []

    class Watch:
        @hookimpl
        def agent_created(self, agent: Any, source: str) -> None:
            seen.append((agent.id, source))

    store = InMemoryPersistence()
    plugins = [("watch", Watch()), ("mem", store)]
    model = ScriptedModel(["one"])
    async with scripted_harness(
        model, plugins=plugins, load_entry_points=False, config_text=CONFIG
    ) as h:
        made = await h.agents.create("made")
        await run_turn(made, "hi")
        session_id = made.session.id
        await made.dispose()
        await h.agents.resume("again", session_id)
    assert seen == [("helper", "startup"), ("made", "create"), ("again", "resume")]


async def test_create_keeps_the_callers_own_stored_options() -> None:
    async with scripted_harness(ScriptedModel(), load_entry_points=False) as h:
        agent = await h.agents.create(
            "a", meta={"options": {"system_prompt": "Mine."}}, options={"model": "scripted"}
        )
        assert agent.session.meta["options"] == {"system_prompt": "Mine."}
        plain = await h.agents.create("b", options={"model": "scripted"})
        assert plain.session.meta["options"] == {"model": "scripted"}
