"""A schema tool's checks on jsonschema (dsh-core's ``schema`` extra): the draft its
``$schema`` names, no ``$ref`` fetched from elsewhere, a catastrophic ``pattern`` that
does not hold the event loop, problems said briefly, and the extra's absence said."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from dsh import DshError, ToolCall
from dsh._json_schema import SHOWN
from dsh.tools import ToolRegistry, schema_tool

# Backtracks catastrophically on a run of a's that does not end the text: Python's `re`,
# which jsonschema matches `pattern` with, takes seconds on it holding the GIL.
CATASTROPHIC = "(a|aa)+$"
SLOW_TEXT = "a" * 33 + "!"


async def echo(arguments: dict[str, Any]) -> str:
    return f"got {arguments}"


async def _result(schema: dict[str, Any], arguments: str) -> tuple[bool, str]:
    registry = ToolRegistry()
    registry.add("bridge", schema_tool("t", "A tool.", schema, echo))
    result = await registry.execute(ToolCall(id="c1", name="t", arguments=arguments))
    return result.is_error, result.content


def _object(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


async def test_the_draft_is_2020_12_unless_the_schema_names_another() -> None:
    tuple_of = _object(v={"prefixItems": [{"type": "string"}], "items": False})
    assert await _result(tuple_of, '{"v": ["a"]}') == (False, "got {'v': ['a']}")
    assert (await _result(tuple_of, '{"v": ["a", 1]}'))[0]
    # draft 7 has no prefixItems: its items false lets no item through
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", **tuple_of}
    assert (await _result(draft7, '{"v": ["a"]}'))[0]
    assert await _result(draft7, '{"v": []}') == (False, "got {'v': []}")


def test_a_schema_s_unknown_draft_is_refused() -> None:
    schema = {"$schema": "https://example.com/my-dialect", "type": "object"}
    with pytest.raises(DshError) as refused:
        schema_tool("t", "A tool.", schema, echo)
    assert str(refused.value) == (
        "tool 't': its schema's $schema is 'https://example.com/my-dialect', which names no "
        "JSON Schema draft known here (2020-12, 2019-09, 7, 6, 4 or 3)"
    )


class _Served:
    """A schema served on the loopback, and the paths asked for."""

    def __init__(self) -> None:
        asked = self.asked = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                asked.append(self.path)
                body = b'{"type": "string"}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def served() -> Iterator[_Served]:
    made = _Served()
    thread = threading.Thread(target=made.server.serve_forever, daemon=True)
    thread.start()
    yield made
    made.server.shutdown()
    made.server.server_close()


def test_a_ref_to_a_url_is_refused_and_nothing_is_fetched(served: _Served) -> None:
    remote = _object(v={"$ref": f"{served.url}/word.json"})
    with pytest.raises(DshError) as refused:
        schema_tool("t", "A tool.", remote, echo)
    assert str(refused.value) == (
        f"tool 't': its schema at #/properties/v: $ref '{served.url}/word.json' points to "
        "nothing in the schema (dsh fetches no schema from elsewhere: put what it names under "
        "$defs)"
    )
    # relative to the schema's $id: a URL too
    based = {"$id": f"{served.url}/root.json", **_object(v={"items": {"$ref": "word.json"}})}
    with pytest.raises(DshError, match=r"^tool 't': its schema at #/properties/v/items: \$ref"):
        schema_tool("t", "A tool.", based, echo)
    assert served.asked == []


async def test_refs_within_the_schema_resolve() -> None:
    schema = {
        "$id": "https://example.com/root.json",
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/word"},
            "b": {"$ref": "word.json"},  # the $id of a schema within it
            "c": {"$ref": "#named"},
        },
        "$defs": {
            "word": {"$id": "word.json", "type": "string"},
            "n": {"$anchor": "named", "type": "integer"},
        },
    }
    assert await _result(schema, '{"a": "x", "b": "y", "c": 1}') == (
        False,
        "got {'a': 'x', 'b': 'y', 'c': 1}",
    )
    assert await _result(schema, '{"a": 1, "b": 2, "c": "z"}') == (
        True,
        "invalid arguments for 't': a: 1 is not of type 'string'; b: 2 is not of type "
        "'string'; c: \"z\" is not of type 'integer'",
    )


async def test_a_catastrophic_pattern_is_given_up_on_and_said(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dsh import _json_schema

    schema = _object(v={"type": "string", "pattern": CATASTROPHIC})
    # in the usual time: a loaded machine may take a while over the fast case too
    assert await _result(schema, '{"v": "aaaa"}') == (False, "got {'v': 'aaaa'}")
    monkeypatch.setattr(_json_schema, "PATTERN_SECONDS", 0.05)
    assert await _result(schema, f'{{"v": "{SLOW_TEXT}"}}') == (
        True,
        "invalid arguments for 't': v: \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\" could not be "
        'matched against the pattern "(a|aa)+$" in time (0.05 s for all of a call\'s '
        "patterns)",
    )
    # a property name the model sent, by patternProperties (and additionalProperties)
    keyed = {
        "type": "object",
        "patternProperties": {CATASTROPHIC: {}},
        "additionalProperties": False,
    }
    is_error, content = await _result(keyed, f'{{"{SLOW_TEXT}": 1}}')
    assert is_error
    assert content.startswith("invalid arguments for 't': (arguments): \"aaaaaaaaaaaa")
    assert content.endswith(
        'could not be matched against the pattern "(a|aa)+$" in time (0.05 s for all of a '
        "call's patterns)"
    )


async def test_patterns_are_grep_s_syntax() -> None:
    schema = _object(v={"type": "string", "pattern": r"^\p{Lu}"})
    assert await _result(schema, '{"v": "Émile"}') == (False, "got {'v': 'Émile'}")
    assert (await _result(schema, '{"v": "émile"}'))[0]


async def test_problems_are_capped_and_values_clipped() -> None:
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    many = "{" + ", ".join(f'"p{n}": "{n}"' for n in range(SHOWN + 5)) + "}"
    is_error, content = await _result(schema, many)
    assert is_error
    said = content.removeprefix("invalid arguments for 't': ").split("; ")
    assert len(said) == SHOWN + 1
    assert said[-1] == "and more"
    long = "x" * 500
    is_error, content = await _result(_object(v={"type": "integer"}), f'{{"v": "{long}"}}')
    assert content == (f"invalid arguments for 't': v: \"{'x' * 36}... is not of type 'integer'")


async def test_a_ref_loop_is_a_problem_not_a_crash() -> None:
    schema = {"$defs": {"a": {"$ref": "#/$defs/a"}}, **_object(v={"$ref": "#/$defs/a"})}
    assert await _result(schema, '{"v": 1}') == (
        True,
        "invalid arguments for 't': (arguments): too deeply nested to check (a $ref loop in "
        "the schema?)",
    )


def test_without_the_extra_making_one_says_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema", None)  # import jsonschema: ImportError
    with pytest.raises(DshError) as refused:
        schema_tool("t", "A tool.", {"type": "object"}, echo)
    assert str(refused.value) == (
        "tool 't': a tool from a JSON schema needs the jsonschema library, which dsh-core's "
        "'schema' extra installs: pip install 'dsh-core[schema]'"
    )


def test_import_dsh_tools_leaves_jsonschema_unimported() -> None:
    code = (
        "import sys, dsh, dsh.tools; assert 'jsonschema' not in sys.modules; "
        "dsh.tools.schema_tool('t', 'A tool.', {'type': 'object'}, print); "
        "assert 'jsonschema' in sys.modules"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


async def test_a_catastrophic_pattern_reached_by_unevaluated_properties_is_given_up_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dsh import _json_schema

    schema = {
        "type": "object",
        "allOf": [{"patternProperties": {CATASTROPHIC: {}}}],
        "unevaluatedProperties": False,
    }
    assert await _result(schema, '{"aa": 1}') == (False, "got {'aa': 1}")  # usual time
    monkeypatch.setattr(_json_schema, "PATTERN_SECONDS", 0.05)
    is_error, content = await _result(schema, f'{{"{SLOW_TEXT}": 1}}')
    assert is_error
    assert content.endswith(
        'could not be matched against the pattern "(a|aa)+$" in time (0.05 s for all of a '
        "call's patterns)"
    )


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("1", "v: 1 fits more than one of the schemas (oneOf)"),
        ("-1.5", "v: -1.5 fits none of the schemas (oneOf)"),
    ],
)
async def test_one_of_says_whether_none_or_several_fit(value: str, said: str) -> None:
    schema = _object(v={"oneOf": [{"type": "integer"}, {"minimum": 0}]})
    assert await _result(schema, f'{{"v": {value}}}') == (
        True,
        f"invalid arguments for 't': {said}",
    )


async def test_a_nested_object_s_property_not_allowed_is_said_where() -> None:
    inner = {"type": "object", "properties": {"a": {}}, "additionalProperties": False}
    assert await _result(_object(o=inner), '{"o": {"a": 1, "b": 2}}') == (
        True,
        "invalid arguments for 't': o: \"b\" is not allowed here (its properties: a)",
    )


async def test_a_value_a_false_schema_refuses_is_said() -> None:
    # jsonschema gives no place for it: the value is shown
    assert await _result(_object(o=False), '{"o": 12345}') == (
        True,
        "invalid arguments for 't': 12345 is not allowed there (its schema is false)",
    )
