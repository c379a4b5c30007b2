"""A model API key in a streamed answer is hidden before the chunks leave the HTTP
adapters (dsh.llm._redact_stream, _redact_answer, HttpModel.stream): in the text, the
reasoning and a tool call's arguments, split across chunks or not, in the chunks as in
the assembled message; and text that only looks like the start of a key comes through
whole."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from llm_wire import WireServer, collect, sse
from test_secrets_study_errors import ASK, KEY, anthropic, openai, shows

from dsh._secrets import hidden_runs, redact
from dsh.errors import ModelError
from dsh.harness import Harness
from dsh.llm import Assembler, ReasoningDelta, TextDelta, ToolCallDelta
from dsh.llm._redact_stream import SHORTEST_HELD, StreamRedactor
from dsh.testing import run_turn

DONE = b"data: [DONE]\n\n"


def feed(pieces: list[str], secrets: tuple[str, ...] = (KEY,)) -> list[str]:
    redactor = StreamRedactor(secrets)
    return [redactor.feed(piece) for piece in pieces] + [redactor.flush()]


# -- the streaming redactor --------------------------------------------------------------------


@pytest.mark.parametrize(
    "pieces",
    [
        [f"key: {KEY[:20]}", f"{KEY[20:]} ok"],  # two
        [f"key: {KEY[:5]}", KEY[5:30], f"{KEY[30:]} ok"],  # three
    ],
    ids=["two", "three"],
)
def test_a_key_split_across_pieces_is_hidden(pieces: list[str]) -> None:
    shown = feed(pieces)
    assert "".join(shown) == "key: *** ok"
    assert not any(shows(piece) for piece in shown)


def test_a_key_streamed_a_character_at_a_time_shows_two_characters_at_most() -> None:
    # a tail of one or two characters is not held (SHORTEST_HELD): most characters are
    # in a random key; what was shown is remembered, so the rest is hidden after them
    shown = feed(["key: ", *KEY, " ok"])
    assert "".join(shown) == f"key: {KEY[:2]}*** ok"
    assert not any(shows(piece) for piece in shown)


def test_the_first_or_last_half_of_a_key_split_across_pieces_is_hidden() -> None:
    # as redact hides them (what an output cap leaves of a key)
    assert "".join(feed(["a ", KEY[:12], KEY[12:24], " b"])) == "a *** b"
    assert "".join(feed(["a ", KEY[-24:-10], KEY[-10:], " b"])) == "a *** b"
    assert "".join(feed(["a ", KEY[:23], " b"])) == f"a {KEY[:23]} b"  # shorter: shown


def test_a_piece_ending_with_the_start_of_a_key_that_is_not_the_key_comes_whole() -> None:
    pieces = ["the sk-te", "rminal is ", "sk-test-", "a", "B3 and sk", "-test-aB3dEx"]
    shown = feed(pieces)
    assert "".join(shown) == "".join(pieces)  # unchanged, nothing lost
    assert shown[0] == "the " and shown[-1] == ""  # held only while it might be the key


def test_text_without_a_piece_of_the_key_streams_as_it_came() -> None:
    pieces = ["Hello", ", wor", "ld. Run", " it: s", "k is fine."]
    assert feed(pieces) == [*pieces, ""]


def test_random_splits_show_no_run_and_keep_text_without_one_whole() -> None:
    other = "0123456789abcdef"  # a second, shorter secret: runs of 8 hidden
    rnd = random.Random(7)
    letters = "abcdefghijklmnopqrstuvwxyz sk-te0123"
    for _ in range(3000):
        parts: list[str] = []
        for _ in range(rnd.randint(0, 4)):
            parts.append("".join(rnd.choice(letters) for _ in range(rnd.randint(0, 20))))
            parts.append(
                rnd.choice([KEY, KEY[: rnd.randint(1, 47)], KEY[rnd.randint(1, 47) :], other, ""])
            )
        text = "".join(parts)
        cuts = sorted(rnd.sample(range(len(text) + 1), min(len(text) + 1, rnd.randint(0, 10))))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        shown = feed(pieces, (KEY, other))
        assert redact("".join(shown), (KEY, other)) == "".join(shown)
        assert not any(redact(piece, (KEY, other)) != piece for piece in shown)
        hidden = redact(text, (KEY, other))
        if hidden == text:
            assert "".join(shown) == text
        else:  # at most SHORTEST_HELD - 1 characters of each hidden run show (and each
            # run may have a *** of its own, where redact hides runs that touch as one)
            runs = sum(len(hidden_runs(text, secret)) for secret in (KEY, other))
            most = len(hidden) + (SHORTEST_HELD - 1 + len("***")) * runs
            joined = "".join(shown)
            assert len(joined) <= most, (pieces, shown)


# -- the adapters ------------------------------------------------------------------------------


def openai_chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
    body = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def anthropic_event(kind: str, **fields: Any) -> bytes:
    return (
        f"event: {kind}\ndata: ".encode() + json.dumps({"type": kind, **fields}).encode() + b"\n\n"
    )


def anthropic_body(blocks: list[tuple[str, list[str]]]) -> list[bytes]:
    """A message with a block per (kind, pieces): text, thinking or tool_use."""
    out = [anthropic_event("message_start", message={"usage": {"input_tokens": 1}})]
    for index, (kind, pieces) in enumerate(blocks):
        if kind == "text":
            start, delta = {"type": "text", "text": ""}, "text_delta"
        elif kind == "thinking":
            start, delta = {"type": "thinking", "thinking": ""}, "thinking_delta"
        else:
            start = {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}
            delta = "input_json_delta"
        field = {"text_delta": "text", "thinking_delta": "thinking"}.get(delta, "partial_json")
        out.append(anthropic_event("content_block_start", index=index, content_block=start))
        for piece in pieces:
            change = {"type": delta, field: piece}
            out.append(anthropic_event("content_block_delta", index=index, delta=change))
        out.append(anthropic_event("content_block_stop", index=index))
    out.append(anthropic_event("message_delta", delta={"stop_reason": "end_turn"}, usage={}))
    out.append(anthropic_event("message_stop"))
    return out


def reasoning(message: Any) -> str:
    return "".join(block.text for block in message.content if block.type == "reasoning")


def called_with_a_key(chunks: list[Any]) -> frozenset[str]:
    """The calls the loop does not run: a key was hidden from their arguments."""
    assembler = Assembler()
    for chunk in chunks:
        assembler.add(chunk)
    return assembler.hidden_calls()


def shown_data(chunks: list[Any], message: Any) -> str:
    return json.dumps([[c.to_data() for c in chunks], message.model_dump(mode="json")])


COMMAND_PIECES = ['{"command": "curl -H \'x: ', KEY[:10], KEY[10:], "'\"}"]


async def test_openai_hides_a_split_key_in_text_reasoning_and_arguments() -> None:
    def call(arguments: str, **first: Any) -> bytes:
        return openai_chunk({"tool_calls": [{"index": 0, **first, "function": {**(
            {"name": "bash"} if first else {}), "arguments": arguments}}]})  # fmt: skip

    body = [
        openai_chunk({"reasoning_content": f"the key {KEY[:9]}"}),
        openai_chunk({"reasoning_content": f"{KEY[9:]} is here"}),
        openai_chunk({"content": f"key: {KEY[:4]}"}),
        openai_chunk({"content": KEY[4:40]}),
        openai_chunk({"content": f"{KEY[40:]}."}),
        call(COMMAND_PIECES[0], id="call_1", type="function"),
        *(call(piece) for piece in COMMAND_PIECES[1:]),
        openai_chunk({}, "tool_calls"),
        DONE,
    ]
    async with WireServer([sse(body)]) as server:
        chunks, message = await collect(openai(server.url), ASK)
    assert not shows(shown_data(chunks, message))
    assert reasoning(message) == "the key *** is here"
    assert message.text == "key: ***."
    assert message.tool_calls[0].arguments == '{"command": "curl -H \'x: ***\'"}'
    assert called_with_a_key(chunks) == {message.tool_calls[0].id}  # not run
    assert any(isinstance(c, TextDelta) for c in chunks)


async def test_anthropic_hides_a_split_key_in_text_thinking_and_input() -> None:
    body = anthropic_body([
        ("thinking", [f"the key {KEY[:9]}", f"{KEY[9:]} is here"]),
        ("text", [f"key: {KEY[:4]}", KEY[4:40], f"{KEY[40:]}."]),
        ("tool_use", COMMAND_PIECES),
    ])  # fmt: skip
    async with WireServer([sse(body)]) as server:
        chunks, message = await collect(anthropic(server.url), ASK)
    assert not shows(shown_data(chunks, message))
    assert reasoning(message) == "the key *** is here"
    assert message.text == "key: ***."
    assert message.tool_calls[0].arguments == '{"command": "curl -H \'x: ***\'"}'
    assert called_with_a_key(chunks) == {message.tool_calls[0].id}  # not run
    kinds = [type(c) for c in chunks if isinstance(c, TextDelta | ReasoningDelta | ToolCallDelta)]
    assert kinds.index(TextDelta) > kinds.index(ReasoningDelta)  # the blocks keep their order
    assert kinds.index(ToolCallDelta) > kinds.index(TextDelta)


async def test_usage_sent_with_every_piece_does_not_end_the_text() -> None:
    # vLLM's continuous usage stats: a usage object in every chunk, between the pieces
    usage = {"prompt_tokens": 1, "completion_tokens": 1}
    body = [
        openai_chunk({"content": f"key: {KEY[:10]}"}, usage=usage),
        openai_chunk({"content": f"{KEY[10:]}."}, usage=usage),
        openai_chunk({}, "stop", usage=usage),
        DONE,
    ]
    async with WireServer([sse(body)]) as server:
        chunks, message = await collect(openai(server.url), ASK)
    assert not shows(shown_data(chunks, message))
    assert message.text == "key: ***."


async def test_text_that_only_starts_like_the_key_arrives_whole_from_the_server() -> None:
    pieces = ["the sk-te", "rminal, and sk-test-aB3", "x"]
    body = [*(openai_chunk({"content": piece}) for piece in pieces), openai_chunk({}, "stop")]
    async with WireServer([sse([*body, DONE])]) as server:
        chunks, message = await collect(openai(server.url), ASK)
    assert message.text == "".join(pieces)
    assert [c.text for c in chunks if isinstance(c, TextDelta)] == [
        "the ",
        "sk-terminal, and ",
        "sk-test-aB3x",
    ]


async def test_what_was_held_comes_out_before_a_stream_that_breaks_off() -> None:
    # no [DONE]: STREAM_CLOSED; the text so far (logged for a step cut off) is all there
    body = [openai_chunk({"content": "use sk-te"})]
    got: list[Any] = []
    async with WireServer([sse(body)]) as server:
        model = openai(server.url, max_retries=0)

        async def read() -> None:
            async for chunk in model.stream(ASK):
                got.append(chunk)

        with pytest.raises(ModelError) as caught:
            await read()
        await model.aclose()
    assert caught.value.code == "STREAM_CLOSED"
    assert "".join(c.text for c in got) == "use sk-te"


# -- the session ------------------------------------------------------------------------------


async def test_a_key_split_in_an_anthropic_answer_stays_out_of_the_session() -> None:
    config = (
        "models:\n  wire:\n    provider: anthropic\n    model: c\n"
        "    base_url: {url}\n    api_key_env: K\nagents:\n  - id: main\n    model: wire\n"
    )
    body = anthropic_body([("text", [f"key: {KEY[:6]}", KEY[6:30], f"{KEY[30:]}!"])])
    async with WireServer([sse(body)]) as server:
        text = config.format(url=server.url)
        async with Harness(config_text=text, load_entry_points=False, env={"K": KEY}) as h:
            agent = h.agents.get("main")
            assert agent is not None
            events = await run_turn(agent, "hi")
    assert events[-1].data["reason"] == "completed"
    logged = [e for e in agent.session.events if e.type.startswith("assistant/")]
    assert not shows(json.dumps([e.data for e in logged]))
    final = next(e for e in logged if e.type == "assistant/message")
    assert final.data["message"]["content"] == [{"type": "text", "text": "key: ***!"}]
