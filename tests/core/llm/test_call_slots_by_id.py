"""Tool-call pieces joined by their id (``llm/_call_slots.py``), over the loopback server.

- vLLM's gpt-oss (Harmony) streaming sends pieces of one call under a new ``index``
  with the same id (the name again or not): its index is counted from the messages
  completed so far, which changes mid-call (vllm-project/vllm PR #33520 keys the id by
  the tool instead of the index for that reason). The new index started a call, so
  one call became two with the same id, each with a scrap of the arguments, or one
  without a name (MALFORMED_RESPONSE). A piece whose id is a call's of this answer now
  continues that call, unless it names another tool; a call whose id came before its
  name did not take a name brought by such a piece (the name was taken for another
  tool's), so the piece started a second call: now it joins, and names the call.
- A new id that came without a name at a reused index is held as the next call's id,
  sent before its name; a call that then started there with an id of its own left it
  held, and a later piece naming that call's tool without an id took it and split the
  call. The held id is dropped when a call starts there.
"""

from __future__ import annotations

from test_compat_study import DONE, answer, call, chunk

from dsh.messages import ToolCall

END = [chunk({}, "tool_calls"), DONE]


async def test_a_call_whose_pieces_move_to_another_index_with_its_id_stays_one() -> None:
    body = [
        call(0, id="chatcmpl-tool-1", name="read", arguments='{"pa'),
        call(1, id="chatcmpl-tool-1", name="read", arguments='th": "a'),
        call(1, id="chatcmpl-tool-1", name="read", arguments='.txt"}'),
        *END,
    ]
    _, message = await answer(body)
    assert message.tool_calls == [
        ToolCall(id="chatcmpl-tool-1", name="read", arguments='{"path": "a.txt"}')
    ]


async def test_a_moved_piece_with_its_id_and_no_name_continues_the_call() -> None:
    body = [
        call(0, id="call_1", name="read", arguments='{"p'),
        call(2, id="call_1", arguments='": 1}'),
        *END,
    ]
    _, message = await answer(body)
    assert message.tool_calls == [ToolCall(id="call_1", name="read", arguments='{"p": 1}')]


async def test_after_a_moved_call_a_new_call_starts_at_either_index() -> None:
    body = [
        call(0, id="call_1", name="read", arguments='{"p": '),
        call(1, id="call_1", name="read", arguments="1}"),
        call(1, id="call_2", name="list", arguments="{"),
        call(1, arguments="}"),  # no id: the call now at index 1
        call(0, id="call_3", name="read", arguments='{"p": 3}'),
        *END,
    ]
    _, message = await answer(body)
    assert message.tool_calls == [
        ToolCall(id="call_1", name="read", arguments='{"p": 1}'),
        ToolCall(id="call_2", name="list", arguments="{}"),
        ToolCall(id="call_3", name="read", arguments='{"p": 3}'),
    ]


async def test_an_id_given_again_with_another_tool_s_name_is_another_call() -> None:
    # a server that repeats one id for different calls: the name tells them apart
    body = [
        call(0, id="call_0", name="read", arguments='{"p": 1}'),
        call(1, id="call_0", name="list", arguments="{}"),
        *END,
    ]
    _, message = await answer(body)
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        ("call_0", "read", '{"p": 1}'),
        ("call_0", "list", "{}"),
    ]


async def test_a_held_id_is_dropped_when_a_call_starts_with_its_own() -> None:
    body = [
        call(0, id="call_a", name="read", arguments='{"p": 1}'),
        call(0, id="call_x", arguments=""),  # an id changed without a name: held
        call(0, id="call_b", name="list", arguments="{}"),  # a call with its own id
        call(0, name="list", arguments=""),  # its name again, no id: the same call
        *END,
    ]
    _, message = await answer(body)
    assert message.tool_calls == [
        ToolCall(id="call_a", name="read", arguments='{"p": 1}'),
        ToolCall(id="call_b", name="list", arguments="{}"),
    ]


async def test_a_held_id_still_starts_the_call_whose_name_comes_next() -> None:
    # the rule the held id is for: a new id, then the name without one, at index 0
    body = [
        call(0, id="call_a", name="read", arguments='{"p": 1}'),
        call(0, id="call_b", arguments=""),
        call(0, name="list", arguments="{}"),
        *END,
    ]
    _, message = await answer(body)
    assert message.tool_calls == [
        ToolCall(id="call_a", name="read", arguments='{"p": 1}'),
        ToolCall(id="call_b", name="list", arguments="{}"),
    ]


async def test_a_moved_piece_naming_a_call_that_had_no_name_yet_joins_it() -> None:
    # the id first without a name, then the call moves to another index with its name:
    # the name was taken for another tool's, so the piece started a second call with
    # the same id, and the first had no name (MALFORMED_RESPONSE)
    body = [
        call(0, id="chatcmpl-tool-1", arguments=""),
        call(1, id="chatcmpl-tool-1", name="read", arguments='{"p'),
        call(1, id="chatcmpl-tool-1", arguments='": 1}'),
        *END,
    ]
    _, message = await answer(body)
    assert message.tool_calls == [ToolCall(id="chatcmpl-tool-1", name="read", arguments='{"p": 1}')]
