"""``session_persistence`` is asked with the harness that asks (``harness``): a plugin
instance shared by several harnesses of a process (an entry point's) can give each the
store its config chose. Before: it was asked with no argument, so it could not tell
them apart. An impl that takes no argument (written before) still works: an impl is
passed only the arguments it names."""

from __future__ import annotations

from typing import Any

import pytest

from dsh import hookimpl
from dsh.harness import Harness
from dsh.testing import InMemoryPersistence, ScriptedModel, run_turn, scripted_harness, text


class Asked(InMemoryPersistence):
    """A store that records the harness each ``session_persistence`` call names."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[Harness | None] = []

    @hookimpl
    def session_persistence(self, harness: Harness | None) -> InMemoryPersistence:  # type: ignore[override]
        self.asked.append(harness)
        return self


async def test_the_core_asks_with_the_harness_of_the_create_and_the_resume() -> None:
    asked = Asked()
    model = ScriptedModel([text("ok")] * 3)
    async with scripted_harness(model, plugins=[asked], load_entry_points=False) as h:
        agent = await h.agents.create("a", session_id="s", options={"model": "scripted"})
        await run_turn(agent, "hi")
        await agent.dispose()
        assert asked.asked == [h]  # the claim of the new session
        await h.agents.resume("b", "s")  # the load, then the claim
        assert asked.asked == [h, h, h]
        assert await h.relay.session_persistence(h) is asked
        assert await h.relay.session_persistence() is asked
    assert asked.asked[-2:] == [h, None]


class OldStyle:
    """An impl written before the hook had an argument."""

    def __init__(self, store: InMemoryPersistence) -> None:
        self.store = store
        self.calls = 0

    @hookimpl(tryfirst=True)
    def session_persistence(self) -> Any:
        self.calls += 1
        return self.store


@pytest.mark.parametrize("plugin", ["no-argument impl", "InMemoryPersistence"])
async def test_an_impl_naming_no_argument_still_serves_create_and_resume(plugin: str) -> None:
    store = InMemoryPersistence()  # its own impl names no argument
    old = OldStyle(store)
    plugins: list[Any] = [("flush", store)]
    if plugin == "no-argument impl":
        plugins.append(("store", old))
    model = ScriptedModel([text("ok")] * 3)
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        assert await h.relay.session_persistence(h) is store
        agent = await h.agents.create("a", session_id="s", options={"model": "scripted"})
        await run_turn(agent, "hi")
        await agent.dispose()
        resumed = await h.agents.resume("b", "s")
        assert [e.data for e in resumed.session.events if e.type == "user/message"] == [
            {"content": "hi"}
        ]
    assert bool(old.calls) is (plugin == "no-argument impl")  # it answered
