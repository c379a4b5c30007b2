"""The events of an agent's two hand-overs per turn: a prompt wakes the loop task, the
end of the turn wakes ``when_idle``.

On asyncio, ``anyio.Event`` wraps an ``asyncio.Event``, which makes a future per waiter
through a few more calls; :class:`FutureEvent` keeps the futures itself, with the same
contract (any number of waiters, set once, a cancelled waiter leaves the others
waiting). That is ~1.5 µs of each hand-over on the benchmark machine
(bench/README.md). On any other backend the agent uses ``anyio.Event``.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

import anyio

__all__ = ["FutureEvent", "Signal", "event_class"]


class Signal(Protocol):
    """What the agent needs of an event (``anyio.Event`` has it)."""

    def set(self) -> None: ...

    def is_set(self) -> bool: ...

    async def wait(self) -> None: ...


class FutureEvent:
    """A one-shot event on asyncio futures: one future per waiter, like asyncio's.

    Unlike ``anyio.Event``, ``wait()`` on an event already set returns without
    yielding to the loop: the agent never waits on an event in a loop that could spin.
    """

    __slots__ = ("_flag", "_waiters")

    def __init__(self) -> None:
        self._flag = False
        self._waiters: list[asyncio.Future[None]] = []

    def set(self) -> None:
        if not self._flag:
            self._flag = True
            for waiter in self._waiters:
                if not waiter.done():
                    waiter.set_result(None)

    def is_set(self) -> bool:
        return self._flag

    async def wait(self) -> None:
        if self._flag:
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiters = self._waiters
        waiters.append(waiter)
        try:
            await waiter
        finally:
            waiters.remove(waiter)


def event_class() -> type[Signal]:
    """The event class for the running backend: FutureEvent on asyncio, else
    ``anyio.Event``. Asked of anyio (once per agent), not of asyncio: trio in guest mode
    runs its tasks inside a running asyncio loop, where ``asyncio.current_task()`` does
    not raise but FutureEvent's futures would never wake a trio task."""
    try:
        cancelled = anyio.get_cancelled_exc_class()
    except RuntimeError:  # no event loop runs here
        return anyio.Event
    return FutureEvent if cancelled is asyncio.CancelledError else anyio.Event
