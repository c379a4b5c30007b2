"""bench/persistence.py writes as an agent does: its session is claimed before the first
write (``dsh._claims``), so its appends take no lock of their own and its figures are
the agent's, not those of a writer without a claim (its turn and the file's lock per
append)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dsh_persistence import PersistenceSettings, open_backend

pytestmark = pytest.mark.plugins("persistence")

BENCH = Path(__file__).resolve().parents[3] / "bench"


@pytest.mark.parametrize("backend", ["jsonl", "sqlite"])
@pytest.mark.parametrize("via", ["plugin", "relay", "core"])
async def test_the_bench_writes_a_claimed_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str, via: str
) -> None:
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.delitem(sys.modules, "persistence", raising=False)
    import persistence as bench

    settings = PersistenceSettings(backend=backend, directory=tmp_path / "store")  # type: ignore[arg-type]
    run = await bench.plugin_writer(settings, "w", via=via)
    try:
        await run(2)
        other = open_backend(settings)  # another process's view of the store
        try:
            assert other.claim("bench-w") is False, "the bench's session is not claimed"
            loaded = other.load("bench-w")
            assert loaded is not None
            assert loaded.kept == 2 * bench.EVENTS_PER_TURN
        finally:
            other.close()
    finally:
        run.close()
    monkeypatch.delitem(sys.modules, "persistence", raising=False)
