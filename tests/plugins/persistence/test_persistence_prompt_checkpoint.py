"""The prompt is on disk soon after its turn starts (docs/persistence.md, "What is
written, and when"): a process killed while the model still streams its first answer,
before any tool call or step end, used to lose the whole turn, and a new session
announced on stderr did not exist afterwards. A log of only ``turn/start``,
``user/message`` and what the step began loads closed as ``interrupted``, sound."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from dsh.testing import ScriptedModel, check_invariants, hang, scripted_harness
from dsh_persistence import PersistencePlugin, PersistenceSettings, open_backend

pytestmark = pytest.mark.plugins("persistence")

LIMIT = 10.0


def stored(settings: PersistenceSettings, session_id: str) -> Any:
    """The session as another process would load it now (None: not stored)."""
    backend = open_backend(settings)
    try:
        return backend.load(session_id)
    finally:
        backend.close()


async def test_a_prompt_is_stored_while_the_model_streams(settings: PersistenceSettings) -> None:
    settings = settings.model_copy(update={"checkpoint_delay": 0.0})
    plugin = PersistencePlugin(settings)
    try:
        async with scripted_harness(
            ScriptedModel([hang("thinking", " still")]), plugins=[plugin], load_entry_points=False
        ) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            agent.send("a long prompt I spent ten minutes writing")
            deadline = time.monotonic() + LIMIT
            loaded = None
            while loaded is None and time.monotonic() < deadline:
                await anyio.sleep(0.01)
                loaded = await anyio.to_thread.run_sync(stored, settings, agent.session.id)
            assert agent.session.events[-1].type != "turn/end"  # still streaming
            agent.abort()
            with anyio.fail_after(LIMIT):
                await agent.when_idle()
    finally:
        plugin.close()

    assert loaded is not None, "nothing of the running turn was stored"
    events = loaded.stored.events
    assert [e.type for e in events[:2]] == ["turn/start", "user/message"]
    assert events[1].data["content"] == "a long prompt I spent ten minutes writing"
    assert loaded.closers and events[-1].type == "turn/end"
    assert events[-1].data["reason"] == "interrupted"
    assert check_invariants(events) == []


def test_a_log_cut_after_the_prompt_loads_closed(settings: PersistenceSettings) -> None:
    """A kill right after the checkpoint of the prompt: ``turn/start`` and
    ``user/message`` only. Loading closes the turn as ``interrupted``, no step open."""
    from dsh.session import Session
    from dsh_persistence import SessionInfo

    session = Session("cut")
    session._append("turn/start", {"turn": 1})
    session._append("user/message", {"content": "hi"})
    backend = open_backend(settings)
    try:
        backend.append(SessionInfo("cut", 1.0), session.events, durable=False)
        loaded = backend.load("cut")
    finally:
        backend.close()
    assert loaded is not None
    events = loaded.stored.events
    assert [e.type for e in events] == ["turn/start", "user/message", "turn/end"]
    assert events[-1].data["reason"] == "interrupted"
    assert check_invariants(events) == []
