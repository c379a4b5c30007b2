"""dsh against a plain asyncio floor and against the peers, in one run (issue 9).

    python bench/run.py [--quick] [--json PATH] [--rounds N] [--number TURNS] [--no-peers]

Sections (README.md says what each runs): loop overhead (µs per model step), idle
memory (bytes per agent), start-up (process wall time), persistence (bench/persistence.py)
and streaming (bench/stream.py). One table is printed; the JSON (default
bench/results/run.json) holds every sample. Every figure is the median of interleaved
rounds with its IQR; every ratio is paired per round. Where a dsh target is missed, a
profile is written beside the JSON. A benchmark reports: it exits 0 either way.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _dsh_cases as dsh_cases
import _startup
import persistence as persistence_bench
import stream as stream_bench
from _peers import PEERS, TOOLS, PeerProcess, ensure_venv
from _table import (
    BYTES_LIMIT,
    DSH_ROWS,
    FLOOR,
    build_table,
    peer_notes,
    print_table,
    section_profiles,
)
from _util import Settings, _run_once, environment, paired_ratio, parse_args, summarize, write_json

HERE = Path(__file__).resolve().parent
STEPS = 2  # model steps per turn
Case = Callable[[int], Awaitable[dict[str, Any]]]


def in_process(run: Callable[[int], Awaitable[int | None]]) -> Case:
    """A case timed here (gc off, as _util does); ``run`` may return its tool runs."""

    async def case(n: int) -> dict[str, Any]:
        box: dict[str, Any] = {}

        async def body(count: int) -> None:
            box["tools"] = await run(count)

        ns = await _run_once(body, n)
        tools = box["tools"]
        return {"ns": ns, "valid": tools is None or tools == n}

    return case


async def interleave(cases: dict[str, Case], settings: Settings) -> dict[str, Any]:
    """ns per turn of every case, per round (rotated order, warm-up rounds first)."""
    names = list(cases)
    samples: dict[str, list[float]] = {name: [] for name in names}
    invalid: dict[str, int] = dict.fromkeys(names, 0)
    for index in range(settings.warmup + settings.rounds):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            reply = await cases[name](settings.number)
            if not reply["valid"]:
                invalid[name] += 1
            if index >= settings.warmup:
                samples[name].append(reply["ns"] / settings.number)
        print(f"  loop round {index + 1}/{settings.warmup + settings.rounds}", file=sys.stderr)
    return {"samples": samples, "invalid_rounds": invalid}


async def section_loop(settings: Settings, peers: list[PeerProcess], base: Path) -> dict[str, Any]:
    dsh_cases.persistence_dir(base)
    started = [await dsh_cases.Configured(kind).start() for kind in DSH_ROWS.values()]
    cases: dict[str, Case] = {FLOOR: in_process(dsh_cases.floor)}
    for name, configured in zip(DSH_ROWS, started, strict=True):
        cases[name] = in_process(dsh_cases.counted(configured.run))
    for peer in peers:
        cases[peer.name] = peer.turns
    try:
        result = await interleave(cases, settings)
    finally:
        for configured in reversed(started):  # task groups nest: leave in reverse order
            await configured.stop()
    samples = result["samples"]
    rows: dict[str, Any] = {}
    peer_names = [p.name for p in peers if not result["invalid_rounds"][p.name]]
    fastest = min(peer_names, key=lambda n: summarize(samples[n]).median, default=None)
    for name, values in samples.items():
        row: dict[str, Any] = {
            "us_per_step": summarize(values).scaled(1 / 1000 / STEPS).as_dict(),
            "x_floor": paired_ratio(values, samples[FLOOR]).as_dict(),
            "invalid_rounds": result["invalid_rounds"][name],
        }
        if fastest is not None:
            # how many times faster than the fastest peer (peer time / this time)
            row["x_faster_than_fastest_peer"] = paired_ratio(samples[fastest], values).as_dict()
        rows[name] = row
    return {"turns_per_round": settings.number, "fastest_peer": fastest, "cases": rows}


async def section_memory(counts: list[int], peers: list[PeerProcess], out: Path) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for name, kind in (("dsh bare", "bare"), ("dsh + 3 plugins (in-memory log)", "memory")):
        for count in counts:
            print(f"  memory: {name} x {count}", file=sys.stderr)
            rows[f"{name} x {count}"] = await dsh_cases.idle_agent_bytes(kind, count)
    for peer in peers:
        for count in counts:
            print(f"  memory: {peer.name} x {count}", file=sys.stderr)
            reply = await peer.call(cmd="memory", n=count)
            reply["note"] = peer.info.get("memory_note", "")
            rows[f"{peer.name} x {count}"] = reply
    target = f"dsh + 3 plugins (in-memory log) x {counts[-1]}"
    if rows[target]["bytes_per_agent"] > BYTES_LIMIT:  # where the bytes go
        path = out.with_name(f"{out.stem}-profile-idle-agents.txt")
        await dsh_cases.idle_agent_bytes("memory", counts[0], snapshot=path)
        rows[target]["profile"] = str(path)
    return rows


async def section_persistence(quick: bool, base: Path, out: Path) -> dict[str, Any]:
    """Write and load; where a target is missed, a profile of its jsonl case (written
    while ``base`` still holds the session loaded)."""
    settings = Settings(3, 3, 1, True) if quick else Settings(9, 10, 1, False)
    write = await persistence_bench.bench_write(base, settings)
    load = await persistence_bench.bench_load(base, settings, 20_000 if quick else 100_000)
    if write["target"] == "MISS":
        path = out.with_name(f"{out.stem}-profile-persistence-write")
        turns = settings.number * 5
        write["profile"] = str(await persistence_bench.profile_write(base, turns, path, TOOLS))
    if load["target"] == "MISS":
        path = out.with_name(f"{out.stem}-profile-persistence-load")
        times = 1 if quick else 3
        load["profile"] = str(await persistence_bench.profile_load(base, times, path, TOOLS))
    return {"write": write, "load": load}


async def section_stream(quick: bool, base: Path, out: Path) -> dict[str, Any]:
    """stream.py's run; where a target is missed, a profile of that kind's dsh turn."""
    settings = Settings(3, 2, 1, True) if quick else Settings(15, 8, 1, False)
    path = base / "stream.json"
    profile = out.with_name(f"{out.stem}-profile-stream")
    args = argparse.Namespace(chunks=500, json=path, profile=profile, tools=TOOLS)
    await stream_bench.main_async(args, settings)
    return dict(json.loads(path.read_text(encoding="utf-8")))


def peers_venv(no_peers: bool) -> dict[str, Any]:
    """The peers' venv (``_peers.ensure_venv``), or why there is none."""
    if no_peers:
        return {"ok": False, "error": "--no-peers"}
    try:
        return ensure_venv(lambda msg: print(msg, file=sys.stderr))
    except (OSError, RuntimeError, subprocess.CalledProcessError) as exc:  # uv missing, failed
        return {"ok": False, "error": str(exc)}


