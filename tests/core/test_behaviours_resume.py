"""Conformance: behaviours 40-43 (persistence and resume: turn numbers and history continue,
a log cut mid-turn or with a hole, replay, a newer format).

Each test names the numbered behaviour of shared/design/BEHAVIOURS.md it checks.
Persistence is ``InMemoryPersistence`` from ``dsh.testing``; what a file backend does
on load (repairing a torn log, refusing a newer format) belongs to the persistence
plugin and is tested there. Here: what the core owns of 41; 43 is the plugin's alone.
"""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest
from behaviours_durability_support import (
    CALL_ADD,
    abort_while_first_chunk_is_notified,
    busy_session,
)
from loop_support import LIMIT, Tools, agent_on, ends

import dsh.invariants
from dsh import DshError, ToolResultMessage, UserMessage
from dsh.invariants import OUTCOME_UNKNOWN, close_turn
from dsh.persistence import StoredSession
from dsh.session import Session, SessionEvent
from dsh.testing import (
    ErrorRecorder,
    InMemoryPersistence,
    ScriptedModel,
    check_invariants,
    run_turn,
    scripted_harness,
    text,
)

# -- 40: resume --------------------------------------------------------------------------------


async def test_b40_resume_without_a_persistence_backend_fails_clearly() -> None:
    model = ScriptedModel([text("unused")])
    async with scripted_harness(model, load_entry_points=False) as harness:
        with pytest.raises(DshError, match="persistence"):
            await harness.agents.resume("a", "some-session", options={"model": "scripted"})
        assert harness.agents.get("a") is None


async def test_b40_resume_of_a_session_that_is_not_stored_fails_clearly() -> None:
    model = ScriptedModel([text("unused")])
    async with agent_on(model, ("mem", InMemoryPersistence())) as (harness, _):
        with pytest.raises(DshError, match="not stored"):
            await harness.agents.resume("b", "no-such-session", options={"model": "scripted"})
        assert harness.agents.get("b") is None


async def test_b40_resume_continues_turn_numbers_history_and_seq() -> None:
    store, errors = InMemoryPersistence(), ErrorRecorder()
    first = ScriptedModel([CALL_ADD, text("3"), text("ok")])
    async with agent_on(first, ("mem", store)) as (_, agent):
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "1+2?")
            await run_turn(agent, "thanks")
        sid, history = agent.session.id, list(agent.session.history)
        logged = len(agent.session.events)
        with anyio.fail_after(LIMIT):
            await agent.dispose()

    second = ScriptedModel([text("you asked 1+2")])
    plugins = [("tools", Tools()), ("mem", store), ("errors", errors)]
    async with scripted_harness(second, plugins=plugins) as harness:
        resumed = await harness.agents.resume("a", sid, options={"model": "scripted"})
        assert resumed.session.id == sid
        assert len(resumed.session.events) == logged
        with anyio.fail_after(LIMIT):
            events = await run_turn(resumed, "what did I ask?")

        assert ends(events) == [(3, "completed")]
        assert [e.seq for e in resumed.session.events] == list(range(len(resumed.session.events)))
        assert events[0].seq == logged
        assert second.requests[0].messages == (
            *history,
            UserMessage(content="what did I ask?"),
        )
        assert check_invariants(resumed.session.events) == []
        assert errors.errors == []  # the store took the new events without a seq clash
        stored = store.stored[sid].events
        assert [e.seq for e in stored] == list(range(len(resumed.session.events)))


# -- 41: a log cut mid-turn (the core's part) -----------------------------------------------------


async def finished_log(store: InMemoryPersistence) -> tuple[str, list[SessionEvent]]:
    model = ScriptedModel([CALL_ADD, text("3"), text("bye")])
    async with agent_on(model, ("mem", store)) as (_, agent):
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "1+2?")
            await run_turn(agent, "bye")
        return agent.session.id, list(agent.session.events)


async def test_b41_the_checker_flags_a_log_cut_mid_turn() -> None:
    _, events = await finished_log(InMemoryPersistence())
    first_call = next(e.seq for e in events if e.type == "tool/call")
    second_turn = next(e.seq for e in events if e.data.get("turn") == 2)

    assert check_invariants(events[: first_call + 1]) != []  # a call with no result
    assert check_invariants(events[:second_turn]) == []  # cut between turns: sound
    assert check_invariants(events[: second_turn + 2]) != []  # turn 2 left open
    # a live log is legitimately open mid-turn; ``complete=False`` checks only the prefix
    assert check_invariants(events[: first_call + 1], complete=False) == []


async def test_b41_the_checker_reports_a_hole_in_the_log() -> None:
    _, events = await finished_log(InMemoryPersistence())
    holed = [e.to_dict() for e in events]
    del holed[3]

    assert any("seq" in problem for problem in check_invariants(holed))


async def test_b41_a_session_refuses_events_whose_seq_is_not_their_index() -> None:
    _, events = await finished_log(InMemoryPersistence())

    with pytest.raises(DshError, match="seq"):
        Session("holed", events[:3] + events[4:])
    with pytest.raises(DshError, match="seq"):
        Session("shifted", events[1:])


