"""A tool's number arguments refuse JSON booleans. Arguments were validated in
pydantic's lax mode, so ``bash(timeout=true)`` ran with a 1 s timeout (``true`` taken
for 1). Numbers sent as text (``"5"``), which small models send, are still taken."""

from __future__ import annotations

import json
from typing import Annotated, Any

import pytest
from pydantic import Field

from dsh import ToolCall
from dsh.builtin_tools import builtin_tools
from dsh.tools import Tool, ToolRegistry, tool


@tool
def numbers(
    count: int = 1,
    ratio: float = 1.0,
    limit: int | None = None,
    sizes: list[int] | None = None,
    weights: dict[str, float] | None = None,
    at_least: Annotated[int, Field(ge=0)] = 0,
    flag_or_count: bool | int = 0,
) -> str:
    "Show the numbers."
    return repr((count, ratio, limit, sizes, weights, at_least, flag_or_count))


async def execute(arguments: dict[str, Any], made: Tool = numbers) -> tuple[bool, str]:
    registry = ToolRegistry()
    registry.add("test", made)
    call = ToolCall(id="c1", name=made.name, arguments=json.dumps(arguments))
    result = await registry.execute(call)
    return result.is_error, result.content


@pytest.mark.parametrize(
    ("arguments", "where", "value"),
    [
        ({"count": True}, "count", "true"),
        ({"ratio": False}, "ratio", "false"),
        ({"limit": True}, "limit", "true"),
        ({"sizes": [1, True]}, "sizes.1", "true"),
        ({"weights": {"a": False}}, "weights.a", "false"),
        ({"at_least": True}, "at_least", "true"),
    ],
)
async def test_a_boolean_for_a_number_is_refused_naming_where(
    arguments: dict[str, Any], where: str, value: str
) -> None:
    assert await execute(arguments) == (
        True,
        f"invalid arguments for 'numbers': {where}: Input should be a number, not the "
        f"boolean {value}",
    )


async def test_numbers_as_text_and_booleans_where_taken_still_pass() -> None:
    arguments = {"count": "5", "ratio": "0.5", "limit": 3, "sizes": ["2"], "flag_or_count": True}
    assert await execute(arguments) == (False, "(5, 0.5, 3, [2], None, 0, True)")


def test_the_schema_the_model_is_told_is_unchanged() -> None:
    properties = numbers.spec.parameters["properties"]
    assert properties["count"] == {"default": 1, "title": "Count", "type": "integer"}
    assert properties["at_least"]["minimum"] == 0
    assert properties["limit"]["anyOf"] == [{"type": "integer"}, {"type": "null"}]


async def test_bash_timeout_true_is_refused() -> None:
    bash = next(made for made in builtin_tools() if made.name == "bash")
    is_error, said = await execute({"command": "true", "timeout": True}, bash)
    assert is_error
    assert said == (
        "invalid arguments for 'bash': timeout: Input should be a number, not the boolean true"
    )
