"""The chat service of the embedding study (test_embedding_study_*.py) and its helpers."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread

from dsh import hookimpl
from dsh.session import Session, SessionEvent
from dsh.tools import ToolContext, tool

GUARD = 20  # seconds: only a hang guard, never a timing assertion


class Service:
    """What a chat backend plugs in: a ``gate`` tool that waits until the test opens the
    caller's gate, and a ``session_event`` observer the test waits on (route by
    ``session.id``, as hooks.md says)."""

    def __init__(self) -> None:
        self.gates: defaultdict[str, anyio.Event] = defaultdict(anyio.Event)
        self.in_gate: defaultdict[str, anyio.Event] = defaultdict(anyio.Event)
        self.seen: defaultdict[str, list[SessionEvent]] = defaultdict(list)
        self._waiters: list[tuple[str, Callable[[SessionEvent], bool], anyio.Event]] = []

    @hookimpl
    def register_tools(self, register: Callable[..., None]) -> None:
        gates, in_gate = self.gates, self.in_gate

        @tool
        async def gate(context: ToolContext) -> str:
            """Wait until the service lets this user go on."""
            in_gate[context.agent.id].set()
            await gates[context.agent.id].wait()
            return "opened"

        register(gate)

    @hookimpl
    def session_event(self, session: Session, event: SessionEvent) -> None:
        self.seen[session.id].append(event)
        for waiter in list(self._waiters):
            sid, match, done = waiter
            if sid == session.id and match(event):
                done.set()
                self._waiters.remove(waiter)

    async def wait_for(self, session_id: str, match: Callable[[SessionEvent], bool]) -> None:
        if any(match(e) for e in self.seen[session_id]):
            return
        done = anyio.Event()
        self._waiters.append((session_id, match, done))
        await done.wait()


def is_chunk(event: SessionEvent) -> bool:
    return event.type == "assistant/chunk" and event.data.get("kind") == "text"


def other_tasks() -> set[Any]:
    """The live tasks of the run other than the caller (and, on trio, its ancestors and
    the tasks of trio and anyio themselves)."""
    if anyio.get_cancelled_exc_class() is asyncio.CancelledError:
        me = asyncio.current_task()
        return {t for t in asyncio.all_tasks() if t is not me and not t.done()}
    import trio

    mine, task = set(), trio.lowlevel.current_task()
    while task is not None:  # the caller, and the tasks whose nurseries it runs in
        mine.add(task)
        task = task.parent_nursery.parent_task if task.parent_nursery else None
    found, stack = set(), [trio.lowlevel.current_root_task()]
    while stack:
        task = stack.pop()
        for nursery in task.child_nurseries:
            stack.extend(nursery.child_tasks)
        # system tasks: "<init>", "<TrioToken.run_sync_soon task>", anyio's "<...>"
        if task not in mine and not task.name.startswith("<") and "TrioToken" not in task.name:
            found.add(task)
    return found
