"""A session resumed without the plugin whose history reducer folded some of its events
(a ``compact/summary`` of dsh-compaction's) says so once, naming the plugin, what the
model now sees, and how to turn the plugin on. The history is still derived from the
log (the events are kept: resumed with the plugin, they apply again).

Was: silent. A compacted session resumed with compaction off (``-p no:compaction``, or
dsh-compaction not installed) got its whole history back, so the next request could be
far over the model's context window, and nothing told the user why."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from dsh import Message, UserMessage, hookimpl
from dsh.session import SessionEvent
from dsh.testing import InMemoryPersistence, ScriptedModel, run_turn, scripted_harness, text

SUMMARY_TEXT = "the user asked for a tidy repo; files a.py and b.py were read"


def _summary(history: list[Message], event: SessionEvent) -> list[Message]:
    replaces = int(event.data["replaces"])
    return [UserMessage(content=event.data["summary"]), *history[replaces:]]


class Compacting:
    """Stands in for dsh-compaction: folds ``compact/summary`` and logs one (with a
    ``compact/start`` and ``compact/end``, which change no history) before the second
    step's request."""

    def __init__(self, folds: bool = True) -> None:
        self.folds = folds

    @hookimpl
    def register_history_reducers(self, register: Callable[..., None]) -> None:
        if self.folds:
            register("compact/summary", _summary)

    @hookimpl
    async def agent_request(self, agent: Any, request: Any, turn: int, step: int) -> None:
        if turn == 2 and step == 1:
            await agent.session.emit("compact/start", {"reason": "threshold"})
            data = {"summary": SUMMARY_TEXT, "replaces": 2}
            await agent.session.emit("compact/summary", data)
            await agent.session.emit("compact/end", {"ok": True})


class Noting:
    """A plugin whose events fold into no history (as dsh-permissions' decisions)."""

    @hookimpl
    async def agent_request(self, agent: Any, request: Any, turn: int, step: int) -> None:
        await agent.session.emit("permission/decision", {"tool": "read", "allowed": True})


async def _stored(store: InMemoryPersistence, plugin: tuple[str, object]) -> str:
    model = ScriptedModel([text("one"), text("two")])
    plugins = [("persistence", store), plugin]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "first")
        await run_turn(agent, "second")
        sid = agent.session.id
        await agent.dispose()
    return sid


async def _resumed(
    store: InMemoryPersistence,
    sid: str,
    caplog: pytest.LogCaptureFixture,
    *extra: object,
    fork: bool = False,
) -> tuple[list[Message], list[str]]:
    plugins = [("persistence", store), *extra]
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        harnessed = scripted_harness(ScriptedModel([]), plugins=plugins, load_entry_points=False)
        async with harnessed as harness:
            if fork:
                again = await harness.agents.fork("b", sid, 2, options={"model": "scripted"})
            else:
                again = await harness.agents.resume("b", sid, options={"model": "scripted"})
            history = list(again.session.history)
            await again.dispose()
    return history, [r.getMessage() for r in caplog.records if "unapplied" in r.name]


@pytest.mark.parametrize("fork", [False, True], ids=["resume", "fork"])
async def test_a_session_folded_by_a_plugin_not_loaded_warns_once_naming_it(
    caplog: pytest.LogCaptureFixture, fork: bool
) -> None:
    store = InMemoryPersistence()
    sid = await _stored(store, ("compaction", Compacting()))
    history, warned = await _resumed(store, sid, caplog, fork=fork)
    assert SUMMARY_TEXT not in str(history)  # the whole history, as the log holds it
    assert len(warned) == 1, warned
    (said,) = warned
    assert said.startswith("session b-session-" if fork else f"session {sid} ")
    assert "1 compact/summary event" in said
    assert "'compaction'" in said and "dsh-compaction" in said
    assert "context window" in said
    assert "compact/start" not in said and "compact/end" not in said


async def test_a_session_resumed_with_its_reducer_loaded_warns_of_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = InMemoryPersistence()
    sid = await _stored(store, ("compaction", Compacting()))
    history, warned = await _resumed(store, sid, caplog, ("compaction", Compacting()))
    assert warned == []
    assert str(history).count(SUMMARY_TEXT) == 1


async def test_events_that_fold_into_no_history_are_not_warned_of(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = InMemoryPersistence()
    sid = await _stored(store, ("permissions", Noting()))
    _, warned = await _resumed(store, sid, caplog)
    assert warned == []
