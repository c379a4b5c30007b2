"""Database work never runs on the event loop: a flush with ``fsync: never`` and the
release of a claim when an agent is disposed wait, in a worker thread, for a lock
another connection holds (or for a server that does not answer), while every other
task of the process keeps running.

Each test holds the lock (or stalls the server) for about a second and counts how
often a concurrent task wakes meanwhile: on the event loop the count stays near zero,
in a thread it is dozens. The margin is wide on purpose: no tight timing."""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh.testing import ScriptedModel, run_turn, scripted_harness, text
from dsh_persistence import JsonlBackend, PersistencePlugin, PersistenceSettings

pytestmark = pytest.mark.plugins("persistence")

HOLD = 1.0  # seconds another connection holds the lock
TICK = 0.01


@asynccontextmanager
async def harness(settings: PersistenceSettings) -> AsyncIterator[tuple[Any, PersistencePlugin]]:
    plugin = PersistencePlugin(settings)
    model = ScriptedModel([text("ok")] * 4)
    plugins = [("persistence", plugin)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        yield h, plugin


async def ticks_during(work: Callable[[], Awaitable[object]]) -> int:
    """How many times a concurrent task woke (every ``TICK``) while ``work`` ran."""
    ticks = 0
    done = False

    async def ticker() -> None:
        nonlocal ticks
        while not done:
            await anyio.sleep(TICK)
            ticks += 1

    async with anyio.create_task_group() as tg:
        tg.start_soon(ticker)
        await anyio.sleep(TICK)
        ticks = 0
        await work()
        done = True
    return ticks


def awake(ticks: int) -> None:
    """The loop kept running during ``HOLD`` (it ticks ~100 times when idle, about twice
    when something blocks it throughout)."""
    assert ticks >= 10, f"the event loop stalled: {ticks} ticks in {HOLD} s"


async def test_sqlite_never_flush_waits_for_the_write_lock_off_the_loop(tmp_path: Path) -> None:
    settings = PersistenceSettings(
        backend="sqlite", directory=tmp_path, fsync="never", checkpoints=False
    )
    async with harness(settings) as (h, _):
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "first")  # the database exists
        path = settings.database_path()
        other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        try:
            other.execute("BEGIN IMMEDIATE")  # another process writing a long batch
            threading.Timer(HOLD, other.execute, ("COMMIT",)).start()
            awake(await ticks_during(lambda: run_turn(agent, "second")))
        finally:
            other.close()
        assert agent.session.events[-1].type == "turn/end"
    backend = PersistencePlugin(settings).backend
    loaded = backend.load(agent.session.id)
    backend.close()
    assert loaded is not None and loaded.kept == len(agent.session.events)


async def test_postgres_never_flush_waits_for_the_row_lock_off_the_loop(pg_url: str) -> None:
    import psycopg

    settings = PersistenceSettings(
        backend="postgresql", url=pg_url, fsync="never", checkpoints=False
    )
    async with harness(settings) as (h, _):
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "first")
        with psycopg.connect(pg_url) as other:  # the URL's search path: the test's schema
            lock = "SELECT 1 FROM dsh_sessions WHERE id=%s FOR UPDATE"
            other.execute(lock, (agent.session.id,))
            threading.Timer(HOLD, other.commit).start()
            awake(await ticks_during(lambda: run_turn(agent, "second")))


@pytest.mark.skipif(os.name == "nt", reason="stops the server process with SIGSTOP")
async def test_postgres_dispose_releases_the_claim_off_the_loop(pg_url: str) -> None:
    """The claims connection's server process is stopped (a hung server): releasing
    the claim waits for it in a thread; once the dispose returns the claim is released
    (another worker can claim at once)."""
    from dsh_persistence import PostgresBackend

    async with harness(PersistenceSettings(backend="postgresql", url=pg_url)) as (h, plugin):
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "first")
        session_id = agent.session.id
        pid = plugin.backend._claims._db.info.backend_pid  # type: ignore[attr-defined]
        os.kill(pid, signal.SIGSTOP)
        timer = threading.Timer(HOLD, os.kill, (pid, signal.SIGCONT))
        timer.start()
        try:
            awake(await ticks_during(agent.dispose))
        finally:
            timer.join()
            os.kill(pid, signal.SIGCONT)
        other = PostgresBackend(pg_url)
        try:
            assert other.claim(session_id) is True
        finally:
            other.close()


class _Noted(JsonlBackend):
    """A JSONL store noting the thread of each append."""

    def __init__(self, directory: Path, cheaply: bool) -> None:
        super().__init__(directory, fsync=False)
        self.appends_cheaply = cheaply
        self.threads: list[int] = []

    def append(self, *args: Any, **kwargs: Any) -> None:
        self.threads.append(threading.get_ident())
        super().append(*args, **kwargs)


@pytest.mark.parametrize("cheaply", [True, False])
async def test_only_a_backend_that_appends_cheaply_is_written_on_the_event_loop(
    tmp_path: Path, cheaply: bool
) -> None:
    """``SessionBackend.appends_cheaply`` (JSONL's is True): a non-durable flush is made
    on the event loop only for such a backend; another's in a worker thread."""
    backend = _Noted(tmp_path, cheaply)
    plugin = PersistencePlugin(PersistenceSettings(fsync="never"), backend=backend)
    model = ScriptedModel([text("ok")])
    plugins = [("persistence", plugin)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        await run_turn(await h.agents.create("a"), "hi")
    loop = threading.get_ident()
    assert backend.threads
    assert all((thread == loop) is cheaply for thread in backend.threads)
