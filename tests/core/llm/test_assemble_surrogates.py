"""A character beyond U+FFFF that a server writes as a JSON-escaped UTF-16 surrogate pair
and splits between two deltas (``"a\\ud83d"``, then ``"\\ude00b"``) is one character in
the assembled message, and goes back to the model as that character.

Before: the Assembler joined the deltas' text as it came, so the message held two lone
surrogates, which the request builder sent as two U+FFFD (``_http._open``)."""

from __future__ import annotations

import json

import pytest
from llm_wire import WireServer, collect, sse

from dsh.config import ModelConfig
from dsh.llm import Assembler, Finish, ReasoningDelta, TextDelta, ToolCallDelta
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import ModelRequest, UserMessage

HIGH, LOW = "\ud83d", "\ude00"  # U+1F600 as UTF-16
SMILE = "\U0001f600"


def assembled(*chunks: object) -> Assembler:
    assembler = Assembler()
    for chunk in (*chunks, Finish("stop")):
        assembler.add(chunk)  # type: ignore[arg-type]
    return assembler


@pytest.mark.parametrize(
    "pieces",
    [
        ["a" + HIGH, LOW + "b"],
        ["a", HIGH, LOW, "b"],
        ["é" + HIGH, LOW + "日本"],
        ["a" + HIGH, LOW + HIGH, LOW + "b"],
    ],
)
def test_a_pair_split_between_text_deltas_is_one_character(pieces: list[str]) -> None:
    text = assembled(*(TextDelta(p) for p in pieces)).message().text
    assert text == "".join(pieces).encode("utf-16", "surrogatepass").decode("utf-16")
    assert SMILE in text and HIGH not in text and LOW not in text


def test_a_pair_split_between_reasoning_deltas_is_one_character() -> None:
    message = assembled(ReasoningDelta("x" + HIGH), ReasoningDelta(LOW)).message()
    assert message.content[0].text == "x" + SMILE  # type: ignore[union-attr]


def test_lone_halves_stay_as_they_came() -> None:
    """Nothing to pair: a high half not followed by a low one, a low half alone."""
    pieces = ["a" + HIGH, "b", LOW + "c" + LOW, HIGH]
    assert assembled(*(TextDelta(p) for p in pieces)).message().text == "".join(pieces)


def test_a_cut_off_answer_joins_the_pair_too() -> None:
    assembler = Assembler()
    for chunk in (TextDelta("a" + HIGH), TextDelta(LOW)):
        assembler.add(chunk)
    cut = assembler.cut_off("error")
    assert cut is not None and cut.text == "a" + SMILE


async def test_the_pair_goes_back_to_the_model_as_the_character() -> None:
    """The reviewer's repro: an OpenAI-compatible stream escaping the pair in halves."""
    body = (
        b'data: {"choices":[{"index":0,"delta":{"content":"a\\ud83d"}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{"content":"\\ude00b"},"finish_reason":"stop"}]}'
        b"\n\ndata: [DONE]\n\n"
    )
    async with WireServer([sse(body), sse(body)]) as server:
        config = ModelConfig(provider="openai-compatible", model="m", base_url=server.url)
        ask = ModelRequest(messages=(UserMessage(content="hi"),))
        _, answer = await collect(OpenAICompatibleModel("wire", config), ask)
        assert answer.text == "a" + SMILE + "b"
        again = ModelRequest(messages=(*ask.messages, answer, UserMessage(content="again")))
        await collect(OpenAICompatibleModel("wire", config), again)
    assert server.requests[1].json()["messages"][1]["content"] == "a" + SMILE + "b"


def test_a_pair_split_between_pieces_of_a_call_is_one_character() -> None:
    """A plugin's model passing on a server's arguments, escaped at the outer level and
    cut between the escapes (the built-in adapters join them as they stream:
    ``test_stream_surrogate_pairs``): the tool gets the character, not two halves it
    cannot write as UTF-8."""
    pieces = ['{"t": "a' + HIGH, LOW + '"}']
    first = ToolCallDelta(0, id="c1", name="write", arguments=pieces[0])
    message = assembled(first, ToolCallDelta(0, arguments=pieces[1])).message()
    assert json.loads(message.tool_calls[0].arguments) == {"t": "a" + SMILE}