async def profiles(
    report: dict[str, Any], targets: dict[str, Any], out: Path, quick: bool
) -> dict[str, str]:
    """A profile of every dsh loop row whose target is missed, and -X importtime; with
    those the sections wrote (idle memory, persistence, streaming)."""
    written: dict[str, str] = {}
    for name, kind in DSH_ROWS.items():
        missed = [k for k, t in targets.items() if name in k and t["verdict"] == "MISS"]
        if missed:
            path = out.with_name(f"{out.stem}-profile-loop-{kind}")
            turns = 200 if quick else 1000
            written[name] = str(await dsh_cases.profile(kind, turns, path, TOOLS))
    if any(k.startswith("start-up") and t["verdict"] == "MISS" for k, t in targets.items()):
        written["import dsh + 3 plugins"] = import_profile(out)
    written.update(section_profiles(report))
    return written


def import_profile(out: Path) -> str:
    """``python -X importtime`` of the dsh import: where start-up goes."""
    path = out.with_name(f"{out.stem}-profile-import.txt")
    argv = [sys.executable, "-X", "importtime", "-c", _startup.DSH_IMPORT]
    done = subprocess.run(argv, capture_output=True, text=True)
    path.write_text(done.stderr, encoding="utf-8")
    return str(path)


async def main_async(args: argparse.Namespace, settings: Settings) -> int:
    out: Path = args.json
    out.parent.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"benchmark": "run", "quick": settings.quick}
    report["environment"] = environment("dsh-core", "dsh-compaction", "dsh-permissions")
    report["environment"]["versions"].update(environment("dsh-persistence", "pluggy")["versions"])
    venv = peers_venv(args.no_peers)
    peers: list[PeerProcess] = []
    report["peers"] = {"venv": venv}
    if venv["ok"]:
        for name in PEERS:
            peer = PeerProcess(name)
            if await peer.start():
                peers.append(peer)
            report["peers"][name] = peer.info or {"error": peer.error}
    base = Path(tempfile.mkdtemp(prefix="dsh-bench-run-"))
    details = io.StringIO()  # the per-bench tables of persistence.py and stream.py
    try:
        print(f"loop: {settings.rounds} rounds x {settings.number} turns", file=sys.stderr)
        report["loop"] = await section_loop(settings, peers, base / "loop")
        counts = [200, 1000] if settings.quick else [1000, 10_000]
        report["memory"] = await section_memory(counts, peers, out)
        for peer in peers:
            await peer.stop()
        print("start-up", file=sys.stderr)
        report["startup"] = _startup.measure(bool(peers), 5 if settings.quick else 15)
        with contextlib.redirect_stdout(details):
            if not args.skip_persistence:
                print("persistence", file=sys.stderr)
                (base / "p").mkdir()
                report["persistence"] = await section_persistence(settings.quick, base / "p", out)
            if not args.skip_stream:
                print("streaming", file=sys.stderr)
                report["stream"] = await section_stream(settings.quick, base, out)
    finally:
        for peer in peers:
            await peer.stop()
        shutil.rmtree(base, ignore_errors=True)
    rows, targets = build_table(report)
    report["targets"] = targets
    report["profiles"] = await profiles(report, targets, out, settings.quick)
    env = report["environment"]
    print(f"\ndsh bench, {env['measured_at']}, Python {env['python']}, {env['cpus']} CPUs")
    print(f"loop: {settings.rounds} rounds x {settings.number} turns (+{settings.warmup} warm-up)")
    print_table(rows)
    for line in peer_notes(report):
        print(line)
    for name, path in report["profiles"].items():
        print(f"profile ({name}): {path}")
    (out.with_name(f"{out.stem}-details.txt")).write_text(details.getvalue(), encoding="utf-8")
    write_json(out, report)
    print(f"results: {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-peers", action="store_true", help="skip the peers' venv")
    parser.add_argument("--skip-persistence", action="store_true")
    parser.add_argument("--skip-stream", action="store_true")
    args, settings = parse_args(
        parser,
        default_json=HERE / "results" / "run.json",
        rounds=(11, 3),
        number=(200, 40),
        argv=argv,
    )
    return asyncio.run(main_async(args, settings))


if __name__ == "__main__":
    raise SystemExit(main())
