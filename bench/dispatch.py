"""Micro-benchmark of dsh's async hook dispatcher against pluggy's own call loop.

    python bench/dispatch.py [--quick] [--json PATH] [--rounds N] [--number N]

Every case calls a hook whose impls are realistic no-op plugins: separate plugin
modules, each impl taking a subset of the hook's arguments and returning None. The
floor for each dispatcher case is ``pluggy._callers._multicall`` over the same sync
impls with the same kwargs, measured in the same interleaved rounds. Target: a
``waterfall`` over 5 sync impls costs at most 1.5x that floor. See bench/README.md.
"""

from __future__ import annotations

import argparse
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _util import (
    Runner,
    Stats,
    environment,
    measure,
    paired_ratio,
    parse_args,
    summarize,
    write_json,
)
from pluggy._callers import _multicall

from dsh.hookspecs import hookimpl
from dsh.plugins import PluginManager, create_plugin_manager

HERE = Path(__file__).resolve().parent
DEFAULT_JSON = HERE / "results" / "dispatch.json"
IMPL_COUNTS = (0, 1, 5, 10)
TARGET_IMPLS = 5
TARGET_LIMIT = 1.5
TARGET_CASE = f"waterfall sync x{TARGET_IMPLS}"
TARGET_FLOOR = f"_multicall agent_request x{TARGET_IMPLS}"


# -- no-op impls: each takes a different subset of its hook's arguments ---------------
# Bodies are copied per plugin (see ``_plugin``), so no two plugins share a function.


def _req_turn(request: Any, turn: Any) -> None:
    return None


def _req(request: Any) -> None:
    return None


def _agent_req_step(agent: Any, request: Any, step: Any) -> None:
    return None


def _turn_step(turn: Any, step: Any) -> None:
    return None


def _all_args(agent: Any, request: Any, turn: Any, step: Any) -> None:
    return None


async def _areq_turn(request: Any, turn: Any) -> None:
    return None


async def _areq(request: Any) -> None:
    return None


async def _aagent_req_step(agent: Any, request: Any, step: Any) -> None:
    return None


async def _aturn_step(turn: Any, step: Any) -> None:
    return None


async def _aall_args(agent: Any, request: Any, turn: Any, step: Any) -> None:
    return None


def _call_turn(call: Any, turn: Any) -> None:
    return None


def _call(call: Any) -> None:
    return None


def _agent_call(agent: Any, call: Any) -> None:
    return None


def _event(event: Any) -> None:
    return None


def _session_event(session: Any, event: Any) -> None:
    return None


SHAPES: dict[bool, dict[str, tuple[Callable[..., Any], ...]]] = {
    False: {
        "agent_request": (_req_turn, _req, _agent_req_step, _turn_step, _all_args),
        "tools_execute": (_call_turn, _call, _agent_call),
        "session_event": (_event, _session_event),
    },
    True: {
        "agent_request": (_areq_turn, _areq, _aagent_req_step, _aturn_step, _aall_args),
    },
}


def _copy(function: Callable[..., Any], name: str) -> Callable[..., Any]:
    code = function.__code__
    copy = types.FunctionType(code, function.__globals__, name, function.__defaults__)
    copy.__qualname__ = name
    return copy


def _plugin(index: int, *, is_async: bool) -> types.ModuleType:
    """A plugin module like an entry point would load, with one impl per hook."""
    module = types.ModuleType(f"bench_plugin_{'async' if is_async else 'sync'}_{index}")
    for hook, shapes in SHAPES[is_async].items():
        setattr(module, hook, hookimpl(_copy(shapes[index % len(shapes)], hook)))
    return module


def _manager(count: int, *, is_async: bool) -> PluginManager:
    pm = create_plugin_manager(
        [_plugin(i, is_async=is_async) for i in range(count)], load_entry_points=False
    )
    # Only the bench's own impls are timed: drop the core defaults' impls (a trylast
    # tools_execute executor would otherwise run a tool on the fake arguments).
    for name, plugin in pm.list_name_plugin():
        if not name.startswith("bench_plugin_") and plugin is not None:
            pm.unregister(plugin)
    for hook in SHAPES[is_async]:
        found = len(pm.dispatcher.plan(hook))
        if found != count:
            sys.exit(f"dispatch bench: expected {count} impls of {hook}, found {found}")
    return pm


