"""The conformance checks of the load rules (docs/persistence.md, "Loading: the repair
rules"): what a crash leaves (a torn or lost end, an open turn) is repaired on load, and
what a crash cannot leave (a hole, an intact event after a bad one) is corruption, said
with where it is and left as found."""

from __future__ import annotations

import pytest

from dsh.session import Session
from dsh.testing import check_invariants
from dsh_persistence._backend import SessionBackend, StoredTail
from dsh_persistence._errors import PersistenceError, SessionCorruptError, SessionFormatError
from dsh_persistence._records import OUTCOME_UNKNOWN
from dsh_persistence.testing._contract_support import (
    Opener,
    dicts,
    info,
    two_turns,
    unanswered_calls,
)
from dsh_persistence.testing._damage import Damage
from dsh_persistence.testing._logs import LogBuilder

__all__ = ["LoadContract"]


class LoadContract:
    """Mixed into ``BackendContract``: its ``backend``, ``open_backend`` and ``damage``
    fixtures."""

    # -- load rules --------------------------------------------------------------------------

    def test_a_torn_last_event_is_ignored_and_replaced(
        self, backend: SessionBackend, damage: Damage, open_backend: Opener
    ) -> None:
        log = two_turns()
        backend.append(info(), log.events[:12], durable=True)
        damage.tear("s1")

        loaded = open_backend().load("s1")
        assert loaded is not None
        assert loaded.kept == 11
        assert loaded.dropped == 1
        assert dicts(loaded.stored.events[:11]) == dicts(log.events[:11])
        assert check_invariants(loaded.stored.events) == []
        writer = open_backend()
        writer.append(info(), loaded.stored.events[11:], durable=True)
        again = open_backend().load("s1")
        assert again is not None
        assert (again.dropped, again.closers) == (0, 0)
        assert dicts(again.stored.events) == dicts(loaded.stored.events)

    @pytest.mark.parametrize(
        ("cut", "expected"),
        [
            (1, ["turn/end"]),
            (5, ["assistant/message", "step/end", "turn/end"]),  # the text streamed kept
            (6, ["tool/call", "tool/result", "step/end", "turn/end"]),
            (7, ["tool/result", "step/end", "turn/end"]),
            (9, ["turn/end"]),
        ],
        ids=["no-step", "streaming", "call-not-logged", "call-logged", "between-steps"],
    )
    def test_an_interrupted_turn_is_closed(
        self, backend: SessionBackend, cut: int, expected: list[str]
    ) -> None:
        log = LogBuilder()
        log.turn("first", calls=())
        done = len(log.events)
        log.turn("second")  # turn/start, user, step/start, 2 chunks, message, call, result...
        backend.append(info(), log.events[: done + cut], durable=True)

        loaded = backend.load("s1")
        assert loaded is not None
        assert loaded.kept == done + cut
        closers = loaded.stored.events[done + cut :]
        assert [e.type for e in closers] == expected
        assert [e.seq for e in closers] == list(range(done + cut, done + cut + len(expected)))
        assert closers[-1].data["turn"] == 2
        assert closers[-1].data["reason"] == "interrupted"
        results = [e.data for e in closers if e.type == "tool/result"]
        assert all(r["is_error"] for r in results)
        if "tool/call" not in expected and results:
            assert results[0]["content"] == OUTCOME_UNKNOWN
        assert check_invariants(loaded.stored.events) == []
        assert unanswered_calls(Session("replay", loaded.stored.events).history) == set()

    def test_loading_writes_nothing_and_the_next_append_stores_the_closers(
        self, backend: SessionBackend, open_backend: Opener
    ) -> None:
        log = two_turns()
        backend.append(info(), log.events[:7], durable=True)
        first, second = backend.load("s1"), open_backend().load("s1")
        assert first is not None
        assert second is not None
        assert dicts(first.stored.events) == dicts(second.stored.events)
        assert (tail := backend.tail("s1")) is not None
        assert tail.next_seq == 7

        resumed = LogBuilder()
        resumed.events = list(first.stored.events)
        resumed.turns = 1
        resumed.turn("again", calls=())
        backend.append(info(), resumed.events[7:], durable=True)
        stored = open_backend().load("s1")
        assert stored is not None
        assert stored.closers == 0
        assert dicts(stored.stored.events) == dicts(resumed.events)
        assert check_invariants(stored.stored.events) == []

    def test_a_hole_before_the_last_turn_end_is_corruption(
        self, backend: SessionBackend, damage: Damage, open_backend: Opener
    ) -> None:
        log = two_turns()
        backend.append(info(), log.events, durable=True)
        damage.drop("s1", 4)

        for _ in range(2):  # reported again: nothing was rewritten
            with pytest.raises(SessionCorruptError) as caught:
                open_backend().load("s1")
            message = str(caught.value)
            assert "seq" in message
            assert "corrupt" in message

    @pytest.mark.parametrize("hole", [3, 4], ids=["mid-turn", "before-the-last-event"])
    def test_a_hole_in_the_unfinished_turn_is_corruption(
        self, backend: SessionBackend, damage: Damage, open_backend: Opener, hole: int
    ) -> None:
        """A crash loses only the end of a log (a torn last line, a transaction that did
        not land): an event missing with intact events after it means the store was
        damaged or edited. Loading says where and what is missing, and nothing is cut
        off: a writer's next append is refused too, so the next load says it again."""
        log = two_turns()
        done = next(e.seq for e in log.events if e.type == "turn/end") + 1
        backend.append(info(), log.events[: done + 6], durable=True)
        damage.drop("s1", done + hole)

        for _ in range(2):  # reported again: nothing was rewritten
            with pytest.raises(SessionCorruptError) as caught:
                open_backend().load("s1")
            message = str(caught.value)
            assert f"event seq {done + hole} is missing" in message
            assert "s1" in message
            assert "corrupt" in message
            writer = open_backend()
            with pytest.raises(SessionCorruptError):
                writer.tail("s1")
            with pytest.raises(PersistenceError):  # the store stays as found
                writer.append(info(), log.events[done + hole :], durable=True)

    @pytest.mark.parametrize("lost", [1, 2], ids=["last-event", "last-two-events"])
    def test_lost_last_events_of_the_unfinished_turn_are_the_cut_off_tail(
        self, backend: SessionBackend, damage: Damage, open_backend: Opener, lost: int
    ) -> None:
        """What a crash does lose where it can (``Damage.lose_end``: a file's end written
        without an fsync), with nothing after it: the turn is closed after what is
        left, and a writer continues from there."""
        log = two_turns()
        done = next(e.seq for e in log.events if e.type == "turn/end") + 1
        backend.append(info(), log.events[: done + 6], durable=True)
        damage.lose_end("s1", lost)
        kept = done + 6 - lost

        loaded = open_backend().load("s1")
        assert loaded is not None
        assert (loaded.kept, loaded.dropped) == (kept, 0)
        assert check_invariants(loaded.stored.events) == []
        assert loaded.stored.events[-1].data["reason"] == "interrupted"
        writer = open_backend()  # continues the kept prefix
        assert writer.tail("s1") == StoredTail(kept, log.events[kept - 1])
        writer.append(info(), loaded.stored.events[kept:], durable=True)
        again = open_backend().load("s1")
        assert again is not None
        assert (again.dropped, again.closers) == (0, 0)
        assert dicts(again.stored.events) == dicts(loaded.stored.events)

    def test_b43_a_newer_format_is_refused_with_a_message_saying_so(
        self, backend: SessionBackend, damage: Damage, open_backend: Opener
    ) -> None:
        backend.append(info(), two_turns().events, durable=True)
        damage.make_newer("s1")

        with pytest.raises(SessionFormatError, match="newer"):
            open_backend().load("s1")

    # -- a resume's tail ---------------------------------------------------------------------

    def test_a_resume_does_not_continue_another_session_stored_under_its_id(
        self, open_backend: Opener
    ) -> None:
        """A process loads a session (a resume) and claims it; meanwhile another deletes
        it and stores another one of the same id and length. The tail the claim checks
        is the one stored now, not the one the load read: the resume's log does not
        continue it (``SessionWriter`` refuses to append to it)."""
        resumer, other = open_backend(), open_backend()
        old = LogBuilder(start=1_700_000_000.0)
        old.turn("the old prompt")
        new = LogBuilder(start=1_800_000_000.0)
        new.turn("the new session's prompt")
        other.append(info(), old.events, durable=True)
        assert resumer.load("s1") is not None
        assert other.delete("s1")
        other.append(info(), new.events, durable=True)

        assert resumer.claim("s1")
        assert resumer.tail("s1") == StoredTail(len(new.events), new.events[-1])
        assert resumer.tail("s1") == open_backend().tail("s1")