async def test_b41_resume_reports_a_hole_as_corruption_instead_of_repairing_it() -> None:
    store = InMemoryPersistence()
    sid, events = await finished_log(store)
    del store.stored[sid].events[3]

    model = ScriptedModel([text("unused")])
    async with agent_on(model, ("mem", store)) as (harness, _):
        with pytest.raises(DshError, match="seq"):
            await harness.agents.resume("b", sid, options={"model": "scripted"})
        assert harness.agents.get("b") is None
        assert harness.sessions.get(sid) is None
    assert len(store.stored[sid].events) == len(events) - 1  # left as found


def stored_as(sid: str, events: list[SessionEvent]) -> InMemoryPersistence:
    """A store whose ``load`` returns ``events`` as session ``sid``, as they are: a
    backend that does not repair what it loads."""
    store = InMemoryPersistence()
    store.stored[sid] = StoredSession(sid, events[0].time, list(events), {})
    return store


@pytest.mark.parametrize("how", ["resume", "load_stored"])
async def test_b41_resume_closes_a_last_turn_the_backend_returned_open(
    how: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Was: the core took the log as ``load`` gave it, so the next turn opened inside
    the open one and its request held tool calls without results (a 400 from a real
    provider). The core now closes it with dsh-persistence's closers (``close_turn``)."""
    sid, events = await finished_log(InMemoryPersistence())
    cut = next(e.seq for e in events if e.type == "tool/call") + 1  # the call, no result
    store, errors = stored_as(sid, events[:cut]), ErrorRecorder()

    model = ScriptedModel([text("again")])
    plugins = [("tools", Tools()), ("mem", store), ("errors", errors)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as harness:
        if how == "resume":
            resumed = await harness.agents.resume("b", sid, options={"model": "scripted"})
        else:
            stored = await harness.agents.load_stored(sid)
            assert stored.events[cut:] == close_turn(events[:cut])
            resumed = await harness.agents.resume_stored("b", stored, {"model": "scripted"})
        with anyio.fail_after(LIMIT):
            await run_turn(resumed, "go on")

    log = list(resumed.session.events)
    assert check_invariants(log) == []
    closed = log[cut : cut + 3]
    assert [e.type for e in closed] == ["tool/result", "step/end", "turn/end"]
    assert closed[0].data["content"] == OUTCOME_UNKNOWN and closed[0].data["is_error"]
    assert closed[2].data["reason"] == "interrupted"
    assert ends(log) == [(1, "interrupted"), (2, "completed")]
    sent = model.requests[0].messages
    assert sent[-2] == ToolResultMessage(  # every call is answered
        call_id=closed[0].data["call_id"], name="add", content=OUTCOME_UNKNOWN, is_error=True
    )
    assert sent[-1] == UserMessage(content="go on")
    assert f"session {sid}: the persistence backend returned it with its last turn open" in (
        caplog.text
    )
    assert errors.errors == []
    # the flushes stored what followed the loaded events, the closers once among them
    assert [e.to_dict() for e in store.stored[sid].events] == [e.to_dict() for e in log]


async def test_b41_a_log_cut_mid_stream_keeps_the_streamed_text() -> None:
    """Was: the closers dropped the answer's chunks, so the next request had two user
    messages in a row; now the text is kept as a live abort keeps it."""
    store = InMemoryPersistence()
    async with agent_on(ScriptedModel([text("The answer ", "is 42.")]), ("mem", store)) as (
        _,
        agent,
    ):
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "q")
    sid, events = agent.session.id, list(agent.session.events)
    cut = next(e.seq for e in events if e.type == "assistant/message")  # chunks, no answer

    model = ScriptedModel([text("again")])
    plugins = [("mem", stored_as(sid, events[:cut]))]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as harness:
        resumed = await harness.agents.resume("b", sid, options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            await run_turn(resumed, "go on")

    log = list(resumed.session.events)
    assert check_invariants(log) == []
    assert [e.type for e in log[cut : cut + 3]] == ["assistant/message", "step/end", "turn/end"]
    assert log[cut].data["message"]["stop_reason"] == "error"
    sent = [
        (m.role, m.text if m.role == "assistant" else m.content) for m in model.requests[0].messages
    ]
    assert sent == [("user", "q"), ("assistant", "The answer is 42."), ("user", "go on")]


def test_b41_cut_off_text_made_on_load_joins_a_surrogate_pair_split_between_chunks() -> None:
    """As the live cut-off does: the loaded text held two lone halves, which UTF-8
    (the session file, the next request) cannot encode."""
    from dsh.invariants import close_turn
    from dsh.session import SessionEvent

    data = [
        ("turn/start", {"turn": 1}),
        ("step/start", {"step": 1}),
        ("assistant/chunk", {"kind": "text", "text": "smile \ud83d"}),
        ("assistant/chunk", {"kind": "text", "text": "\ude00 ok"}),
    ]
    events = [SessionEvent(kind, seq, 0.0, d) for seq, (kind, d) in enumerate(data)]
    [message] = [e.data["message"] for e in close_turn(events) if e.type == "assistant/message"]
    assert message["content"] == [{"type": "text", "text": "smile \U0001f600 ok"}]


async def test_b41_resume_refuses_a_log_that_breaks_the_invariants_otherwise() -> None:
    """A log broken some other way than a cut-off last turn (here: turn 1's turn/end
    lost, so turn 2 opens inside it) is refused, naming the session and the first
    problem; nothing starts and the store is left as found."""
    sid, events = await finished_log(InMemoryPersistence())
    end = next(e.seq for e in events if e.type == "turn/end")
    broken = [
        SessionEvent(e.type, i, e.time, e.data)
        for i, e in enumerate(events[:end] + events[end + 1 :])
    ]
    store = stored_as(sid, broken)

    model = ScriptedModel([text("unused")])
    async with scripted_harness(
        model, plugins=[("mem", store)], load_entry_points=False
    ) as harness:
        agents = harness.agents
        for attempt in (
            lambda: agents.resume("b", sid, options={"model": "scripted"}),
            lambda: agents.load_stored(sid),
            lambda: agents.resume_stored("c", store.stored[sid], {"model": "scripted"}),
        ):
            with pytest.raises(DshError) as refused:
                await attempt()
            assert str(refused.value) == (
                f"cannot resume session {sid!r}: the log the persistence backend loaded "
                f"breaks the log invariants: seq {end} (turn/start): turn 1 is still open "
                "(only a last turn left open is repaired on load)"
            )
        assert harness.agents.get("b") is None and harness.agents.get("c") is None
        assert harness.sessions.get(sid) is None
    assert model.requests == []
    assert [e.to_dict() for e in store.stored[sid].events] == [e.to_dict() for e in broken]


@pytest.mark.parametrize("cut", [False, True], ids=["whole", "turn-left-open"])
async def test_b41_a_session_load_stored_checked_is_not_checked_again(
    cut: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``dsh sessions resume`` loads with ``load_stored`` (to check a session before it
    lets go of anything), then ``resume_stored``: was, the log's invariants were
    checked in each (on a 100k-event session ~35 ms each, on top of the backend's own
    check). What ``load_stored`` returns is checked once; one a caller makes still is
    (the test above)."""
    sid, events = await finished_log(InMemoryPersistence())
    if cut:
        events = events[: next(e.seq for e in events if e.type == "tool/call") + 1]
    store = stored_as(sid, events)
    checked: list[int] = []
    real = dsh.invariants.check_invariants

    def counted(log: list[SessionEvent], *, complete: bool = True) -> list[str]:
        checked.append(len(log))
        return real(log, complete=complete)

    monkeypatch.setattr(dsh.invariants, "check_invariants", counted)
    model = ScriptedModel([text("again")])
    async with scripted_harness(model, plugins=[("mem", store)], load_entry_points=False) as h:
        stored = await h.agents.load_stored(sid)
        assert checked == [len(events)]
        resumed = await h.agents.resume_stored("b", stored, {"model": "scripted"})
        with anyio.fail_after(LIMIT):
            await run_turn(resumed, "go on")
    assert checked == [len(events)]
    assert resumed.session.events[: len(stored.events)] == stored.events
    assert ends(list(resumed.session.events))[-1] == (3 if not cut else 2, "completed")


# -- 42: replay reproduces the derived history ----------------------------------------------------


async def test_b42_replaying_the_stored_log_gives_the_live_history() -> None:
    store = InMemoryPersistence()
    model = ScriptedModel()
    async with agent_on(model, ("mem", store)) as (_, agent):
        await busy_session(agent, model)
        sid, live = agent.session.id, list(agent.session.history)
        with anyio.fail_after(LIMIT):
            await agent.dispose()

    loaded = await store.load(sid)
    assert loaded is not None
    assert list(Session("replay", loaded.events).history) == live

    nxt = ScriptedModel([text("resumed")])
    async with scripted_harness(nxt, plugins=[("tools", Tools()), ("mem", store)]) as harness:
        resumed = await harness.agents.resume("a", sid, options={"model": "scripted"})
        assert list(resumed.session.history) == live
        with anyio.fail_after(LIMIT):
            await run_turn(resumed, "still there?")
        assert nxt.requests[0].messages == (*live, UserMessage(content="still there?"))


async def test_b42_the_stored_log_equals_the_live_one_after_an_abort_mid_notification() -> None:
    store = InMemoryPersistence()
    agent = await abort_while_first_chunk_is_notified(("mem", store))
    sid, live = agent.session.id, list(agent.session.events)

    loaded = await store.load(sid)
    assert loaded is not None
    assert [e.to_dict() for e in loaded.events] == [e.to_dict() for e in live]


# -- 43: a newer session format --------------------------------------------------------------------


# Not the core's: the format version lives in the persistence plugin's session file
# header and database schema; the core's StoredSession and Session carry none to check.
# Its tests are tests/plugins/persistence/test_persistence_behaviours.py (test_b43_*),
# test_persistence_m_sqlite.py (test_b43_*) and the backend contract's
# (dsh_persistence.testing).
