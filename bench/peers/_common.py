"""The protocol every peer scenario script speaks (it runs in bench/.peers-venv).

A scenario script defines a ``Scenario`` and calls ``serve(scenario)``. The parent
(bench/_peers.py) talks to it over stdin/stdout, one JSON object per line:

- on start the script builds its agent, runs one validation turn, and prints
  ``{"ready": true, "versions": {...}, "check": {...}}`` (or ``{"error": ...}``);
- ``{"cmd": "turns", "n": N}``: run N turns, reply ``{"ns": ..., "tool_calls": ...,
  "model_calls": ...}``, timed inside the child with the garbage collector off, as
  ``_util`` times in-process cases; the counts are what the turns really did;
- ``{"cmd": "memory", "n": N}``: build N idle agents, reply the traced bytes per agent;
- end of input: exit.

A turn is one fresh conversation: a user prompt, a model step that calls
``add(a=1, b=2)``, the tool call, a model step answering "3". The fake models count
their calls; the tool counts its runs, so a figure for turns that did not run the tool
is refused by the parent.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

PROMPT = "add 1 and 2"
ARGS = {"a": 1, "b": 2}
ANSWER = "3"


@dataclass
class Counters:
    tool_calls: int = 0
    model_calls: int = 0


COUNTS = Counters()


def add_impl(a: int, b: int) -> int:
    """The tool body every scenario wraps in its framework's tool type."""
    COUNTS.tool_calls += 1
    return a + b


@dataclass
class Scenario:
    #: runs one turn, returns the final answer text
    turn: Callable[[], Awaitable[str]]
    #: builds one independent idle agent (agent object, its model, its state); the
    #: returned object is kept alive while memory is measured
    idle_agent: Callable[[], Any]
    distributions: tuple[str, ...]
    #: what ``idle_agent`` holds, for the report
    memory_note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _versions(names: tuple[str, ...]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _reply(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(payload) + "\n")
    sys.stdout.flush()


async def _turns(scenario: Scenario, n: int) -> dict[str, Any]:
    tools, models = COUNTS.tool_calls, COUNTS.model_calls
    wrong = 0
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter_ns()
        for _ in range(n):
            if await scenario.turn() != ANSWER:
                wrong += 1
        elapsed = time.perf_counter_ns() - start
    finally:
        gc.enable()
    return {
        "ns": elapsed,
        "tool_calls": COUNTS.tool_calls - tools,
        "model_calls": COUNTS.model_calls - models,
        "wrong_answers": wrong,
    }


async def _park(queue: asyncio.Queue[str]) -> None:
    """The least a program needs to serve an agent like a dsh agent: a task parked on
    its inbox (it would run a turn per prompt)."""
    while True:
        await queue.get()


async def _memory(scenario: Scenario, n: int) -> dict[str, Any]:
    keep: list[Any] = [scenario.idle_agent()]  # warm: first-use caches are not per agent
    await asyncio.sleep(0)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    tasks = []
    for _ in range(n):
        queue: asyncio.Queue[str] = asyncio.Queue()
        keep.append((scenario.idle_agent(), queue, []))  # agent, inbox, history
        tasks.append(asyncio.ensure_future(_park(queue)))
    await asyncio.sleep(0)  # every task parks on its queue
    await asyncio.sleep(0)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    seconds = time.perf_counter() - start
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    del keep
    return {"bytes_per_agent": (after - before) / n, "agents": n, "build_s": seconds}


async def _main(scenario: Scenario) -> None:
    try:
        answer = await scenario.turn()
        check = {
            "answer": answer,
            "tool_calls": COUNTS.tool_calls,
            "model_calls": COUNTS.model_calls,
        }
        if answer != ANSWER or COUNTS.tool_calls != 1 or COUNTS.model_calls != 2:
            _reply({"error": f"validation turn did not run the scenario: {check}"})
            return
    except Exception as exc:  # reported to the parent, which shows it in the table
        _reply({"error": f"{type(exc).__name__}: {exc}"})
        return
    _reply(
        {
            "ready": True,
            "versions": _versions(scenario.distributions),
            "check": check,
            "memory_note": scenario.memory_note,
            **scenario.extra,
        }
    )
    for line in sys.stdin:
        command = json.loads(line)
        if command["cmd"] == "turns":
            _reply(await _turns(scenario, int(command["n"])))
        elif command["cmd"] == "memory":
            _reply(await _memory(scenario, int(command["n"])))
        else:
            _reply({"error": f"unknown command {command!r}"})


def serve(build: Callable[[], Scenario]) -> None:
    """Build the scenario inside the event loop and answer commands until EOF."""

    async def main() -> None:
        await _main(build())

    asyncio.run(main())
