"""The conformance suite every session backend must pass."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import anyio
import pytest

from dsh import UserMessage
from dsh.testing import ScriptedModel, check_invariants, run_turn, scripted_harness, text
from dsh_persistence._backend import SessionBackend
from dsh_persistence._errors import SessionConflictError
from dsh_persistence._plugin import PersistencePlugin
from dsh_persistence.testing._contract_damage import DamageContract
from dsh_persistence.testing._contract_load import LoadContract
from dsh_persistence.testing._contract_support import Opener, dicts, info, two_turns
from dsh_persistence.testing._contract_where import WhereContract
from dsh_persistence.testing._damage import Damage
from dsh_persistence.testing._logs import LogBuilder

__all__ = ["BackendContract"]


class BackendContract(LoadContract, DamageContract, WhereContract):
    """Subclass this in a test module and provide two fixtures (every backend instance
    the tests open is closed at teardown):

    - ``backend_factory``: a callable returning a new backend instance over one storage
      (each call is like another process opening the same store);
    - ``damage``: a ``Damage`` for that storage.
    """

    @pytest.fixture
    def backend_factory(self) -> Opener:
        raise NotImplementedError("provide a `backend_factory` fixture")

    @pytest.fixture
    def damage(self) -> Damage:
        raise NotImplementedError("provide a `damage` fixture")

    @pytest.fixture
    def open_backend(self, backend_factory: Opener) -> Iterator[Opener]:
        opened: list[SessionBackend] = []

        def opener() -> SessionBackend:
            opened.append(backend_factory())
            return opened[-1]

        yield opener
        for backend in opened:
            backend.close()

    @pytest.fixture
    def backend(self, open_backend: Opener) -> SessionBackend:
        return open_backend()

    # -- round trip and the seq contract ---------------------------------------------------

    def test_round_trip_keeps_every_event(self, backend: SessionBackend) -> None:
        log = two_turns()
        backend.append(info(), log.events[:17], durable=True)
        backend.append(info(), log.events[17:], durable=False)

        loaded = backend.load("s1")
        assert loaded is not None
        assert dicts(loaded.stored.events) == dicts(log.events)
        assert (loaded.kept, loaded.dropped, loaded.closers) == (len(log.events), 0, 0)
        assert loaded.stored.created == 1_700_000_000.0
        assert backend.load("nope") is None

    def test_appends_continue_in_another_instance(self, open_backend: Opener) -> None:
        log = two_turns()
        first = open_backend()
        first.append(info(), log.events[:5], durable=True)
        second = open_backend()

        tail = second.tail("s1")
        assert tail is not None
        assert tail.next_seq == 5
        assert tail.last is not None
        assert tail.last.to_dict() == log.events[4].to_dict()
        second.append(info(), log.events[5:], durable=True)
        loaded = open_backend().load("s1")
        assert loaded is not None
        assert dicts(loaded.stored.events) == dicts(log.events)
        assert open_backend().tail("nope") is None

    def test_a_new_session_starts_at_seq_zero(self, backend: SessionBackend) -> None:
        log = two_turns()
        with pytest.raises(SessionConflictError):
            backend.append(info(), log.events[3:], durable=True)
        assert backend.load("s1") is None

    @pytest.mark.parametrize("start", [3, 5, 7], ids=["overlap", "overlap-one", "gap"])
    def test_an_append_starts_at_the_stored_next_seq(
        self, backend: SessionBackend, start: int
    ) -> None:
        log = two_turns()
        backend.append(info(), log.events[:6], durable=True)

        with pytest.raises(SessionConflictError):
            backend.append(info(), log.events[start:], durable=True)
        loaded = backend.load("s1")
        assert loaded is not None
        assert loaded.kept == 6
        assert (tail := backend.tail("s1")) is not None
        assert tail.next_seq == 6

    def test_a_batch_with_a_seq_gap_is_refused(self, backend: SessionBackend) -> None:
        log = two_turns()
        with pytest.raises(SessionConflictError):
            backend.append(info(), [*log.events[:3], *log.events[4:6]], durable=True)
        assert backend.load("s1") is None

    def test_a_second_writer_with_a_stale_view_is_refused(self, open_backend: Opener) -> None:
        log = two_turns()
        one, two = open_backend(), open_backend()
        one.append(info(), log.events[:5], durable=True)
        assert (tail := two.tail("s1")) is not None
        assert tail.next_seq == 5
        one.append(info(), log.events[5:9], durable=True)

        with pytest.raises(SessionConflictError):
            two.append(info(), log.events[5:7], durable=True)
        loaded = open_backend().load("s1")
        assert loaded is not None
        assert loaded.kept == 9
        assert dicts(loaded.stored.events[:9]) == dicts(log.events[:9])

    # -- headers, delete, meta ---------------------------------------------------------------

    def test_headers_summarise_each_session(self, backend: SessionBackend) -> None:
        log = two_turns()
        backend.append(info("a"), log.events, durable=True)
        other = LogBuilder(start=1_800_000_000.0)
        other.turn("second session", calls=())
        backend.append(info("b"), other.events[:4], durable=False)

        headers = {h.id: h for h in backend.headers()}
        assert set(headers) == {"a", "b"}
        assert headers["a"].turns == 2
        assert headers["b"].turns == 1
        assert headers["a"].updated == log.events[-1].time
        assert headers["b"].updated == other.events[3].time
        assert headers["a"].created == 1_700_000_000.0
        assert headers["a"].title == "hello"

    def test_delete_removes_a_session(self, backend: SessionBackend) -> None:
        backend.append(info("a"), two_turns().events, durable=True)
        backend.append(info("b"), two_turns().events, durable=True)

        assert backend.delete("a") is True
        assert backend.delete("a") is False
        assert backend.load("a") is None
        assert backend.tail("a") is None
        assert [h.id for h in backend.headers()] == ["b"]
        backend.append(info("a"), two_turns().events[:3], durable=True)  # a new "a"

    def test_meta_and_fork_fields_round_trip(self, backend: SessionBackend) -> None:
        meta = {"parent": "p", "seed_length": 12, "note": {"k": [1, "x"]}}
        backend.append(info("f", **meta), two_turns().events, durable=True)

        loaded = backend.load("f")
        assert loaded is not None
        assert loaded.stored.meta == meta

    def test_odd_ids_unicode_and_big_events_round_trip(self, backend: SessionBackend) -> None:
        log = LogBuilder()
        log.turn('naïve ☃ line\nbreak "quoted" \\ back', calls=())
        log.add("note/big", {"blob": "x" * 300_000, "emoji": "🦀", "n": None, "f": 0.1})
        session_id = "../weird id/ñ.jsonl"
        backend.append(info(session_id), log.events, durable=True)

        loaded = backend.load(session_id)
        assert loaded is not None
        assert dicts(loaded.stored.events) == dicts(log.events)
        assert [h.id for h in backend.headers()] == [session_id]

    # -- concurrency -------------------------------------------------------------------------

    def test_sessions_written_concurrently_from_several_instances(
        self, open_backend: Opener
    ) -> None:
        backends = [open_backend() for _ in range(4)]
        logs = {f"c{i}": LogBuilder() for i in range(8)}
        for log in logs.values():
            for n in range(5):
                log.turn(f"prompt {n}")
        errors: list[BaseException] = []

        def write(backend: SessionBackend, session_id: str) -> None:
            try:
                events, done = logs[session_id].events, 0
                for end in range(10, len(events) + 10, 10):
                    backend.append(info(session_id), events[done:end], durable=False)
                    done = min(end, len(events))
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [
            threading.Thread(target=write, args=(backends[i % 4], session_id))
            for i, session_id in enumerate(logs)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        assert not errors, [f"{type(e).__name__}: {e}" for e in errors]
        reader = open_backend()
        for session_id, log in logs.items():
            loaded = reader.load(session_id)
            assert loaded is not None
            assert dicts(loaded.stored.events) == dicts(log.events)

    # -- through a harness -------------------------------------------------------------------

    async def test_b40_resume_continues_turns_seq_and_history(self, open_backend: Opener) -> None:
        first = ScriptedModel([text("one"), text("two")])
        plugin = PersistencePlugin(backend=open_backend())
        async with scripted_harness(first, plugins=[plugin], load_entry_points=False) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            with anyio.fail_after(10):
                await run_turn(agent, "first")
                await run_turn(agent, "second")
            session_id, live = agent.session.id, list(agent.session.history)
            logged = len(agent.session.events)
        plugin.close()

        second = ScriptedModel([text("three")])
        plugin = PersistencePlugin(backend=open_backend())
        async with scripted_harness(second, plugins=[plugin], load_entry_points=False) as h:
            resumed = await h.agents.resume("a", session_id, options={"model": "scripted"})
            assert list(resumed.session.history) == live
            with anyio.fail_after(10):
                events = await run_turn(resumed, "third")
        plugin.close()

        assert events[0].seq == logged
        assert events[0].data == {"turn": 3}
        assert second.requests[0].messages == (*live, UserMessage(content="third"))
        stored = open_backend().load(session_id)
        assert stored is not None
        assert stored.closers == 0
        seqs = [e.seq for e in stored.stored.events]
        assert seqs == list(range(len(seqs)))
        assert len(seqs) == logged + len(events)
        assert check_invariants(stored.stored.events) == []
