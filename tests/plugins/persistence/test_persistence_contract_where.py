"""``BackendContract``'s checks of where sessions are catch the backends that get it
wrong: one that ignores the workspace each batch comes from (``--continue`` would take a
session wherever it is run), one that keeps only the workspace a session started in
(``--continue`` would not follow a session resumed elsewhere), and one whose ``stored_in``
is not where its sessions are (dsh-permissions would guard the wrong path). Both
built-in backends pass them (test_persistence_contract.py)."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import ClassVar

import pytest

from dsh.errors import DshError
from dsh.persistence import last_in, store_location
from dsh.session import SessionEvent
from dsh.testing import InMemoryPersistence, ScriptedModel, run_turn, scripted_harness, text
from dsh_persistence import JsonlBackend, SessionBackend, SessionInfo, SqliteBackend
from dsh_persistence.testing import BackendContract

pytestmark = pytest.mark.plugins("persistence")

Opener = Callable[[], SessionBackend]


class IgnoresWorkspace(JsonlBackend):
    """Stores every batch as if no workspace were known."""

    def append(self, info: SessionInfo, events: Sequence[SessionEvent], *, durable: bool) -> None:
        super().append(dataclasses.replace(info, cwd=""), events, durable=durable)


class KeepsFirstWorkspace(SqliteBackend):
    """Stores every batch with the workspace the session was first written from."""

    first: ClassVar[dict[str, str]] = {}

    def append(self, info: SessionInfo, events: Sequence[SessionEvent], *, durable: bool) -> None:
        cwd = self.first.setdefault(info.id, info.cwd)
        super().append(dataclasses.replace(info, cwd=cwd), events, durable=durable)


@pytest.fixture
def opened() -> Iterator[list[SessionBackend]]:
    backends: list[SessionBackend] = []
    yield backends
    for backend in backends:
        backend.close()


def opener(kind: str, directory: Path, opened: list[SessionBackend]) -> Opener:
    KeepsFirstWorkspace.first.clear()

    def open_backend() -> SessionBackend:
        if kind == "ignores":
            opened.append(IgnoresWorkspace(directory / "sessions"))
        else:
            opened.append(KeepsFirstWorkspace(directory / "sessions.sqlite3"))
        return opened[-1]

    return open_backend


@pytest.fixture
def contract() -> BackendContract:
    return BackendContract()


WORKSPACE_CHECKS = [
    "test_the_workspace_is_where_the_last_turn_ran",
    "test_a_batch_without_a_turn_boundary_leaves_the_workspace",
    "test_each_session_has_its_own_workspace",
    "test_a_deleted_session_leaves_no_workspace_behind",
]


@pytest.mark.parametrize("kind", ["ignores", "keeps-first"])
@pytest.mark.parametrize("check", WORKSPACE_CHECKS)
def test_a_backend_that_ignores_the_workspace_fails_the_contract(
    contract: BackendContract, tmp_path: Path, opened: list[SessionBackend], kind: str, check: str
) -> None:
    open_backend = opener(kind, tmp_path, opened)
    method = getattr(contract, check)
    takes_one = "backend" in inspect.signature(method).parameters
    with pytest.raises(AssertionError):
        method(open_backend() if takes_one else open_backend)


@pytest.mark.parametrize("kind", ["ignores", "keeps-first"])
async def test_a_backend_that_ignores_the_workspace_fails_the_harness_check(
    contract: BackendContract, tmp_path: Path, opened: list[SessionBackend], kind: str
) -> None:
    open_backend = opener(kind, tmp_path / "store", opened)
    with pytest.raises(AssertionError):
        await contract.test_continue_follows_a_session_resumed_in_another_workspace(
            open_backend, tmp_path
        )


class Misplaced(JsonlBackend):
    """Says its sessions are in a directory they are not in."""

    def __init__(self, directory: Path, stored_in: str | None) -> None:
        super().__init__(directory)
        self.stored_in = stored_in


def test_a_location_where_the_sessions_are_not_fails_the_contract(
    contract: BackendContract, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with pytest.raises(AssertionError, match="storing a session changed nothing"):
        contract.test_the_location_holds_the_sessions(
            lambda: Misplaced(tmp_path / "sessions", str(elsewhere))
        )


def test_a_relative_location_fails_the_contract(contract: BackendContract, tmp_path: Path) -> None:
    backend = Misplaced(tmp_path / "sessions", "sessions")
    with pytest.raises(DshError, match="expected an absolute path"):
        contract.test_a_location_is_valid_before_anything_is_stored(backend)
    with pytest.raises(DshError, match="expected an absolute path"):
        contract.test_the_location_holds_the_sessions(lambda: backend)


def test_a_backend_without_a_location_is_not_held_to_one(
    contract: BackendContract, tmp_path: Path
) -> None:
    """A store that is not files on this machine gives None: the check is skipped."""
    with pytest.raises(pytest.skip.Exception, match="gives no location"):
        contract.test_the_location_holds_the_sessions(lambda: Misplaced(tmp_path / "s", None))


async def test_the_in_memory_double_is_exempt_as_documented(tmp_path: Path) -> None:
    """docs/testing.md: ``InMemoryPersistence`` is a ``SessionPersistence``, not a
    ``SessionBackend``; it records no workspace ("" lists a session in every one) and
    gives no location. Should it start recording either, the docs and this test change."""
    double = InMemoryPersistence()
    model = ScriptedModel([text("one")])
    async with scripted_harness(model, plugins=[double], load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"}, workspace=tmp_path)
        await run_turn(agent, "one")
    assert not isinstance(double, SessionBackend)
    headers = await double.list()
    assert [h.workspace for h in headers] == [""]
    assert last_in(headers, "/anywhere/else") == headers[0]
    assert store_location(double) is None
