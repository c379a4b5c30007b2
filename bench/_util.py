"""Timing helpers shared by the benchmarks in this folder.

A *case* is a callable ``run(n)`` that performs the measured operation ``n`` times,
either plain or ``async def`` (awaited inside one running event loop). ``measure``
runs every case for a fixed number of iterations per round, interleaving the cases
round after round (A, B, C, A, B, C, ... with the order rotated each round so that no
case always runs first), with the garbage collector disabled while a case runs. Each
round gives one sample per case: nanoseconds per operation.

Compare cases with ``paired_ratio``: both cases ran in the same rounds, so the ratio
is taken per round and then summarised, which cancels most drift of the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import gc
import inspect
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = [
    "Runner",
    "Settings",
    "Stats",
    "environment",
    "measure",
    "measure_async",
    "paired_ratio",
    "parse_args",
    "summarize",
    "write_json",
]

#: Performs the measured operation ``n`` times; may be ``async def``.
Runner = Callable[[int], Awaitable[None] | None]


@dataclass(frozen=True, slots=True)
class Settings:
    rounds: int
    number: int
    warmup: int
    quick: bool


@dataclass(frozen=True, slots=True)
class Stats:
    """A summary of per-round samples (any unit; ``x`` for ratios)."""

    median: float
    q1: float
    q3: float
    min: float
    max: float
    samples: tuple[float, ...]

    def scaled(self, factor: float) -> Stats:
        """The same summary in another unit (``factor`` per original unit)."""
        return Stats(
            self.median * factor,
            self.q1 * factor,
            self.q3 * factor,
            self.min * factor,
            self.max * factor,
            tuple(s * factor for s in self.samples),
        )

    def as_dict(self, digits: int = 4) -> dict[str, Any]:
        out = asdict(self)
        return {
            key: [round(v, digits) for v in value]
            if isinstance(value, tuple)
            else round(value, digits)
            for key, value in out.items()
        }


def summarize(samples: Sequence[float]) -> Stats:
    if not samples:
        raise ValueError("no samples")
    ordered = sorted(samples)
    if len(ordered) == 1:
        q1 = q3 = ordered[0]
    else:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    return Stats(statistics.median(ordered), q1, q3, ordered[0], ordered[-1], tuple(samples))


def paired_ratio(numerator: Sequence[float], denominator: Sequence[float]) -> Stats:
    """Per-round ratios of two cases measured in the same rounds, summarised."""
    if len(numerator) != len(denominator):
        raise ValueError("ratio of cases measured in different rounds")
    return summarize([a / b for a, b in zip(numerator, denominator, strict=True)])


async def _run_once(run: Runner, number: int) -> int:
    """Nanoseconds for ``run(number)``, with the garbage collector off."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter_ns()
        pending = run(number)
        if inspect.isawaitable(pending):
            await pending
        return time.perf_counter_ns() - start
    finally:
        gc.enable()


async def measure_async(
    cases: Mapping[str, Runner],
    settings: Settings,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, list[float]]:
    """Per-round samples (ns per operation) of every case, in interleaved rounds.

    Call from inside a running event loop; ``measure`` starts one for you.
    """
    names = list(cases)
    for _ in range(settings.warmup):
        for name in names:
            await _run_once(cases[name], settings.number)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for index in range(settings.rounds):
        shift = index % len(names) if names else 0
        for name in names[shift:] + names[:shift]:
            elapsed = await _run_once(cases[name], settings.number)
            samples[name].append(elapsed / settings.number)
        if progress is not None:
            progress(index + 1, settings.rounds)
    return samples


def measure(
    cases: Mapping[str, Runner],
    settings: Settings,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, list[float]]:
    """``measure_async`` in a fresh event loop (``asyncio.run``)."""
    return asyncio.run(measure_async(cases, settings, progress))


def parse_args(
    parser: argparse.ArgumentParser,
    *,
    default_json: Path,
    rounds: tuple[int, int],
    number: tuple[int, int],
    argv: Sequence[str] | None = None,
) -> tuple[argparse.Namespace, Settings]:
    """Add ``--quick``, ``--json``, ``--rounds``, ``--number`` to ``parser`` and parse.

    ``rounds`` and ``number`` are the (full, quick) defaults.
    """
    parser.add_argument("--quick", action="store_true", help="a fast smoke run")
    parser.add_argument(
        "--json",
        type=Path,
        default=default_json,
        metavar="PATH",
        help=f"results file (default {default_json})",
    )
    parser.add_argument(
        "--rounds", type=int, help=f"interleaved rounds (default {rounds[0]}, quick {rounds[1]})"
    )
    parser.add_argument(
        "--number",
        type=int,
        help=f"calls per case and round (default {number[0]}, quick {number[1]})",
    )
    args = parser.parse_args(argv)
    pick = 1 if args.quick else 0
    settings = Settings(
        rounds=args.rounds or rounds[pick],
        number=args.number or number[pick],
        warmup=1,
        quick=args.quick,
    )
    return args, settings


def environment(*distributions: str) -> dict[str, Any]:
    """What the numbers were measured on."""
    versions = {}
    for name in distributions:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "measured_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "versions": versions,
    }


def write_json(path: Path, payload: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
