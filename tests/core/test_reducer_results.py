"""What a plugin's history reducer gives back is checked as it comes: a result that is
not None or a list of messages (a tuple, the coroutine of an ``async def`` reducer, a
dict appended for a message) is that reducer's failure, a ``HistoryReducerError``
naming the plugin, and the history is left as it was. Before, it became the history,
and every later turn failed with an ``AttributeError`` from dsh's own reducers that
named no plugin (BEHAVIOURS 34: a plugin's failure ends one turn, naming it).

A reducer that could never work (not callable, or an ``async def``, which nothing
awaits) is refused when it is registered, naming the plugin."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from dsh import DshError, HistoryReducerError, UserMessage, hookimpl
from dsh.testing import ScriptedModel, check_invariants, run_turn, scripted_harness

OPTIONS = {"model": "scripted"}


class Pins:
    """Registers ``reduce`` for ``pins/pinned``; emits one on each turn's first step."""

    def __init__(self, reduce: Any) -> None:
        self.reduce = reduce

    @hookimpl
    def register_history_reducers(self, register: Callable[..., None]) -> None:
        register("pins/pinned", self.reduce)

    @hookimpl
    async def agent_request(self, agent: Any, step: int) -> None:
        if step == 1:
            await agent.session.emit("pins/pinned", {"text": "use tabs"})


def note(event: Any) -> UserMessage:
    return UserMessage(content=f"Pinned: {event.data['text']}")


def returns_a_tuple(history: list[Any], event: Any) -> tuple[Any, ...]:
    return (*history, note(event))


def returns_a_list_holding_a_str(history: list[Any], event: Any) -> list[Any]:
    return [*history, "Pinned: use tabs"]


def appends_a_dict(history: list[Any], event: Any) -> None:
    history.append({"role": "user", "content": "Pinned: use tabs"})


async def reduce_async(history: list[Any], event: Any) -> None:
    history.append(note(event))


@pytest.mark.parametrize(
    ("reduce", "said"),
    [
        (
            returns_a_tuple,
            "TypeError: returned tuple; a reducer appends to the history list it is given "
            "and returns None, or returns a new list of messages",
        ),
        (
            returns_a_list_holding_a_str,
            "TypeError: returned a list holding str at index 1; a history holds messages "
            "(UserMessage, AssistantMessage, ToolResultMessage)",
        ),
        (
            appends_a_dict,
            "TypeError: appended dict at index 1; a history holds messages "
            "(UserMessage, AssistantMessage, ToolResultMessage)",
        ),
    ],
)
async def test_a_reducer_giving_what_is_no_history_fails_naming_the_plugin(
    reduce: Any, said: str
) -> None:
    model = ScriptedModel(["after"])
    plugins = [("pins", Pins(reduce))]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        events = await run_turn(agent, "hi")
        history = list(agent.session.history)
        with pytest.raises(HistoryReducerError) as info:
            await agent.session.emit("pins/pinned", {"text": "again"})
        assert list(agent.session.history) == history
        assert check_invariants(agent.session.events) == []
    end = events[-1].data
    assert (end["reason"], end["error"]["plugin"]) == ("error", "pins")
    assert end["error"]["message"].endswith(said)
    assert "pins/pinned" not in [e.type for e in agent.session.events]
    assert all(isinstance(m, UserMessage) for m in history)
    assert info.value.plugin == "pins"
    assert str(info.value).endswith(said)
    assert model.requests == []  # the turn ended before its request


async def test_a_reducer_returning_a_new_list_of_messages_replaces_the_history() -> None:
    def pinned_first(history: list[Any], event: Any) -> list[Any]:
        return [note(event), *history]

    model = ScriptedModel(["ok", "ok"])
    async with scripted_harness(
        model, plugins=[("pins", Pins(pinned_first))], load_entry_points=False
    ) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        await run_turn(agent, "hi")  # its request was built before the pin
        events = await run_turn(agent, "and now?")
    assert events[-1].data["reason"] == "completed"
    # hooks.md: an event agent_request emits is not in the request it was given
    assert model.requests[0].messages == [UserMessage(content="hi")]
    assert [m.role for m in model.requests[1].messages] == ["user", "user", "assistant", "user"]
    assert model.requests[1].messages[0] == UserMessage(content="Pinned: use tabs")


@pytest.mark.parametrize(
    ("reduce", "said"),
    [
        (
            "pinned",
            "plugin 'pins' registers a history reducer for 'pins/pinned' that is str, not a "
            "function; register reducer(history, event)",
        ),
        (
            reduce_async,
            "plugin 'pins' registers a history reducer for 'pins/pinned' that is an async "
            "def (reduce_async), which nothing would await: a reducer runs as the event is "
            "logged; make it a plain def",
        ),
    ],
)
async def test_a_reducer_that_cannot_run_stops_start_up_naming_the_plugin(
    reduce: Any, said: str
) -> None:
    with pytest.raises(DshError) as info:
        async with scripted_harness(plugins=[("pins", Pins(reduce))], load_entry_points=False):
            pass
    assert str(info.value) == said
