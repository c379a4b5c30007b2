"""What ``Session.emit`` and ``Session.append`` let into the log (review of the session
log): only a dict of lossless JSON that can be read back, copied so the caller's later
changes never reach the log, and never one of the core's event types."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from dsh import EventDataError, EventTypeError
from dsh._json import MAX_DEPTH, decode
from dsh.session import Session, SessionEvent


def _digits(count: int) -> int:
    return 10 ** (count - 1)


@pytest.mark.parametrize("way", ["append", "emit"])
def test_an_int_too_long_to_read_back_is_refused(way: str) -> None:
    limit = sys.get_int_max_str_digits()
    session = Session("s")
    with pytest.raises(EventDataError) as caught:
        getattr(session, way)("note/big", {"n": [_digits(limit + 1)]})
    assert caught.value.path == "data.n[0]"
    assert f"more than {limit} digits" in caught.value.reason
    assert len(session.events) == 0
    event = session.append("note/big", {"n": _digits(limit)})  # the longest that reads back
    assert decode(event.to_json_bytes())["data"]["n"] == _digits(limit)


def test_the_repr_of_an_event_holding_such_an_int_does_not_raise() -> None:
    event = SessionEvent("note/big", 0, 0.0, {"n": _digits(sys.get_int_max_str_digits() + 1)})
    assert "note/big" in repr(event)


@pytest.mark.parametrize("data", [[1, 2], None, "text", 5])
@pytest.mark.parametrize("way", ["append", "emit"])
def test_event_data_that_is_not_a_dict_is_refused(way: str, data: Any) -> None:
    session = Session("s")
    with pytest.raises(EventDataError) as caught:
        getattr(session, way)("note/x", data)
    assert caught.value.path == "data"
    assert "not a dict" in caught.value.reason
    assert session.events == []


async def test_changing_data_after_emit_changes_nothing_logged() -> None:
    session = Session("s")
    data: dict[str, Any] = {"a": [1, {"b": "before"}]}
    await session.emit("note/x", data)
    kept = session.append("note/y", data)
    data["a"][0] = float("nan")
    data["a"][1]["b"] = "after"
    data["c"] = {1: set()}
    for event in session.events:
        assert event.data == {"a": [1, {"b": "before"}]}
        assert decode(event.to_json_bytes())["data"] == event.data
    assert kept.data is not data


async def test_the_core_s_own_events_are_not_copied() -> None:
    session = Session("s")
    data = {"turn": 1}
    await session._record("turn/start", data)
    assert session.events[0].data is data


@pytest.mark.parametrize("kind", ["turn/start", "turn/end", "user/message", "tool/result"])
def test_append_refuses_the_core_s_event_types(kind: str) -> None:
    session = Session("s")
    with pytest.raises(EventTypeError):
        session.append(kind, {"turn": 1, "reason": "nope"})
    assert session.events == []


def test_emit_has_no_way_to_skip_the_check() -> None:
    session = Session("s")
    with pytest.raises(TypeError):
        session.emit("note/x", {"v": float("nan")}, checked=True)  # type: ignore[call-arg]
    assert session.events == []


def _nested(levels: int) -> dict[str, Any]:
    data: dict[str, Any] = {}
    inner = data
    for _ in range(levels - 1):
        inner["v"] = {}
        inner = inner["v"]
    return data


@pytest.mark.parametrize("levels", [MAX_DEPTH, 990])
def test_data_nested_deeper_than_the_limit_is_refused_and_what_passes_is_written(
    levels: int,
) -> None:
    session = Session("s")
    if levels > MAX_DEPTH:
        with pytest.raises(EventDataError) as caught:
            session.append("note/deep", _nested(levels))
        assert f"more than {MAX_DEPTH} lists and dicts deep" in caught.value.reason
        assert caught.value.path.startswith("data.v.v.v")
        return
    event = session.append("note/deep", _nested(levels))
    assert decode(event.to_json_bytes())["data"] == _nested(levels)
