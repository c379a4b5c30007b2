"""A tool made from a raw JSON schema (``dsh.tools.schema_tool``, what an MCP bridge
registers): the schema is checked as the tool is made, the model is told it as it is,
and the arguments are checked against it (by jsonschema, dsh-core's ``schema`` extra)
before the tool runs, which receives them as one dict."""

from __future__ import annotations

from typing import Any

import pytest

from dsh import DshError, ToolCall, hookimpl
from dsh.testing import ScriptedModel, run_turn, scripted_harness, tool_calls
from dsh.tools import ToolRegistry, read_arguments, schema_tool

SEARCH = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "description": "what to look for"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        "kind": {"enum": ["file", "issue"]},
        "tags": {"type": "array", "items": {"$ref": "#/$defs/tag"}, "uniqueItems": True},
        "not-an-identifier": {"type": ["string", "null"]},
    },
    "required": ["query"],
    "additionalProperties": False,
    "$defs": {"tag": {"type": "string", "pattern": "^[a-z]+$"}},
}


async def search(arguments: dict[str, Any]) -> str:
    return f"searched {arguments}"


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.add("bridge", schema_tool("search", "Search the index.", SEARCH, search))
    return registry


async def _result(arguments: str) -> tuple[bool, str]:
    result = await _registry().execute(ToolCall(id="c1", name="search", arguments=arguments))
    assert result.call_id == "c1"
    return result.is_error, result.content


async def test_the_tool_receives_the_arguments_sent_as_one_dict() -> None:
    assert await _result('{"query": "x", "limit": 2.0, "not-an-identifier": null}') == (
        False,
        "searched {'query': 'x', 'limit': 2.0, 'not-an-identifier': None}",
    )


def test_the_model_is_told_the_schema_as_it_is() -> None:
    made = schema_tool("search", "Search the index.", SEARCH, search)
    assert made.spec.parameters == SEARCH
    assert made.spec.description == "Search the index."
    SEARCH["properties"]["query"]["minLength"] = 1  # the tool holds a copy: unchanged
    assert made.spec.parameters is not SEARCH
    # less a title, as every tool's (pydantic's name of an arguments model, FastMCP's)
    titled = schema_tool("search", "Search.", {"title": "searchArguments", **SEARCH}, search)
    assert titled.spec.parameters == SEARCH


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ("{}", "query: required, and missing"),
        ("", "query: required, and missing"),  # empty text: no arguments
        ('{"query": ""}', "query: shorter than 1 characters"),
        ('{"query": 3}', "query: 3 is not of type 'string'"),
        ('{"query": "x", "limit": 51}', "limit: 51 is more than the maximum 50"),
        ('{"query": "x", "limit": true}', "limit: true is not of type 'integer'"),
        ('{"query": "x", "kind": "pr"}', 'kind: "pr" is not one of "file", "issue"'),
        ('{"query": "x", "tags": ["a", "B"]}', 'tags.1: "B" does not match the pattern "^[a-z]+$"'),
        ('{"query": "x", "tags": ["a", "a"]}', "tags: an item is there more than once"),
        (
            '{"query": "x", "qurey": 1}',
            '(arguments): "qurey" is not an argument of this tool (its arguments: query, '
            "limit, kind, tags, not-an-identifier)",
        ),
    ],
)
async def test_arguments_outside_the_schema_are_refused_saying_where(
    arguments: str, said: str
) -> None:
    is_error, content = await _result(arguments)
    assert is_error
    assert content == f"invalid arguments for 'search': {said}"


async def test_text_that_is_not_a_json_object_is_said_as_for_any_tool() -> None:
    assert await _result("[1]") == (True, "arguments for 'search' must be a JSON object")
    assert (await _result("{"))[1].startswith("arguments for 'search' are not valid JSON")


def test_read_arguments_gives_a_policy_plugin_the_dict_checked() -> None:
    tool = schema_tool("search", "Search the index.", SEARCH, search)
    read = read_arguments(tool, ToolCall(id="c", name="search", arguments='{"query": "q"}'))
    assert read.arguments == {"query": "q"}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("schema", "said"),
    [
        ([], "tool 't': its schema is list, not a JSON object (a dict)"),
        (
            {"type": "array"},
            "tool 't': its schema's type is 'array', not 'object': a model sends a tool's "
            "arguments as one JSON object, named by its properties",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "text"}}},
            "tool 't': its schema at #/properties/a/type: 'text' is not valid under any of "
            "the given schemas",
        ),
        (
            {"type": "object", "required": "a"},
            "tool 't': its schema at #/required: 'a' is not of type 'array'",
        ),
        (
            {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}},
            "tool 't': its schema at #/properties/a: $ref '#/$defs/missing' points to "
            "nothing in the schema",
        ),
        (
            {"type": "object", "properties": {"a": {"pattern": "("}}},
            "tool 't': its schema at #/properties/a/pattern: '(' is not a 'regex'",
        ),
        (
            {"type": "object", "properties": {"a": {"maxLength": -1}}},
            "tool 't': its schema at #/properties/a/maxLength: -1 is less than the minimum of 0",
        ),
    ],
)
def test_a_schema_that_is_not_one_is_refused_naming_the_tool_and_where(
    schema: Any, said: str
) -> None:
    with pytest.raises(DshError) as refused:
        schema_tool("t", "A tool.", schema, search)
    assert str(refused.value).startswith(said)


def test_a_schema_that_is_not_json_or_a_run_that_is_no_function_is_refused() -> None:
    schema = {"type": "object", "properties": {"a": {"default": {1, 2}}}}
    with pytest.raises(DshError) as refused:
        schema_tool("t", "A tool.", schema, search)
    assert str(refused.value) == (
        "tool 't': its schema.properties.a.default: set values are not lossless JSON (got {1, 2})"
    )
    with pytest.raises(DshError, match=r"^tool 't': run is str, not a function$"):
        schema_tool("t", "A tool.", {"type": "object"}, "search")  # type: ignore[arg-type]


def test_the_name_is_checked_as_any_tool_s() -> None:
    with pytest.raises(DshError, match="tool 'my tool': the name has characters"):
        schema_tool("my tool", "A tool.", {"type": "object"}, search)


async def test_a_bridge_plugin_registers_schema_tools_a_model_calls() -> None:
    class Bridge:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            def echo(arguments: dict[str, Any]) -> dict[str, Any]:  # plain def: fine too
                return {"echoed": arguments["text"]}

            register(schema_tool("search", "Search the index.", SEARCH, search))
            register(
                schema_tool(
                    "echo",
                    "Echo the text.",
                    {"type": "object", "properties": {"text": {"type": "string"}}},
                    echo,
                )
            )

    model = ScriptedModel([tool_calls(("echo", {"text": "hi"}), ("search", {"limit": 0})), "done"])
    async with scripted_harness(model, plugins=[Bridge()], load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "go")
    results = [e.data for e in agent.session.events if e.type == "tool/result"]
    assert [(r["is_error"], r["content"]) for r in results] == [
        (False, '{"echoed":"hi"}'),
        (
            True,
            "invalid arguments for 'search': limit: 0 is less than the minimum 1; query: "
            "required, and missing",
        ),
    ]
    tools = {spec.name: spec for spec in model.requests[0].tools}
    assert tools["search"].parameters == SEARCH
    model.assert_complete()
