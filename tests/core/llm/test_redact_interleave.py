"""A key in a streamed answer stays hidden whatever comes between its pieces
(dsh.llm._redact_answer.AnswerRedactor): text interrupted by the deltas of a tool call
that is already open (OpenAI-style servers send content and tool_calls in one delta),
reasoning alternating with text, a provider's block or encrypted reasoning between a
call's pieces. What the Assembler joins (and what a consumer joins: all text deltas,
all reasoning deltas, each call's arguments) is redacted as one stream."""

from __future__ import annotations

import json
import random
import re
from typing import Any

from llm_wire import WireServer, collect, sse
from test_redact_stream import DONE, openai_chunk
from test_secrets_study_errors import ASK, KEY, openai, shows

from dsh._secrets import MIN_LENGTH, hidden_runs, redact
from dsh.llm import (
    Assembler,
    Chunk,
    Finish,
    ProviderBlockChunk,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    UsageChunk,
)
from dsh.llm._redact_answer import AnswerRedactor
from dsh.messages import Usage


def redacted(chunks: list[Chunk], secrets: tuple[str, ...] = (KEY,)) -> list[Chunk]:
    hide = AnswerRedactor(secrets)
    out: list[Chunk] = []
    for chunk in chunks:
        out += hide.take(chunk)
    return out + hide.flush()


def assembled(chunks: list[Chunk]) -> Any:
    assembler = Assembler()
    for chunk in chunks:
        assembler.add(chunk)
    return assembler.message("m")


def joined(chunks: list[Chunk], kind: type[TextDelta] | type[ReasoningDelta]) -> str:
    return "".join(
        c.text for c in chunks if type(c) is kind and getattr(c, "redacted", None) is None
    )


def arguments(chunks: list[Chunk], index: int) -> str:
    return "".join(c.arguments for c in chunks if isinstance(c, ToolCallDelta) and c.index == index)


# -- the reviewer's cases -----------------------------------------------------------------------


async def test_openai_text_and_tool_call_in_the_same_deltas_hide_the_key() -> None:
    def delta(content: str, args: str, first: bool = False) -> bytes:
        call: dict[str, Any] = {"index": 0, "function": {"arguments": args}}
        if first:
            call.update(id="call_1", type="function")
            call["function"]["name"] = "bash"
        return openai_chunk({"content": content, "tool_calls": [call]})

    body = [
        delta(f"key: {KEY[:16]}", '{"command":', first=True),
        delta(KEY[16:32], ' "ls"'),
        delta(f"{KEY[32:]}.", "}"),
        openai_chunk({}, "tool_calls"),
        DONE,
    ]
    async with WireServer([sse(body)]) as server:
        chunks, message = await collect(openai(server.url), ASK)
    assert not shows(json.dumps(message.model_dump(mode="json")))
    assert not shows(joined(chunks, TextDelta))
    assert message.text == "key: ***."
    assert message.tool_calls[0].arguments == '{"command": "ls"}'


async def test_openai_reasoning_alternating_with_text_hides_the_key() -> None:
    body = [
        *(
            openai_chunk({"reasoning_content": "thinking ", "content": KEY[i : i + 16]})
            for i in range(0, len(KEY), 16)
        ),
        openai_chunk({"content": "."}),
        openai_chunk({}, "stop"),
        DONE,
    ]
    async with WireServer([sse(body)]) as server:
        chunks, message = await collect(openai(server.url), ASK)
    assert not shows(json.dumps(message.model_dump(mode="json")))
    assert not shows(joined(chunks, TextDelta))
    assert message.text == "***."
    assert joined(chunks, ReasoningDelta) == "thinking " * 3


def test_text_around_an_open_calls_deltas_is_one_text() -> None:
    chunks: list[Chunk] = [ToolCallDelta(0, "c1", "bash", "")]
    for i in range(0, len(KEY), 16):
        chunks += [TextDelta(KEY[i : i + 16]), ToolCallDelta(0, None, None, "{")]
    out = redacted([*chunks, Finish("tool_calls")])
    message = assembled(out)
    assert message.text == "***"
    assert message.tool_calls[0].arguments == "{{{"


def test_a_calls_arguments_around_a_provider_block_or_encrypted_reasoning_are_one() -> None:
    for between in (
        ProviderBlockChunk("anthropic", {"type": "x"}),
        ReasoningDelta("", redacted="e"),
    ):
        chunks: list[Chunk] = [
            ToolCallDelta(0, "c1", "bash", f'{{"x": "{KEY[:16]}'),
            between,
            ToolCallDelta(0, None, None, KEY[16:32]),
            between,
            ToolCallDelta(0, None, None, f'{KEY[32:]}"}}'),
            Finish("tool_calls"),
        ]
        message = assembled(redacted(chunks))
        assert message.tool_calls[0].arguments == '{"x": "***"}', between


def test_a_key_across_text_blocks_is_hidden_in_the_joined_text() -> None:
    # a new call, a provider block or encrypted reasoning starts a new text block, but
    # AssistantMessage.text and the terminal join the text of all blocks
    for between in (
        ToolCallDelta(0, "c1", "bash", "{}"),
        ProviderBlockChunk("anthropic", {"type": "x"}),
        ReasoningDelta("", redacted="e"),
        ReasoningDelta("hmm "),
    ):
        out = redacted([TextDelta(f"a {KEY[:20]}"), between, TextDelta(f"{KEY[20:]} b")])
        assert joined(out, TextDelta) == "a *** b", between
        assert assembled([*out, Finish("stop")]).text == "a *** b"


