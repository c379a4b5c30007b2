"""Review of the sixteenth session's streaming changes (SSE error events in
``llm/_sse.py``; the tool-call slots of ``llm/_call_slots.py``), by hand mutation: each
test here failed on a mutant of the source that the other tests let through (named in
its docstring)."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from llm_wire import WireServer, collect, sse, unserved
from test_compat_study import DONE, answer, call, chunk
from test_llm_http import openai

from dsh.errors import ModelError
from dsh.llm._call_slots import _JsonEnd
from dsh.llm._sse import SSEParser
from dsh.messages import ModelRequest, ToolCall, UserMessage

ASK = ModelRequest(messages=(UserMessage(content="hi"),))


def parse(stream: bytes) -> list[Any]:
    parser = SSEParser()
    return [json.loads(data) for data in parser.feed(stream) + parser.end()]


# -- SSE error events ----------------------------------------------------------------------


def test_an_error_event_leaves_nothing_behind_for_the_next_event() -> None:
    """The parser on its own (an adapter stops at the error, the parser need not):
    after an error event, the next event has only its own data. Mutants: the data
    (``data = self._data = []``) or the error fields (``self._errors = []``) kept after
    an error event is dispatched."""
    named = b"event: error\ndata: first\n\n" + b'data: {"a": 1}\n\n'
    assert parse(named) == [{"error": "first"}, {"a": 1}]
    field = b"error: slot busy\n\n" + b'data: {"a": 2}\n\n'
    assert parse(field) == [{"error": "slot busy"}, {"a": 2}]


def test_an_error_event_s_data_lines_are_read_as_one_text() -> None:
    """An error object written over two data lines is one JSON text (joined with LF,
    as the standard joins them). Mutant: the first data line alone read as the error
    (the object then wrapped as text)."""
    error = {"type": "overloaded_error", "message": "Overloaded"}
    stream = b'event: error\ndata: {"error":\ndata: ' + json.dumps(error).encode() + b"}\n\n"
    assert parse(stream) == [{"error": error}]


async def test_an_error_event_after_part_of_a_tool_call_ends_with_the_error() -> None:
    """A call whose arguments are cut by the server's error is not returned as a call:
    the stream fails with the server's words."""
    body = [
        call(0, id="call_1", name="read", arguments='{"pa'),
        call(0, arguments='th": "a'),
        b'event: error\ndata: {"message": "upstream reset", "type": "server_error"}\n\n',
        DONE,
    ]
    async with WireServer([sse(body)]) as server:
        with pytest.raises(ModelError) as caught:
            await collect(openai(server.url), ASK)
    assert caught.value.code == "SERVER"
    assert unserved(caught.value.message).endswith(
        "error in the stream: server_error: upstream reset"
    )


# -- tool-call slots -------------------------------------------------------------------------


async def test_the_same_id_and_name_on_every_piece_stay_one_call_after_whole_arguments() -> None:
    """An id and name repeated on every piece, a last piece after the arguments are
    whole (empty): one call. Mutant: the id comparison dropped from the new-call test
    (a repeated id with a name then starts a call once the arguments are whole)."""
    body = [
        call(0, id="call_7", name="read", arguments='{"p": '),
        call(0, id="call_7", name="read", arguments='"a"}'),
        call(0, id="call_7", name="read", arguments=""),
        chunk({}, "tool_calls"),
        DONE,
    ]
    _, message = await answer(body)
    assert message.tool_calls == [ToolCall(id="call_7", name="read", arguments='{"p": "a"}')]


async def test_a_call_of_no_arguments_then_another_tool_at_a_reused_index_are_two() -> None:
    """A call with no argument text at all (none yet counts as unfinished) followed by
    a new id with another name at index 0: a new call. Mutant: the name check of
    ``_continues`` dropped (the second call merged into the first)."""
    body = [
        call(0, id="call_a", name="now", arguments=""),
        call(0, id="call_b", name="read", arguments='{"p": "a"}'),
        chunk({}, "tool_calls"),
        DONE,
    ]
    _, message = await answer(body)
    assert [(c.id, c.name) for c in message.tool_calls] == [("call_a", "now"), ("call_b", "read")]


async def test_two_calls_of_a_no_argument_tool_at_a_reused_index_are_two() -> None:
    """Each a new id with the name and empty arguments at index 0: two calls. No
    arguments yet counted as an unfinished JSON text (to continue vLLM's gpt-oss first
    piece), so the second call was merged into the first and lost without a word; a
    call with no arguments is now continued by a new id only if the piece brings some."""
    body = [
        call(0, id="call_a", name="now", arguments=""),
        call(0, id="call_b", name="now", arguments=""),
        chunk({}, "tool_calls"),
        DONE,
    ]
    _, message = await answer(body)
    assert [c.id for c in message.tool_calls] == ["call_a", "call_b"]


async def test_a_no_argument_call_moved_with_its_id_and_name_stays_one() -> None:
    """The same id and name again with no arguments, at another index (vLLM's gpt-oss
    moving a call): one call. Mutant: the rule for a new id's piece without arguments
    applied to a known id's piece too (the moved piece then starts a second call)."""
    body = [
        call(0, id="call_a", name="now", arguments=""),
        call(1, id="call_a", name="now", arguments=""),
        call(1, id="call_a", name="now", arguments="{}"),
        chunk({}, "tool_calls"),
        DONE,
    ]
    _, message = await answer(body)
    assert message.tool_calls == [ToolCall(id="call_a", name="now", arguments="{}")]


def test_the_end_of_a_json_text_with_non_ascii_and_escapes_is_found_however_it_is_cut() -> None:
    """Literal non-ASCII characters (the scanner works on text, not bytes), a \\u
    escape of a backslash (not an escape of the next character), escaped quotes and
    brackets inside strings, nested empty brackets."""
    text = json.dumps({"k": 'é😀}\\"{', "u": "\\u005c", "n": {"a": [[], {}]}}, ensure_ascii=False)
    text = text.replace('"\\\\u005c"', '"\\u005c"')  # the escape itself, not its text
    assert json.loads(text)["u"] == "\\"
    for cuts in itertools.combinations(range(1, len(text)), 2):
        scan = _JsonEnd()
        fed = 0
        for at in [*cuts, len(text)]:
            scan.feed(text[fed:at])
            fed = at
            assert scan.ended == (at == len(text)), (text, cuts, at)
