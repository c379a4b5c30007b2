"""A tool call streamed with a new id *and* its name on every piece, at one index, as
vLLM's first gpt-oss (Harmony) streaming did (vllm-project/vllm PR #23522: the id made
anew for each chunk). The rule for servers that reuse index 0 for every call (a new id
with a name starts a new call) split it into one call per piece, each with a scrap of
the arguments. Now such a piece continues the call while its arguments so far are an
unfinished JSON text and the name is the call's own."""

from __future__ import annotations

import itertools
import json

import pytest
from test_compat_study import DONE, answer, call, chunk

from dsh.llm._call_slots import _JsonEnd
from dsh.messages import ToolCall


def every_piece_anew(name: str, pieces: list[str], first: int = 0) -> list[bytes]:
    """vLLM's shape: each piece with an id of its own and the name again, index 0."""
    return [
        call(0, id=f"chatcmpl-tool-{first + n}", name=name, arguments=piece)
        for n, piece in enumerate(pieces)
    ]


async def test_a_new_id_and_the_name_on_every_piece_keep_one_call() -> None:
    body = [*every_piece_anew("read", ['{"pa', 'th": "a', '.txt"', "}"]), chunk({}, "tool_calls")]
    _, message = await answer([*body, DONE])
    assert message.tool_calls == [
        ToolCall(id="chatcmpl-tool-0", name="read", arguments='{"path": "a.txt"}')
    ]


async def test_braces_quotes_and_backslashes_inside_strings_do_not_end_the_call() -> None:
    # a "}" inside a string, an escaped quote, a backslash cut from what it escapes
    arguments = json.dumps({"text": 'a}b] "q" \\', "list": [1, {"x": "{"}]})
    cut = arguments.index("\\\\") + 1  # between the two characters of an escaped "\\"
    pieces = [arguments[:12], arguments[12:cut], arguments[cut:-1], arguments[-1]]
    _, message = await answer([*every_piece_anew("note", pieces), chunk({}, "tool_calls"), DONE])
    assert message.tool_calls == [ToolCall(id="chatcmpl-tool-0", name="note", arguments=arguments)]


async def test_calls_of_one_tool_at_a_reused_index_still_split_once_whole() -> None:
    # the first call's arguments are whole when the next id comes: a new call, even of
    # the same tool; each made of pieces with ids of their own
    body = [
        *every_piece_anew("read", ['{"p": ', '"a"}']),
        *every_piece_anew("read", ['{"p": ', '"b"}'], first=2),
        call(0, id="call_list", name="list", arguments="{"),  # another name: another call
        call(0, arguments="}"),
        chunk({}, "tool_calls"),
        DONE,
    ]
    _, message = await answer(body)
    assert message.tool_calls == [
        ToolCall(id="chatcmpl-tool-0", name="read", arguments='{"p": "a"}'),
        ToolCall(id="chatcmpl-tool-2", name="read", arguments='{"p": "b"}'),
        ToolCall(id="call_list", name="list", arguments="{}"),
    ]


async def test_a_first_piece_without_arguments_is_continued() -> None:
    # the name and an empty first piece, then the arguments, each with a new id: no
    # arguments yet count as unfinished (a call of no arguments is sent as "{}")
    body = every_piece_anew("read", ["", '{"p": 1', "}"])
    _, message = await answer([*body, chunk({}, "tool_calls"), DONE])
    assert message.tool_calls == [ToolCall(id="chatcmpl-tool-0", name="read", arguments='{"p": 1}')]


TEXTS = [
    '{"a": 1}',
    '{"s": "x}y]\\"z\\\\", "n": [1, [2, {"k": null}]]}',
    '[{"u": "\\u00e9"}, "\\\\"]',
    ' {"spaced": true} ',
]


@pytest.mark.parametrize("text", TEXTS)
def test_the_end_of_a_json_text_is_found_however_it_is_cut(text: str) -> None:
    assert json.loads(text) is not None  # the samples are JSON
    end = len(text.rstrip())
    for cuts in itertools.combinations(range(1, len(text)), 2):
        scan = _JsonEnd()
        fed = 0
        for at in [*cuts, len(text)]:
            scan.feed(text[fed:at])
            fed = at
            assert scan.ended == (at >= end), (text, cuts, at)