def test_the_end_of_a_word_that_is_in_a_key_stays_in_its_block() -> None:
    # "important" ends with "ant", a piece of sk-ant-...: held while it may be the key,
    # it comes out before a block that ends its text; 8 characters of a key stay held
    key = "sk-ant-api03-" + "Zq7Xw2Lp9Rt4Vn6Bm8Kc1Hj3Gf5Ds0Ay"
    for between in (
        ToolCallDelta(0, "c1", "bash", "{}"),
        ProviderBlockChunk("anthropic", {"type": "x"}),
        ReasoningDelta("", redacted="e"),
        ReasoningDelta("hmm"),
    ):
        out = redacted([TextDelta("This is important"), between, Finish("stop")], (key,))
        assert joined(out[: out.index(between)], TextDelta) == "This is important"
        assert assembled(out).content[0].text == "This is important"
        out = redacted([TextDelta(f"a {key[:9]}"), between, TextDelta(f"{key[9:]} b")], (key,))
        assert out == [TextDelta("a "), between, TextDelta("*** b")]


# -- random interleavings -----------------------------------------------------------------------

OTHER = "0123456789abcdef"  # a second, shorter secret: runs of 8 hidden
SECRETS = (KEY, OTHER)
WORDS = ["the", "quick", "brown", "fox", "sk-", "te", "01", ";", "é"]


def _content(rnd: random.Random) -> str:
    parts: list[str] = []
    for _ in range(rnd.randint(0, 4)):
        parts.append(" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(0, 4))))
        cut = rnd.randint(1, len(KEY) - 1)
        parts.append(rnd.choice([KEY, KEY, KEY[:cut], KEY[cut:], OTHER, ""]))
    return "".join(parts)


def _pieces(rnd: random.Random, text: str) -> list[str]:
    if rnd.random() < 0.2:
        return list(text)
    cuts = sorted(rnd.sample(range(len(text) + 1), min(len(text) + 1, rnd.randint(0, 12))))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


def _expected(text: str) -> re.Pattern[str]:
    """``text`` as it may show: each region of hidden runs as one or more ``***``, each
    after at most MIN_LENGTH - 1 characters of it (a tail too short to hold, or to keep
    held when its block ends), the rest as it is."""
    spans = sorted(span for secret in SECRETS for span in hidden_runs(text, secret))
    regions: list[list[int]] = []
    for start, end in spans:
        if regions and start <= regions[-1][1]:
            regions[-1][1] = max(regions[-1][1], end)
        else:
            regions.append([start, end])
    pattern, done = [], 0
    for start, end in regions:
        pattern += (re.escape(text[done:start]), rf"(?:.{{0,{MIN_LENGTH - 1}}}?\*\*\*)+")
        done = end
    pattern.append(re.escape(text[done:]))
    return re.compile("".join(pattern), re.S)


def _leaks(text: str) -> bool:
    """A secret shows: the whole of it, or a run of at least half of it that begins or
    ends it (what ``redact`` hides)."""
    return redact(text, SECRETS) != text


def test_random_interleavings_never_show_a_key_and_keep_other_text() -> None:
    rnd = random.Random(23)
    fillers: list[Chunk] = [
        UsageChunk(Usage()),
        ProviderBlockChunk("anthropic", {"type": "server_tool_use"}),
        ReasoningDelta("", redacted="opaque"),
    ]
    for _ in range(1500):
        streams: dict[str, str] = {"text": _content(rnd), "reasoning": _content(rnd)}
        calls = rnd.randint(0, 2)
        for index in range(calls):
            streams[f"call{index}"] = _content(rnd)
        queues: dict[str, list[Chunk]] = {}
        for name, text in streams.items():
            if name == "text":
                queues[name] = [TextDelta(p) for p in _pieces(rnd, text)]
            elif name == "reasoning":
                queues[name] = [ReasoningDelta(p) for p in _pieces(rnd, text)]
            else:
                index = int(name[4:])
                first, *rest = _pieces(rnd, text) or [""]
                queues[name] = [ToolCallDelta(index, f"c{index}", "bash", first)]
                queues[name] += [ToolCallDelta(index, None, None, p) for p in rest]
        chunks: list[Chunk] = []
        while any(queues.values()):
            if rnd.random() < 0.1:
                chunks.append(rnd.choice(fillers))
            name = rnd.choice([n for n, q in queues.items() if q])
            chunks.append(queues[name].pop(0))
        chunks.append(Finish("stop"))

        out = redacted(chunks, SECRETS)
        message = assembled(out)
        shown = {
            "text": joined(out, TextDelta),
            "reasoning": joined(out, ReasoningDelta),
            **{f"call{i}": arguments(out, i) for i in range(calls)},
        }
        case = (streams, chunks)
        for name, text in streams.items():
            assert not _leaks(shown[name]), case
            assert _expected(text).fullmatch(shown[name]), (name, shown[name], case)
        assert message.text == shown["text"]
        assert not _leaks(json.dumps(message.model_dump(mode="json"))), case
        assert not any(_leaks(json.dumps(c.to_data())) for c in out), case
        if not any(hidden_runs(text, s) for text in streams.values() for s in SECRETS):
            # nothing to hide: with no 3 characters of a key either, the chunks come
            # through as they came (each in place, none held)
            grams = {t[i : i + 3] for t in streams.values() for i in range(len(t) - 2)}
            if not any(g in s for g in grams for s in SECRETS):
                assert out == chunks, case
