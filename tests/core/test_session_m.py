"""Session, history view and store details the numbered behaviours leave open: each test
here fails on a concrete mutant of ``dsh.session`` that the other tests let through."""

from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import ValidationError

from dsh.errors import DshError, EventDataError
from dsh.messages import Message, UserMessage
from dsh.session import CORE_REDUCERS, Session, SessionEvent, SessionStore


def test_events_are_equal_only_when_type_seq_time_and_data_all_match() -> None:
    base = SessionEvent("user/message", 0, 1.0, {"content": "a"})
    assert base == SessionEvent("user/message", 0, 1.0, {"content": "a"}, value=object())
    assert base != SessionEvent("user/message", 0, 1.0, {"content": "b"})
    assert base != SessionEvent("user/message", 0, 2.0, {"content": "a"})
    assert base != SessionEvent("user/message", 1, 1.0, {"content": "a"})
    assert base != SessionEvent("steering/message", 0, 1.0, {"content": "a"})
    assert (base == {"type": "user/message"}) is False


def test_an_event_round_trips_through_its_dict_and_json() -> None:
    event = SessionEvent("tool/call", 3, 12.5, {"id": "c", "arguments": "{}"})
    assert event.to_dict() == {
        "type": "tool/call",
        "seq": 3,
        "time": 12.5,
        "data": {"id": "c", "arguments": "{}"},
    }
    assert SessionEvent.from_dict(event.to_dict()) == event
    assert event.to_json_bytes() == event.to_json().encode()


def test_an_empty_history_equals_no_string() -> None:
    empty = Session("s").history
    assert empty == []
    assert (empty == "") is False
    assert empty != ""


def test_a_stored_tool_result_with_a_wrong_type_in_any_field_is_refused_naming_it() -> None:
    good = {"call_id": "c", "name": "add", "content": "3", "is_error": False}
    assert len(Session("s", [SessionEvent("tool/result", 0, 0.0, good)]).history) == 1
    for field, wrong in (("call_id", 1), ("name", None), ("content", 3), ("is_error", "maybe")):
        event = SessionEvent("tool/result", 0, 0.0, {**good, field: wrong})
        with pytest.raises(ValidationError, match=field):
            Session("s", [event])


def test_a_stored_log_whose_seq_is_not_its_index_is_refused() -> None:
    events = [
        SessionEvent("turn/start", 0, 0.0, {"turn": 1}),
        SessionEvent("user/message", 2, 0.0, {"content": "hi"}),
    ]
    with pytest.raises(DshError, match="'user/message' has seq 2, expected 1"):
        Session("s", events)
    with pytest.raises(DshError, match="has seq 1, expected 0"):
        Session("s", [SessionEvent("turn/start", 1, 0.0, {"turn": 1})])


@pytest.mark.parametrize(
    ("method", "kind"),
    [("_append", "user/message"), ("append", "notes/said"), ("emit", "notes/said")],
)
async def test_data_that_is_not_lossless_json_never_enters_the_log(method: str, kind: str) -> None:
    session = Session("s")
    with pytest.raises(EventDataError):
        getattr(session, method)(kind, {"content": "x", "score": math.nan})
    with pytest.raises(EventDataError):
        getattr(session, method)(kind, {"content": ("a", "b")})
    assert list(session.events) == []
    assert list(session.history) == []
    logged = getattr(session, method)(kind, {"content": "fine"})
    if method == "emit":
        await logged
    assert [e.seq for e in session.events] == [0]


def redact_first(history: list[Message], event: SessionEvent) -> list[Message]:
    return [UserMessage(content="(redacted)"), *history[1:]]


async def test_emit_lets_a_reducer_replace_the_history_like_append_does() -> None:
    seen: list[int] = []
    session = Session(
        "s",
        reducers={**CORE_REDUCERS, "test/redact": redact_first},
        observer=lambda s, e: seen.append(e.seq),
    )
    session._record("user/message", {"content": "secret"})
    session._record("user/message", {"content": "two"})
    before = session.history
    await session.emit("test/redact", {})
    assert [m.content for m in session.history] == ["(redacted)", "two"]
    assert [m.content for m in before] == ["secret", "two"]
    assert seen == [0, 1, 2]


def test_a_new_store_observer_reaches_the_live_sessions_and_none_silences_them() -> None:
    seen: list[str] = []
    store = SessionStore()
    live = store.enter(store.prepare("live"))
    store.observer = lambda session, event: seen.append(f"{session.id} {event.type}")
    live._record("user/message", {"content": "hi"})
    store.observer = None
    live._record("user/message", {"content": "unheard"})
    assert seen == ["live user/message"]
    assert live.observer is None


def test_a_removed_session_is_no_longer_live_and_cannot_be_removed_twice() -> None:
    store = SessionStore()
    session = store.enter(store.prepare("s"))
    assert store.get("s") is session
    assert store.list() == [session]
    assert store.remove(session) is True
    assert store.get("s") is None
    assert store.list() == []
    assert store.remove(session) is False
    assert store.enter(store.prepare("s")) is not session  # the id is free again


def test_prepared_sessions_get_the_stores_reducers_meta_and_creation_time() -> None:
    store = SessionStore(reducers={**CORE_REDUCERS, "test/redact": redact_first})
    meta: dict[str, Any] = {"agent": "a"}
    events = [
        SessionEvent("user/message", 0, 0.0, {"content": "secret"}),
        SessionEvent("test/redact", 1, 0.0, {}),
    ]
    session = store.prepare("s", events, meta=meta, created=7.5)
    assert session.meta == {"agent": "a"}
    assert session.created == 7.5
    assert [m.content for m in session.history] == ["(redacted)"]
    assert store.get("s") is None


def test_a_fork_carries_the_whole_log_of_the_turns_it_keeps() -> None:
    source = Session("src")
    for number in (1, 2):
        source._append("turn/start", {"turn": number})
        source._append("user/message", {"content": f"prompt {number}"})
        source._append("step/start", {"turn": number, "step": 1})
        source._append("step/end", {"step": 1})
        source._append("turn/end", {"turn": number, "reason": "completed"})
    fork = SessionStore().fork(source, "copy", 1)
    assert [e.type for e in fork.events] == [
        "turn/start",
        "user/message",
        "step/start",
        "step/end",
        "turn/end",
    ]
    assert fork.meta["seed_length"] == len(fork.events) == 5
    whole = SessionStore().fork(source, "all", 2)
    assert list(whole.events) == list(source.events)
