"""The registry's start path: a create or resume that fails after its agent went live
leaves nothing behind (the agent disposed through its teardown, then its claim let go);
the harness leaving refuses a start after each await before the agent goes live, and
waits for starts in flight before its plugins close their stores; a session being
resumed in this harness is refused to a second resume naming the first agent.

Persistence here is a test double with ``claim``/``release`` recording the calls; the
same cases against dsh-persistence's real stores are in test_agent_registry_store.py.
"""

from __future__ import annotations

import re
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from harness_support import create_as_the_harness_leaves, nothing_left
from loop_support import LIMIT

from dsh import DshError, SessionInUseError, hookimpl
from dsh.harness import Harness
from dsh.testing import InMemoryPersistence, ScriptedModel, run_turn, scripted_harness

OPTIONS = {"model": "scripted"}


class Claiming(InMemoryPersistence):
    """InMemoryPersistence with the optional claim/release pair: a claim held by this
    store is refused as another process's would be; every call is recorded."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, str]] = []
        self.held: set[str] = set()

    async def claim(self, session_id: str, events: Any = ()) -> None:
        self.calls.append(("claim", session_id))
        if session_id in self.held:
            raise DshError(f"session {session_id!r} is in use: another process is continuing it")
        self.held.add(session_id)

    async def release(self, session_id: str) -> None:
        self.calls.append(("release", session_id))
        self.held.discard(session_id)

    @hookimpl
    def agent_disposed(self, agent: Any) -> None:
        self.calls.append(("disposed", agent.session.id))
        self.held.discard(agent.session.id)  # as dsh-persistence ends the claim


class Hangs:
    """An async ``agent_created`` observer that never returns."""

    def __init__(self) -> None:
        self.entered = anyio.Event()
        self.agents: list[Any] = []

    @hookimpl
    async def agent_created(self, agent: Any) -> None:
        self.agents.append(agent)
        self.entered.set()
        await anyio.sleep_forever()


async def stored_session(store: Claiming) -> str:
    async with scripted_harness(
        ScriptedModel(["one"]), plugins=[store], load_entry_points=False
    ) as h:
        agent = await h.agents.create("first", options=OPTIONS)
        await run_turn(agent, "hi")
        return agent.session.id


@pytest.mark.parametrize("how", ["create", "resume"])
async def test_a_start_cancelled_in_agent_created_disposes_its_agent_then_releases(
    how: str,
) -> None:
    store, hangs = Claiming(), Hangs()
    sid = await stored_session(store) if how == "resume" else "s1"
    store.calls.clear()
    plugins = [store, ("hangs", hangs)]
    with anyio.fail_after(LIMIT):
        async with scripted_harness(ScriptedModel(), plugins=plugins, load_entry_points=False) as h:

            async def start() -> None:
                if how == "resume":
                    await h.agents.resume("a", sid)
                else:
                    await h.agents.create("a", session_id=sid, options=OPTIONS)

            async with anyio.create_task_group() as tg:
                tg.start_soon(start)
                await hangs.entered.wait()
                tg.cancel_scope.cancel()  # the caller gives up while the observer runs
            nothing_left(h)  # the harness goes on, with no agent
            (agent,) = hangs.agents
            assert agent.status == "disposed"
            # its teardown ended the claim (agent_disposed), and nothing releases it again:
            # a second release could end the claim another harness took meanwhile
            assert store.calls == [("claim", sid), ("disposed", sid)]


async def test_an_agent_created_observer_that_raises_is_reported_and_the_agent_runs() -> None:
    # agent_created is a notification: a failing observer is reported, the rest go on
    # (ARCHITECTURE.md, section 3), so the create succeeds and its claim is kept.
    class Raises:
        @hookimpl
        async def agent_created(self, agent: Any) -> None:
            await anyio.lowlevel.checkpoint()
            raise RuntimeError("observer broke")

    store = Claiming()
    with anyio.fail_after(LIMIT):
        async with scripted_harness(
            ScriptedModel(["fine"]), plugins=[store, ("raises", Raises())], load_entry_points=False
        ) as h:
            agent = await h.agents.create("a", options=OPTIONS)
            assert h.agents.get("a") is agent
            assert [call for call, _ in store.calls] == ["claim"]
            events = await run_turn(agent, "hi")
            assert events[-1].data["reason"] == "completed"


async def test_a_create_waiting_for_the_store_when_the_harness_leaves_claims_nothing() -> None:
    asking, never = anyio.Event(), anyio.Event()

    class SlowStore(Claiming):
        @hookimpl
        async def session_persistence(self) -> Claiming:
            asking.set()
            await never.wait()  # answered only once the harness has left
            return self

    store = SlowStore()
    h, refused = await create_as_the_harness_leaves(store, asking, never)
    assert len(refused) == 1
    assert re.fullmatch(r"agent 'b': the harness (is stopping|has stopped)", str(refused[0]))
    nothing_left(h)
    assert store.calls == []  # no claim taken after the harness began to leave


async def test_a_claim_in_flight_when_the_harness_leaves_ends_before_harness_stopping() -> None:
    claiming, go_on = anyio.Event(), anyio.Event()
    order: list[str] = []

    class SlowClaim(Claiming):
        async def claim(self, session_id: str, events: Any = ()) -> None:
            claiming.set()
            with anyio.CancelScope(shield=True):  # as a claim in a worker thread
                await go_on.wait()
            await super().claim(session_id, events)
            order.append("claimed")

        async def release(self, session_id: str) -> None:
            await super().release(session_id)
            order.append("released")

        @hookimpl
        def harness_stopping(self, harness: Harness) -> None:
            order.append("harness_stopping")  # the store closes here

    store = SlowClaim()
    h, refused = await create_as_the_harness_leaves(store, claiming, go_on)
    assert [str(e) for e in refused] == ["agent 'b': the harness is stopping"]
    assert order == ["claimed", "released", "harness_stopping"]
    nothing_left(h)


async def test_a_second_resume_of_a_session_being_resumed_names_the_first_agent() -> None:
    claiming, go_on = anyio.Event(), anyio.Event()

    class SlowClaim(Claiming):
        slow = False

        async def claim(self, session_id: str, events: Any = ()) -> None:
            await super().claim(session_id, events)
            if self.slow:
                claiming.set()
                await go_on.wait()

    store = SlowClaim()
    sid = await stored_session(store)
    store.calls.clear()
    store.slow = True
    with anyio.fail_after(LIMIT):
        async with scripted_harness(
            ScriptedModel(["two"]), plugins=[store], load_entry_points=False
        ) as h:
            async with anyio.create_task_group() as tg:
                tg.start_soon(h.agents.resume, "a", sid)
                await claiming.wait()
                with pytest.raises(SessionInUseError) as second:
                    await h.agents.resume("b", sid)
                with pytest.raises(SessionInUseError) as created:
                    await h.agents.create("c", session_id=sid, options=OPTIONS)
                go_on.set()
            said = (
                f"session {sid!r} is in use: it is being resumed or created in this harness "
                "(agent 'a'); dispose that agent first"
            )
            assert str(second.value) == f"agent 'b': {said}"
            assert str(created.value) == f"agent 'c': {said}"
            assert store.calls == [("claim", sid)]  # the second claim was not tried
            agent = h.agents.get("a")
            assert agent is not None
            events = await run_turn(agent, "again")
            assert events[-1].data["reason"] == "completed"


class ThreadClaim(Claiming):
    """A claim as dsh-persistence takes it, in a worker thread: a cancellation already
    pending is raised before it starts (nothing claimed); once started it runs to its end
    and returns, the cancellation delivered later. ``slow`` claims wait for ``go_on``."""

    def __init__(self, slow: bool = False) -> None:
        super().__init__()
        self.slow = slow
        self.claiming, self.go_on = anyio.Event(), anyio.Event()
        self.created: list[str] = []

    async def claim(self, session_id: str, events: Any = ()) -> None:
        await anyio.lowlevel.checkpoint()  # anyio.to_thread.run_sync checks first
        with anyio.CancelScope(shield=True):
            if self.slow:
                self.claiming.set()
                await self.go_on.wait()
            await super().claim(session_id, events)

    @hookimpl
    def agent_created(self, agent: Any) -> None:
        self.created.append(agent.id)


async def test_a_create_cancelled_before_its_claim_ran_releases_nothing() -> None:
    # the claim never ran: a release would end the claim another harness of this process
    # holds on the session (dsh-persistence's claims are the process's)
    store = ThreadClaim()
    with anyio.fail_after(LIMIT):
        async with scripted_harness(ScriptedModel(), plugins=[store], load_entry_points=False) as h:
            with anyio.CancelScope() as scope:
                scope.cancel()
                await h.agents.create("a", "s1", None, OPTIONS)
            assert scope.cancelled_caught
            nothing_left(h)
            assert store.calls == []
            assert store.created == []


async def test_a_caller_cancelled_while_its_claim_is_taken_lets_the_claim_go() -> None:
    # the claim ends (taken) before the cancellation is delivered: the start goes no
    # further, no agent goes live, and the claim it took is let go
    store = ThreadClaim(slow=True)
    with anyio.fail_after(LIMIT):
        async with scripted_harness(ScriptedModel(), plugins=[store], load_entry_points=False) as h:
            async with anyio.create_task_group() as tg:
                tg.start_soon(h.agents.create, "a", "s1", None, OPTIONS)
                await store.claiming.wait()
                tg.cancel_scope.cancel()
                store.go_on.set()
            nothing_left(h)
            assert store.created == []  # it never went live
            assert store.calls == [("claim", "s1"), ("release", "s1")]
            agent = await h.agents.create("a", "s1", options=OPTIONS)  # the id is free again
            assert h.agents.get("a") is agent


async def test_a_start_cancelled_in_agent_created_tells_every_observer_before_disposing() -> None:
    # an observer later in hook order than the one the cancellation cut short is still
    # told agent_created (an async one cancelled at its first await, so none hangs the
    # start) before agent_disposed: no observer sees disposed without created
    calls: list[tuple[str, str]] = []

    class Tracker:  # per-agent state made on created, dropped on disposed
        def __init__(self, name: str) -> None:
            self.name = name

        @hookimpl(trylast=True)
        def agent_created(self, agent: Any) -> None:
            calls.append((self.name, "created"))

        @hookimpl
        def agent_disposed(self, agent: Any) -> None:
            calls.append((self.name, "disposed"))

    class AsyncTracker(Tracker):
        @hookimpl(trylast=True)
        async def agent_created(self, agent: Any) -> None:
            calls.append((self.name, "created"))
            await anyio.sleep_forever()  # cancelled at once: the start was

    store, hangs = Claiming(), Hangs()
    plugins = [store, ("tracker", Tracker("sync")), ("async", AsyncTracker("async")), hangs]
    with anyio.fail_after(LIMIT):
        async with scripted_harness(ScriptedModel(), plugins=plugins, load_entry_points=False) as h:
            async with anyio.create_task_group() as tg:
                tg.start_soon(h.agents.create, "a", "s1", None, OPTIONS)
                await hangs.entered.wait()
                tg.cancel_scope.cancel()
            nothing_left(h)
    assert sorted(calls) == [
        ("async", "created"),
        ("async", "disposed"),
        ("sync", "created"),
        ("sync", "disposed"),
    ]
    assert calls.index(("sync", "created")) < calls.index(("sync", "disposed"))
    assert calls.index(("async", "created")) < calls.index(("async", "disposed"))
    assert store.calls == [("claim", "s1"), ("disposed", "s1")]


@pytest.mark.asyncio_only("asyncio.wait_for's cancellation")
async def test_a_start_cancelled_by_asyncio_cancels_later_async_observers_too() -> None:
    # asyncio's own cancellation (wait_for, asyncio.timeout, task.cancel()) is delivered
    # once, not at every await as anyio's scopes do: an async observer after the one it
    # cut short is still cancelled at its first await instead of holding the caller up
    import asyncio

    class Slow:
        def __init__(self) -> None:
            self.done = False

        @hookimpl(trylast=True)
        async def agent_created(self, agent: Any) -> None:
            await anyio.sleep_forever()
            self.done = True

    store, hangs, slow = Claiming(), Hangs(), Slow()
    plugins = [store, ("slow", slow), hangs]
    with anyio.fail_after(LIMIT):
        async with scripted_harness(ScriptedModel(), plugins=plugins, load_entry_points=False) as h:
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(h.agents.create("a", "s1", None, OPTIONS), 0.05)
            nothing_left(h)
    assert not slow.done
    assert store.calls == [("claim", "s1"), ("disposed", "s1")]
