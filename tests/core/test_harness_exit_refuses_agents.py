"""Leaving the harness: an agent created or resumed while it stops, or once it has
stopped, is refused with a ``DshError`` (nothing registered, no session entered, no claim
held), and the exit always finishes.
"""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest
from harness_support import Claiming, create_as_the_harness_leaves, nothing_left
from loop_support import LIMIT

from dsh import DshError, hookimpl
from dsh.harness import Harness
from dsh.testing import ScriptedModel, run_turn, scripted_harness


async def test_an_agent_created_while_the_harness_stops_is_refused_and_the_exit_ends() -> None:
    flushing = anyio.Event()
    refused: list[BaseException] = []

    class SlowFlush:
        @hookimpl
        async def session_flush(self, session: Any) -> None:
            flushing.set()
            await anyio.sleep(0.2)

    async def late(harness: Harness) -> None:
        await flushing.wait()  # the harness is disposing its agents by now
        try:
            await harness.agents.create("b", options={"model": "scripted"})
        except DshError as error:
            refused.append(error)

    with anyio.fail_after(LIMIT):
        async with (
            anyio.create_task_group() as tg,
            scripted_harness(
                ScriptedModel(), plugins=[("slow", SlowFlush())], load_entry_points=False
            ) as h,
        ):
            await h.agents.create("a", options={"model": "scripted"})
            tg.start_soon(late, h)
    assert [str(e) for e in refused] == ["agent 'b': the harness is stopping"]
    nothing_left(h)


async def test_an_agent_created_by_harness_stopping_is_refused_and_the_exit_ends() -> None:
    refused: list[BaseException] = []

    class Stopper:
        @hookimpl
        async def harness_stopping(self, harness: Harness) -> None:
            try:
                await harness.agents.create("zombie", options={"model": "scripted"})
            except DshError as error:
                refused.append(error)

    with anyio.fail_after(LIMIT):
        async with scripted_harness(
            ScriptedModel(), plugins=[("stopper", Stopper())], load_entry_points=False
        ) as h:
            pass
    assert [str(e) for e in refused] == ["agent 'zombie': the harness is stopping"]
    nothing_left(h)


async def test_create_and_resume_after_exit_are_refused_registering_nothing() -> None:
    store = Claiming()
    async with scripted_harness(
        ScriptedModel(["one"]), plugins=[store], load_entry_points=False
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "hi")
        session_id = agent.session.id
    calls = list(store.calls)
    for _ in range(2):  # the first refusal leaves the id free: the second says the same
        with pytest.raises(DshError, match=r"^agent 'late': the harness has stopped$"):
            await h.agents.create("late", options={"model": "scripted"})
        with pytest.raises(DshError, match=r"^agent 'late': the harness has stopped$"):
            await h.agents.resume("late", session_id)
    nothing_left(h)
    assert store.calls == calls  # no claim taken


async def test_a_create_whose_claim_ends_after_the_exit_began_is_refused_and_released() -> None:
    claiming, go_on = anyio.Event(), anyio.Event()

    class SlowClaim(Claiming):
        async def claim(self, session_id: str, events: Any = ()) -> None:
            await super().claim(session_id, events)
            if session_id.startswith("b-"):
                claiming.set()
                with anyio.CancelScope(shield=True):  # as a claim in a worker thread:
                    await go_on.wait()  # it ends, taken, after the exit began

    store = SlowClaim()
    h, refused = await create_as_the_harness_leaves(store, claiming, go_on)
    assert len(refused) == 1
    assert re.fullmatch(r"agent 'b': the harness (is stopping|has stopped)", str(refused[0]))
    nothing_left(h)
    assert [call for call, sid in store.calls if sid.startswith("b-")] == ["claim", "release"]
