"""Plugins and bounds shared by the conformance tests of behaviours 22-35 (continuation,
cancellation, abort, disposal, outer cancellation).
"""

from __future__ import annotations

import anyio
import anyio.lowlevel

from dsh import hookimpl

# Seconds: the bound of tests whose failure mode is a hang (the harness's teardown too).
# Only a failing run waits it out; a busy machine can take more than a second to build
# and tear down a harness (1 s failed under CPU load).
HANG = 30


# -- small plugins shared by the tests ------------------------------------------------


class Lifecycle:
    """Records status notifications and ``agent_disposed`` calls."""

    def __init__(self) -> None:
        self.statuses: list[str] = []
        self.disposed = 0

    @hookimpl
    def agent_status(self, status: str) -> None:
        self.statuses.append(status)

    @hookimpl
    def agent_disposed(self) -> None:
        self.disposed += 1


class SlowStart:
    """Holds the ``running`` status notification until ``gate`` is set: the loop has
    taken the prompt but not yet opened its turn."""

    def __init__(self) -> None:
        self.entered = anyio.Event()
        self.gate = anyio.Event()

    @hookimpl
    async def agent_status(self, status: str) -> None:
        if status == "running" and not self.gate.is_set():
            self.entered.set()
            await self.gate.wait()


class HungRequest:
    """An ``agent_request`` impl stuck on slow I/O (a summariser call, say)."""

    def __init__(self) -> None:
        self.entered = anyio.Event()

    @hookimpl
    async def agent_request(self) -> None:
        self.entered.set()
        await anyio.sleep_forever()
