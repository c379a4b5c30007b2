"""``dsh.testing``'s scripted model and its replies, chunk by chunk (from a hand mutation
review of dsh/testing/_scripted.py)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import cast

import anyio
import pytest

from dsh.errors import ModelError
from dsh.llm.base import Chunk, Finish, TextDelta, ToolCallDelta, UsageChunk
from dsh.messages import ModelRequest, Usage
from dsh.testing import ScriptedModel, fail, hang, max_tokens, text
from dsh.testing import tool_calls as calls


def usage(output: int = 1) -> UsageChunk:
    return UsageChunk(Usage(input_tokens=10, output_tokens=output))


async def streamed(model: ScriptedModel) -> list[Chunk]:
    return [chunk async for chunk in model.stream(ModelRequest())]


def test_text_streams_each_part_then_usage_and_stop() -> None:
    assert text("a", "b").chunks == (TextDelta("a"), TextDelta("b"), usage(2), Finish("stop"))
    assert text().chunks == (usage(0), Finish("stop"))
    assert (text("x").error, text("x").hang) == (None, False)


def test_tool_calls_number_the_calls_and_send_str_arguments_raw() -> None:
    reply = calls(("add", {"a": 1}), ("read#id-7", '{"path": '), say="Adding.")
    assert reply.chunks == (
        TextDelta("Adding."),
        ToolCallDelta(0, id="call-0", name="add"),
        ToolCallDelta(0, arguments='{"a": 1}'),
        ToolCallDelta(1, id="id-7", name="read"),
        ToolCallDelta(1, arguments='{"path": '),
        usage(),
        Finish("tool_calls"),
    )


def test_tool_calls_without_say_start_with_the_first_call() -> None:
    assert calls(("ls", {})).chunks[0] == ToolCallDelta(0, id="call-0", name="ls")


def test_max_tokens_ends_the_answer_with_max_tokens_instead_of_its_finish() -> None:
    assert max_tokens("part").chunks == (TextDelta("part"), usage(1), Finish("max_tokens"))
    assert max_tokens("so", ("ls", {"path": "."})).chunks == (
        TextDelta("so"),
        ToolCallDelta(0, id="call-0", name="ls"),
        ToolCallDelta(0, arguments='{"path": "."}'),
        usage(),
        Finish("max_tokens"),
    )


def test_fail_raises_a_model_error_with_the_code_and_message_given() -> None:
    error = fail().error
    assert isinstance(error, ModelError)
    assert (error.code, str(error)) == ("SERVER", "scripted failure")
    error = fail("RATE_LIMIT", "slow down").error
    assert error is not None and (error.code, str(error)) == ("RATE_LIMIT", "slow down")
    assert fail().chunks == ()


def test_hang_streams_every_part_then_hangs() -> None:
    reply = hang("a", "b")
    assert (reply.chunks, reply.hang, reply.error) == ((TextDelta("a"), TextDelta("b")), True, None)


def test_the_model_defaults_and_info() -> None:
    model = ScriptedModel()
    assert (model.name, model.context_window, model.aborted) == ("scripted", 8192, 0)
    info = ScriptedModel(name="m", context_window=None).info
    assert (info.name, info.provider, info.context_window) == ("m", "scripted", None)
    assert ScriptedModel(context_window=100).info.context_window == 100


async def test_entries_are_replies_strings_or_functions_of_the_request() -> None:
    seen: list[ModelRequest] = []

    def decide(request: ModelRequest) -> str:
        seen.append(request)
        return "decided"

    model = ScriptedModel(["plain", decide, text("a", "b"), lambda request: text("c")])
    assert await streamed(model) == [TextDelta("plain"), usage(), Finish("stop")]
    assert await streamed(model) == [TextDelta("decided"), usage(), Finish("stop")]
    assert seen == [model.requests[1]]
    assert await streamed(model) == list(text("a", "b").chunks)
    assert await streamed(model) == list(text("c").chunks)
    model.assert_complete()


async def test_extend_adds_every_entry_and_assert_complete_counts_what_is_left() -> None:
    model = ScriptedModel(["one"])
    model.extend("two", "three")
    assert len(model.script) == 3
    with pytest.raises(AssertionError, match="'scripted': 3 script entries were not used"):
        model.assert_complete()
    await streamed(model)
    await streamed(model)
    with pytest.raises(AssertionError, match="1 script entry was not used"):
        model.assert_complete()
    assert await streamed(model) == list(text("three").chunks)
    model.assert_complete()


async def test_running_past_the_script_fails_with_script_exhausted_and_is_recorded() -> None:
    model = ScriptedModel(["only"], name="m")
    await streamed(model)
    with pytest.raises(ModelError) as caught:
        await streamed(model)
    assert caught.value.code == "SCRIPT_EXHAUSTED"
    assert str(caught.value) == (
        "scripted model 'm' has no reply left for request #2 (script has 1 entry)"
    )
    assert len(model.requests) == 2


async def test_a_failing_entry_raises_before_any_chunk() -> None:
    model = ScriptedModel([fail("AUTH", "no key"), "after"])
    stream = model.stream(ModelRequest())
    with pytest.raises(ModelError, match="no key"):
        await anext(stream)
    assert await streamed(model) == list(text("after").chunks)  # the failure used its entry


async def test_a_stream_closed_early_counts_as_aborted_and_a_full_one_does_not() -> None:
    model = ScriptedModel([text("a", "b"), "whole"])
    stream = cast(AsyncGenerator[Chunk, None], model.stream(ModelRequest()))
    assert await anext(stream) == TextDelta("a")
    await stream.aclose()  # GeneratorExit inside the stream
    assert model.aborted == 1
    await streamed(model)
    assert model.aborted == 1


async def test_a_hang_streams_its_parts_waits_and_counts_the_cancel_as_aborted() -> None:
    model = ScriptedModel([hang("a", "b")])
    got: list[Chunk] = []
    with anyio.CancelScope() as scope:
        async for chunk in model.stream(ModelRequest()):
            got.append(chunk)
            scope.cancel()  # takes effect only where the stream waits: after its parts
    assert got == [TextDelta("a"), TextDelta("b")]
    assert (scope.cancelled_caught, model.aborted) == (True, 1)


@pytest.mark.parametrize(
    ("script", "given"),
    [
        ("hello", "a str"),  # was read as five one-letter answers
        (b"hello", "a bytes"),  # a Sequence too
        (text("hi"), "a Reply"),
        (lambda request: "hi", "a function"),  # failed at the first request (len)
        (iter(["hi"]), "a list_iterator"),
    ],
    ids=["str", "bytes", "reply", "function", "iterator"],
)
def test_a_script_that_is_not_a_list_of_entries_is_refused_at_once(
    script: object, given: str
) -> None:
    with pytest.raises(TypeError) as refused:
        ScriptedModel(script)  # type: ignore[arg-type]
    assert str(refused.value) == (
        f"ScriptedModel's script is a list of answers (Reply, str, or a function of the "
        f"request), not {given}: for one answer, pass [it]"
    )


def test_a_tuple_or_a_list_subclass_is_a_script() -> None:
    assert ScriptedModel(("a", text("b"))).script == ("a", text("b"))
    assert ScriptedModel(type("Script", (list,), {})(["a"])).script == ["a"]
