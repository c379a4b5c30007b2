"""dsh-persistence: write throughput, load + repair, and list().

Cases, each against a floor measured in the same interleaved rounds:

- **write**: turns of ~200 events (two steps streamed in small chunks, a tool call)
  announced to the plugin's ``session_event``, then its ``session_flush`` (written and
  fsync'd, in a worker thread) once per turn, on a session claimed as an agent's is;
  floor: the same events as dicts, ``json.dumps`` + write per event and ``fsync`` per
  turn on one open file, inline.
  Target: events/s ≥ 0.8x floor. Also shown: sqlite, checkpoints off, and the same
  through the hook relay and with ``Session.append`` (costs an agent pays anyway).
- **load**: ``backend.load()`` of a 100,000-event session whose last turn was cut by a
  crash (torn last line, a tool call without its result), so repair runs; floor:
  ``json.loads`` of every line. Target: time ≤ 1.5x floor.
- **list**: ``backend.headers()`` over 1,000 stored sessions of ~1,000 events; shown
  next to loading every session once (what a list that parses logs would cost).

    python bench/persistence.py [--quick] [--json PATH] [--dir DIR]

``--dir`` picks the file system (default: a temp dir); fsync cost depends on it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _profile import profile_run
from _util import Settings, environment, measure_async, paired_ratio, parse_args, write_json

from dsh import AssistantMessage, TextBlock, ToolCall, Usage
from dsh.plugins import create_plugin_manager
from dsh.session import Session, SessionEvent
from dsh_persistence import (
    JsonlBackend,
    PersistencePlugin,
    PersistenceSettings,
    SessionBackend,
    SessionInfo,
    SqliteBackend,
)

Entry = tuple[str, dict[str, Any]]


def turn_template(number: int) -> list[Entry]:
    """The (type, data) of one realistic turn: two steps streamed in chunks of a few
    tokens, a tool call with a 2 KB result: ~200 events, ~25 KB of JSON."""
    call = ToolCall(id=f"c{number}", name="read", arguments='{"path": "src/app.py"}')
    first = AssistantMessage(
        content=(TextBlock(text="Let me read the file first. " * 4), call),
        stop_reason="tool_calls",
        usage=Usage(input_tokens=1200, output_tokens=40),
    )
    answer = AssistantMessage(
        content=(TextBlock(text="The function parses the config and retries. " * 20),),
        usage=Usage(input_tokens=1800, output_tokens=300),
    )
    entries: list[Entry] = [
        ("turn/start", {"turn": number}),
        ("user/message", {"content": f"what does src/app.py do? ({number})"}),
        ("step/start", {"turn": number, "step": 1}),
    ]
    entries += [("assistant/chunk", {"kind": "text", "text": "Let me read "})] * 40
    entries += [
        ("assistant/message", {"message": first.model_dump(mode="json")}),
        ("tool/call", {"id": call.id, "name": "read", "arguments": call.arguments}),
        (
            "tool/result",
            {
                "call_id": call.id,
                "name": "read",
                "content": "def main():\n" * 180,
                "is_error": False,
            },
        ),
        ("step/end", {"turn": number, "step": 1}),
        ("step/start", {"turn": number, "step": 2}),
    ]
    entries += [("assistant/chunk", {"kind": "text", "text": "The function parses "})] * 150
    entries += [
        ("assistant/message", {"message": answer.model_dump(mode="json")}),
        ("step/end", {"turn": number, "step": 2}),
        ("turn/end", {"turn": number, "reason": "completed", "usage": Usage().model_dump()}),
    ]
    return entries


EVENTS_PER_TURN = len(turn_template(1))


# -- write ---------------------------------------------------------------------------------


def floor_writer(path: Path) -> Any:
    file = path.open("a", encoding="utf-8")
    state = {"seq": 0, "turn": 0}

    def run(n: int) -> None:
        for _ in range(n):
            state["turn"] += 1
            for kind, data in turn_template(state["turn"]):
                event = {"type": kind, "seq": state["seq"], "time": time.time(), "data": data}
                file.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
                state["seq"] += 1
            file.flush()
            os.fsync(file.fileno())

    run.close = file.close  # type: ignore[attr-defined]
    return run


class Log:
    """What the plugin reads of a ``Session`` (id, events, meta, created), so that the
    plugin's cost is measured without the core's own cost of logging an event."""

    def __init__(self, session_id: str) -> None:
        self.id = session_id
        self.events: list[SessionEvent] = []
        self.meta: dict[str, Any] = {}
        self.created = time.time()


async def plugin_writer(settings: PersistenceSettings, name: str, *, via: str = "plugin") -> Any:
    """Turns announced to the plugin's ``session_event``, then ``session_flush``, on a
    session claimed first, as an agent's is when it is created (``dsh._claims``): its
    appends then take no lock of their own, where a writer without a claim takes its
    turn and the session's lock for each one.

    ``via="plugin"`` calls the plugin's impls directly: exactly the plugin's cost.
    ``"relay"`` goes through the hook relay (adds the core's dispatch per event, which an
    agent pays with or without plugins); ``"core"`` also logs each event with
    ``Session._record``, as the agent loop does.
    """
    plugin = PersistencePlugin(settings)
    relay = create_plugin_manager([(name, plugin)], load_entry_points=False).relay
    session: Any = Session(f"bench-{name}") if via == "core" else Log(f"bench-{name}")
    service = await relay.session_persistence()
    await service.claim(session.id, session.events)
    state = {"turn": 0}

    async def run(n: int) -> None:
        events = session.events
        for _ in range(n):
            state["turn"] += 1
            for kind, data in turn_template(state["turn"]):
                if via == "core":
                    await session._record(kind, data)  # as the loop logs (no observer)
                    event = events[-1]
                else:
                    event = SessionEvent(kind, len(events), time.time(), data)
                    events.append(event)
                if via == "plugin":
                    plugin.session_event(session, event)
                else:
                    await relay.session_event(session, event)
            if via == "plugin":
                await plugin.session_flush(session)
            else:
                await relay.session_flush(session)

    run.close = plugin.close  # type: ignore[attr-defined]
    return run


async def bench_write(directory: Path, settings: Settings) -> dict[str, Any]:
    def configured(backend: str, checkpoints: bool = True) -> PersistenceSettings:
        return PersistenceSettings(
            backend=backend,  # type: ignore[arg-type]
            directory=directory / f"write-{backend}-{checkpoints}",
            checkpoints=checkpoints,
        )

    cases = {
        "floor: json.dumps + write + fsync/turn": floor_writer(directory / "floor.jsonl"),
        "jsonl, flush per turn": await plugin_writer(configured("jsonl"), "jsonl"),
        "jsonl, no checkpoints": await plugin_writer(configured("jsonl", False), "jsonl-nocp"),
        "sqlite, flush per turn": await plugin_writer(configured("sqlite"), "sqlite"),
        "jsonl, through the hook relay": await plugin_writer(
            configured("jsonl", False), "jsonl-relay", via="relay"
        ),
        "jsonl, relay + Session.append": await plugin_writer(
            configured("jsonl", False), "jsonl-core", via="core"
        ),
    }
    samples = await measure_async(cases, settings)
    for run in cases.values():
        run.close()
    floor = samples["floor: json.dumps + write + fsync/turn"]
    print(f"\nwrite: {EVENTS_PER_TURN} events per turn, one flush (fsync) per turn")
    print("(the plugin's impls called directly; the last two rows add the core's own costs)")
    print(f"{'case':<40} {'events/s':>10} {'x floor':>9} {'IQR x':>13}")
    rows = {}
    for name, values in samples.items():
        rate = EVENTS_PER_TURN * 1e9 / sorted(values)[len(values) // 2]
        ratio = paired_ratio(floor, values)  # floor time / case time = events/s ratio
        rows[name] = {"events_per_s": rate, "x_floor": ratio.as_dict()}
        print(f"{name:<40} {rate:10,.0f} {ratio.median:8.2f}x {ratio.q1:6.2f}-{ratio.q3:<6.2f}")
    target = rows["jsonl, flush per turn"]["x_floor"]["median"]
    verdict = "PASS" if target >= 0.8 else "MISS"
    print(f"target: jsonl events/s ≥ 0.8x floor: {target:.2f}x -> {verdict}")
    return {"cases": rows, "target": verdict}


# -- load ----------------------------------------------------------------------------------


def few_rounds(settings: Settings) -> Settings:
    """One operation per round, and at most 9 rounds: each takes a good fraction of a second."""
    return Settings(min(settings.rounds, 9), 1, 1, settings.quick)


def build_long_session(backend: SessionBackend, session_id: str, events: int) -> int:
    """About ``events`` events, the last turn stopping right after a logged tool call."""
    entries: list[Entry] = []
    turn = 0
    while len(entries) < events:
        turn += 1
        entries += turn_template(turn)
    cut = max(i for i, (kind, _) in enumerate(entries) if kind == "tool/call") + 1
    batch = [
        SessionEvent(kind, seq, 1_700_000_000.0 + seq / 1000, data)
        for seq, (kind, data) in enumerate(entries[:cut])
    ]
    info = SessionInfo(session_id, 1_700_000_000.0)
    for start in range(0, len(batch), 5000):
        backend.append(info, batch[start : start + 5000], durable=False)
    return len(batch)


async def bench_load(directory: Path, settings: Settings, size: int) -> dict[str, Any]:
    jsonl_dir, db = directory / "load-jsonl", directory / "load.sqlite3"
    written = build_long_session(JsonlBackend(jsonl_dir), "long", size)
    path = jsonl_dir / "long.jsonl"
    with path.open("ab") as file:
        file.write(b'{"type":"assistant/chunk","seq":')  # torn by the crash
    sqlite = SqliteBackend(db)
    build_long_session(sqlite, "long", size)

    def floor(n: int) -> None:
        for _ in range(n):
            with path.open("rb") as file:
                [json.loads(line) for line in file if line.endswith(b"\n")]

    def jsonl(n: int) -> None:
        for _ in range(n):
            loaded = JsonlBackend(jsonl_dir).load("long")
            assert loaded is not None
            assert (loaded.closers, loaded.dropped) == (3, 1)

    def sqlite_load(n: int) -> None:
        for _ in range(n):
            loaded = sqlite.load("long")
            assert loaded is not None
            assert loaded.closers == 3

    cases = {"floor: json.loads per line": floor, "jsonl load + repair": jsonl}
    cases["sqlite load + repair"] = sqlite_load
    samples = await measure_async(cases, few_rounds(settings))
    sqlite.close()
    base = samples["floor: json.loads per line"]
    mb = path.stat().st_size / 1e6
    print(f"\nload: {written:,} events ({mb:.1f} MB of JSONL), last turn torn and closed")
    print(f"{'case':<40} {'ms':>9} {'x floor':>9} {'IQR x':>13}")
    rows = {}
    for name, values in samples.items():
        ms = sorted(values)[len(values) // 2] / 1e6
        ratio = paired_ratio(values, base)
        rows[name] = {"ms": ms, "x_floor": ratio.as_dict()}
        print(f"{name:<40} {ms:9.1f} {ratio.median:8.2f}x {ratio.q1:6.2f}-{ratio.q3:<6.2f}")
    target = rows["jsonl load + repair"]["x_floor"]["median"]
    verdict = "PASS" if target <= 1.5 else "MISS"
    print(f"target: jsonl load + repair ≤ 1.5x floor: {target:.2f}x -> {verdict}")
    return {"events": written, "cases": rows, "target": verdict}


# -- profiles (bench/run.py writes one where a target is missed) -----------------------


async def profile_write(directory: Path, turns: int, out: Path, tools_dir: Path | None) -> Path:
    """``bench_write``'s ``jsonl, flush per turn`` case, ``turns`` turns, profiled."""
    settings = PersistenceSettings(backend="jsonl", directory=directory / "profile-write")
    run = await plugin_writer(settings, "jsonl-profile")
    try:
        await run(1)  # warm
        return await profile_run(run, turns, out, tools_dir)
    finally:
        run.close()


