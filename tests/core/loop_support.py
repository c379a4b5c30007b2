"""What the loop conformance tests share: small plugins, event filters, a started
agent and one turn of one. Imported as ``loop_support`` (tests/ has no packages)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from dsh import hookimpl
from dsh.agent import AgentHandle
from dsh.harness import Harness
from dsh.session import EVENT_TYPES, SessionEvent
from dsh.testing import ScriptedModel, run_turn, scripted_harness
from dsh.tools import tool

LIMIT = 5  # seconds; every wait is bounded so a broken loop fails instead of hanging


@tool
def add(a: int, b: int) -> int:
    "Add two numbers."
    return a + b


class Models:
    """Registers ``models`` (as an installed plugin would: not last, as ``scripted_harness``
    registers the models it is given)."""

    def __init__(self, *models: Any) -> None:
        self.models = models

    @hookimpl
    def register_models(self, register: Callable[..., None]) -> None:
        for model in self.models:
            register(model)


class Tools:
    """``add``, and ``block``: an async tool that signals it started, then waits forever."""

    def __init__(self) -> None:
        self.started = anyio.Event()

        @tool
        async def block() -> str:
            "Wait until aborted."
            self.started.set()
            await anyio.sleep_forever()
            return "unreachable"

        self.block = block

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(add)
        register(self.block)


class Seen:
    """``seen["assistant/chunk"]`` is an event set once that type has been logged."""

    def __init__(self) -> None:
        self._events: dict[str, anyio.Event] = {}

    def __getitem__(self, kind: str) -> anyio.Event:
        return self._events.setdefault(kind, anyio.Event())

    @hookimpl
    def session_event(self, event: SessionEvent) -> None:
        self[event.type].set()


def core(events: Sequence[SessionEvent]) -> list[SessionEvent]:
    return [e for e in events if e.type in EVENT_TYPES]


def types(events: Sequence[SessionEvent]) -> list[str]:
    return [e.type for e in core(events)]


def ends(events: Sequence[SessionEvent]) -> list[tuple[int, str]]:
    return [(e.data["turn"], e.data["reason"]) for e in events if e.type == "turn/end"]


def contents(events: Sequence[SessionEvent], kind: str) -> list[str]:
    return [e.data["content"] for e in events if e.type == kind]


@asynccontextmanager
async def agent_on(
    model: ScriptedModel, *plugins: tuple[str, object], **options: Any
) -> AsyncIterator[tuple[Harness, AgentHandle]]:
    """A started harness with ``Tools`` plus ``plugins``, and one agent on ``model``."""
    async with scripted_harness(model, plugins=[("tools", Tools()), *plugins]) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted", **options})
        yield harness, agent


async def turn_events(
    model: ScriptedModel,
    *plugins: object | tuple[str, object],
    workspace: Path | None = None,
    config: str | None = None,
    prompt: str = "go",
    within: float = LIMIT,
) -> list[SessionEvent]:
    """The events of one turn, ``prompt``, of an agent on ``model`` in a started harness
    with only ``plugins`` (no installed ones), ``workspace`` and dsh.yml text ``config``;
    the turn has ``within`` seconds to end."""
    async with scripted_harness(
        model, plugins=plugins, load_entry_points=False, config_text=config, workspace=workspace
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(within):
            return await run_turn(agent, prompt)
