"""``Session.emit``, a plugin's way to log its own events, refuses the core's event types
and a type that is not ``name/what`` before anything is logged (hooks.md, "Logging
events of your own").

Before: a plugin's ``emit("turn/end", {...})`` from ``agent_request`` was logged and the
turn went on, leaving a log no resume would take (``SessionCorruptError``, blaming
outside damage, not the plugin); ``emit("user/message", {})`` appended the event and
then failed in the core's history reducer (``KeyError``), the bad event already logged.
The core logs its own types through ``Session._record``, which checks nothing.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from loop_support import LIMIT, agent_on

from dsh import DshError, EventTypeError, hookimpl
from dsh.session import EVENT_TYPES, Session
from dsh.testing import EventRecorder, ScriptedModel, check_invariants, run_turn, text


@pytest.mark.parametrize("kind", EVENT_TYPES)
async def test_emit_refuses_each_core_type_before_logging_it(kind: str) -> None:
    told: list[str] = []
    session = Session("s", observer=lambda _s, event: told.append(event.type))

    with pytest.raises(EventTypeError) as caught:
        session.emit(kind, {})

    assert isinstance(caught.value, DshError) and caught.value.code == "EVENT_TYPE"
    assert str(caught.value).startswith(f"event type {kind!r}: is one of the core's")
    assert caught.value.event_type == kind
    assert session.events == [] and list(session.history) == [] and told == []


@pytest.mark.parametrize(
    "kind", ["note", "", "/what", "audit/", "audit step/x", "audit/a b", "a/\n", 5, None]
)
def test_emit_refuses_a_type_that_is_not_name_slash_what(kind: Any) -> None:
    session = Session("s")

    with pytest.raises(EventTypeError, match=r"^event type .*: is (not 'name/what'|a )"):
        session.emit(kind, {})

    assert session.events == []


async def test_emit_logs_a_plugin_type_and_the_core_records_its_own() -> None:
    session = Session("s")

    await session.emit("audit/step", {"n": 1})
    await session.emit("notes/pinned/again", {})
    session._record("user/message", {"content": "hi"})

    assert [e.type for e in session.events] == ["audit/step", "notes/pinned/again", "user/message"]
    assert [m.content for m in session.history] == ["hi"]


def test_a_core_type_with_missing_keys_is_refused_not_half_logged() -> None:
    session = Session("s")

    for kind in ("user/message", "tool/result"):
        with pytest.raises(EventTypeError):
            session.emit(kind, {})

    assert session.events == []


async def test_a_plugin_emitting_turn_end_ends_the_turn_error_naming_it() -> None:
    recorder = EventRecorder()

    class Closer:
        @hookimpl
        async def agent_request(self, agent: Any) -> None:
            await agent.session.emit("turn/end", {"x": 1})

    model = ScriptedModel([text("hi")])
    async with agent_on(model, ("recorder", recorder), ("closer", Closer())) as (_, agent):
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "hi")

        ends = [e.data for e in agent.session.events if e.type == "turn/end"]
        assert len(ends) == 1 and ends[0]["reason"] == "error"
        assert ends[0]["error"]["plugin"] == "closer"
        assert "event type 'turn/end'" in ends[0]["error"]["message"]
        assert {"x": 1} not in [e.data for e in events]
        assert check_invariants(agent.session.events) == []
