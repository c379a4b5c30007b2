"""Behaviours 40-43 (persistence and resume), rerun against both real backends.

tests/core/test_behaviours_resume.py checks them against the in-memory double;
here the store is a JSONL directory or a SQLite database, so what the double cannot
show is checked too: closers written on resume, a torn tail, a hole on disk, a newer
format. Every test runs once per backend (the ``settings`` fixture).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh import DshError, ToolResultMessage, UserMessage, hookimpl
from dsh.agent import AgentHandle
from dsh.errors import HookError
from dsh.harness import Harness
from dsh.session import Session, SessionEvent
from dsh.testing import (
    ErrorRecorder,
    ScriptedModel,
    check_invariants,
    fail,
    hang,
    max_tokens,
    run_turn,
    scripted_harness,
    text,
    tool_calls,
)
from dsh.tools import tool
from dsh_persistence import (
    PersistencePlugin,
    PersistenceSettings,
    SessionCorruptError,
    SessionFormatError,
    SessionInfo,
    open_backend,
)
from dsh_persistence.testing import Damage, JsonlDamage, SqliteDamage

pytestmark = pytest.mark.plugins("persistence")

LIMIT = 10


@tool
def add(a: int, b: int) -> int:
    "Add two numbers."
    return a + b


class Tools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(add)


@asynccontextmanager
async def harness_on(
    settings: PersistenceSettings, model: ScriptedModel, *plugins: tuple[str, object]
) -> AsyncIterator[Harness]:
    """A harness storing sessions with ``settings``, as a fresh process would."""
    plugin = PersistencePlugin(settings)
    everything = [("tools", Tools()), ("persistence", plugin), *plugins]
    try:
        async with scripted_harness(model, plugins=everything, load_entry_points=False) as h:
            yield h
    finally:
        plugin.close()


def damage_for(settings: PersistenceSettings) -> Damage:
    if settings.backend == "sqlite":
        return SqliteDamage(settings.database_path())
    return JsonlDamage(settings.session_directory())


def stored_events(settings: PersistenceSettings, session_id: str) -> list[SessionEvent]:
    backend = open_backend(settings)
    try:
        loaded = backend.load(session_id)
    finally:
        backend.close()
    assert loaded is not None
    return loaded.stored.events


def dicts(events: Sequence[SessionEvent]) -> list[dict[str, Any]]:
    return [event.to_dict() for event in events]


def ends(events: Sequence[SessionEvent]) -> list[tuple[int, str]]:
    return [(e.data["turn"], e.data["reason"]) for e in events if e.type == "turn/end"]


CALL_ADD = tool_calls(("add", {"a": 1, "b": 2}))


async def two_turns(settings: PersistenceSettings) -> tuple[str, list[SessionEvent], list[Any]]:
    """A stored session of two finished turns: (id, its events, its history)."""
    async with harness_on(settings, ScriptedModel([CALL_ADD, text("3"), text("bye")])) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "1+2?")
            await run_turn(agent, "bye")
        return agent.session.id, list(agent.session.events), list(agent.session.history)


# -- 40: resume -------------------------------------------------------------------------------


async def test_b40_resume_of_a_session_that_is_not_stored_fails_clearly(
    settings: PersistenceSettings,
) -> None:
    async with harness_on(settings, ScriptedModel()) as harness:
        with pytest.raises(DshError, match="not stored"):
            await harness.agents.resume("a", "no-such-session", options={"model": "scripted"})
        assert harness.agents.get("a") is None


async def test_b40_resume_twice_continues_turns_history_and_seq(
    settings: PersistenceSettings,
) -> None:
    session_id, events, history = await two_turns(settings)
    for turn, prompt in ((3, "again?"), (4, "once more?")):
        errors = ErrorRecorder()
        model = ScriptedModel([text(f"answer {turn}")])
        async with harness_on(settings, model, ("errors", errors)) as harness:
            resumed = await harness.agents.resume("a", session_id, options={"model": "scripted"})
            assert dicts(resumed.session.events) == dicts(events)
            with anyio.fail_after(LIMIT):
                new = await run_turn(resumed, prompt)
            assert ends(new) == [(turn, "completed")] and new[0].seq == len(events)
            assert model.requests[0].messages == (*history, UserMessage(content=prompt))
            events, history = list(resumed.session.events), list(resumed.session.history)
        assert errors.errors == []

    stored = stored_events(settings, session_id)
    assert dicts(stored) == dicts(events)
    assert [e.seq for e in stored] == list(range(len(stored)))  # no duplicate seq
    assert check_invariants(stored) == []


async def test_b40_resume_after_a_crash_mid_turn_stores_the_closers_first(
    settings: PersistenceSettings,
) -> None:
    _, events, _ = await two_turns(settings)
    call = next(e for e in events if e.type == "tool/call")  # turn 1: the call ran, then...
    crashed = events[: call.seq + 1]  # ...the process died before its result was logged
    backend = open_backend(settings)
    backend.append(SessionInfo("crashed", 1.0), crashed, durable=True)
    backend.close()

    model = ScriptedModel([text("sorry, where were we?")])
    async with harness_on(settings, model) as harness:
        resumed = await harness.agents.resume("a", "crashed", options={"model": "scripted"})
        closers = resumed.session.events[len(crashed) :]
        assert [e.type for e in closers] == ["tool/result", "step/end", "turn/end"]
        assert ends(closers) == [(1, "interrupted")]
        with anyio.fail_after(LIMIT):
            new = await run_turn(resumed, "hello?")
        live = list(resumed.session.events)

    assert ends(new) == [(2, "completed")]
    (answer,) = [m for m in model.requests[0].messages if isinstance(m, ToolResultMessage)]
    assert answer.is_error and "outcome unknown" in answer.content
    stored = stored_events(settings, "crashed")
    assert dicts(stored) == dicts(live) and check_invariants(stored) == []


# -- 41: a log cut mid-turn ---------------------------------------------------------------


async def test_b41_a_torn_last_line_is_dropped_and_the_turn_closed(
    settings: PersistenceSettings,
) -> None:
    session_id, events, _ = await two_turns(settings)
    second = next(e.seq for e in events if e.type == "turn/start" and e.data["turn"] == 2)
    backend = open_backend(settings)
    backend.delete(session_id)
    backend.append(SessionInfo(session_id, 1.0), events[: second + 4], durable=True)
    backend.close()
    damage_for(settings).tear(session_id)  # the last of those is half written

    loaded = stored_events(settings, session_id)
    assert dicts(loaded[: second + 3]) == dicts(events[: second + 3])  # every complete event
    assert [e.type for e in loaded[second + 3 :]] == ["step/end", "turn/end"]
    assert ends(loaded) == [(1, "completed"), (2, "interrupted")]
    assert check_invariants(loaded) == []


async def test_b41_a_hole_before_the_last_turn_end_is_corruption_left_as_found(
    settings: PersistenceSettings,
) -> None:
    session_id, _, _ = await two_turns(settings)
    damage_for(settings).drop(session_id, 3)
    before = snapshot(settings)

    async with harness_on(settings, ScriptedModel()) as harness:
        with pytest.raises(SessionCorruptError) as caught:
            await harness.agents.resume("a", session_id, options={"model": "scripted"})
        assert harness.agents.get("a") is None and harness.sessions.get(session_id) is None
    message = str(caught.value)
    assert "seq" in message and "corrupt" in message
    where = ".jsonl:5:" if settings.backend == "jsonl" else "event #3"
    assert where in message  # the file and line (header is line 1) or the event
    assert snapshot(settings) == before  # nothing rewritten


def snapshot(settings: PersistenceSettings) -> Any:
    if settings.backend == "jsonl":
        return {p.name: p.read_bytes() for p in settings.session_directory().iterdir()}
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(settings.database_path())) as db:
        return db.execute("SELECT * FROM events ORDER BY session, seq").fetchall()


# -- 42: replay gives the live history ------------------------------------------------------


async def busy_session(agent: AgentHandle, model: ScriptedModel) -> None:
    """Tool calls (good, bad JSON, unknown tool), steering, a max-tokens cut, a provider
    error, an empty answer and an abort."""
    hanging = anyio.Event()

    def answer_and_get_steered(request: Any) -> str:
        agent.steer("and in words?")
        return "three"

    def hang_until_aborted(request: Any) -> Any:
        hanging.set()
        return hang("thinking")

    model.extend(
        tool_calls(("add", {"a": 1, "b": 2}), ("add", "{not json"), ("nope", {})),
        answer_and_get_steered,
        text("three, in words"),
        max_tokens("cut off", ("add", {"a": 1, "b": 1})),
        fail("SERVER", "upstream down"),
        text(""),
        hang_until_aborted,
    )
    with anyio.fail_after(LIMIT):
        await run_turn(agent, "what is 1+2? ☃")
        await run_turn(agent, "and 1+1?")
        await run_turn(agent, "try again")
        await run_turn(agent, "say nothing")
        agent.send("one more")
        await hanging.wait()
        agent.abort()
        await agent.when_idle()


async def test_b42_replaying_the_stored_log_gives_the_live_history(
    settings: PersistenceSettings,
) -> None:
    model = ScriptedModel()
    async with harness_on(settings, model) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        await busy_session(agent, model)
        session_id, live = agent.session.id, list(agent.session.history)
        logged = list(agent.session.events)
        with anyio.fail_after(LIMIT):
            await agent.dispose()
    assert [r for _, r in ends(logged)] == [
        "completed",
        "max-tokens",
        "error",
        "completed",
        "aborted",
    ]

    stored = stored_events(settings, session_id)
    assert dicts(stored) == dicts(logged)
    assert list(Session("replay", stored).history) == live

    nxt = ScriptedModel([text("resumed")])
    async with harness_on(settings, nxt) as harness:
        resumed = await harness.agents.resume("a", session_id, options={"model": "scripted"})
        assert list(resumed.session.history) == live
        with anyio.fail_after(LIMIT):
            await run_turn(resumed, "still there?")
    assert nxt.requests[0].messages == (*live, UserMessage(content="still there?"))


# -- 43: a newer format -----------------------------------------------------------------------


async def test_b43_a_newer_format_is_refused_with_a_message_saying_so(
    settings: PersistenceSettings,
) -> None:
    session_id, _, _ = await two_turns(settings)
    damage_for(settings).make_newer(session_id)
    before = snapshot(settings)

    # a session file of a newer format is refused when resumed; a database of a newer
    # schema already when the harness starts (it holds no session this version writes)
    with pytest.raises((SessionFormatError, HookError), match="newer") as caught:
        async with harness_on(settings, ScriptedModel()) as harness:
            await harness.agents.resume("a", session_id, options={"model": "scripted"})
    error = caught.value.cause if isinstance(caught.value, HookError) else caught.value
    assert isinstance(error, SessionFormatError) and "upgrade dsh-persistence" in str(error)
    assert isinstance(caught.value, HookError) == (settings.backend == "sqlite")
    assert snapshot(settings) == before


def test_b43_the_jsonl_header_carries_the_format_version(tmp_path: Path) -> None:
    from dsh_persistence import JsonlBackend

    backend = JsonlBackend(tmp_path)
    events = [SessionEvent("turn/start", 0, 1.0, {"turn": 1})]
    backend.append(SessionInfo("s", 1.0), events, durable=True)

    header = json.loads((tmp_path / "s.jsonl").read_text().splitlines()[0])
    assert header["format"] == "dsh-session" and header["version"] == 1
