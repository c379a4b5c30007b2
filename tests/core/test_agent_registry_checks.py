"""What the registry checks before a start is reserved, and what it refuses once the
harness leaves: a resume's options and workspace are checked before its id and session
are (as ``create`` checks them), so the error names what is wrong with the call itself;
``load_stored`` is refused once the harness is leaving, and one in flight is awaited by
the harness's exit before its plugins close their stores.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from loop_support import LIMIT

from dsh import DshError, hookimpl
from dsh.harness import Harness
from dsh.testing import InMemoryPersistence, ScriptedModel, run_turn, scripted_harness

OPTIONS = {"model": "scripted"}
MISSING = "/nonexistent/workspace"


async def live_and_stored(h: Harness) -> tuple[Any, Any]:
    agent = await h.agents.create("a", options=OPTIONS)
    await run_turn(agent, "hi")
    return agent, await h.agents.load_stored(agent.session.id)


@pytest.mark.parametrize("how", ["resume", "resume_stored"])
async def test_a_resume_with_a_bad_workspace_says_so_before_its_id_or_session(how: str) -> None:
    store = InMemoryPersistence()
    with anyio.fail_after(LIMIT):
        async with scripted_harness(
            ScriptedModel(["one"]), plugins=[store], load_entry_points=False
        ) as h:
            agent, stored = await live_and_stored(h)
            for agent_id in ("a", "b"):  # the id taken; the session live in the harness
                if how == "resume":
                    start = h.agents.resume(agent_id, agent.session.id, workspace=MISSING)
                else:
                    start = h.agents.resume_stored(agent_id, stored, workspace=MISSING)
                with pytest.raises(DshError) as refused:
                    await start
                assert str(refused.value) == (
                    f"agent {agent_id!r}: workspace {MISSING!r} is not a directory"
                )


@pytest.mark.parametrize("how", ["resume", "resume_stored", "create"])
async def test_a_start_with_a_misspelt_option_says_so_before_its_id(how: str) -> None:
    store = InMemoryPersistence()
    options = {**OPTIONS, "max_stepz": 3}
    with anyio.fail_after(LIMIT):
        async with scripted_harness(
            ScriptedModel(["one"]), plugins=[store], load_entry_points=False
        ) as h:
            agent, stored = await live_and_stored(h)
            if how == "resume":
                start = h.agents.resume("a", agent.session.id, options=options)
            elif how == "resume_stored":
                start = h.agents.resume_stored("a", stored, options=options)
            else:
                start = h.agents.create("a", options=options)
            with pytest.raises(DshError, match="max_stepz") as refused:
                await start
            assert "already exists" not in str(refused.value)


class Recording(InMemoryPersistence):
    """InMemoryPersistence whose ``load`` is recorded; a ``slow`` one runs on as a read
    in a worker thread does (not cut short) until ``go_on``; ``harness_stopping`` is
    where a store on disk is closed."""

    def __init__(self) -> None:
        super().__init__()
        self.order: list[str] = []
        self.slow = False
        self.loading, self.go_on = anyio.Event(), anyio.Event()

    async def load(self, session_id: str) -> Any:
        if self.slow:
            self.loading.set()
            with anyio.CancelScope(shield=True):
                await self.go_on.wait()
        self.order.append("load")
        return await super().load(session_id)

    @hookimpl
    def harness_stopping(self, harness: Harness) -> None:
        self.order.append("harness_stopping")


async def test_load_stored_once_the_harness_has_stopped_is_refused() -> None:
    store = Recording()
    with anyio.fail_after(LIMIT):
        async with scripted_harness(
            ScriptedModel(["one"]), plugins=[store], load_entry_points=False
        ) as h:
            agent, _ = await live_and_stored(h)
        store.order.clear()
        with pytest.raises(DshError) as refused:
            await h.agents.load_stored(agent.session.id)
    assert str(refused.value) == (
        f"cannot load session {agent.session.id!r}: the harness has stopped"
    )
    assert store.order == []  # the store was not read (a store on disk: not reopened)


async def test_a_load_stored_in_flight_when_the_harness_leaves_ends_before_harness_stopping() -> (
    None
):
    store = Recording()
    loaded: list[str] = []

    async def load(harness: Harness, session_id: str) -> None:
        loaded.append((await harness.agents.load_stored(session_id)).id)

    async def go_on_soon() -> None:
        await anyio.sleep(0.05)
        store.go_on.set()

    with anyio.fail_after(LIMIT):
        async with (
            anyio.create_task_group() as tg,
            scripted_harness(ScriptedModel(["one"]), plugins=[store], load_entry_points=False) as h,
        ):
            agent, _ = await live_and_stored(h)
            store.order.clear()
            store.slow = True
            tg.start_soon(load, h, agent.session.id)
            await store.loading.wait()
            tg.start_soon(go_on_soon)
    assert store.order == ["load", "harness_stopping"]  # the exit waited for the read
    assert loaded == [agent.session.id]  # read before the store closed: it is the caller's
