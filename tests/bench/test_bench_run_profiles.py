"""bench/run.py writes a profile where a persistence or streaming target is missed (as
it does for the loop rows), and reports a peers' venv that fails to build instead of
stopping. Nothing is timed: the benches' measurements are replaced by made-up ones."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
THREE = pytest.mark.plugins("compaction", "permissions", "persistence")


@pytest.fixture(autouse=True)
def bench_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """bench/ importable; its modules forgotten afterwards (their names are common)."""
    monkeypatch.syspath_prepend(str(BENCH))
    yield
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", "") or "").startswith(str(BENCH)):
            del sys.modules[name]


@THREE
@pytest.mark.parametrize(
    "error",
    [
        RuntimeError("uv is needed to build bench/.peers-venv (pip install uv)"),
        subprocess.CalledProcessError(2, ["uv", "venv"]),
    ],
)
def test_a_venv_that_fails_to_build_is_reported(
    monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    import run

    def fail(log: Any) -> dict[str, Any]:
        raise error

    monkeypatch.setattr(run, "ensure_venv", fail)
    assert run.peers_venv(False) == {"ok": False, "error": str(error)}
    assert run.peers_venv(True) == {"ok": False, "error": "--no-peers"}


@THREE
@pytest.mark.parametrize("missed", [True, False])
async def test_persistence_profiles_the_missed_targets(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, missed: bool
) -> None:
    import run

    verdict = "MISS" if missed else "PASS"
    profiled: list[str] = []

    async def bench(directory: Path, settings: Any, *size: int) -> dict[str, Any]:
        return {"cases": {}, "target": verdict}

    def profiler(part: str) -> Any:
        async def profile(directory: Path, n: int, out: Path, tools: Path | None) -> Path:
            assert directory == tmp_path  # where the bench left its files
            profiled.append(part)
            return out.with_suffix(".txt")

        return profile

    monkeypatch.setattr(run.persistence_bench, "bench_write", bench)
    monkeypatch.setattr(run.persistence_bench, "bench_load", bench)
    monkeypatch.setattr(run.persistence_bench, "profile_write", profiler("write"))
    monkeypatch.setattr(run.persistence_bench, "profile_load", profiler("load"))
    got = await run.section_persistence(True, tmp_path, tmp_path / "out" / "run.json")
    if missed:
        assert profiled == ["write", "load"]
        assert got["write"]["profile"] == str(tmp_path / "out/run-profile-persistence-write.txt")
        assert got["load"]["profile"] == str(tmp_path / "out/run-profile-persistence-load.txt")
    else:
        assert profiled == []
        assert "profile" not in got["write"]
        assert "profile" not in got["load"]


@pytest.mark.plugins("persistence")
async def test_the_persistence_profiles_are_written(tmp_path: Path) -> None:
    import persistence

    from dsh_persistence import JsonlBackend

    written = await persistence.profile_write(tmp_path, 1, tmp_path / "write", None)
    assert written == tmp_path / "write.txt"
    assert "session_flush" in written.read_text(encoding="utf-8")
    persistence.build_long_session(JsonlBackend(tmp_path / "load-jsonl"), "long", 400)
    loaded = await persistence.profile_load(tmp_path, 1, tmp_path / "load", None)
    assert "load" in loaded.read_text(encoding="utf-8")


async def test_streaming_profiles_the_kind_that_missed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import stream
    from _util import Settings

    chunks = 5

    async def measured(cases: dict[str, Any], settings: Settings) -> dict[str, list[float]]:
        # ns per response: the openai turn costs 20 µs per chunk over its floor, anthropic 1
        extra = {"openai: dsh turn": 20_000, "anthropic: dsh turn": 1_000}
        return {name: [1000.0 + chunks * extra.get(name, 0)] * 3 for name in cases}

    monkeypatch.setattr(stream, "measure_async", measured)
    out = tmp_path / "stream.json"
    args = argparse.Namespace(chunks=chunks, json=out, profile=tmp_path / "p", tools=None)
    await stream.main_async(args, Settings(3, 1, 1, True))
    targets = json.loads(out.read_text(encoding="utf-8"))["targets"]
    assert not targets["openai"]["pass"]
    assert targets["openai"]["profile"] == str(tmp_path / "p-openai.txt")
    assert (tmp_path / "p-openai.txt").read_text(encoding="utf-8")
    assert targets["anthropic"]["pass"]
    assert "profile" not in targets["anthropic"]


@THREE
async def test_a_loop_row_is_profiled_the_same_way(tmp_path: Path) -> None:
    """The loop rows' profile goes through the same ``_profile.profile_run``."""
    import _dsh_cases

    written = await _dsh_cases.profile("bare", 2, tmp_path / "loop-bare", None)
    assert written == tmp_path / "loop-bare.txt"
    assert "when_idle" in written.read_text(encoding="utf-8")


async def test_a_profile_is_named_after_the_whole_out_path(tmp_path: Path) -> None:
    """``--json /r/run.v2.json``: the profile is ``run.v2-profile-….txt``, not ``run.txt``."""
    from _profile import profile_run

    calls: list[int] = []
    written = await profile_run(calls.append, 3, tmp_path / "run.v2-profile-loop-bare", None)
    assert calls == [3]
    assert written == tmp_path / "run.v2-profile-loop-bare.txt"
    assert written.is_file()
    assert (tmp_path / "run.v2-profile-loop-bare.prof").is_file()
