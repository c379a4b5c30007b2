"""dsh's one JSON encoding, beyond test_json.py: what a refusal says (event type, path,
reason), values that only look like JSON's own (subclasses of dict, str and int), the
compact ASCII-escaped text of strings with lone surrogates, and reading bad text."""

from __future__ import annotations

import collections
import datetime
import enum
import math
from typing import Any

import pytest

from dsh import EventDataError
from dsh._json import decode, encode, encode_any
from dsh.session import Session


class Colour(enum.StrEnum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


def refusal(data: dict[str, Any], event_type: str = "note/x") -> EventDataError:
    session = Session("s")
    with pytest.raises(EventDataError) as caught:
        session.append(event_type, data)
    assert session.events == []
    return caught.value


# -- 38: a refusal names the event type, where the value is and why ---------------------------


@pytest.mark.parametrize(
    ("data", "path", "reason"),
    [
        # every JSON value before the bad one is passed over, whatever its type
        (
            {"ok": True, "name": "x", "none": None, "n": 1, "f": 1.5, "bad": math.nan},
            "data.bad",
            "nan is not representable in JSON",
        ),
        ({"a": [1, {"b": -math.inf}]}, "data.a[1].b", "-inf is not representable in JSON"),
        ({"a": [[0], [1, 2, math.inf]]}, "data.a[1][2]", "inf is not representable in JSON"),
        ({"k": {"ok": 1, 3: "x"}}, "data.k", "key 3 is a int, not a str"),
        ({"items": [0, {1, 2}]}, "data.items[1]", "set values are not lossless JSON (got {1, 2})"),
        (
            {"when": [datetime.date(2024, 1, 2)]},
            "data.when[0]",
            "date values are not lossless JSON (got datetime.date(2024, 1, 2))",
        ),
        # a key that would read as more path is quoted
        ({"a.b": {"x[0]": math.nan}}, 'data["a.b"]["x[0]"]', "nan is not representable in JSON"),
        ({"tool-name": {"": math.nan}}, 'data.tool-name[""]', "nan is not representable in JSON"),
    ],
    ids=["after-scalars", "list-then-dict", "lists", "int-key", "set", "date", "dots", "empty"],
)
def test_b38_the_refusal_names_the_event_type_the_path_and_the_reason(
    data: dict[str, Any], path: str, reason: str
) -> None:
    error = refusal(data, "plugin/note")
    assert (error.event_type, error.path, error.reason) == ("plugin/note", path, reason)
    assert str(error) == f"event 'plugin/note' data at {path}: {reason}"


def test_b38_a_refused_value_is_shown_in_at_most_80_characters() -> None:
    value = tuple(range(100))
    error = refusal({"v": value})
    assert error.reason == f"tuple values are not lossless JSON (got {repr(value)[:80]})"


@pytest.mark.parametrize(
    ("data", "path", "reason"),
    [
        ({"v": Level.HIGH}, "data.v", "Level values are not lossless JSON (got <Level.HIGH: 3>)"),
        ({"v": [Colour.RED]}, "data.v[0]", "Colour values are not lossless JSON"),
        ({Colour.RED: 1}, "data", "key <Colour.RED: 'red'> is a Colour, not a str"),
        ({"v": collections.OrderedDict(a=1)}, "data.v", "OrderedDict values are not lossless"),
        ({"v": collections.Counter("ab")}, "data.v", "Counter values are not lossless JSON"),
    ],
    ids=["int-enum", "str-enum", "str-enum-key", "ordered-dict", "counter"],
)
def test_b38_subclasses_of_json_types_are_refused(
    data: dict[str, Any], path: str, reason: str
) -> None:
    # they would come back as plain dicts, strs and ints
    error = refusal(data)
    assert error.path == path
    assert error.reason.startswith(reason)


def test_b38_a_value_that_contains_itself_is_refused_naming_where() -> None:
    looped: dict[str, Any] = {"n": 1}
    looped["self"] = looped
    error = refusal({"v": looped})
    assert (error.event_type, error.path, error.reason) == (
        "note/x",
        "data.v.self",
        "the value contains itself",
    )
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    error = refusal({"v": deep})
    assert error.reason == "it nests more than 250 lists and dicts deep"  # refused at 251
    assert error.path == "data.v" + "[0]" * 249


# -- the text -----------------------------------------------------------------------------------


def test_strings_with_lone_surrogates_are_written_compact_with_ascii_escapes() -> None:
    value = {"name": "caf\udce9 é", "n": [1, 2], "m": {"k": None}}
    assert encode(value) == b'{"name":"caf\\udce9 \\u00e9","n":[1,2],"m":{"k":null}}'
    assert decode(encode(value)) == value


def test_a_tool_result_with_a_lone_surrogate_keeps_its_other_values_json_form() -> None:
    # the ASCII-escaping fallback still writes a datetime as ISO text and a set as an array
    when = datetime.datetime(2026, 12, 1, 3, 4, 5, tzinfo=datetime.UTC)
    assert encode_any({"name": "caf\udce9", "when": when, "tags": {1}}) == (
        b'{"name":"caf\\udce9","when":"2026-12-01T03:04:05Z","tags":[1]}'
    )


def test_a_str_holding_a_lone_surrogate_itself_is_read() -> None:
    # not escaped: the surrogate is in the str (pydantic-core cannot read it as UTF-8)
    assert decode('{"name": "caf\udce9"}') == {"name": "caf\udce9"}
    with pytest.raises(ValueError, match="Unterminated string"):
        decode('{"name": "caf\udce9}')


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (b'{"a": ', "EOF while parsing a value at line 1 column 6"),
        (b"", "EOF while parsing a value at line 1 column 0"),
        (b"[1,]", "trailing comma at line 1 column 4"),
        ('{"name": "caf\\udce9"', "at line 1 column 19"),  # the first reader's error
    ],
)
def test_text_that_is_not_json_is_an_error_not_a_value(text: str | bytes, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        decode(text)
