"""The conformance checks of where sessions are: the workspace each one last ran in
(what ``dsh run --continue`` and ``dsh sessions list --here`` choose by) and the store's
``location``. Written against the public protocol only: ``SessionInfo.cwd`` in,
``headers()``/``list()`` and ``dsh.persistence``'s ``last_in``/``store_location`` out."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from dsh.persistence import last_in, started_in, store_location
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text
from dsh_persistence._backend import SessionBackend, SessionInfo
from dsh_persistence._plugin import PersistencePlugin
from dsh_persistence._service import StoredSessions
from dsh_persistence.testing._contract_support import Opener
from dsh_persistence.testing._logs import LogBuilder

__all__ = ["WhereContract"]


def ran_in(cwd: str, session_id: str = "s1", created: float = 1_700_000_000.0) -> SessionInfo:
    return SessionInfo(session_id, created, {}, cwd, "hello")


def workspaces(backend: SessionBackend) -> dict[str, str]:
    return {header.id: header.workspace for header in backend.headers()}


def snapshot(location: str) -> dict[str, tuple[int, int]]:
    """(size, mtime) of every file of the store at ``location``, as ``in_store`` draws
    it: the path itself, what is below it, and the paths that begin with it and ``-``."""
    found: dict[str, tuple[int, int]] = {}
    try:
        tops = [entry.path for entry in os.scandir(os.path.dirname(location) or os.sep)]
    except FileNotFoundError:
        return found
    files: list[str] = []
    for top in tops:
        if top != location and not top.startswith(location + "-"):
            continue
        if not os.path.isdir(top):
            files.append(top)
        for directory, _, names in os.walk(top):
            files += [os.path.join(directory, name) for name in names]
    for path in files:
        try:
            stat = os.stat(path)
        except FileNotFoundError:  # a temp or lock file gone meanwhile
            continue
        found[path] = (stat.st_size, stat.st_mtime_ns)
    return found


class WhereContract:
    """Mixed into ``BackendContract``: its ``backend`` and ``open_backend`` fixtures."""

    # -- the workspace a session last ran in ---------------------------------------------

    def test_the_workspace_is_where_the_last_turn_ran(self, open_backend: Opener) -> None:
        log, writer = LogBuilder(), open_backend()
        writer.append(ran_in("/w/first"), log.turn("one"), durable=True)
        assert workspaces(open_backend()) == {"s1": "/w/first"}

        writer.append(ran_in("/w/second"), log.turn("two"), durable=True)
        headers = open_backend().headers()  # another instance reads it from the store
        assert [h.workspace for h in headers] == ["/w/second"]
        assert last_in(headers, "/w/second") is not None
        assert last_in(headers, "/w/first") is None  # `--continue` there no longer takes it

        open_backend().append(ran_in("/w/first"), log.turn("three"), durable=True)
        assert workspaces(open_backend()) == {"s1": "/w/first"}  # back where it started
        loaded = open_backend().load("s1")
        assert loaded is not None
        assert [e.to_dict() for e in loaded.stored.events] == [e.to_dict() for e in log.events]

    def test_a_batch_without_a_turn_boundary_leaves_the_workspace(
        self, backend: SessionBackend
    ) -> None:
        log = LogBuilder()
        backend.append(ran_in("/w/a"), log.turn("one"), durable=True)
        turn = log.turn("two")
        boundless = [e for e in turn if e.type not in ("turn/start", "turn/end")]
        cut = turn.index(boundless[0])
        backend.append(ran_in("/w/b"), turn[:cut], durable=True)  # turn/start: it moves
        assert workspaces(backend) == {"s1": "/w/b"}
        backend.append(ran_in("/w/c"), turn[cut:-1], durable=True)  # no boundary
        assert workspaces(backend) == {"s1": "/w/b"}
        backend.append(ran_in("/w/c"), turn[-1:], durable=True)  # its turn/end: it moves
        assert workspaces(backend) == {"s1": "/w/c"}

    def test_each_session_has_its_own_workspace(self, open_backend: Opener) -> None:
        backend = open_backend()
        logs = {"b": LogBuilder(start=1.7e9), "a": LogBuilder(start=1.8e9)}
        backend.append(ran_in("/w/b", "b", 1.7e9), logs["b"].turn(), durable=True)
        backend.append(ran_in("/w/a", "a", 1.8e9), logs["a"].turn(), durable=True)
        backend.append(ran_in("/w/c", "a", 1.8e9), logs["a"].turn(), durable=True)

        assert workspaces(open_backend()) == {"a": "/w/c", "b": "/w/b"}
        headers = sorted(open_backend().headers(), key=lambda h: -h.updated)  # as list()
        assert [h.id for h in started_in(headers, "/w/b")] == ["b"]
        assert started_in(headers, "/w/a") == []
        assert (last := last_in(headers, "/w/c")) is not None
        assert last.id == "a"

    def test_a_deleted_session_leaves_no_workspace_behind(self, open_backend: Opener) -> None:
        backend, log = open_backend(), LogBuilder()
        backend.append(ran_in("/w/a"), log.turn("one"), durable=True)
        backend.append(ran_in("/w/b"), log.turn("two"), durable=True)
        assert backend.delete("s1") is True

        again = LogBuilder(start=1_800_000_000.0)  # a new session of the same id
        open_backend().append(ran_in("/w/c", created=1.8e9), again.turn(), durable=True)
        assert workspaces(open_backend()) == {"s1": "/w/c"}
        assert workspaces(backend) == {"s1": "/w/c"}

    async def test_continue_follows_a_session_resumed_in_another_workspace(
        self, open_backend: Opener, tmp_path: Path
    ) -> None:
        first, second = tmp_path / "first", tmp_path / "second"
        first.mkdir()
        second.mkdir()
        plugin = PersistencePlugin(backend=open_backend())
        model = ScriptedModel([text("one")])
        async with scripted_harness(model, plugins=[plugin], load_entry_points=False) as h:
            agent = await h.agents.create("a", options={"model": "scripted"}, workspace=first)
            with anyio.fail_after(10):
                await run_turn(agent, "one")
            session_id = agent.session.id
        plugin.close()

        service = StoredSessions(open_backend())
        assert [h.workspace for h in await service.list()] == [str(first.resolve())]
        plugin = PersistencePlugin(backend=open_backend())
        model = ScriptedModel([text("two")])
        async with scripted_harness(model, plugins=[plugin], load_entry_points=False) as h:
            resumed = await h.agents.resume(
                "a", session_id, options={"model": "scripted"}, workspace=second
            )
            with anyio.fail_after(10):
                await run_turn(resumed, "two")
        plugin.close()

        headers = await service.list()
        assert [h.workspace for h in headers] == [str(second.resolve())]
        assert last_in(headers, str(first.resolve())) is None
        assert (last := last_in(headers, str(second.resolve()))) is not None
        assert last.id == session_id

    # -- the store's location ------------------------------------------------------------

    def test_the_location_holds_the_sessions(self, open_backend: Opener) -> None:
        """``stored_in`` is given by the service as its ``location``: None (not files on
        this machine), or an absolute path where the sessions' files really are, the
        same for every instance over one storage (dsh-permissions keeps it out of
        ``accept-edits``)."""
        backend = open_backend()
        location = store_location(StoredSessions(backend))  # DshError unless valid
        if location is None:
            assert getattr(backend, "stored_in", None) is None
            pytest.skip("the backend gives no location: its sessions are not files here")
        assert store_location(StoredSessions(open_backend())) == location
        assert os.path.isabs(str(backend.stored_in))

        before = snapshot(location)
        backend.append(ran_in("/w"), LogBuilder().turn(), durable=True)
        stored = snapshot(location)
        assert stored != before, f"storing a session changed nothing at {location}"
        assert backend.delete("s1") is True
        assert snapshot(location) != stored, f"deleting it changed nothing at {location}"

    def test_a_location_is_valid_before_anything_is_stored(self, backend: SessionBackend) -> None:
        location = store_location(StoredSessions(backend))  # DshError unless valid
        assert location is None or os.path.isabs(location)
