"""dsh's side of bench/run.py: the loop scenarios, idle-agent memory and profiles.

The scenario is bench/loop.py's (its ``AddModel`` and floor), with a model that has a
context window (so dsh-compaction really estimates every request instead of skipping a
model without one) and an ``add`` tool that counts its runs, so a figure for turns that
did not run the tool is refused.
"""

from __future__ import annotations

import asyncio
import gc
import os
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from _profile import profile_run
from loop import AddModel, NoOp, floor_turns

import dsh_compaction
import dsh_permissions
import dsh_persistence
from dsh import hookimpl
from dsh.harness import Harness
from dsh.llm import ModelInfo
from dsh.testing import InMemoryPersistence
from dsh.tools import tool

#: Far above what the run's history reaches: the check runs, compaction never does.
CONTEXT_WINDOW = 10_000_000
RUNS = {"add": 0}
PLUGIN_OPTIONS = {"model": "bench", "permissions": {"allow": ["add"]}}


@tool
def add(a: int, b: int) -> int:
    "Add two numbers."
    RUNS["add"] += 1
    return a + b


class WindowedAddModel(AddModel):
    info = ModelInfo("bench", "bench", context_window=CONTEXT_WINDOW)


class Setup:
    @hookimpl
    def register_models(self, register: Any) -> None:
        register(WindowedAddModel())

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(add)


def plugin_set(kind: str) -> tuple[list[Any], dict[str, Any]]:
    """(plugins, agent options) of a configuration: ``bare``; ``compaction`` or
    ``permissions`` alone; ``noop`` (loop.py's 3 no-op plugins on each of the four
    interception hooks); ``two`` (compaction + permissions); ``memory`` (those + the
    in-memory persistence double of dsh.testing); ``jsonl`` (those + the real
    dsh-persistence entry-point module, flushed per turn, its directory from
    DSH_PERSISTENCE_DIR); ``jsonl-nofsync`` (the same with ``persistence: {fsync:
    never}``: written per turn, never waiting for the disk)."""
    if kind == "bare":
        return [], {"model": "bench"}
    if kind == "noop":
        return [(f"noop{i}", NoOp()) for i in range(3)], {"model": "bench"}
    if kind == "compaction":  # no permissions option: dsh refuses one no plugin applies
        return [(kind, dsh_compaction)], {"model": "bench"}
    if kind == "permissions":
        return [(kind, dsh_permissions)], dict(PLUGIN_OPTIONS)
    plugins: list[Any] = [("compaction", dsh_compaction), ("permissions", dsh_permissions)]
    if kind == "memory":
        plugins.append(("persistence", InMemoryPersistence()))
    elif kind in ("jsonl", "jsonl-nofsync"):
        plugins.append(("persistence", dsh_persistence))
    return plugins, dict(PLUGIN_OPTIONS)


class Configured:
    """A started harness with one agent, for one configuration."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        plugins, self.options = plugin_set(kind)
        config = "persistence:\n  fsync: never\n" if kind == "jsonl-nofsync" else None
        self.harness = Harness(
            plugins=[("setup", Setup()), *plugins], load_entry_points=False, config_text=config
        )
        self.agent: Any = None

    async def start(self) -> Configured:
        await self.harness.__aenter__()
        self.agent = await self.harness.agents.create("bench", options=self.options)
        return self

    async def stop(self) -> None:
        await self.harness.__aexit__(None, None, None)

    async def run(self, n: int) -> None:
        agent = self.agent
        for _ in range(n):
            agent.send("add 1 and 2")
            await agent.when_idle()

    def last_turn_ok(self) -> bool:
        for event in reversed(self.agent.session.events):
            if event.type == "turn/end":
                return bool(event.data["reason"] == "completed")
        return False


async def floor(n: int) -> None:
    await floor_turns(n)


def counted(run: Callable[[int], Awaitable[None]]) -> Callable[[int], Awaitable[int]]:
    """``run`` returning how many times ``add`` ran."""

    async def wrapped(n: int) -> int:
        before = RUNS["add"]
        await run(n)
        return RUNS["add"] - before

    return wrapped


async def idle_agent_bytes(kind: str, count: int, snapshot: Path | None = None) -> dict[str, Any]:
    """Traced bytes per idle agent: ``count`` agents created, their loop tasks parked on
    their inboxes (no turn run), in a harness of configuration ``kind``. ``snapshot``:
    also write the top allocation sites there (where the bytes go)."""
    plugins, options = plugin_set(kind)
    harness = Harness(plugins=[("setup", Setup()), *plugins], load_entry_points=False)
    async with harness:
        await harness.agents.create("warm", options=options)
        await asyncio.sleep(0)
        gc.collect()
        tracemalloc.start()
        first = tracemalloc.take_snapshot() if snapshot is not None else None
        before = tracemalloc.get_traced_memory()[0]
        loop = asyncio.get_running_loop()
        start = loop.time()
        for index in range(count):
            await harness.agents.create(f"a{index}", options=options)
        await asyncio.sleep(0)  # every loop task parks on its inbox
        await asyncio.sleep(0)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        if snapshot is not None and first is not None:
            _write_top(snapshot, tracemalloc.take_snapshot().compare_to(first, "lineno")[:40])
        tracemalloc.stop()
        seconds = loop.time() - start
        parked = sum(1 for h in harness.agents.list() if h.agent.status == "idle")
    return {
        "bytes_per_agent": (after - before) / count,
        "agents": count,
        "parked": parked - 1,  # minus the warm-up agent
        "build_s": seconds,
    }


def _write_top(path: Path, top: list[Any]) -> None:
    path.write_text("\n".join(map(str, top)) + "\n", encoding="utf-8")


async def profile(kind: str, turns: int, out: Path, tools_dir: Path | None) -> Path:
    """Profile ``turns`` turns of configuration ``kind`` (``_profile.profile_run``).
    Returns the report written (text)."""
    configured = await Configured(kind).start()
    try:
        await configured.run(50)  # warm
        return await profile_run(configured.run, turns, out, tools_dir)
    finally:
        await configured.stop()


def persistence_dir(base: Path) -> Path:
    """Point the entry-point persistence plugin at ``base`` (before its harness starts)."""
    directory = base / "sessions"
    os.environ[dsh_persistence.ENV_DIRECTORY] = str(directory)
    return directory
