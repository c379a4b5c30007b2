"""Agent-loop overhead: µs per model step, and bytes per idle agent.

A turn is 2 model steps and 1 tool call (``add(a, b)``) against a zero-latency model.
Cases, measured in the same interleaved rounds:

- ``floor``: a plain asyncio loop doing the same work (a request from the history, a
  streamed answer, an event dict per log entry, the tool call) with no harness;
- ``dsh bare``: a real harness and agent, no plugins;
- ``dsh 3 no-op x4``: the same with 3 no-op plugins on each of the four interception
  hooks (agent_request, agent_step_result, tools_execute, agent_turn_continuation).

Targets (issue: the agent loop): ≤ 25 µs/step with 3 no-op plugins on every hook;
≤ 8 KB per idle agent (1,000 agents, loop tasks parked).

    python bench/loop.py [--quick] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _util import environment, measure_async, paired_ratio, parse_args, summarize, write_json

from dsh import ModelRequest, ToolResultMessage, hookimpl
from dsh.harness import Harness
from dsh.llm import Finish, ModelInfo, TextDelta, ToolCallDelta, UsageChunk
from dsh.messages import Usage
from dsh.tools import tool

STEPS_PER_TURN = 2
USAGE = Usage(input_tokens=10, output_tokens=2)


@tool
def add(a: int, b: int) -> int:
    "Add two numbers."
    return a + b


class AddModel:
    """Zero latency: calls ``add`` unless the last message is a tool result."""

    info = ModelInfo("bench", "bench")

    async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
        if request.messages and isinstance(request.messages[-1], ToolResultMessage):
            yield TextDelta("3")
            yield UsageChunk(USAGE)
            yield Finish("stop")
        else:
            yield ToolCallDelta(0, id="call-1", name="add")
            yield ToolCallDelta(0, arguments='{"a": 1, "b": 2}')
            yield UsageChunk(USAGE)
            yield Finish("tool_calls")


class Setup:
    @hookimpl
    def register_models(self, register: Any) -> None:
        register(AddModel())

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(add)


class NoOp:
    @hookimpl
    def agent_request(self, request: ModelRequest) -> None:
        return None

    @hookimpl
    def agent_step_result(self, message: Any) -> None:
        return None

    @hookimpl
    def tools_execute(self, call: Any) -> None:
        return None

    @hookimpl
    def agent_turn_continuation(self, decision: Any) -> None:
        return None


async def floor_turns(n: int) -> None:
    """The same work without a harness: the floor a harness is measured against."""
    log: list[dict[str, Any]] = []
    history: list[dict[str, Any]] = []
    for _ in range(n):
        log.append({"type": "turn/start"})
        history.append({"role": "user", "content": "add"})
        for step in range(STEPS_PER_TURN):
            request = {"messages": history[:], "tools": ["add"]}
            calls = []
            text = []
            async for chunk in _floor_stream(step, request):
                log.append({"type": "assistant/chunk", "data": chunk})
                if chunk[0] == "call":
                    calls.append(chunk)
                elif chunk[0] == "text":
                    text.append(chunk[1])
            message = {"role": "assistant", "text": "".join(text), "calls": calls}
            log.append({"type": "assistant/message", "data": message})
            history.append(message)
            for call in calls:
                args = json.loads(call[2])
                result = str(add.run(**args))
                log.append({"type": "tool/result", "data": result})
                history.append({"role": "tool", "content": result})
        log.append({"type": "turn/end"})


async def _floor_stream(step: int, request: dict[str, Any]) -> AsyncIterator[tuple[str, ...]]:
    if step == 0:
        yield ("call", "add", '{"a": 1, "b": 2}')
    else:
        yield ("text", "3")
    yield ("finish", "stop")


async def make_agent(plugins: list[Any]) -> tuple[Harness, Any]:
    harness = Harness(plugins=[("setup", Setup()), *plugins], load_entry_points=False)
    await harness.__aenter__()
    agent = await harness.agents.create("bench", options={"model": "bench"})
    return harness, agent


def turns_runner(agent: Any) -> Any:
    async def run(n: int) -> None:
        for _ in range(n):
            agent.send("add 1 and 2")
            await agent.when_idle()

    return run


async def idle_agent_bytes(count: int) -> float:
    harness = Harness(plugins=[("setup", Setup())], load_entry_points=False)
    async with harness:
        await harness.agents.create("warm", options={"model": "bench"})
        await asyncio.sleep(0)
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for index in range(count):
            await harness.agents.create(f"a{index}", options={"model": "bench"})
        await asyncio.sleep(0)  # let every loop task park on its inbox
        await asyncio.sleep(0)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
    return (after - before) / count


async def main_async(args: argparse.Namespace, settings: Any) -> int:
    bare_h, bare = await make_agent([])
    noop_plugins = [(f"noop{i}", NoOp()) for i in range(3)]
    noop_h, noop = await make_agent(noop_plugins)
    cases = {
        "floor (plain asyncio)": floor_turns,
        "dsh bare": turns_runner(bare),
        "dsh 3 no-op x4 hooks": turns_runner(noop),
    }
    samples = await measure_async(cases, settings)
    for harness in (noop_h, bare_h):  # task groups nest: leave in reverse order
        await harness.__aexit__(None, None, None)
    per_step = {k: summarize(v).scaled(1 / 1000 / STEPS_PER_TURN) for k, v in samples.items()}
    floor = samples["floor (plain asyncio)"]
    print(f"{'case':<26} {'µs/step':>9} {'IQR':>15} {'x floor':>9}")
    for name, stats in per_step.items():
        ratio = paired_ratio(samples[name], floor).median
        print(f"{name:<26} {stats.median:9.2f} {stats.q1:7.2f}-{stats.q3:<7.2f} {ratio:8.1f}x")
    target = per_step["dsh 3 no-op x4 hooks"].median
    verdict_step = "PASS" if target <= 25 else "MISS"
    print(
        f"target: ≤ 25 µs/step with 3 no-op plugins on every hook: {target:.2f} -> {verdict_step}"
    )
    # The issue set 25 µs where this floor costs 1-2 µs/step: at 2 µs that is 12.5x.
    ratio = paired_ratio(samples["dsh 3 no-op x4 hooks"], floor).median
    verdict_ratio = "PASS" if ratio <= 12.5 else "MISS"
    print(f"  as a ratio: ≤ 12.5x the floor (25 µs at 2 µs): {ratio:.1f}x -> {verdict_ratio}")
    count = 200 if settings.quick else 1000
    per_agent = await idle_agent_bytes(count)
    verdict_mem = "PASS" if per_agent <= 8192 else "MISS"
    print(f"memory: {per_agent:,.0f} bytes per idle agent over {count} -> {verdict_mem} (≤ 8 KB)")
    write_json(
        args.json,
        {
            "benchmark": "loop",
            "environment": environment("dsh-core", "pluggy", "pydantic", "anyio"),
            "us_per_step": {k: v.as_dict() for k, v in per_step.items()},
            "bytes_per_idle_agent": per_agent,
            "targets": {
                "us_per_step_3_noop": verdict_step,
                "x_floor_3_noop": verdict_ratio,
                "bytes_per_idle_agent": verdict_mem,
            },
            "measured_at": time.time(),
        },
    )
    print(f"results: {args.json}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args, settings = parse_args(
        parser,
        default_json=Path(__file__).parent / "results" / "loop.json",
        rounds=(15, 3),
        number=(300, 50),
        argv=argv,
    )
    return asyncio.run(main_async(args, settings))


if __name__ == "__main__":
    raise SystemExit(main())
