"""``dsh.tools`` as a tool author and the model meet it: what ``tool()`` builds from a
function, how the executor explains arguments it cannot read (behaviour 17), what the
registry says when a name is taken, and that what the model and the docs are told
(descriptions, limits) is what the built-in tools do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, model_validator

from dsh import DshError, ToolCall
from dsh.builtin_tools import _bash, _files, _search, _text, builtin_tools
from dsh.messages import ToolResult
from dsh.tools import ArgumentsError, Tool, ToolRegistry, read_arguments, tool

DOCS = Path(__file__).parents[3] / "docs" / "tools.md"


class Point(BaseModel):  # annotations in this module are strings (__future__)
    x: int
    y: int


@tool
def shift(point: Point, by: int = 1) -> str:
    "Move a point to the right."
    return f"{point.x + by},{point.y}"


@tool
def show(value: Any) -> str:
    "Show any JSON value as Python sees it."
    return repr(value)


class Span(BaseModel):
    model_config = ConfigDict(extra="forbid")
    start: int
    end: int

    @model_validator(mode="after")
    def ordered(self) -> Span:
        if self.end < self.start:
            raise ValueError("end is before start")
        return self


# a Tool built by hand, whose model checks the arguments as a whole
span = Tool(name="span", description="A span.", arguments=Span, run=lambda start, end: end - start)


async def execute(name: str, arguments: str, *tools: Tool) -> ToolResult:
    registry = ToolRegistry()
    for each in tools or (shift, show, span):
        registry.add("test", each)
    return await registry.execute(ToolCall(id="c1", name=name, arguments=arguments))


# -- what tool() builds --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"), [(3, "3"), ("three", "'three'"), ([1, None], "[1, None]")]
)
async def test_an_any_parameter_takes_any_json_value(value: Any, shown: str) -> None:
    result = await execute("show", json.dumps({"value": value}))
    assert (result.is_error, result.content) == (False, shown)


def test_the_model_is_told_the_description_given_or_the_docstring() -> None:
    @tool(name="shout", description="Say the text loudly.")
    def whisper(text: str) -> str:
        "Say the text quietly."
        return text.upper()

    assert (whisper.name, whisper.description) == ("shout", "Say the text loudly.")
    assert (whisper.spec.name, whisper.spec.description) == ("shout", "Say the text loudly.")
    assert shift.spec.description == "Move a point to the right."
    for built_in in builtin_tools():
        assert built_in.spec.description == built_in.description


# -- arguments the executor cannot read (behaviour 17) ------------------------------------


@pytest.mark.parametrize("arguments", ['{"point": {"x": 1,', '{"point": 1}}', "{'by': 2}"])
async def test_b17_arguments_that_are_not_json_say_where_the_parser_stopped(
    arguments: str,
) -> None:
    with pytest.raises(ValueError, match="line 1 column") as caught:
        json.loads(arguments)
    result = await execute("shift", arguments)
    assert result.is_error
    assert result.content == f"arguments for 'shift' are not valid JSON: {caught.value}"


@pytest.mark.parametrize("arguments", ["3", '"point"', "null", "true", "[1]"])
async def test_b17_json_that_is_not_an_object_is_refused_as_such(arguments: str) -> None:
    result = await execute("shift", arguments)
    assert (result.is_error, result.content) == (
        True,
        "arguments for 'shift' must be a JSON object",
    )
    with pytest.raises(ArgumentsError) as caught:
        read_arguments(shift, ToolCall(id="c1", name="shift", arguments=arguments))
    assert (caught.value.kind, caught.value.detail, str(caught.value)) == ("object", "", "object")


async def test_b17_every_schema_problem_is_named_with_its_full_location() -> None:
    arguments = '{"point": {"x": "one"}, "by": "two"}'
    result = await execute("shift", arguments)
    assert result.is_error
    prefix = "invalid arguments for 'shift': "
    assert result.content.startswith(prefix)
    problems = result.content.removeprefix(prefix).split("; ")
    assert [p.split(": ")[0] for p in problems] == ["point.x", "point.y", "by"]
    assert all(len(p.split(": ", 1)[1]) > 5 for p in problems)  # pydantic's own words
    with pytest.raises(ArgumentsError) as caught:
        read_arguments(shift, ToolCall(id="c1", name="shift", arguments=arguments))
    assert caught.value.kind == "schema"
    assert caught.value.detail == result.content.removeprefix(prefix)
    assert str(caught.value) == f"schema: {caught.value.detail}"


async def test_b17_a_problem_with_the_arguments_as_a_whole_is_labelled() -> None:
    result = await execute("span", '{"start": 5, "end": 2}')
    assert result.is_error
    assert result.content == (
        "invalid arguments for 'span': (arguments): Value error, end is before start"
    )
    assert (await execute("span", '{"start": 2, "end": 5}')).content == "3"


# -- the registry ---------------------------------------------------------------------------


async def test_a_registry_without_tools_says_so() -> None:
    result = await ToolRegistry().execute(ToolCall(id="c1", name="read", arguments="{}"))
    assert (result.is_error, result.content) == (
        True,
        "unknown tool 'read' (available tools: none)",
    )


def test_a_name_registered_twice_names_both_plugins_and_keeps_the_first() -> None:
    registry = ToolRegistry()
    registry.add("first", shift)
    with pytest.raises(DshError) as caught:
        registry.add("second", shift)
    assert str(caught.value) == "tool 'shift' is registered twice: by 'first' and 'second'"
    assert registry.origin("shift") == "first"
    assert [s.name for s in registry.specs()] == ["shift"]


# -- the limits the model and the docs are told --------------------------------------------


def spaced(number: int) -> str:
    """``50000`` as the docs write it: ``50 000``."""
    return f"{number:,}".replace(",", " ")


def test_the_limits_told_to_the_model_and_in_the_docs_are_the_ones_applied() -> None:
    """Each tool's description and docs/tools.md state the caps the tools apply (the
    behaviour at each cap is tested against the constants)."""
    told = {t.name: " ".join(t.description.split()) for t in builtin_tools()}
    assert (
        f"at most {_files.MAX_READ_LINES} lines and {_files.MAX_READ_BYTES} bytes" in told["read"]
    )
    assert f"longer than {_files.MAX_READ_LINE_CHARS} characters" in told["read"]
    assert f"at most {_search.MAX_LS_ENTRIES} entries" in told["ls"]
    assert f"at most {_search.MAX_GLOB_RESULTS}." in told["glob"]
    assert f"at most {_search.MAX_GREP_MATCHES} lines" in told["grep"]
    assert f"files over {_search.MAX_GREP_FILE_BYTES // 1_000_000} MB" in told["grep"]
    assert f"Output over {_bash.MAX_OUTPUT_BYTES} bytes" in told["bash"]

    docs = " ".join(DOCS.read_text().split())
    promised = [
        f"at most {_files.MAX_READ_LINES} lines and {spaced(_files.MAX_READ_BYTES)} bytes",
        f"lines longer than {_files.MAX_READ_LINE_CHARS} characters are cut",
        f"a NUL byte in its first {_text.SNIFF_BYTES // 1024} KiB is binary",
        f"At most {_search.MAX_LS_ENTRIES} entries",
        f"at most {_search.MAX_GLOB_RESULTS}, then a note",
        f"Limits: {_search.MAX_GREP_MATCHES} matching lines and "
        f"{spaced(_search.MAX_GREP_CHARS)} characters shown",
        f"lines cut at {_search.MAX_GREP_LINE_CHARS} characters",
        f"files over {_search.MAX_GREP_FILE_BYTES // 1_000_000} MB",
        f"**Output cap:** {spaced(_bash.MAX_OUTPUT_BYTES)} bytes",
        f"the first and last {spaced(_bash.MAX_OUTPUT_BYTES // 2)} bytes are kept",
        f"SIGKILL for whatever still runs {_bash.KILL_GRACE:g} s later",
        f"`timeout` seconds (1-{_bash.MAX_TIMEOUT})",
    ]
    assert [p for p in promised if p not in docs] == []
    assert _text.SNIFF_BYTES % 1024 == 0
    assert _search.MAX_GREP_FILE_BYTES % 1_000_000 == 0


async def test_a_tool_that_raises_leaves_its_traceback_in_the_debug_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The model reads the error's one line; a person debugging the tool gets the
    traceback on the ``dsh.tools`` logger (DEBUG)."""

    @tool
    def explode() -> str:
        "Fail."
        raise KeyError("apples")

    registry = ToolRegistry()
    registry.add("test", explode)
    with caplog.at_level("DEBUG", logger="dsh.tools"):
        result = await registry.execute(ToolCall(id="c1", name="explode", arguments="{}"))
    assert (result.is_error, result.content) == (True, "tool 'explode' failed: KeyError: 'apples'")
    (record,) = [r for r in caplog.records if r.name == "dsh.tools"]
    assert record.levelname == "DEBUG"
    assert record.getMessage() == "tool 'explode' failed on call c1"
    assert record.exc_info is not None and record.exc_info[0] is KeyError
