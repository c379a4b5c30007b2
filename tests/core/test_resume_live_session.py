"""Behaviour 33 at the registry: creating or resuming an agent on a session that a live
agent of the same harness runs is refused saying so (the agent that runs it, and to
dispose it first), before the session's claim is tried: the claim is left as it was, and
the live agent goes on. The refusal is a ``SessionInUseError``, as when another process
holds the session (it was a plain ``DshError``: a program had to catch both).
"""

from __future__ import annotations

import anyio
import pytest
from harness_support import Claiming
from loop_support import LIMIT

from dsh import DshError, SessionInUseError
from dsh.testing import ScriptedModel, run_turn, scripted_harness


async def test_b33_resuming_a_session_live_in_this_harness_names_its_agent() -> None:
    store = Claiming()
    model = ScriptedModel(["one", "two"])
    async with scripted_harness(model, plugins=[store], load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "hi")
        sid = agent.session.id
        calls = list(store.calls)
        said = (
            f"session {sid!r} is in use: it is already live in this harness (agent 'a'); "
            "dispose that agent first"
        )
        with pytest.raises(DshError) as resumed:
            await h.agents.resume("b", sid)
        with pytest.raises(DshError) as created:
            await h.agents.create("b", session_id=sid, options={"model": "scripted"})
        for refused in (resumed, created):
            assert refused.type is SessionInUseError
            assert str(refused.value) == f"agent 'b': {said}"
        assert store.calls == calls  # the claim was not tried: nothing taken or let go
        assert h.agents.get("b") is None
        assert h.sessions.get(sid) is agent.session
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "again")
        assert events[-1].data["reason"] == "completed"
