"""The registry's start path against dsh-persistence's real stores (JSONL and SQLite):
a resume cancelled while an ``agent_created`` observer runs leaves no live agent and the
session free for another process; a claim in flight when the harness leaves ends before
the store is closed (nothing left open); a second resume of a session being resumed in
this harness names the agent resuming it. The same cases with a test double are in
test_agent_registry_start.py.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from loop_support import LIMIT

from dsh import DshError, SessionInUseError, hookimpl
from dsh.testing import ScriptedModel, run_turn, scripted_harness

persistence = pytest.importorskip("dsh_persistence")

pytestmark = [
    pytest.mark.plugins("persistence"),
    pytest.mark.skipif(os.name == "nt", reason="claims are POSIX flock"),
]

OPTIONS = {"model": "scripted"}


@pytest.fixture(params=["jsonl", "sqlite"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    return persistence.PersistenceSettings(backend=request.param, directory=tmp_path)


async def stored_session(settings: Any) -> str:
    plugin = persistence.PersistencePlugin(settings)
    async with scripted_harness(
        ScriptedModel(["noted"]), plugins=[("persistence", plugin)], load_entry_points=False
    ) as h:
        agent = await h.agents.create("first", options=OPTIONS)
        await run_turn(agent, "remember blue")
        return agent.session.id


async def claimable_elsewhere(settings: Any, session_id: str) -> None:
    """Resume ``session_id`` with another plugin over the store ("another process")."""
    other = persistence.PersistencePlugin(settings)
    async with scripted_harness(
        ScriptedModel(["again"]), plugins=[("persistence", other)], load_entry_points=False
    ) as h:
        agent = await h.agents.resume("elsewhere", session_id)
        await run_turn(agent, "hi")


def held_in_its_thread(backend: Any, name: str) -> tuple[threading.Event, threading.Event]:
    """Hold up ``backend.<name>`` (a claim or a read, which dsh runs in a worker thread):
    the first event is set once it is called, and it runs only once the second is set."""
    called, go_on = threading.Event(), threading.Event()
    real = getattr(backend, name)

    def held(session_id: str) -> Any:
        called.set()
        go_on.wait(LIMIT)
        return real(session_id)

    setattr(backend, name, held)
    return called, go_on


async def set_soon(event: threading.Event) -> None:
    await anyio.sleep(0.1)
    event.set()


async def test_a_resume_cancelled_in_agent_created_leaves_no_live_agent(settings: Any) -> None:
    entered = anyio.Event()

    class Hangs:
        @hookimpl
        async def agent_created(self, agent: Any) -> None:
            entered.set()
            await anyio.sleep_forever()

    sid = await stored_session(settings)
    plugin = persistence.PersistencePlugin(settings)
    plugins = [("persistence", plugin), ("hangs", Hangs())]
    with anyio.fail_after(LIMIT):
        async with scripted_harness(ScriptedModel(), plugins=plugins, load_entry_points=False) as h:
            async with anyio.create_task_group() as tg:
                tg.start_soon(h.agents.resume, "a", sid)
                await entered.wait()
                tg.cancel_scope.cancel()
            assert h.agents.list() == []
            assert h.sessions.list() == []
            # its claim is free: another process continues the session meanwhile
            await claimable_elsewhere(settings, sid)


async def test_a_claim_in_flight_when_the_harness_leaves_leaves_no_store_open(
    tmp_path: Path,
) -> None:
    settings = persistence.PersistenceSettings(backend="sqlite", directory=tmp_path)
    sid = await stored_session(settings)
    plugin = persistence.PersistencePlugin(settings)
    refused: list[BaseException] = []

    async def resume(harness: Any) -> None:
        try:
            await harness.agents.resume("a", sid)
        except DshError as error:
            refused.append(error)

    with anyio.fail_after(LIMIT):
        async with (
            anyio.create_task_group() as tg,
            scripted_harness(
                ScriptedModel(), plugins=[("persistence", plugin)], load_entry_points=False
            ) as h,
        ):
            backend = plugin.backend
            claiming, go_on = held_in_its_thread(backend, "claim")
            tg.start_soon(resume, h)
            await anyio.to_thread.run_sync(claiming.wait, LIMIT)
            tg.start_soon(set_soon, go_on)
    assert [str(e) for e in refused] == ["agent 'a': the harness is stopping"]
    assert backend._db is None  # the store the claim opened was closed with the rest
    assert plugin._stores.backends == {}
    await claimable_elsewhere(settings, sid)


async def test_a_second_resume_of_a_session_being_resumed_names_the_first_agent(
    settings: Any,
) -> None:
    sid = await stored_session(settings)
    plugin = persistence.PersistencePlugin(settings)
    with anyio.fail_after(LIMIT):
        async with scripted_harness(
            ScriptedModel(["two"]), plugins=[("persistence", plugin)], load_entry_points=False
        ) as h:
            claiming, go_on = held_in_its_thread(plugin.backend, "claim")
            async with anyio.create_task_group() as tg:
                tg.start_soon(h.agents.resume, "a", sid)
                await anyio.to_thread.run_sync(claiming.wait, LIMIT)
                try:
                    with pytest.raises(SessionInUseError) as second:
                        await h.agents.resume("b", sid)
                finally:
                    go_on.set()
            assert str(second.value) == (
                f"agent 'b': session {sid!r} is in use: it is being resumed or created in "
                "this harness (agent 'a'); dispose that agent first"
            )
            agent = h.agents.get("a")
            assert agent is not None
            events = await run_turn(agent, "again")
            assert events[-1].data["reason"] == "completed"


async def test_a_create_cancelled_before_its_claim_ran_leaves_another_harness_claim(
    settings: Any,
) -> None:
    # anyio's worker thread is not started for a caller already cancelled: the claim
    # never ran, so nothing is released (the claims are the process's: a release would
    # end the claim of the other harness's live agent, and another process could write)
    plugin = persistence.PersistencePlugin(settings)
    with anyio.fail_after(LIMIT):
        async with scripted_harness(
            ScriptedModel(["one"]), plugins=[("persistence", plugin)], load_entry_points=False
        ) as h1:
            agent = await h1.agents.create("a", options=OPTIONS)
            await run_turn(agent, "hi")
            sid = agent.session.id
            async with scripted_harness(
                ScriptedModel(), plugins=[("persistence", plugin)], load_entry_points=False
            ) as h2:
                backend = plugin.backend
                calls: list[str] = []
                release = backend.release
                backend.release = lambda session_id: (calls.append(session_id), release(session_id))
                with anyio.CancelScope() as scope:
                    scope.cancel()
                    await h2.agents.create("b", session_id=sid, options=OPTIONS)
                assert scope.cancelled_caught
                assert h2.agents.list() == []
                assert calls == []
            with pytest.raises(DshError, match="in use"):
                await claimable_elsewhere(settings, sid)  # a's claim still holds


async def test_a_caller_cancelled_while_its_claim_runs_starts_nothing(settings: Any) -> None:
    # the claim ends in its thread before the cancellation is delivered: no agent goes
    # live (docs/python.md: a cancelled create leaves nothing behind), the claim is let go
    sid = await stored_session(settings)
    plugin = persistence.PersistencePlugin(settings)
    created: list[str] = []

    class Observer:
        @hookimpl
        def agent_created(self, agent: Any) -> None:
            created.append(agent.id)

    plugins = [("persistence", plugin), ("observer", Observer())]
    with anyio.fail_after(LIMIT):
        async with scripted_harness(ScriptedModel(), plugins=plugins, load_entry_points=False) as h:
            claiming, go_on = held_in_its_thread(plugin.backend, "claim")
            async with anyio.create_task_group() as tg:
                tg.start_soon(h.agents.resume, "a", sid)
                await anyio.to_thread.run_sync(claiming.wait, LIMIT)
                tg.cancel_scope.cancel()
                go_on.set()
            assert h.agents.list() == []
            assert created == []
            await claimable_elsewhere(settings, sid)


async def test_a_start_cancelled_in_agent_created_ends_its_claim_once(settings: Any) -> None:
    # its teardown ends the claim (agent_disposed); a second release, once another
    # harness of this process had resumed the session, ended that harness's claim
    sid = await stored_session(settings)
    plugin = persistence.PersistencePlugin(settings)
    created, in_disposed, go_on = anyio.Event(), anyio.Event(), anyio.Event()
    resumed = anyio.Event()  # the cancelled resume has ended, its teardown with it

    class Observer:
        @hookimpl(trylast=True)
        async def agent_created(self, agent: Any) -> None:
            created.set()
            await anyio.sleep_forever()

        @hookimpl(trylast=True)  # after dsh-persistence's, which ended the claim
        async def agent_disposed(self, agent: Any) -> None:
            in_disposed.set()
            await go_on.wait()

    async def resume(harness: Any, scope: anyio.CancelScope) -> None:
        try:
            with scope:
                await harness.agents.resume("b", sid)
        finally:
            resumed.set()

    with anyio.fail_after(LIMIT):
        async with (
            scripted_harness(
                ScriptedModel(),
                plugins=[("persistence", plugin), ("observer", Observer())],
                load_entry_points=False,
            ) as h2,
            scripted_harness(
                ScriptedModel(["c"]), plugins=[("persistence", plugin)], load_entry_points=False
            ) as h1,
            anyio.create_task_group() as tg,
        ):
            scope = anyio.CancelScope()
            tg.start_soon(resume, h2, scope)
            await created.wait()
            scope.cancel()
            await in_disposed.wait()
            agent = await h1.agents.resume("c", sid)  # its claim, taken legitimately
            go_on.set()
            await resumed.wait()
            assert h2.agents.list() == []
            with pytest.raises(DshError, match="in use"):
                await claimable_elsewhere(settings, sid)  # c's claim still holds
            assert agent.status == "idle"


async def test_load_stored_at_or_after_exit_leaves_no_store_open(tmp_path: Path) -> None:
    # a read in flight as the harness leaves is awaited before harness_stopping closes
    # the store; one asked for once it has stopped is refused: neither reopens it
    settings = persistence.PersistenceSettings(backend="sqlite", directory=tmp_path)
    sid = await stored_session(settings)
    plugin = persistence.PersistencePlugin(settings)
    loaded: list[str] = []

    async def load(harness: Any) -> None:
        loaded.append((await harness.agents.load_stored(sid)).id)

    with anyio.fail_after(LIMIT):
        async with (
            anyio.create_task_group() as tg,
            scripted_harness(
                ScriptedModel(), plugins=[("persistence", plugin)], load_entry_points=False
            ) as h,
        ):
            backend = plugin.backend
            loading, go_on = held_in_its_thread(backend, "load")
            tg.start_soon(load, h)
            await anyio.to_thread.run_sync(loading.wait, LIMIT)
            tg.start_soon(set_soon, go_on)
        assert loaded == [sid]  # read before the store was closed
        assert backend._db is None
        with pytest.raises(DshError, match="the harness has stopped"):
            await h.agents.load_stored(sid)
    assert backend._db is None
    assert plugin._stores.backends == {}
