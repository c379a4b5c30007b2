"""Review of the OpenAI-compatible streaming quirks (session 14): cases the compat study
left open, and tests that pin rules its tests did not tell apart."""

from __future__ import annotations

from llm_wire import unserved
from test_compat_study import DONE, answer, call, chunk, data, failure

from dsh.llm import TextDelta
from dsh.messages import ToolCall

# -- tool-call ids ---------------------------------------------------------------------------


async def test_a_reused_index_whose_next_call_sends_its_id_first_gives_two_calls() -> None:
    # A server that reuses index 0 for every call (test_llm_openai.py) and sends a call's
    # id and name in separate deltas, id first (pipecat-ai/pipecat PR #5023: "in either
    # order"). The rule "a new id without a name continues the call" merged the second
    # call into the first: one call named `list` with the arguments of both, run as such.
    body = [
        call(0, id="call_a"),
        call(0, name="read", arguments='{"p": 1}'),
        call(0, id="call_b"),
        call(0, name="list", arguments="{}"),
        chunk({}, "tool_calls"),
        DONE,
    ]
    _, message = await answer(body)
    assert message.tool_calls == [
        ToolCall(id="call_a", name="read", arguments='{"p": 1}'),
        ToolCall(id="call_b", name="list", arguments="{}"),
    ]


async def test_an_id_changing_after_a_late_first_id_keeps_the_late_one() -> None:
    # The name first, then the id (recorded as the call's), then ids that change
    # (Poolside): the call keeps the first id it had, the late one.
    body = [
        call(0, name="read", arguments=""),
        call(0, id="call_late", arguments='{"p": '),
        call(0, id="call_other", arguments="1}"),
        chunk({}, "tool_calls"),
        DONE,
    ]
    _, message = await answer(body)
    assert message.tool_calls == [ToolCall(id="call_late", name="read", arguments='{"p": 1}')]


async def test_parallel_calls_at_their_own_indexes_with_ids_before_names_stay_apart() -> None:
    body = [
        call(0, id="call_a"),
        call(1, id="call_b"),
        call(0, name="read", arguments="{}"),
        call(1, name="list", arguments="{}"),
        chunk({}, "tool_calls"),
        DONE,
    ]
    _, message = await answer(body)
    assert message.tool_calls == [
        ToolCall(id="call_a", name="read", arguments="{}"),
        ToolCall(id="call_b", name="list", arguments="{}"),
    ]


# -- the error field ---------------------------------------------------------------------------


async def test_an_error_field_that_only_looks_like_json_is_still_the_servers_error() -> None:
    # `error: {...` that is not JSON was pasted into '{"error": {...}' and failed as
    # MALFORMED_RESPONSE ("unreadable chunk"); it is the server's error, with its words.
    body = [chunk({"content": "par"}), b"error: {slot 0} unavailable\n\n", DONE]
    err = await failure(body)
    assert (err.code, "{slot 0} unavailable" in err.message) == ("SERVER", True)


async def test_a_llamacpp_error_field_is_read_as_its_object_not_as_text() -> None:
    # Read as text, the object would be a SERVER error quoting the JSON; read as the
    # object, its type gives the code and its message the words.
    body = [b'error: {"code": 401, "message": "no", "type": "authentication_error"}\n\n', DONE]
    err = await failure(body)
    assert (err.code, unserved(err.message)) == (
        "AUTH",
        "model 'wire': error in the stream: authentication_error: no",
    )


# -- choices and the end -----------------------------------------------------------------------


async def test_a_choice_without_an_index_is_read() -> None:
    # Some servers leave choices[].index out; only an index other than 0 is another choice.
    body = [data({"choices": [{"delta": {"content": "Hi"}, "finish_reason": "stop"}]}), DONE]
    chunks, message = await answer(body)
    assert [c.text for c in chunks if isinstance(c, TextDelta)] == ["Hi"]
    assert (message.text, message.stop_reason) == ("Hi", "stop")


async def test_done_without_any_finish_reason_is_a_whole_answer() -> None:
    # [DONE] is the end marker: a server that never sends a finish_reason still answers.
    body = [chunk({"content": "Hi"}), DONE]
    _, message = await answer(body)
    assert (message.text, message.stop_reason) == ("Hi", "stop")


async def test_an_answer_cut_after_an_early_finish_reason_is_still_stream_closed() -> None:
    # Some servers put a finish_reason on a chunk that is not the last of the answer
    # (open-webui/open-webui #16377: "stop" on the reasoning chunk, then the text). A
    # response that then ends cleanly mid-answer, without [DONE], was taken as whole:
    # a truncated answer passed as complete. Only an answer with nothing after its
    # finish_reason (usage, filter results) is whole without [DONE].
    body = [chunk({"reasoning_content": "think"}, "stop"), chunk({"content": "The ans"})]
    err = await failure(body)
    assert err.code == "STREAM_CLOSED"


async def test_a_finish_reason_then_usage_without_done_is_whole() -> None:
    usage = data({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1}})
    body = [chunk({"reasoning_content": "think"}, "stop"), chunk({"content": "Hi"}, "stop"), usage]
    _, message = await answer(body)
    assert (message.text, message.stop_reason) == ("Hi", "stop")
