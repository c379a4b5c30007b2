"""Cost of dsh-compaction's trigger check per request on a 1,000-message history.

    python bench/compaction.py [--quick] [--json PATH] [--rounds N] [--number N]

Before every model call the compaction plugin estimates the request's tokens. Counting
the whole history each step would cost O(history) per step (O(n²) per session); the
plugin counts incrementally. The history is a realistic coding session: a user message,
then steps of an assistant tool call and its result (1-4 KB), now and then a text
answer. Cases (one "operation" is one request's check):

- ``full recount``: a fresh ``RequestEstimator`` per request (what a non-incremental
  check costs): every message of the 1,000 is counted;
- ``incremental, +0``: the same history again (a retried step);
- ``incremental, +2``: the history grew by one step (assistant message + tool result)
  since the last request, as it does in a running turn;
- ``agent_request hook, +2``: the whole trigger as the loop runs it, through
  ``pm.relay.agent_request`` with only dsh-compaction registered: settings, context
  window lookup and the incremental estimate, under the threshold (no compaction).

Target: the hook's check (+2) costs at most 5 % of a full recount (per-round paired
ratio), i.e. the check does not grow with the history.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from _util import Runner, environment, measure, paired_ratio, parse_args, summarize, write_json

import dsh_compaction
from dsh import (
    AssistantMessage,
    Message,
    ModelRequest,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    create_plugin_manager,
)
from dsh.llm import ModelRegistry
from dsh.session import HistoryView
from dsh.testing import ScriptedModel
from dsh_compaction import HeuristicCounter, RequestEstimator

HERE = Path(__file__).resolve().parent
DEFAULT_JSON = HERE / "results" / "compaction.json"
HISTORY = 1_000
TARGET_CASE = "agent_request hook, +2"
TARGET_FLOOR = "full recount"
TARGET_LIMIT = 0.05
SYSTEM = "You are a careful coding agent. " * 40


def _messages(count: int) -> list[Message]:
    """A coding session of ``count`` messages (deterministic)."""
    out: list[Message] = [UserMessage(content="Refactor the parser and keep the tests green.")]
    step = 0
    while len(out) < count:
        step += 1
        if step % 10 == 0:
            out.append(AssistantMessage(content=(TextBlock(text="Progress note. " * 20),)))
            continue
        call = ToolCall(id=f"call-{step}", name="read_file", arguments=f'{{"path": "m{step}.py"}}')
        out.append(AssistantMessage(content=(call,), stop_reason="tool_calls"))
        body = f"def f{step}(x):\n    return x + {step}\n" * (30 + step % 90)
        out.append(ToolResultMessage(call_id=call.id, name="read_file", content=body))
    return out[:count]


def _request(items: list[Message], length: int) -> ModelRequest:
    # as the loop builds it: an O(1) snapshot of the derived history
    return ModelRequest.model_construct(
        model="bench", system=SYSTEM, messages=HistoryView(items, length), tools=(), options={}
    )


class _Session:
    id = "bench"

    def __init__(self, items: list[Message]) -> None:
        self.items = items
        self.length = HISTORY

    @property
    def history(self) -> HistoryView:
        return HistoryView(self.items, self.length)


class _Agent:
    """What the hook reads from an agent: id, options, session, models."""

    def __init__(self, items: list[Message]) -> None:
        self.id = "bench"
        self.options: dict[str, Any] = {"model": "bench"}
        self.session = _Session(items)
        self.models = ModelRegistry()
        self.models.add("bench", ScriptedModel(name="bench", context_window=100_000_000))


def cases(items: list[Message]) -> dict[str, Runner]:
    fixed = _request(items, HISTORY)

    def full(n: int) -> None:
        for _ in range(n):
            RequestEstimator(HeuristicCounter()).request(fixed)

    same = RequestEstimator(HeuristicCounter())
    same.request(fixed)

    def incremental_same(n: int) -> None:
        for _ in range(n):
            same.request(fixed)

    growing = RequestEstimator(HeuristicCounter())
    position = [HISTORY]

    def incremental_growing(n: int) -> None:
        length = position[0]
        for _ in range(n):
            length += 2
            growing.request(_request(items, length))
        position[0] = length

    pm = create_plugin_manager([("compaction", dsh_compaction)], load_entry_points=False)
    agent = _Agent(items)
    relay = pm.relay

    async def hook(n: int) -> None:
        session = agent.session
        for _ in range(n):
            session.length += 2
            request = _request(items, session.length)
            if await relay.agent_request(agent, request, 1, 1) is not request:
                raise AssertionError("the check should not have changed the request")

    return {
        "full recount": full,
        "incremental, +0": incremental_same,
        "incremental, +2": incremental_growing,
        TARGET_CASE: hook,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Cost of dsh-compaction's trigger check.")
    args, settings = parse_args(
        parser, default_json=DEFAULT_JSON, rounds=(21, 5), number=(200, 50), argv=argv
    )
    # every +2 case appends two messages per call: build enough for all rounds
    needed = HISTORY + 2 * settings.number * (settings.rounds + settings.warmup) + 2
    items = _messages(needed)
    all_cases = cases(items)
    print(
        f"compaction bench: {HISTORY}-message history, {settings.rounds} interleaved rounds "
        f"of {settings.number} requests (+{settings.warmup} warm-up)",
        flush=True,
    )
    samples = measure(all_cases, settings)

    rows = []
    lines = [f"{'case':<28}{'µs/request':>12}{'IQR µs':>20}{'x full':>10}"]
    for name in all_cases:
        stats = summarize(samples[name]).scaled(1e-3)
        ratio = paired_ratio(samples[name], samples[TARGET_FLOOR])
        rows.append({"case": name, "us_per_request": stats.as_dict(), "ratio": ratio.as_dict()})
        iqr = f"{stats.q1:.2f}-{stats.q3:.2f}"
        lines.append(f"{name:<28}{stats.median:>12.2f}{iqr:>20}{ratio.median:>9.4f}x")
    target = paired_ratio(samples[TARGET_CASE], samples[TARGET_FLOOR])
    verdict = "PASS" if target.median <= TARGET_LIMIT else "MISS"
    print("\n".join(lines))
    print(
        f"\ntarget: {TARGET_CASE} / {TARGET_FLOOR} = {target.median:.4f}x "
        f"(IQR {target.q1:.4f}-{target.q3:.4f}) -> {verdict} (limit {TARGET_LIMIT}x)"
    )
    write_json(
        args.json,
        {
            "benchmark": "compaction",
            "environment": environment("dsh-core", "dsh-compaction"),
            "settings": {
                "history": HISTORY,
                "rounds": settings.rounds,
                "number": settings.number,
                "warmup": settings.warmup,
                "quick": settings.quick,
            },
            "units": {"us_per_request": "microseconds per request", "ratio": "x full recount"},
            "cases": rows,
            "target": {
                "case": TARGET_CASE,
                "floor": TARGET_FLOOR,
                "limit": TARGET_LIMIT,
                "ratio": target.as_dict(),
                "verdict": verdict,
            },
        },
    )
    print(f"results: {args.json}", file=sys.stderr)
    return 0  # a benchmark reports; it does not fail


if __name__ == "__main__":
    raise SystemExit(main())
