"""What the harness tests share (test_harness_*.py, test_agent_registry_*.py): a config
with one agent; that a harness holds nothing; a create as the harness leaves; a store
that records its claims."""

from __future__ import annotations

from typing import Any

import anyio
from loop_support import LIMIT

from dsh import DshError
from dsh.harness import Harness
from dsh.testing import InMemoryPersistence, ScriptedModel, scripted_harness

CONFIG = """
model: scripted
models:
  scripted: {provider: scripted}
agents:
  - id: helper
    system_prompt: You help.
    max_steps: 3
"""


def nothing_left(harness: Harness) -> None:
    assert harness.agents.list() == []
    assert harness.sessions.list() == []


async def _set_soon(event: anyio.Event) -> None:
    await anyio.sleep(0.05)
    event.set()


async def create_as_the_harness_leaves(
    store: object, held: anyio.Event, go_on: anyio.Event
) -> tuple[Harness, list[BaseException]]:
    """Create agent ``b`` in a harness over ``store``, and leave the harness once ``held``
    is set (``store`` holds the create up until ``go_on``, which is set 0.05 s into the
    exit). Returns the harness and the ``DshError`` the create raised, if any (any other
    error fails the test)."""
    refused: list[BaseException] = []

    async def create(harness: Harness) -> None:
        try:
            await harness.agents.create("b", options={"model": "scripted"})
        except DshError as error:
            refused.append(error)

    with anyio.fail_after(LIMIT):
        async with (
            anyio.create_task_group() as tg,
            scripted_harness(ScriptedModel(), plugins=[store], load_entry_points=False) as h,
        ):
            tg.start_soon(create, h)
            await held.wait()
            tg.start_soon(_set_soon, go_on)
    return h, refused


class Claiming(InMemoryPersistence):
    """InMemoryPersistence with the optional claim/release pair, recording the calls."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, str]] = []

    async def claim(self, session_id: str, events: Any = ()) -> None:
        self.calls.append(("claim", session_id))

    async def release(self, session_id: str) -> None:
        self.calls.append(("release", session_id))
