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
from _util import Settings, _run_once, environment, paired_ratio, parse_args, summarize, write_json

HERE = Path(__file__).resolve().parent
STEPS = 2  # model steps per turn
FLOOR = "floor (plain asyncio)"
DSH_ROWS = {
    "dsh bare": "bare",
    "dsh + compaction + permissions": "two",
    "dsh + 3 plugins (in-memory log)": "memory",
    "dsh + 3 plugins (JSONL, flush/turn)": "jsonl",
    "dsh + 3 plugins (JSONL, flush/turn, fsync never)": "jsonl-nofsync",
}
LIMITS = {
    "dsh + 3 plugins (in-memory log)": 25.0,
    "dsh + 3 plugins (JSONL, flush/turn)": 40.0,
    "dsh + 3 plugins (JSONL, flush/turn, fsync never)": 40.0,
}
#: The issue's µs targets were set where the plain-asyncio floor costs 1-2 µs per step;
#: at the slow end of that (2 µs) a target of L µs is L/2 times the floor. The table
#: reports that ratio too, since this machine's floor may be slower.
REFERENCE_FLOOR_US = 2.0
PEER_FACTOR = 30.0
IMPORT_SHARE = 0.25
BYTES_LIMIT = 8192
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


async def section_persistence(quick: bool, base: Path) -> dict[str, Any]:
    settings = Settings(3, 3, 1, True) if quick else Settings(9, 10, 1, False)
    write = await persistence_bench.bench_write(base, settings)
    load = await persistence_bench.bench_load(base, settings, 20_000 if quick else 100_000)
    return {"write": write, "load": load}


