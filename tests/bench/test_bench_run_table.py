"""bench/run.py's table and verdicts (issue 9), built from made-up reports: nothing is
timed here. A target that could not be measured (no peers) is reported NOT MEASURED
with its reason, never left out; the persistence targets carry their measured ratio;
the profiles written by the sections are listed with the loop's."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
MEMORY = "dsh + 3 plugins (in-memory log)"
PEER_TARGET = f"loop: {MEMORY} ≥ 30x faster than the fastest peer"
IMPORT_TARGET = "start-up: import dsh + 3 plugins ≤ 1/4 of the fastest peer's import"


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.delitem(sys.modules, "_table", raising=False)
    import _table

    yield _table
    monkeypatch.delitem(sys.modules, "_table", raising=False)


def stats(median: float) -> dict[str, Any]:
    return {"median": median, "q1": median, "q3": median, "min": median, "max": median}


def loop_row(us: float, peer_x: float | None = None, invalid: int = 0) -> dict[str, Any]:
    row: dict[str, Any] = {
        "us_per_step": stats(us),
        "x_floor": stats(us / 2),
        "invalid_rounds": invalid,
    }
    if peer_x is not None:
        row["x_faster_than_fastest_peer"] = stats(peer_x)
    return row


def report(
    peers: str = "measured", *, write_x: float = 0.9, load_x: float = 1.2, stream_us: float = 3
) -> dict[str, Any]:
    """A run's report. ``peers``: ``measured``, ``--no-peers``, ``venv failed``,
    ``none started`` or ``all invalid``."""
    peer_x = 40.0 if peers == "measured" else None
    cases = {
        "floor (plain asyncio)": loop_row(2.0, peer_x and 500.0),
        "dsh bare": loop_row(10.0, peer_x and 100.0),
        MEMORY: loop_row(20.0, peer_x),
        "dsh + 3 plugins (JSONL, flush/turn)": loop_row(30.0, peer_x and 33.0),
    }
    venv: dict[str, Any] = {"ok": True, "python": "/venv/bin/python"}
    peer_info: dict[str, Any] = {"openai-agents": {"ready": True}}
    if peers == "--no-peers":
        venv, peer_info = {"ok": False, "error": "--no-peers"}, {}
    elif peers == "venv failed":
        venv, peer_info = {"ok": False, "error": "error: no wheel for tiktoken"}, {}
    elif peers == "none started":
        peer_info = {"openai-agents": {"error": "openai-agents exited: ImportError"}}
    if peers in ("measured", "all invalid"):
        cases["openai-agents"] = loop_row(800.0, invalid=3 if peers == "all invalid" else 0)
    startup: dict[str, Any] = {
        "python -c pass": {"ms": stats(15.0)},
        "import dsh + 3 plugins": {"ms": stats(60.0), "net_ms": stats(45.0)},
    }
    if peers in ("measured", "all invalid"):
        startup["import openai-agents"] = {"ms": stats(900.0), "net_ms": stats(880.0)}
    return {
        "peers": {"venv": venv, **peer_info},
        "loop": {
            "turns_per_round": 10,
            "fastest_peer": "openai-agents" if peers == "measured" else None,
            "cases": cases,
        },
        "memory": {f"{MEMORY} x 1000": {"bytes_per_agent": 6000.0}},
        "startup": startup,
        "persistence": {
            "write": {
                "cases": {
                    "floor: json.dumps + write + fsync/turn": {
                        "events_per_s": 100_000.0,
                        "x_floor": stats(1.0),
                    },
                    "jsonl, flush per turn": {
                        "events_per_s": 100_000.0 * write_x,
                        "x_floor": stats(write_x),
                    },
                },
                "target": "PASS" if write_x >= 0.8 else "MISS",
            },
            "load": {
                "events": 20_000,
                "cases": {
                    "floor: json.loads per line": {"ms": 100.0, "x_floor": stats(1.0)},
                    "jsonl load + repair": {"ms": 100.0 * load_x, "x_floor": stats(load_x)},
                },
                "target": "PASS" if load_x <= 1.5 else "MISS",
            },
        },
        "stream": {
            "us_per_chunk": {"openai: dsh turn": stats(stream_us + 2)},
            "targets": {
                "openai": {"harness_us_per_chunk": stats(stream_us), "pass": stream_us <= 10}
            },
        },
    }


def cells(rows: list[list[str]], case: str) -> list[str]:
    (row,) = [r for r in rows if r[1].strip().startswith(case)]
    return row


def test_with_peers_the_peer_targets_have_their_ratio(table: ModuleType) -> None:
    rows, targets = table.build_table(report())
    assert targets[f"loop: {MEMORY} ≥ 30x faster than openai-agents"] == {
        "value": 40.0,
        "verdict": "PASS",
    }
    share = targets["start-up: import dsh + 3 plugins ≤ 1/4 of import openai-agents"]
    assert share == {"value": 45.0 / 880.0, "verdict": "PASS"}
    assert cells(rows, "vs fastest peer (openai-agents)")[-1] == "≥ 30x: PASS"
    assert not [k for k, t in targets.items() if t["verdict"].startswith("NOT MEASURED")]


@pytest.mark.parametrize(
    ("peers", "reason"),
    [
        ("--no-peers", "--no-peers"),
        ("venv failed", "the peers' venv failed to build"),
        ("none started", "no peer started"),
    ],
)
def test_without_peers_both_peer_targets_say_not_measured(
    table: ModuleType, peers: str, reason: str
) -> None:
    rows, targets = table.build_table(report(peers))
    verdict = f"NOT MEASURED ({reason})"
    assert targets[PEER_TARGET] == {"value": None, "verdict": verdict}
    assert targets[IMPORT_TARGET] == {"value": None, "verdict": verdict}
    assert cells(rows, "vs fastest peer")[-1] == f"≥ 30x: {verdict}"
    assert cells(rows, "import dsh + 3 plugins")[-1] == f"≤ 1/4 of the fastest peer: {verdict}"
    assert len({len(row) for row in rows}) == 1, "every row has every column"


def test_every_peer_invalid_leaves_only_the_loop_target_unmeasured(table: ModuleType) -> None:
    rows, targets = table.build_table(report("all invalid"))
    verdict = "NOT MEASURED (every peer's rounds were invalid)"
    assert targets[PEER_TARGET] == {"value": None, "verdict": verdict}
    assert cells(rows, "vs fastest peer")[-1] == f"≥ 30x: {verdict}"
    assert cells(rows, "openai-agents")[-1].startswith("INVALID (3 rounds")
    share = targets["start-up: import dsh + 3 plugins ≤ 1/4 of import openai-agents"]
    assert share["verdict"] == "PASS"
    assert IMPORT_TARGET not in targets


def test_the_table_prints_not_measured_rows(
    table: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    rows, _ = table.build_table(report("--no-peers"))
    table.print_table(rows)
    out = capsys.readouterr().out
    assert out.count("NOT MEASURED (--no-peers)") == 2


def test_the_venv_error_and_the_peers_that_failed_are_shown(table: ModuleType) -> None:
    notes = table.peer_notes(report("venv failed"))
    assert notes[0] == "peers not measured: the peers' venv failed to build:"
    assert "    error: no wheel for tiktoken" in notes
    assert table.peer_notes(report("--no-peers")) == ["peers not measured: --no-peers"]
    assert table.peer_notes(report("none started")) == [
        "peer openai-agents did not start: openai-agents exited: ImportError"
    ]
    assert table.peer_notes(report()) == []


@pytest.mark.parametrize(("write_x", "load_x"), [(0.9, 1.2), (0.5, 2.5)])
def test_the_persistence_targets_carry_their_ratio(
    table: ModuleType, write_x: float, load_x: float
) -> None:
    _, targets = table.build_table(report(write_x=write_x, load_x=load_x))
    write = targets["persistence: jsonl events/s ≥ 0.8x floor"]
    load = targets["persistence: jsonl load ≤ 1.5x floor"]
    assert write == {"value": write_x, "verdict": "PASS" if write_x >= 0.8 else "MISS"}
    assert load == {"value": load_x, "verdict": "PASS" if load_x <= 1.5 else "MISS"}


def test_the_sections_profiles_are_listed(table: ModuleType) -> None:
    got = report(write_x=0.5, load_x=2.5, stream_us=12)
    got["persistence"]["write"]["profile"] = "/r/run-profile-persistence-write.txt"
    got["persistence"]["load"]["profile"] = "/r/run-profile-persistence-load.txt"
    got["stream"]["targets"]["openai"]["profile"] = "/r/run-profile-stream-openai.txt"
    got["memory"][f"{MEMORY} x 1000"]["profile"] = "/r/run-profile-idle-agents.txt"
    assert table.section_profiles(got) == {
        f"memory: {MEMORY} x 1000": "/r/run-profile-idle-agents.txt",
        "persistence: write": "/r/run-profile-persistence-write.txt",
        "persistence: load": "/r/run-profile-persistence-load.txt",
        "streaming (openai)": "/r/run-profile-stream-openai.txt",
    }
    assert table.section_profiles(report()) == {}