# -- the arguments of each hook (opaque objects: the no-ops never look at them) -------

AGENT, REQUEST, CALL, SESSION, EVENT = (object() for _ in range(5))


def _kwargs(hook: str) -> dict[str, Any]:
    return {
        "agent_request": {"agent": AGENT, "request": REQUEST, "turn": 1, "step": 0},
        "tools_execute": {"agent": AGENT, "call": CALL, "turn": 1, "step": 0},
        "session_event": {"session": SESSION, "event": EVENT},
    }[hook]


FIRSTRESULT = {"agent_request": False, "tools_execute": True, "session_event": False}


# -- runners: each performs one kind of call n times ----------------------------------


def waterfall(pm: PluginManager) -> Runner:
    call = pm.dispatcher.waterfall
    kwargs = _kwargs("agent_request")

    async def run(n: int) -> None:
        for _ in range(n):
            await call("agent_request", "request", kwargs)

    return run


def first_result(pm: PluginManager) -> Runner:
    call = pm.dispatcher.first_result
    kwargs = _kwargs("tools_execute")

    async def run(n: int) -> None:
        for _ in range(n):
            await call("tools_execute", kwargs)

    return run


def notify(pm: PluginManager) -> Runner:
    call = pm.dispatcher.notify
    kwargs = _kwargs("session_event")

    async def run(n: int) -> None:
        for _ in range(n):
            await call("session_event", kwargs)

    return run


def relay_agent_request(pm: PluginManager) -> Runner:
    """The typed facade a call site uses: builds the kwargs dict, then ``waterfall``."""
    relay = pm.relay

    async def run(n: int) -> None:
        for _ in range(n):
            await relay.agent_request(AGENT, REQUEST, 1, 0)  # type: ignore[arg-type]

    return run


def multicall(pm: PluginManager, hook: str) -> Runner:
    """pluggy's inner loop over the same impls (list taken once, as a plan is cached)."""
    impls = getattr(pm.hook, hook).get_hookimpls()
    kwargs = _kwargs(hook)
    firstresult = FIRSTRESULT[hook]

    async def run(n: int) -> None:
        for _ in range(n):
            _multicall(hook, impls, kwargs, firstresult)

    return run


def hook_call(pm: PluginManager, hook: str) -> Runner:
    """``pm.hook.<name>(**kwargs)``: pluggy's public call, for reference."""
    caller = getattr(pm.hook, hook)
    kwargs = _kwargs(hook)

    async def run(n: int) -> None:
        for _ in range(n):
            caller(**kwargs)

    return run


async def empty_loop(n: int) -> None:
    for _ in range(n):
        pass


# -- the cases ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    run: Runner
    impls: int
    kind: str  # "dsh" | "pluggy" | "loop"
    floor: str | None  # the case this one is compared with


def cases() -> list[Case]:
    sync = {k: _manager(k, is_async=False) for k in IMPL_COUNTS}
    asyn = {k: _manager(k, is_async=True) for k in IMPL_COUNTS if k}
    out: list[Case] = [Case("empty loop (for reference)", empty_loop, 0, "loop", None)]
    for k in IMPL_COUNTS:
        floor = f"_multicall agent_request x{k}"
        out += [
            Case(f"waterfall sync x{k}", waterfall(sync[k]), k, "dsh", floor),
            Case(floor, multicall(sync[k], "agent_request"), k, "pluggy", None),
            Case(
                f"pm.hook.agent_request x{k}",
                hook_call(sync[k], "agent_request"),
                k,
                "pluggy",
                floor,
            ),
        ]
        if k:
            out.append(Case(f"waterfall async x{k}", waterfall(asyn[k]), k, "dsh", floor))
    k = TARGET_IMPLS
    pm = sync[k]
    for hook, runner, label in (
        ("tools_execute", first_result, "first_result"),
        ("session_event", notify, "notify"),
    ):
        floor = f"_multicall {hook} x{k}"
        out += [
            Case(f"{label} sync x{k}", runner(pm), k, "dsh", floor),
            Case(floor, multicall(pm, hook), k, "pluggy", None),
            Case(f"pm.hook.{hook} x{k}", hook_call(pm, hook), k, "pluggy", floor),
        ]
    out.append(
        Case(f"relay.agent_request sync x{k}", relay_agent_request(pm), k, "dsh", TARGET_FLOOR)
    )
    return out


