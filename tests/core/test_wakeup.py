"""``FutureEvent``, the agent's hand-over event on asyncio, keeps ``anyio.Event``'s
contract: any number of waiters, set once, and a cancelled waiter leaves the others
waiting (asyncio's own futures would cancel every awaiter of a shared future)."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from dsh._wakeup import FutureEvent, event_class
from dsh.testing import ScriptedModel, scripted_harness, text

ASYNCIO_ONLY = pytest.mark.asyncio_only("FutureEvent is made of asyncio futures")


@ASYNCIO_ONLY
async def test_asyncio_gets_the_future_event_and_agents_use_it() -> None:
    assert event_class() is FutureEvent
    async with scripted_harness(ScriptedModel([text("hi")])) as harness:
        handle = await harness.agents.create("a")
        assert type(handle.agent._wake) is FutureEvent


def test_without_a_running_asyncio_loop_it_is_anyio_event() -> None:
    assert event_class() is anyio.Event


async def test_trio_in_guest_mode_on_an_asyncio_loop_gets_anyio_event() -> None:
    """trio's guest mode runs trio's tasks in callbacks of a running asyncio loop: an
    asyncio probe sees that loop, but FutureEvent's futures would never wake a trio
    task (every agent then crashed). Runs in a thread: an asyncio host of its own."""
    trio = pytest.importorskip("trio")

    async def trio_main() -> tuple[type, str]:
        async with scripted_harness(
            ScriptedModel([text("hi")]), load_entry_points=False
        ) as harness:
            handle = await harness.agents.create("a", options={"model": "scripted"})
            return type(handle.agent._wake), (await handle.prompt("x")).text

    async def host() -> tuple[type, str]:
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        trio.lowlevel.start_guest_run(
            trio_main,
            run_sync_soon_threadsafe=loop.call_soon_threadsafe,
            done_callback=done.set_result,
        )
        return (await done).unwrap()

    with anyio.fail_after(20):
        wake, answer = await anyio.to_thread.run_sync(asyncio.run, host())
    assert issubclass(wake, anyio.Event)  # trio's, through anyio
    assert answer == "hi"


@ASYNCIO_ONLY
async def test_set_wakes_every_waiter_and_later_waits_return_at_once() -> None:
    event = FutureEvent()
    woken: list[int] = []

    async def waiter(n: int) -> None:
        await event.wait()
        woken.append(n)

    async with anyio.create_task_group() as tg:
        for n in range(3):
            tg.start_soon(waiter, n)
        await asyncio.sleep(0)
        assert woken == [] and not event.is_set()
        event.set()
        event.set()  # a second set is a no-op
    assert sorted(woken) == [0, 1, 2] and event.is_set()
    with anyio.fail_after(1):
        await event.wait()
    assert event._waiters == []


@ASYNCIO_ONLY
async def test_a_cancelled_waiter_leaves_the_others_waiting() -> None:
    event = FutureEvent()
    woken: list[str] = []

    async def waiter(name: str) -> None:
        await event.wait()
        woken.append(name)

    async with anyio.create_task_group() as tg:
        with anyio.CancelScope() as scope:
            tg.start_soon(waiter, "stays")
            cancelled = asyncio.ensure_future(waiter("cancelled"))
            await asyncio.sleep(0)
            cancelled.cancel()
            with pytest.raises(asyncio.CancelledError):
                await cancelled
            assert len(event._waiters) == 1
            event.set()
        assert not scope.cancel_called
    assert woken == ["stays"]
    assert event._waiters == []
