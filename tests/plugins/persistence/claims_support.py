"""Setup shared by the claim tests (test_persistence_*claims*.py, *_unclaimed.py,
test_review_s12_claims.py): stored sessions and their counts, "another process" (a
harness over its own ``PersistencePlugin``, a thread, or a real process holding a
claim), and the files a store should hold once every claim has ended.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from pathlib import Path

from dsh.harness import Harness
from dsh.session import SessionEvent
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text
from dsh_persistence import PersistencePlugin, PersistenceSettings, SessionInfo, open_backend
from dsh_persistence.testing import LogBuilder


def note(seq: int, by: str = "test") -> SessionEvent:
    return SessionEvent("note", seq, 2.0 + seq, {"by": by})


def harness_over(
    settings: PersistenceSettings, model: ScriptedModel, workspace: Path | None = None
) -> AbstractAsyncContextManager[Harness]:
    """A harness storing in ``settings``'s store through a ``PersistencePlugin`` of its
    own (as another process would), ``model`` its only model."""
    return scripted_harness(
        model,
        plugins=[("persistence", PersistencePlugin(settings))],
        load_entry_points=False,
        workspace=workspace,
    )


async def stored_session(settings: PersistenceSettings, workspace: Path | None = None) -> str:
    """A session with one finished turn, stored (its agent working in ``workspace``); its id."""
    async with harness_over(settings, ScriptedModel([text("noted")]), workspace) as h:
        agent = await h.agents.create("first", options={"model": "scripted"})
        await run_turn(agent, "remember blue")
        return agent.session.id


def stored(settings: PersistenceSettings, session_id: str = "s") -> int:
    """A session ``session_id`` with one turn in the store (prepared first); how many
    events it has."""
    log = LogBuilder()
    log.turn("one")
    backend = open_backend(settings)
    backend.prepare()
    backend.append(SessionInfo(session_id, 1.0), log.events, durable=False)
    backend.close()
    return len(log.events)


def kept(settings: PersistenceSettings, session_id: str = "s") -> int:
    """How many events of the stored session ``session_id`` the store holds (none dropped)."""
    backend = open_backend(settings)
    try:
        loaded = backend.load(session_id)
        assert loaded is not None and loaded.dropped == 0
        return loaded.kept
    finally:
        backend.close()


def in_thread(work: Callable[[], None]) -> tuple[threading.Thread, list[BaseException | None]]:
    """``work`` started in a thread; its outcome (None, or what it raised) once done."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            work()
            outcome.append(None)
        except BaseException as exc:  # checked by the test
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


HOLDER = """
import sys
from dsh_persistence import PersistenceSettings, open_backend

backend = open_backend(PersistenceSettings(backend=sys.argv[1], directory=sys.argv[2]))
backend.prepare()
assert backend.claim(sys.argv[3])
print("claimed", flush=True)
sys.stdin.read()
backend.close()
"""


@contextmanager
def claimed_elsewhere(
    settings: PersistenceSettings, session_id: str
) -> Iterator[subprocess.Popen[str]]:
    """A real process that has claimed ``session_id`` in ``settings``'s store (JSONL or
    SQLite); it lets go and ends when the block does, unless ``killed`` first."""
    where = [settings.backend, str(settings.session_directory())]
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, *where, session_id],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline() == "claimed\n"
            yield holder
        finally:
            if holder.poll() is None:
                holder.communicate("", timeout=30)


def killed(holder: subprocess.Popen[str]) -> None:
    """``holder`` killed outright (``kill -9``): it lets go of nothing itself."""
    holder.send_signal(signal.SIGKILL)
    assert holder.wait(30) == -signal.SIGKILL


def files_of(settings: PersistenceSettings) -> list[str]:
    """Every file of the store's directory and below (none for PostgreSQL)."""
    if settings.backend == "postgresql":
        return []
    directory = settings.session_directory()
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file())


def stored_files(settings: PersistenceSettings, session_id: str = "new") -> list[str]:
    """What ``files_of`` holds once every claim has ended, ``session_id`` stored: the
    store and nothing else."""
    if settings.backend == "postgresql":
        return []
    return [f"{session_id}.jsonl"] if settings.backend == "jsonl" else ["sessions.sqlite3"]