# -- report ---------------------------------------------------------------------------


def _progress(done: int, total: int) -> None:
    print(f"\r  round {done}/{total}", end="" if done < total else "\n", file=sys.stderr)


def table(rows: list[dict[str, Any]], verdict: str) -> str:
    """One line per case: median µs/call and its IQR across rounds, then the median of
    the per-round ratios to the floor (pluggy's ``_multicall``) and their IQR."""
    lines = [
        f"{'case':<32} {'µs/call':>8} {'IQR µs':>13}   {'x _multicall':>12} {'IQR x':>11}",
    ]
    lines.append("-" * len(lines[0]))
    for row in rows:
        us, ratio = row["us_per_call"], row["ratio_to_floor"]
        line = f"{row['case']:<32} {us['median']:>8.3f} {us['q1']:>6.3f}-{us['q3']:<6.3f}   "
        if ratio is not None:
            line += f"{ratio['median']:>11.2f}x {ratio['q1']:>5.2f}-{ratio['q3']:<5.2f}"
        elif row["kind"] == "pluggy":
            line += f"{'(floor)':>12}"
        if row["case"] == TARGET_CASE:
            line += f"  <- target ≤ {TARGET_LIMIT}x: {verdict}"
        lines.append(line.rstrip())
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Micro-benchmark of the dsh hook dispatcher.")
    args, settings = parse_args(
        parser, default_json=DEFAULT_JSON, rounds=(41, 7), number=(5_000, 1_000), argv=argv
    )
    all_cases = cases()
    print(
        f"dispatch bench: {len(all_cases)} cases, {settings.rounds} interleaved rounds of "
        f"{settings.number} calls each (+{settings.warmup} warm-up)",
        flush=True,
    )
    progress = _progress if sys.stderr.isatty() else None
    samples = measure({c.name: c.run for c in all_cases}, settings, progress)

    rows: list[dict[str, Any]] = []
    ratios: dict[str, Stats] = {}
    for case in all_cases:
        stats = summarize(samples[case.name]).scaled(1e-3)  # ns -> µs
        ratio = paired_ratio(samples[case.name], samples[case.floor]) if case.floor else None
        if ratio is not None:
            ratios[case.name] = ratio
        rows.append(
            {
                "case": case.name,
                "kind": case.kind,
                "impls": case.impls,
                "floor": case.floor,
                "us_per_call": stats.as_dict(),
                "ratio_to_floor": ratio.as_dict() if ratio else None,
            }
        )

    target_ratio = ratios[TARGET_CASE]
    verdict = "PASS" if target_ratio.median <= TARGET_LIMIT else "MISS"

    print(table(rows, verdict))
    print(
        f"\ntarget: {TARGET_CASE} / {TARGET_FLOOR} = {target_ratio.median:.3f}x "
        f"(IQR {target_ratio.q1:.3f}-{target_ratio.q3:.3f}, per-round paired ratio) "
        f"-> {verdict} (limit {TARGET_LIMIT}x)"
    )

    write_json(
        args.json,
        {
            "benchmark": "dispatch",
            "environment": environment("pluggy", "anyio", "dsh-core"),
            "settings": {
                "rounds": settings.rounds,
                "number": settings.number,
                "warmup": settings.warmup,
                "quick": settings.quick,
            },
            "units": {"us_per_call": "microseconds per call", "ratio_to_floor": "x"},
            "cases": rows,
            "target": {
                "case": TARGET_CASE,
                "floor": TARGET_FLOOR,
                "limit": TARGET_LIMIT,
                "ratio": target_ratio.as_dict(),
                "verdict": verdict,
            },
        },
    )
    print(f"results: {args.json}")
    return 0  # a benchmark reports; it does not fail


if __name__ == "__main__":
    raise SystemExit(main())
