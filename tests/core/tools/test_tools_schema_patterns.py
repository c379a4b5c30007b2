"""A schema tool whose schema has patterns (``pattern``, ``patternProperties``): a check
may take up to ``PATTERN_SECONDS``, so the executor runs it off the event loop, and its
result is kept, so a policy plugin's ``read_arguments`` and the executor's of the same
call check the arguments once. A schema without patterns is checked on the loop, as
every tool's arguments are, and keeps nothing. ``format`` is an annotation: not checked."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from dsh import ToolCall, _schema_tool
from dsh.tools import ArgumentsError, ToolRegistry, read_arguments, schema_tool

CATASTROPHIC = "(a|aa)+$"
SLOW_TEXT = "a" * 33 + "!"


async def echo(arguments: dict[str, Any]) -> str:
    return f"got {arguments}"


def _object(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[tuple[dict[str, Any], int]]:
    """Each check of a schema tool's arguments: what was checked, on which thread."""
    seen: list[tuple[dict[str, Any], int]] = []
    original = _schema_tool.problems

    def counted(validator: Any, arguments: dict[str, Any]) -> list[str]:
        seen.append((arguments, threading.get_ident()))
        return original(validator, arguments)

    monkeypatch.setattr(_schema_tool, "problems", counted)
    return seen


def _call(arguments: str) -> ToolCall:
    return ToolCall(id="c1", name="t", arguments=arguments)


def test_the_same_arguments_read_twice_are_checked_once(
    checks: list[tuple[dict[str, Any], int]],
) -> None:
    tool = schema_tool("t", "A tool.", _object(v={"type": "string", "pattern": "^a"}), echo)
    for _ in range(2):  # a policy plugin's read, then the executor's
        assert read_arguments(tool, _call('{"v": "ab"}')).arguments == {"v": "ab"}  # type: ignore[attr-defined]
    assert len(checks) == 1
    for _ in range(2):  # a refusal too, said the same each time
        with pytest.raises(ArgumentsError) as refused:
            read_arguments(tool, _call('{"v": "b"}'))
        assert refused.value.detail == 'v: "b" does not match the pattern "^a"'
    assert len(checks) == 2
    # what differs is checked: another value, 1.0 for 1, the same keys in another order
    for sent in (
        '{"v": "ac"}',
        '{"v": "ac", "w": 1}',
        '{"v": "ac", "w": 1.0}',
        '{"w": 1, "v": "ac"}',
    ):
        read_arguments(tool, _call(sent))
    assert len(checks) == 6
    # each tool keeps its own
    other = schema_tool("t", "A tool.", _object(v={"type": "string", "pattern": "^b"}), echo)
    with pytest.raises(ArgumentsError):
        read_arguments(other, _call('{"v": "ab"}'))


def test_nan_and_infinity_are_not_kept_as_null() -> None:
    """A model's JSON may hold ``NaN`` or ``Infinity`` (read as floats), which dsh's
    own JSON encoding (``dsh._json.encode``: lossless event data, which never holds
    them) writes as ``null``: kept by that text, ``{"v": NaN}`` took the result of
    ``{"v": null}`` checked before it, and the other way round."""
    tool = schema_tool("t", "A tool.", _object(v={"type": "null", "pattern": "^a"}), echo)
    for sent in ("NaN", "Infinity", "-Infinity"):
        assert read_arguments(tool, _call('{"v": null}')).arguments == {"v": None}  # type: ignore[attr-defined]
        with pytest.raises(ArgumentsError) as refused:
            read_arguments(tool, _call(f'{{"v": {sent}}}'))
        assert refused.value.detail.endswith("is not of type 'null'")


def test_a_pattern_not_decided_in_time_is_refused_once_for_both_reads(
    monkeypatch: pytest.MonkeyPatch, checks: list[tuple[dict[str, Any], int]]
) -> None:
    from dsh import _json_schema

    monkeypatch.setattr(_json_schema, "PATTERN_SECONDS", 0.05)
    tool = schema_tool("t", "A tool.", _object(v={"type": "string", "pattern": CATASTROPHIC}), echo)
    said = []
    for _ in range(2):
        with pytest.raises(ArgumentsError) as refused:
            read_arguments(tool, _call(f'{{"v": "{SLOW_TEXT}"}}'))
        said.append(refused.value.detail)
    assert len(checks) == 1
    assert said[0] == said[1]
    assert said[0].endswith("in time (0.05 s for all of a call's patterns)")


def test_a_tool_keeps_a_few_results_only(checks: list[tuple[dict[str, Any], int]]) -> None:
    tool = schema_tool("t", "A tool.", _object(v={"type": "string", "pattern": "^a"}), echo)
    for n in range(100):
        read_arguments(tool, _call(f'{{"v": "a{n}"}}'))
    read_arguments(tool, _call('{"v": "a0"}'))  # long since dropped: checked again
    assert len(checks) == 101


@pytest.mark.parametrize(
    "schema",
    [
        _object(v={"type": "string", "pattern": "^a"}),
        {"type": "object", "patternProperties": {"^a": {"type": "string"}}},
        {
            "type": "object",
            "properties": {"v": {"$ref": "#/$defs/v"}},
            "$defs": {"v": {"pattern": "^a"}},
        },
    ],
)
async def test_the_executor_checks_patterns_off_the_event_loop(
    schema: dict[str, Any], checks: list[tuple[dict[str, Any], int]]
) -> None:
    registry = ToolRegistry()
    registry.add("bridge", schema_tool("t", "A tool.", schema, echo))
    result = await registry.execute(_call('{"v": "ab"}'))
    assert (result.is_error, result.content) == (False, "got {'v': 'ab'}")
    assert [thread for _, thread in checks] != [threading.get_ident()]
    assert len(checks) == 1
    refused = await registry.execute(_call('{"v": "b", "a": 1}'))
    assert refused.is_error
    assert refused.content.startswith("invalid arguments for 't': ")


async def test_a_schema_without_patterns_is_checked_on_the_loop_and_kept_not(
    checks: list[tuple[dict[str, Any], int]],
) -> None:
    registry = ToolRegistry()
    # "pattern" as a property's name is not a pattern
    schema = _object(pattern={"type": "string"}, v={"type": "string", "minLength": 1})
    registry.add("bridge", schema_tool("t", "A tool.", schema, echo))
    for _ in range(2):
        result = await registry.execute(_call('{"v": "ab"}'))
        assert (result.is_error, result.content) == (False, "got {'v': 'ab'}")
    assert [thread for _, thread in checks] == [threading.get_ident()] * 2


async def test_format_is_told_to_the_model_and_not_checked() -> None:
    schema = _object(
        mail={"type": "string", "format": "email"},
        when={"type": "string", "format": "date-time"},
        id={"type": "string", "format": "uuid"},
    )
    made = schema_tool("t", "A tool.", schema, echo)
    assert made.spec.parameters == schema
    registry = ToolRegistry()
    registry.add("bridge", made)
    sent = '{"mail": "nobody", "when": "yesterday", "id": "1"}'
    result = await registry.execute(_call(sent))
    assert (result.is_error, result.content) == (
        False,
        "got {'mail': 'nobody', 'when': 'yesterday', 'id': '1'}",
    )
