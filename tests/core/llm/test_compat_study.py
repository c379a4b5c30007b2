"""The ``openai-compatible`` adapter against what real OpenAI-compatible servers stream.

Each test names the server and where its behaviour is documented or reported; the bytes
are replayed by the loopback server of llm_wire (no mocks of the HTTP client). Quirks
that existing tests already cover are not repeated here: a missing tool-call ``index``,
one index reused for several calls, ``finish_reason: "stop"`` after tool calls,
arguments sent as an object, ``reasoning`` / ``reasoning_content``, usage-only chunks
with empty ``choices``, SSE comments (``: OPENROUTER PROCESSING``, ``: keep-alive``),
CRLF line ends, ``content: null`` beside tool calls and an ``error`` object inside the
stream (OpenRouter, vLLM, llama.cpp): see test_llm_openai.py, test_llm_m_adapters.py,
test_llm_m_errors.py and test_llm_http.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_wire import WireServer, collect, sse
from test_llm_http import ASK, fails, openai

from dsh.errors import ModelError
from dsh.llm import TextDelta, UsageChunk
from dsh.messages import ToolCall, Usage

DONE = b"data: [DONE]\n\n"


def data(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def choice(delta: dict[str, Any], finish: str | None = None, index: int = 0) -> dict[str, Any]:
    return {"index": index, "delta": delta, "finish_reason": finish}


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
    return data({"object": "chat.completion.chunk", "choices": [choice(delta, finish)], **extra})


def call(index: int | None = None, **fields: Any) -> dict[str, Any]:
    piece: dict[str, Any] = {} if index is None else {"index": index}
    if "id" in fields:
        piece["id"] = fields.pop("id")
        piece["type"] = "function"
    piece["function"] = fields
    return chunk({"tool_calls": [piece]})


async def answer(body: list[bytes]) -> tuple[list[Any], Any]:
    """(chunks, message) of the openai-compatible model, a loopback server streaming
    ``body``."""
    async with WireServer([sse(body)]) as server:
        return await collect(openai(server.url), ASK)


async def failure(body: list[bytes]) -> ModelError:
    """The error the openai-compatible model fails with, a server streaming ``body``."""
    async with WireServer([sse(body)]) as server:
        return await fails(openai(server.url))


# -- errors the server reports outside a data line -----------------------------------------


async def test_llamacpp_error_field_ends_the_stream_with_its_error() -> None:
    # llama.cpp's server, up to September 2025, wrote a failure inside a stream as an SSE
    # field of its own, `error: {...}`, then `data: [DONE]` (fixed by ggml-org/llama.cpp
    # PR #16109; reported again in coddy-project/coddy-agent PR #106 for builds of 2025).
    # dsh ignored the unknown field, read [DONE] and returned an empty answer that
    # "stopped" normally; the error must end the turn with its code and words.
    error = {
        "code": 400,
        "message": "the request exceeds the available context size. try increasing the "
        "context size or enable context shift",
        "type": "invalid_request_error",
    }
    body = [b"error: " + json.dumps(error).encode() + b"\n\n", DONE]
    err = await failure(body)
    assert err.code == "CONTEXT_WINDOW_EXCEEDED"
    assert "exceeds the available context size" in err.message


async def test_an_error_field_that_is_not_json_still_fails_with_its_words() -> None:
    body = [chunk({"content": "par"}), b"error: slot 0 unavailable\n\n", DONE]
    err = await failure(body)
    assert (err.code, "slot 0 unavailable" in err.message) == ("SERVER", True)


async def test_openrouter_finish_reason_error_is_an_error_stop() -> None:
    # OpenRouter normalises finish_reason to stop, length, tool_calls, content_filter or
    # "error" ("if the model finishes the request with an error"; openrouter.ai/docs,
    # API reference, and its SDKs' schema). dsh read an unknown reason as "stop", so a
    # generation cut off by the provider looked complete.
    body = [chunk({"content": "The answer is"}), chunk({}, "error"), DONE]
    _, message = await answer(body)
    assert (message.text, message.stop_reason) == ("The answer is", "error")


# -- the end of the stream -----------------------------------------------------------------

LAST = chunk({}, "stop") + data(
    {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 2}}
)


@pytest.mark.parametrize(
    "ending",
    [
        b"",  # ik_llama.cpp without --send-done (ikawrakow/ik_llama.cpp #467, PR #470);
        # text-generation-inference before huggingface/text-generation-inference PR #2221;
        # oobabooga text-generation-webui (oobabooga/textgen #4778)
        b"data: [DONE]\n",  # the last event without its blank line (seen from llama-server
        # by darshi1337/apogee PR #139)
    ],
    ids=["no-done", "done-without-blank-line"],
)
async def test_a_finished_answer_whose_response_ends_without_done_is_complete(
    ending: bytes,
) -> None:
    # The response ended cleanly (the HTTP body is complete) after a finish_reason: the
    # answer is whole, only the [DONE] marker is missing. dsh said STREAM_CLOSED and lost
    # the answer; a connection dropped mid-body is still STREAM_CLOSED (test_llm_http).
    body = [chunk({"content": "Hi"}), LAST, ending]
    _, message = await answer(body)
    assert (message.text, message.stop_reason) == ("Hi", "stop")
    assert message.usage == Usage(input_tokens=7, output_tokens=2)


async def test_an_answer_without_finish_reason_nor_done_is_still_stream_closed() -> None:
    err = await failure([chunk({"content": "Hi"})])
    assert err.code == "STREAM_CLOSED"


# -- choices ------------------------------------------------------------------------------


async def test_only_the_first_choice_is_read_when_the_server_streams_several() -> None:
    # With n > 1 (an agent_request plugin may set it) OpenAI and vLLM stream every choice
    # in chunks of their own, told apart by choices[].index (platform.openai.com API
    # reference, "The chat completion chunk object": choices "can contain more than one
    # element if n is greater than 1"). dsh took choices[0] of every chunk, so the answers
    # were interleaved into one text and one choice's finish_reason won.
    def of(index: int, delta: dict[str, Any], finish: str | None = None) -> bytes:
        return data({"choices": [choice(delta, finish, index)]})

    body = [
        of(0, {"role": "assistant", "content": "Paris"}),
        of(1, {"role": "assistant", "content": "It is Paris"}),
        of(0, {"content": "."}),
        of(1, {"content": ", of course"}, "length"),
        of(0, {}, "stop"),
        DONE,
    ]
    chunks, message = await answer(body)
    assert [c.text for c in chunks if isinstance(c, TextDelta)] == ["Paris", "."]
    assert (message.text, message.stop_reason) == ("Paris.", "stop")


# -- usage --------------------------------------------------------------------------------


async def test_groq_usage_under_x_groq_is_read() -> None:
    # Groq put the usage of a streamed answer in the last chunk under "x_groq", not
    # "usage" (vercel/ai #1651, Portkey-AI/gateway #1072); it sends the standard usage
    # chunk only when stream_options.include_usage is honoured. dsh counted nothing.
    x_groq = {"id": "req_01", "usage": {"prompt_tokens": 23, "completion_tokens": 19}}
    body = [chunk({"content": "Hi"}), chunk({}, "stop", x_groq=x_groq), DONE]
    _, message = await answer(body)
    assert message.usage == Usage(input_tokens=23, output_tokens=19)


async def test_usage_in_every_chunk_keeps_the_last_count() -> None:
    # vLLM's stream_options.continuous_usage_stats (and SGLang's, sgl-project/sglang
    # PR #12241) put the running usage in every chunk; xAI/Grok sends usage before a last
    # chunk without it (BerriAI/litellm #17136). The last count seen is the answer's.
    def counted(delta: dict[str, Any], done: int, finish: str | None = None) -> bytes:
        return chunk(delta, finish, usage={"prompt_tokens": 10, "completion_tokens": done})

    body = [
        counted({"content": "a"}, 1),
        counted({"content": "b"}, 2),
        counted({}, 2, "stop"),
        data({"choices": [choice({}, None)], "usage": None}),
        DONE,
    ]
    chunks, message = await answer(body)
    assert message.usage == Usage(input_tokens=10, output_tokens=2)
    assert len([c for c in chunks if isinstance(c, UsageChunk)]) == 3


# -- Azure OpenAI's content filter ---------------------------------------------------------


async def test_azure_filter_chunks_before_and_after_the_answer_change_nothing() -> None:
    # Azure OpenAI starts a stream with a chunk whose choices are empty and which carries
    # prompt_filter_results, and with the asynchronous filter sends filter results in
    # chunks after the one with finish_reason (learn.microsoft.com, "Content filtering",
    # streaming and asynchronous filter sections). A late chunk's finish_reason null must
    # not undo the finish.
    filters = {"hate": {"filtered": False, "severity": "safe"}}
    body = [
        data({"id": "", "choices": [], "prompt_filter_results": [{"prompt_index": 0}]}),
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Hello"}),
        chunk({}, "stop"),
        data(
            {
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": None,
                        "content_filter_results": filters,
                        "content_filter_offsets": {"start_offset": 0, "end_offset": 5},
                    }
                ]
            }
        ),
        DONE,
    ]
    _, message = await answer(body)
    assert (message.text, message.stop_reason) == ("Hello", "stop")


# -- tool-call ids -------------------------------------------------------------------------


async def test_the_id_on_every_delta_of_one_call_keeps_one_call() -> None:
    # vLLM's Mistral and some hermes parser builds, LM Studio and others repeat the same
    # id (and type) on every delta of a call (JetBrains/koog PR #2052 lists providers
    # that do); all arguments in one delta is what Ollama and Mistral's API send.
    body = [
        call(0, id="call_a", name="read", arguments=""),
        call(0, id="call_a", arguments='{"path": '),
        call(0, id="call_a", arguments='"x"}'),
        call(1, id="call_b", name="list", arguments='{"dir": "."}'),  # whole in one delta
        chunk({}, "tool_calls"),
        DONE,
    ]
    _, message = await answer(body)
    assert message.tool_calls == [
        ToolCall(id="call_a", name="read", arguments='{"path": "x"}'),
        ToolCall(id="call_b", name="list", arguments='{"dir": "."}'),
    ]


async def test_an_id_that_comes_after_the_name_belongs_to_the_same_call() -> None:
    # The id and the name of a call may come in separate deltas, in either order
    # (pipecat-ai/pipecat PR #5023: Mistral, Azure OpenAI behind LiteLLM). dsh took a
    # first id arriving after the name for a new call: one call without an id, one
    # without a name, and the turn failed as MALFORMED_RESPONSE.
    body = [
        call(0, name="read", arguments=""),
        call(0, id="call_late", arguments='{"p": 1}'),
        chunk({}, "tool_calls"),
        DONE,
    ]
    _, message = await answer(body)
    assert message.tool_calls == [ToolCall(id="call_late", name="read", arguments='{"p": 1}')]


async def test_an_id_that_changes_within_one_call_keeps_the_first() -> None:
    # Poolside's API sends one id with the name and another on every later delta of the
    # same call (poolsideai/pool #9); mlx-openai-server did the same before
    # cubist38/mlx-openai-server PR #216. Without a name the delta continues the call at
    # its index (a new call starts with its name) and the call keeps the id it began with.
    body = [
        call(0, id="call_first", name="read", arguments=""),
        call(0, id="call_other", arguments='{"p": '),
        call(0, id="call_other", arguments="1}"),
        call(0, id="call_two", name="list", arguments="{}"),  # a new id with a name: new call
        chunk({}, "tool_calls"),
        DONE,
    ]
    _, message = await answer(body)
    assert message.tool_calls == [
        ToolCall(id="call_first", name="read", arguments='{"p": 1}'),
        ToolCall(id="call_two", name="list", arguments="{}"),
    ]
