"""The walk that checks a plugin event's data and copies it into the log
(``dsh._json.checked_copy``, behind ``Session.emit`` and ``Session.append``): it copies a
dict or list whole first and then checks and replaces only its items, so each value the
copy keeps as it is must be one that passed the check, each container in the copy must
be a new one (an empty one too), and the depth limit holds for empty containers."""

from __future__ import annotations

import enum
from typing import Any

import pytest

from dsh import EventDataError
from dsh._json import MAX_DEPTH, decode
from dsh.session import Session


class _Str(str):
    pass


class _Number(enum.IntEnum):
    ONE = 1


# a flat dict of what the fast path keeps (str, bool, None, 64-bit ints) and one value
# that is not lossless JSON, in first, middle and last place
_REFUSED: list[tuple[Any, str]] = [
    (float("nan"), "data.bad"),
    (float("inf"), "data.bad"),
    ({1, 2}, "data.bad"),
    ((1, 2), "data.bad"),
    (_Str("x"), "data.bad"),
    (_Number.ONE, "data.bad"),
    (b"x", "data.bad"),
    ([1, (2,)], "data.bad[1]"),
    ([{"a": {"b": float("-inf")}}], "data.bad[0].a.b"),
    ({"a": [set()]}, "data.bad.a[0]"),
]


@pytest.mark.parametrize("place", ["first", "middle", "last"])
@pytest.mark.parametrize(("bad", "path"), _REFUSED)
@pytest.mark.parametrize("way", ["append", "emit"])
def test_a_value_that_is_not_lossless_json_is_refused_among_plain_ones(
    way: str, bad: Any, path: str, place: str
) -> None:
    plain: dict[str, Any] = {"tool": "add", "turn": 3, "ok": True, "rule": None, "big": 2**63}
    items = list(plain.items())
    at = {"first": 0, "middle": 2, "last": len(items)}[place]
    data = dict([*items[:at], ("bad", bad), *items[at:]])
    session = Session("s")
    with pytest.raises(EventDataError) as caught:
        getattr(session, way)("note/x", data)
    assert caught.value.path == path
    assert session.events == []


@pytest.mark.parametrize("way", ["append", "emit"])
def test_a_key_that_is_not_a_str_is_refused_in_a_nested_dict_too(way: str) -> None:
    session = Session("s")
    for data, path in [
        ({"a": "x", 1: "y"}, "data"),
        ({"a": "x", _Str("b"): "y"}, "data"),
        ({"a": [{"b": 1, None: 2}]}, "data.a[0]"),
    ]:
        with pytest.raises(EventDataError) as caught:
            getattr(session, way)("note/x", data)
        assert caught.value.path == path
        assert "not a str" in caught.value.reason
    assert session.events == []


async def test_every_container_logged_is_a_new_one_empty_ones_too() -> None:
    session = Session("s")
    part: dict[str, Any] = {"kind": "tool", "value": "add", "rule": None}
    data: dict[str, Any] = {
        "remember": [],
        "extra": {},
        "parts": [part, []],
        "deep": {"list": [[], {}, [1, 2.5]]},
    }
    await session.emit("note/x", data)
    logged = session.events[0].data
    data["remember"].append("later")
    data["extra"]["k"] = "later"
    part["value"] = "later"
    data["parts"][1].append(float("nan"))
    data["deep"]["list"][0].append(1)
    data["deep"]["list"][1]["k"] = 2
    data["deep"]["list"][2][1] = "later"
    assert logged == {
        "remember": [],
        "extra": {},
        "parts": [{"kind": "tool", "value": "add", "rule": None}, []],
        "deep": {"list": [[], {}, [1, 2.5]]},
    }
    assert decode(session.events[0].to_json_bytes())["data"] == logged


async def test_data_with_an_int_beyond_64_bits_is_copied_too() -> None:
    session = Session("s")
    data: dict[str, Any] = {"n": 2**70, "list": [], "dict": {"a": [1]}}
    await session.emit("note/x", data)  # such an int takes the slow walk, then a copy
    data["list"].append(1)
    data["dict"]["a"].append(2)
    assert session.events[0].data == {"n": 2**70, "list": [], "dict": {"a": [1]}}


async def test_the_same_dicts_emitted_twice_are_two_copies() -> None:
    session = Session("s")
    shared = {"kind": "tool"}
    await session.emit("note/x", {"parts": [shared]})
    await session.emit("note/x", {"parts": [shared]})
    first, second = (event.data["parts"][0] for event in session.events)
    assert first is not second and first is not shared and second is not shared


def _nested(levels: int, innermost: Any) -> dict[str, Any]:
    """``levels`` dicts, each holding the next; the last holds ``innermost``."""
    data: dict[str, Any] = {"v": innermost}
    for _ in range(levels - 1):
        data = {"v": data}
    return data


@pytest.mark.parametrize("innermost", [[], {}], ids=["list", "dict"])
@pytest.mark.parametrize("way", ["append", "emit"])
async def test_an_empty_container_counts_towards_the_depth_limit(way: str, innermost: Any) -> None:
    session = Session("s")
    with pytest.raises(EventDataError) as caught:
        getattr(session, way)("note/deep", _nested(MAX_DEPTH, innermost))
    assert f"more than {MAX_DEPTH} lists and dicts deep" in caught.value.reason
    logged = getattr(session, way)("note/deep", _nested(MAX_DEPTH - 1, innermost))
    if way == "emit":
        await logged
    (event,) = session.events
    assert decode(event.to_json_bytes())["data"] == _nested(MAX_DEPTH - 1, innermost)
