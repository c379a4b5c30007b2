"""Session internals not covered by the numbered behaviours: history snapshots."""

from __future__ import annotations

import itertools
import pickle

import pytest

from dsh.errors import DshError
from dsh.messages import Message, UserMessage
from dsh.session import CORE_REDUCERS, Session, SessionEvent, SessionStore


def test_history_views_are_snapshots_that_slice_like_lists() -> None:
    session = Session("s")
    for index in range(5):
        session._append("user/message", {"content": str(index)})
    view = session.history
    session._append("user/message", {"content": "later"})
    assert len(view) == 5
    assert [m.content for m in view] == ["0", "1", "2", "3", "4"]  # type: ignore[union-attr]
    assert list(view[1:3]) == [UserMessage(content="1"), UserMessage(content="2")]
    assert list(view[-2:]) == [UserMessage(content="3"), UserMessage(content="4")]
    assert list(view[::2]) == [UserMessage(content=c) for c in ("0", "2", "4")]
    assert view[-1] == UserMessage(content="4")
    assert len(session.history) == 6


def test_history_view_slices_backwards_like_a_list() -> None:
    # slice.indices() gives a backward slice to the first message the stop -1, which
    # the list under the view reads as its last item (these came back empty)
    session = Session("s")
    for index in range(3):
        session._append("user/message", {"content": str(index)})
    view = session.history
    session._append("user/message", {"content": "later"})
    assert list(view[::-1]) == list(view)[::-1]
    assert list(view[1::-1]) == list(view)[1::-1]
    bounds = [None, *range(-5, 6)]
    for start, stop, step in itertools.product(bounds, bounds, [None, 1, 2, -1, -2]):
        whole = slice(start, stop, step)
        assert list(view[whole]) == list(view)[whole], whole


def test_history_view_indexes_like_a_list_within_its_own_length() -> None:
    session = Session("s")
    for index in range(3):
        session._append("user/message", {"content": str(index)})
    view = session.history
    session._append("user/message", {"content": "later"})  # the list grows past the view
    assert view[-1] == UserMessage(content="2")
    assert view[-3] == UserMessage(content="0")
    for out_of_range in (len(view), -len(view) - 1):
        with pytest.raises(IndexError):
            view[out_of_range]


def test_history_view_equals_only_sequences_of_the_same_messages() -> None:
    session = Session("s")
    for index in range(2):
        session._append("user/message", {"content": str(index)})
    view = session.history
    messages = [UserMessage(content="0"), UserMessage(content="1")]
    assert view == messages
    assert view == tuple(messages)
    assert (view == messages[:1]) is False
    assert (view == [*messages, UserMessage(content="2")]) is False
    assert view != [UserMessage(content="0"), UserMessage(content="x")]
    assert view != "01"


def test_behaviour_33_entering_a_prepared_session_gives_it_the_stores_current_observer() -> None:
    seen: list[str] = []
    store = SessionStore(observer=lambda session, event: seen.append(f"old {event.type}"))
    session = store.prepare("s")
    store.observer = lambda session, event: seen.append(f"new {event.type}")
    assert store.enter(session) is session
    session._record("user/message", {"content": "hi"})
    assert seen == ["new user/message"]


def finished_turns(session: Session, count: int) -> None:
    for number in range(1, count + 1):
        session._append("turn/start", {"turn": number})
        session._append("user/message", {"content": f"prompt {number}"})
        session._append("turn/end", {"turn": number, "reason": "completed"})


def test_fork_copies_the_log_up_to_the_end_of_the_given_turn() -> None:
    store = SessionStore()
    source = Session("src")
    finished_turns(source, 3)
    fork = store.fork(source, "copy", 2)
    assert fork.id == "copy"
    assert fork.meta == {"parent": "src", "seed_length": 6}
    assert list(fork.events) == list(source.events[:6])
    assert fork.events[-1].data == {"turn": 2, "reason": "completed"}
    assert [m.content for m in fork.history] == ["prompt 1", "prompt 2"]  # type: ignore[union-attr]
    assert store.get("copy") is None  # prepared, not live
    assert store.fork(source, "empty", 0).meta == {"parent": "src", "seed_length": 0}


def test_fork_keeps_the_meta_of_its_source_beside_its_parent() -> None:
    # a resumed fork needs the agent and options its source was made with
    meta = {"agent": "main", "options": {"model": "fast"}, "parent": "older", "seed_length": 2}
    source = Session("src", meta=meta)
    finished_turns(source, 1)
    fork = SessionStore().fork(source, "copy", 1)
    assert fork.meta == {
        "agent": "main",
        "options": {"model": "fast"},
        "parent": "src",
        "seed_length": 3,
    }
    assert source.meta == meta  # the source's own meta is left as it was


def test_fork_refuses_a_turn_that_has_not_finished() -> None:
    source = Session("src")
    source._append("turn/start", {"turn": 1})
    with pytest.raises(DshError, match="'src' has no finished turn 1 to fork at"):
        SessionStore().fork(source, "copy", 1)
    with pytest.raises(DshError, match="'new' has no finished turn 1 to fork at"):
        SessionStore().fork(Session("new"), "copy", 1)


def test_fork_refuses_a_turn_that_has_not_finished_after_earlier_ones() -> None:
    source = Session("src")
    finished_turns(source, 1)
    source._append("turn/start", {"turn": 2})
    with pytest.raises(DshError, match="'src' has no finished turn 2 to fork at"):
        SessionStore().fork(source, "copy", 2)


def test_a_history_view_continues_an_earlier_one_until_a_reducer_replaces_the_history() -> None:
    def redact(history: list[Message], event: SessionEvent) -> list[Message]:
        index = event.data["index"]
        return [*history[:index], UserMessage(content="(redacted)"), *history[index + 1 :]]

    session = Session("s", reducers={**CORE_REDUCERS, "test/redact": redact})
    session._append("user/message", {"content": "one"})
    first = session.history
    session._append("user/message", {"content": "two"})
    second = session.history

    assert second.continues(first)
    assert second.continues(second)
    assert not first.continues(second)  # shorter: not an extension

    session.append("test/redact", {"index": 0})
    third = session.history
    assert [m.content for m in third] == ["(redacted)", "two"]
    assert not third.continues(second)
    assert not third.continues(first)


def test_an_events_json_is_one_line_for_every_reader() -> None:
    """``dsh run --json`` prints ``to_json()`` lines: a reader splitting on Unicode line
    ends (``str.splitlines()``) must still see one event per line (CI operator study)."""
    import json

    text = "a\u2028b\u2029c\x85d\ne"
    line = SessionEvent("user/message", 0, 0.0, {"content": text}).to_json()
    assert line.splitlines() == [line]
    assert json.loads(line)["data"]["content"] == text


def test_session_event_is_named_by_its_public_module() -> None:
    """``SessionEvent`` lives in a private module; pickles and reprs name ``dsh.session``,
    where users import it, so moving the private module breaks neither."""
    session = Session("s")
    event = session._append("user/message", {"content": "hi"})
    assert SessionEvent.__module__ == "dsh.session"
    data = pickle.dumps(event)
    assert b"dsh._event" not in data
    copy = pickle.loads(data)
    assert (copy.type, copy.seq, copy.time, copy.data) == (
        event.type,
        event.seq,
        event.time,
        event.data,
    )
