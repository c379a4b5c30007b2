"""An event that cannot be written as JSON (the core checks data on entry, so only a
bug lets one in): each write that meets it fails saying which event and why, the events
before it are stored, and it and every later event stay queued in order, unwritten."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from dsh.session import Session
from dsh.testing import ErrorRecorder, ScriptedModel, run_turn, scripted_harness, text
from dsh_persistence import PersistencePlugin, PersistenceSettings, open_backend
from dsh_persistence._errors import UnencodableEventError
from dsh_persistence._writer import SessionWriter
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

LIMIT = 10


def stored(settings: PersistenceSettings, session_id: str) -> list[dict[str, Any]]:
    backend = open_backend(settings)
    try:
        loaded = backend.load(session_id)
    finally:
        backend.close()
    assert loaded is not None
    return [event.to_dict() for event in loaded.stored.events[: loaded.kept]]


def test_each_write_fails_at_the_event_and_stores_what_precedes_it(
    settings: PersistenceSettings,
) -> None:
    log = LogBuilder()
    log.turn("first", calls=())
    session = Session("s", log.events)
    backend = open_backend(settings)
    writer = SessionWriter(backend, session)
    writer.write(True)
    good = len(session.events)
    session.append("note/ok", {"n": 1})
    session._record("note/bad", {"value": object()})  # a bug's doing: the core's logging
    bad = session.events[-1]
    try:
        for more in range(3):
            session.append("note/later", {"n": more})
            with pytest.raises(UnencodableEventError) as caught:
                writer.write(True)
            message = str(caught.value)
            assert f"session 's': event seq {bad.seq} ('note/bad')" in message
            assert "cannot be written as JSON" in message
            assert caught.value.seq == bad.seq
            expected = [event.to_dict() for event in session.events[: bad.seq]]
            assert stored(settings, "s") == expected  # in order, up to the bad one
        assert bad.seq == good + 1
        assert [e.seq for e in session.events] == list(range(len(session.events)))
        assert [e.type for e in session.events[bad.seq :]] == ["note/bad", *["note/later"] * 3]
    finally:
        backend.close()


async def test_every_flush_that_meets_it_is_reported_with_the_reason(
    settings: PersistenceSettings,
) -> None:
    errors = ErrorRecorder()
    plugin = PersistencePlugin(settings)
    plugins = [("persistence", plugin), ("errors", errors)]
    model = ScriptedModel([text("one"), text("two"), text("three")])
    try:
        async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            with anyio.fail_after(LIMIT):
                await run_turn(agent, "first")
                await agent.session._record("note/bad", {"value": object()})  # a bug's
                bad = agent.session.events[-1]
                await run_turn(agent, "second")
                await run_turn(agent, "third")
            session_id, live = agent.session.id, list(agent.session.events)
    finally:
        plugin.close()

    assert [e.data["reason"] for e in live if e.type == "turn/end"] == ["completed"] * 3
    reasons = [str(error) for error in errors.errors]
    assert len(reasons) >= 2  # at least each turn's flush (and the dispose)
    for reason in reasons:
        assert f"event seq {bad.seq} ('note/bad') cannot be written as JSON" in reason
    assert stored(settings, session_id) == [event.to_dict() for event in live[: bad.seq]]
