"""Review of the day's persistence changes (a JSONL append without a claim racing a
delete, ``_open_to_append`` in ``_jsonl_locks.py``; ``BackendContract``'s checks of
where sessions are, ``testing/_contract_where.py``), by hand mutation: each test here
failed on a mutant that the other persistence tests let through (named in its
docstring). The race is run as test_persistence_delete_race.py runs it: real processes
hold the turn and delete, the append waits in a thread of this process. A mutant of the
contract is an assertion dropped from it: a backend wrong in that one way passed."""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections.abc import Sequence
from pathlib import Path

import pytest
from test_persistence_delete_race import DELETER, INFO, race, run_python

from dsh.persistence import SessionHeader
from dsh.session import SessionEvent
from dsh_persistence import JsonlBackend, SessionConflictError, SessionInfo
from dsh_persistence.testing import BackendContract, LogBuilder

pytestmark = [
    pytest.mark.plugins("persistence"),
    pytest.mark.skipif(
        not os.path.isdir("/proc/self/fd"), reason="finds open files in /proc/self/fd"
    ),
]


def test_a_whole_log_appended_while_its_session_is_deleted_stores_it_anew(
    tmp_path: Path,
) -> None:
    """Mutant: ``if deleted and first != 0`` as ``if deleted``: an append from seq 0 (a
    writer storing its whole log again) failed with SessionDeletedError, where the
    docstring of ``_open_to_append`` has it start the session, as with no file at all."""
    directory = tmp_path / "sessions"
    log = LogBuilder()
    log.turn("one")
    log.turn("two")
    JsonlBackend(directory).append(INFO, log.events[:9], durable=True)
    writer = JsonlBackend(directory)
    with pytest.raises(SessionConflictError):  # without the delete: the file has events
        writer.append(INFO, log.events, durable=True)

    def delete() -> None:
        assert run_python(DELETER, str(directory)) == "True"

    (outcome,) = race(directory, lambda: writer.append(INFO, log.events, durable=True), delete)

    assert outcome is None
    loaded = JsonlBackend(directory).load("s")
    assert loaded is not None
    assert [e.to_dict() for e in loaded.stored.events] == [e.to_dict() for e in log.events]


class MovesOnEveryBatch(JsonlBackend):
    """Reports the workspace of the last batch appended, turn boundary or not."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.last: dict[str, str] = {}

    def append(self, info: SessionInfo, events: Sequence[SessionEvent], *, durable: bool) -> None:
        super().append(info, events, durable=durable)
        self.last[info.id] = info.cwd

    def headers(self) -> list[SessionHeader]:
        found = super().headers()
        return [dataclasses.replace(h, workspace=self.last.get(h.id, h.workspace)) for h in found]


def test_a_backend_moving_the_workspace_without_a_turn_boundary_fails_the_contract(
    tmp_path: Path,
) -> None:
    """Mutant: the contract's check after the batch without a boundary dropped."""
    backend = MovesOnEveryBatch(tmp_path / "sessions")
    with pytest.raises(AssertionError):
        BackendContract().test_a_batch_without_a_turn_boundary_leaves_the_workspace(backend)
    backend.close()


def test_a_location_that_differs_by_instance_fails_the_contract(tmp_path: Path) -> None:
    """Mutant: the contract's check that every instance over one storage gives the same
    location dropped. Here the first instance names the directory, the others its
    parent (which holds the sessions too, so only that check sees it)."""
    count = itertools.count()

    def open_backend() -> JsonlBackend:
        backend = JsonlBackend(tmp_path / "sessions")
        if next(count):
            backend.stored_in = str(tmp_path)
        return backend

    with pytest.raises(AssertionError):
        BackendContract().test_the_location_holds_the_sessions(open_backend)
