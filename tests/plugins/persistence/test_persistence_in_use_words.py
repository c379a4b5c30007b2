"""What a refusal says of the one holding a session: "another process or harness".

Two harnesses of one process may share a store (each with its own persistence plugin,
so its own backend), and a claim holds between them as between processes (``flock``
locks belong to an open file). The resume's refusal said so already (``is in use:
another process or harness is continuing it``); the refused delete, the refused append
of a writer holding no claim, and the resume of a session changed since it was loaded
said "another process" only. Here the two backends are those of two harnesses of this
process, over one store (JSONL and SQLite: the ``settings`` fixture)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
import pytest

from dsh_persistence import (
    PersistenceSettings,
    SessionBackend,
    SessionInfo,
    SessionInUseError,
    StoredSessions,
    open_backend,
)
from dsh_persistence.testing import LogBuilder

pytestmark = [
    pytest.mark.plugins("persistence"),
    pytest.mark.skipif(os.name == "nt", reason="advisory locks are POSIX flock"),
]

HOLDER = "another process or harness is continuing it"


@contextmanager
def two_harnesses(settings: PersistenceSettings) -> Iterator[tuple[SessionBackend, SessionBackend]]:
    """The backends of two harnesses over one store: mine and theirs."""
    mine, theirs = open_backend(settings), open_backend(settings)
    try:
        yield mine, theirs
    finally:
        mine.close()
        theirs.close()


def test_a_delete_and_an_append_refused_by_another_harness_claim_say_so(
    settings: PersistenceSettings,
) -> None:
    log = LogBuilder()
    log.turn("one")
    with two_harnesses(settings) as (mine, theirs):
        mine.prepare()
        mine.append(SessionInfo("s", 1.0), log.events, durable=True)
        assert mine.claim("s")
        with pytest.raises(SessionInUseError) as deleting:
            theirs.delete("s")
        stored = len(log.events)
        log.turn("two")
        with pytest.raises(SessionInUseError) as appending:
            theirs.append(SessionInfo("s", 1.0), log.events[stored:], durable=True)
    where = re.escape(str(settings.session_directory()))
    session = "the session" if settings.backend == "jsonl" else "session 's'"
    assert re.fullmatch(f"{where}.*: cannot delete {session}: {HOLDER}", str(deleting.value))
    assert re.fullmatch(
        f"{where}.*: cannot append to session 's': {HOLDER} \\(it holds the session's "
        "claim\\); nothing was written",
        str(appending.value),
    )


def test_a_resume_of_a_session_another_harness_continued_since_it_was_loaded_says_so(
    settings: PersistenceSettings,
) -> None:
    log = LogBuilder()
    log.turn("one")
    with two_harnesses(settings) as (mine, theirs):
        theirs.prepare()
        theirs.append(SessionInfo("s", 1.0), log.events, durable=True)
        loaded = mine.load("s")
        assert loaded is not None
        stored = len(log.events)
        log.turn("two")  # their harness goes on meanwhile
        theirs.append(SessionInfo("s", 1.0), log.events[stored:], durable=True)
        with pytest.raises(SessionInUseError) as resuming:
            anyio.run(StoredSessions(mine).claim, "s", loaded.stored.events)
    assert str(resuming.value) == (
        "session 's' changed since it was loaded: another process or harness continued it "
        "meanwhile; try again"
    )
