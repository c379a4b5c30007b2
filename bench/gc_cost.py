"""What the cyclic garbage collector costs the loop scenario, as a program runs it.

The timed benches turn the collector off around each timed run (``_util``), and
``instructions.py`` counts with it off, so neither shows its work. This runs the loop
scenario of ``run.py`` (bench/_dsh_cases.py) with the collector on, as a program using
dsh runs it, and reports:

- per generation: collections, their time, and the time per turn;
- the net increase of generation 0's counter per turn (every GC-type object allocated
  counts, tracked or not, and a free takes it back: what is kept alive triggers the
  collections, not what a turn builds and drops);
- the objects a turn leaves tracked (what every later collection of an older generation
  traverses again), by type.

Figures are wall-clock and move from run to run on a shared machine; the counts do not.
The first full (generation 2) collection comes ~1,100 turns in (bare): run fewer
turns and it is missing from the figures; run more to see it grow with the log.

    python bench/gc_cost.py [KIND ...] [--turns N]   # default: bare noop memory, 2000
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import _dsh_cases

WARM_UP = 200


async def measure(kind: str, turns: int) -> dict[str, Any]:
    configured = await _dsh_cases.Configured(kind).start()
    try:
        await configured.run(WARM_UP)
        gc.collect()
        heap = len(gc.get_objects())
        stats = [[0, 0.0] for _ in range(3)]
        started = [0.0]

        def timed(phase: str, info: dict[str, Any]) -> None:
            if phase == "start":
                started[0] = time.perf_counter()
            else:
                entry = stats[info["generation"]]
                entry[0] += 1
                entry[1] += time.perf_counter() - started[0]

        gc.callbacks.append(timed)
        try:
            begin = time.perf_counter()
            await configured.run(turns)
            seconds = time.perf_counter() - begin
        finally:
            gc.callbacks.remove(timed)

        # what one turn leaves behind, counted with the collector off
        gc.collect()
        gc.disable()
        try:
            before = {id(o) for o in gc.get_objects()}
            count = gc.get_count()[0]
            await configured.run(100)
            counted = (gc.get_count()[0] - count) / 100
            kept = collections.Counter(
                type(o).__name__ for o in gc.get_objects() if id(o) not in before
            )
        finally:
            gc.enable()
        if not configured.last_turn_ok():
            raise SystemExit(f"{kind}: the last turn did not complete")
    finally:
        await configured.stop()
    return {
        "heap": heap,
        "seconds": seconds,
        "stats": stats,
        "counted": counted,
        "kept": {name: n / 100 for name, n in kept.most_common() if n >= 100},
    }


def report(kind: str, turns: int, found: dict[str, Any]) -> None:
    total = found["seconds"]
    in_gc = sum(s for _, s in found["stats"])
    print(
        f"{kind}: {total / turns / 2 * 1e6:.1f} µs/step with the collector on, "
        f"{in_gc / total:.0%} of it in collections; "
        f"{found['heap']:,} tracked objects after warm-up"
    )
    for generation, (n, spent) in enumerate(found["stats"]):
        each = spent / n * 1e6 if n else 0.0
        print(
            f"  gen{generation}: {n:4d} collections {spent * 1e3:7.1f} ms "
            f"({each:8.0f} µs each, {spent / turns * 1e6:5.2f} µs a turn)"
        )
    kept = ", ".join(f"{name} {n:g}" for name, n in found["kept"].items())
    print(f"  gen0 counter +{found['counted']:.1f} a turn; tracked and kept a turn: {kept}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kinds", nargs="*", default=["bare", "noop", "memory"])
    parser.add_argument("--turns", type=int, default=2000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        _dsh_cases.persistence_dir(Path(scratch))
        for kind in args.kinds:
            report(kind, args.turns, asyncio.run(measure(kind, args.turns)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