async def section_stream(quick: bool, base: Path) -> dict[str, Any]:
    settings = Settings(3, 2, 1, True) if quick else Settings(15, 8, 1, False)
    path = base / "stream.json"
    await stream_bench.main_async(argparse.Namespace(chunks=500, json=path), settings)
    return dict(__import__("json").loads(path.read_text(encoding="utf-8")))


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def build_table(report: dict[str, Any]) -> tuple[list[list[str]], dict[str, Any]]:
    """Rows of the printed table, and the verdicts of the targets."""
    rows: list[list[str]] = []
    targets: dict[str, Any] = {}
    loop = report["loop"]
    for name, row in loop["cases"].items():
        st, fl = row["us_per_step"], row["x_floor"]
        peer = row.get("x_faster_than_fastest_peer")
        shown_peer = f"{peer['median']:.1f}x" if peer and name.startswith("dsh") else ""
        target = ""
        if name in LIMITS:
            limit = LIMITS[name]
            ok = st["median"] <= limit and not row["invalid_rounds"]
            targets[f"loop: {name} ≤ {limit:g} µs/step"] = {
                "value": st["median"],
                "verdict": verdict(ok),
            }
            ratio = limit / REFERENCE_FLOOR_US
            ok_ratio = fl["median"] <= ratio and not row["invalid_rounds"]
            targets[f"loop: {name} ≤ {ratio:g}x floor (= {limit:g} µs at a 2 µs floor)"] = {
                "value": fl["median"],
                "verdict": verdict(ok_ratio),
            }
            target = f"≤ {limit:g} µs: {verdict(ok)}; ≤ {ratio:g}x floor: {verdict(ok_ratio)}"
        if row["invalid_rounds"]:
            target = f"INVALID ({row['invalid_rounds']} rounds without the tool call)"
        spread = f"{st['q1']:.1f}-{st['q3']:.1f}"
        figure = f"{st['median']:.2f}"
        rows.append(["loop", name, figure, "µs/step", spread, f"{fl['median']:.1f}x", shown_peer])
        rows[-1].append(target)
    memory_name = "dsh + 3 plugins (in-memory log)"
    if loop["fastest_peer"] is not None:
        peer = loop["cases"][memory_name]["x_faster_than_fastest_peer"]
        ok = peer["median"] >= PEER_FACTOR
        key = f"loop: {memory_name} ≥ {PEER_FACTOR:g}x faster than {loop['fastest_peer']}"
        targets[key] = {"value": peer["median"], "verdict": verdict(ok)}
        rows.append(
            ["loop", f"  vs fastest peer ({loop['fastest_peer']})", f"{peer['median']:.1f}"]
        )
        rows[-1] += ["x faster", f"{peer['q1']:.1f}-{peer['q3']:.1f}", "", ""]
        rows[-1].append(f"≥ {PEER_FACTOR:g}x: {verdict(ok)}")
    for name, row in report["memory"].items():
        target = ""
        if name.startswith("dsh"):
            ok = row["bytes_per_agent"] <= BYTES_LIMIT
            targets[f"memory: {name} ≤ 8 KB"] = {
                "value": row["bytes_per_agent"],
                "verdict": verdict(ok),
            }
            target = f"≤ 8 KB: {verdict(ok)}"
        rows.append(["memory", name, f"{row['bytes_per_agent']:,.0f}", "B/agent", "", "", ""])
        rows[-1].append(target)
    startup = report["startup"]
    peers = [k for k in startup if k.startswith("import ") and k != "import dsh + 3 plugins"]
    fastest = min(peers, key=lambda k: startup[k]["net_ms"]["median"], default=None)
    for name, row in startup.items():
        net = row.get("net_ms")
        extra = f"net {net['median']:.1f} ms" if net else ""
        target = ""
        if name == "import dsh + 3 plugins" and fastest is not None:
            share = net["median"] / startup[fastest]["net_ms"]["median"]
            ok = share <= IMPORT_SHARE
            targets[f"start-up: import dsh + 3 plugins ≤ 1/4 of {fastest}"] = {
                "value": share,
                "verdict": verdict(ok),
            }
            target = f"{share:.2f} of {fastest} (net); ≤ 0.25: {verdict(ok)}"
        ms = row["ms"]
        rows.append(
            ["start-up", name, f"{ms['median']:.1f}", "ms", f"{ms['q1']:.1f}-{ms['q3']:.1f}"]
        )
        rows[-1] += [extra, "", target]
    pers = report.get("persistence")
    if pers:
        marks = {
            "jsonl, flush per turn": f"≥ 0.8x: {pers['write']['target']}",
            "jsonl load + repair": f"≤ 1.5x: {pers['load']['target']}",
        }
        for name, row in pers["write"]["cases"].items():
            x = row["x_floor"]["median"]
            rows.append(["persistence", f"write: {name}", f"{row['events_per_s']:,.0f}", "ev/s"])
            rows[-1] += ["", f"{x:.2f}x", "", marks.get(name, "")]
        for name, row in pers["load"]["cases"].items():
            x = row["x_floor"]["median"]
            rows.append(["persistence", f"load {pers['load']['events']:,}: {name}"])
            rows[-1] += [f"{row['ms']:.1f}", "ms", "", f"{x:.2f}x", "", marks.get(name, "")]
        targets["persistence: jsonl events/s ≥ 0.8x floor"] = {"verdict": pers["write"]["target"]}
        targets["persistence: jsonl load ≤ 1.5x floor"] = {"verdict": pers["load"]["target"]}
    stream = report.get("stream")
    if stream:
        for name, st in stream["us_per_chunk"].items():
            rows.append(["streaming", name, f"{st['median']:.2f}", "µs/chunk"])
            rows[-1] += [f"{st['q1']:.2f}-{st['q3']:.2f}", "", "", ""]
            kind = name.split(":")[0]
            if name.endswith("dsh turn"):
                cost = stream["targets"][kind]["harness_us_per_chunk"]["median"]
                ok = stream["targets"][kind]["pass"]
                rows[-1][-1] = f"- floor {cost:.2f} µs; ≤ 10: {verdict(ok)}"
                targets[f"streaming ({kind}): dsh turn - floor ≤ 10 µs/chunk"] = {
                    "value": cost,
                    "verdict": verdict(ok),
                }
    return rows, targets


def print_table(rows: list[list[str]]) -> None:
    head = ["section", "case", "median", "unit", "IQR", "x floor", "x faster than peer", "target"]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head) - 1)]
    for row in [head, *rows]:
        cells = [
            row[i].ljust(w) if i < 2 or i == 3 else row[i].rjust(w) for i, w in enumerate(widths)
        ]
        print("  ".join(cells) + "  " + row[-1])


async def profiles(
    report: dict[str, Any], targets: dict[str, Any], out: Path, quick: bool
) -> dict[str, str]:
    """A profile of every dsh loop row whose target is missed, and -X importtime."""
    written: dict[str, str] = {}
    for name, kind in DSH_ROWS.items():
        missed = [k for k, t in targets.items() if name in k and t["verdict"] == "MISS"]
        if missed:
            path = out.with_name(f"{out.stem}-profile-loop-{kind}")
            turns = 200 if quick else 1000
            written[name] = str(await dsh_cases.profile(kind, turns, path, TOOLS))
    if any(k.startswith("start-up") and t["verdict"] == "MISS" for k, t in targets.items()):
        written["import dsh + 3 plugins"] = import_profile(out)
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
    venv: dict[str, Any] = {"ok": False, "error": "--no-peers"}
    if not args.no_peers:
        venv = ensure_venv(lambda msg: print(msg, file=sys.stderr))
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
                report["persistence"] = await section_persistence(settings.quick, base / "p")
            if not args.skip_stream:
                print("streaming", file=sys.stderr)
                report["stream"] = await section_stream(settings.quick, base)
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