async def profile_load(directory: Path, times: int, out: Path, tools_dir: Path | None) -> Path:
    """``bench_load``'s ``jsonl load + repair`` case, ``times`` loads, profiled: of the
    session ``bench_load`` built in ``directory`` (call it first)."""
    jsonl_dir = directory / "load-jsonl"

    def run(n: int) -> None:
        for _ in range(n):
            assert JsonlBackend(jsonl_dir).load("long") is not None

    return await profile_run(run, times, out, tools_dir)


# -- list ----------------------------------------------------------------------------------


async def bench_list(directory: Path, settings: Settings, count: int) -> dict[str, Any]:
    jsonl_dir = directory / "list-jsonl"
    jsonl, sqlite = JsonlBackend(jsonl_dir, fsync=False), SqliteBackend(directory / "list.db")
    events = [
        SessionEvent(kind, seq, 1_700_000_000.0 + seq, data)
        for seq, (kind, data) in enumerate(e for t in range(1, 6) for e in turn_template(t))
    ]
    for index in range(count):
        info = SessionInfo(f"session-{index:05d}", 1_700_000_000.0, title=f"question {index}")
        jsonl.append(info, events, durable=False)
        sqlite.append(info, events, durable=False)

    def headers(backend: SessionBackend) -> Any:
        def run(n: int) -> None:
            for _ in range(n):
                assert len(backend.headers()) == count

        return run

    cases = {
        "jsonl headers()": headers(JsonlBackend(jsonl_dir)),
        "sqlite headers()": headers(sqlite),
    }
    samples = await measure_async(cases, few_rounds(settings))
    sqlite.close()
    reader = JsonlBackend(jsonl_dir)
    start = time.perf_counter_ns()
    for index in range(count):  # what a list that loads sessions would cost: once is plenty
        reader.load(f"session-{index:05d}")
    samples["for scale: load() every session, once"] = [time.perf_counter_ns() - start]
    total = sum(entry.stat().st_size for entry in os.scandir(jsonl_dir)) / 1e6
    print(f"\nlist: {count:,} sessions of {len(events)} events ({total:.0f} MB of JSONL)")
    rows = {}
    for name, values in samples.items():
        ms = sorted(values)[len(values) // 2] / 1e6
        rows[name] = {"ms": ms, "us_per_session": ms * 1000 / count}
        print(f"{name:<40} {ms:9.1f} ms  {ms * 1000 / count:7.1f} µs/session")
    return {"sessions": count, "cases": rows}


async def main_async(args: argparse.Namespace, settings: Settings) -> int:
    base = Path(tempfile.mkdtemp(prefix="dsh-bench-", dir=args.dir))
    try:
        write = await bench_write(base, settings)
        load = await bench_load(base, settings, 20_000 if settings.quick else 100_000)
        listing = await bench_list(base, settings, 200 if settings.quick else 1000)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    write_json(
        args.json,
        {
            "benchmark": "persistence",
            "environment": environment("dsh-core", "dsh-persistence", "anyio"),
            "settings": {"rounds": settings.rounds, "turns_per_round": settings.number},
            "write": write,
            "load": load,
            "list": listing,
        },
    )
    print(f"\nresults: {args.json}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, help="where to write (default: a temp dir)")
    args, settings = parse_args(
        parser,
        default_json=Path(__file__).parent / "results" / "persistence.json",
        rounds=(15, 3),
        number=(20, 5),
        argv=argv,
    )
    return asyncio.run(main_async(args, settings))


if __name__ == "__main__":
    raise SystemExit(main())
