"""Setup shared by the claim tests (test_persistence_*claims*.py, *_unclaimed.py,
test_persistence_leftover_*.py, test_review_s12_claims.py): stored sessions and their
counts, "another process" (a harness over its own ``PersistencePlugin``, a thread, or a
real process holding a claim or a turn), and the files a store should hold once every
claim has ended.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager, AbstractContextManager, contextmanager
from pathlib import Path
from typing import Literal

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


#: A real process over a store (argv: backend, directory, session id, what it does):
#: "claim" claims the session (the store prepared first) and says "claimed"; "append"
#: appends a second turn to the stored session (of one turn) holding no claim, and stops
#: mid-append holding its turn (and the session's lock), saying "appending", then
#: "appended" once done. Either goes on at a line (or the end) on stdin, then lets go.
HOLDER = """
import sys
from contextlib import contextmanager
from dsh_persistence import PersistenceSettings, SessionInfo, open_backend
from dsh_persistence import _claims, _jsonl_locks
from dsh_persistence.testing import LogBuilder

kind, directory, session_id, doing = sys.argv[1:]


def stop(said):
    print(said, flush=True)
    sys.stdin.readline()


lock_unclaimed = _jsonl_locks.FileLocks._lock_unclaimed
unclaimed_write = _claims.ClaimFiles.unclaimed_write


def jsonl_turn(self, *args):
    turn = lock_unclaimed(self, *args)
    stop("appending")
    return turn


@contextmanager
def claim_files_turn(self, session_id):
    with unclaimed_write(self, session_id) as free:
        stop("appending")
        yield free


_jsonl_locks.FileLocks._lock_unclaimed = jsonl_turn
_claims.ClaimFiles.unclaimed_write = claim_files_turn
backend = open_backend(PersistenceSettings(backend=kind, directory=directory))
if doing == "claim":
    backend.prepare()
    assert backend.claim(session_id)
    stop("claimed")
else:
    log = LogBuilder()
    log.turn("one", calls=())
    log.turn("two", calls=())
    backend.append(SessionInfo(session_id, 1.0), log.events[len(log.events) // 2 :], durable=True)
    print("appended", flush=True)
backend.close()
"""


@contextmanager
def held_elsewhere(
    settings: PersistenceSettings, session_id: str, doing: Literal["claim", "append"]
) -> Iterator[subprocess.Popen[str]]:
    """A real process holding ``session_id`` in ``settings``'s store (JSONL or SQLite):
    its claim, or its turn mid-append (``HOLDER``); it goes on, lets go and ends when the
    block does, unless ``killed`` first."""
    where = [settings.backend, str(settings.session_directory())]
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, *where, session_id, doing],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        try:
            said = "claimed\n" if doing == "claim" else "appending\n"
            assert holder.stdout is not None and holder.stdout.readline() == said
            yield holder
        finally:
            if holder.poll() is None:
                holder.communicate("", timeout=30)


def claimed_elsewhere(
    settings: PersistenceSettings, session_id: str
) -> AbstractContextManager[subprocess.Popen[str]]:
    """``held_elsewhere``: a real process that has claimed ``session_id``."""
    return held_elsewhere(settings, session_id, "claim")


def appending_elsewhere(
    settings: PersistenceSettings, session_id: str
) -> AbstractContextManager[subprocess.Popen[str]]:
    """``held_elsewhere``: a real process mid-append to ``session_id`` (stored, one turn),
    holding its turn and no claim."""
    return held_elsewhere(settings, session_id, "append")


def appended(appender: subprocess.Popen[str]) -> None:
    """The append of ``appending_elsewhere``'s process let go on, done, and the process ended."""
    assert appender.stdin is not None and appender.stdout is not None
    appender.stdin.write("\n")
    appender.stdin.flush()
    assert appender.stdout.readline() == "appended\n"
    assert appender.wait(30) == 0


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
