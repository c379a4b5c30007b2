"""Text that is not valid Unicode (lone surrogates: a file name that is not UTF-8 on disk,
as ``os.listdir`` returns it, or a ``\\udcff`` escape in a model's JSON) is stored and
resumed exactly, by both backends. It used to make every flush of the session fail."""

from __future__ import annotations

import os
from typing import Any

import anyio
import pytest

from dsh import hookimpl
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls
from dsh.tools import tool
from dsh_persistence import PersistencePlugin, PersistenceSettings, open_backend

pytestmark = pytest.mark.plugins("persistence")

NAME = os.fsdecode(b"caf\xe9.txt")  # 'caf\udce9.txt'


@tool
def names(path: str = ".") -> str:
    "List names."
    return f"{path}: {NAME}"


class Tools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(names)


async def test_lone_surrogates_are_stored_and_resumed_exactly(
    settings: PersistenceSettings,
) -> None:
    model = ScriptedModel([tool_calls(("names", {"path": "x\udcff"})), text("a\ud800b")])
    plugin = PersistencePlugin(settings)
    plugins = [("tools", Tools()), ("persistence", plugin)]
    try:
        async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            with anyio.fail_after(10):
                events = await run_turn(agent, "what is in x\udcff?")
            live = [event.to_dict() for event in agent.session.events]
            history = list(agent.session.history)
    finally:
        plugin.close()
    assert events[-1].data["reason"] == "completed"
    assert any(NAME in e.data["content"] for e in events if e.type == "tool/result")

    backend = open_backend(settings)
    try:
        loaded = backend.load(agent.session.id)
    finally:
        backend.close()
    assert loaded is not None
    assert [event.to_dict() for event in loaded.stored.events] == live

    plugin = PersistencePlugin(settings)
    plugins = [("tools", Tools()), ("persistence", plugin)]
    try:
        async with scripted_harness(
            ScriptedModel([text("ok")]), plugins=plugins, load_entry_points=False
        ) as h:
            resumed = await h.agents.resume("a", agent.session.id, options={"model": "scripted"})
            assert list(resumed.session.history) == history
    finally:
        plugin.close()
