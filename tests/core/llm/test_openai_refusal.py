"""OpenAI's structured-outputs refusal (``delta.refusal``, ``content`` null) is the
answer's text, and the answer ends with stop reason ``error``: the turn ends ``error``
with code ``REFUSED``, its text kept (behaviour 13; see test_refused_answers.py).

Before: ``openai._pieces`` read only ``content``: the refusal was dropped, and the
answer was empty with stop reason ``stop``."""

from __future__ import annotations

from llm_wire import WireServer, openai_answer, openai_body, openai_chunk, sse

from dsh.harness import Harness
from dsh.llm import Finish, TextDelta
from dsh.testing import run_turn

SORRY = "I'm sorry, I can't help with that."


async def test_a_refusal_is_the_text_and_the_stop_reason_error() -> None:
    chunks, message = await openai_answer(
        openai_chunk({"role": "assistant", "content": None, "refusal": ""}),
        openai_chunk({"refusal": "I'm sorry, "}),
        openai_chunk({"refusal": "I can't help with that."}),
        openai_chunk({}, "stop"),
    )
    assert message.text == SORRY
    assert message.stop_reason == "error"
    assert [c for c in chunks if isinstance(c, TextDelta)] == [
        TextDelta("I'm sorry, "),
        TextDelta("I can't help with that."),
    ]
    assert chunks[-1] == Finish("error", detail="refusal")  # named in the turn's error


async def test_an_empty_or_null_refusal_is_no_refusal() -> None:
    _, message = await openai_answer(
        openai_chunk({"role": "assistant", "content": "", "refusal": None}),
        openai_chunk({"content": "fine", "refusal": ""}),
        openai_chunk({}, "stop"),
    )
    assert (message.text, message.stop_reason) == ("fine", "stop")


async def test_text_with_a_refusal_after_it_still_ends_as_refused() -> None:
    _, message = await openai_answer(
        openai_chunk({"content": "Let me see. "}),
        openai_chunk({"content": None, "refusal": "No."}),
        openai_chunk({}, "stop"),
    )
    assert (message.text, message.stop_reason) == ("Let me see. No.", "error")


async def test_a_refused_turn_ends_error_with_code_refused() -> None:
    config = (
        "models:\n  wire:\n    provider: openai-compatible\n    model: m\n"
        "    base_url: {url}\nagents:\n  - id: main\n    model: wire\n"
    )
    refusal = openai_body(
        openai_chunk({"content": None, "refusal": SORRY}), openai_chunk({}, "stop")
    )
    async with WireServer([sse(refusal)]) as server:
        text = config.format(url=server.url)
        async with Harness(config_text=text, load_entry_points=False) as harness:
            agent = harness.agents.get("main")
            assert agent is not None
            events = await run_turn(agent, "hi")
    end = events[-1].data
    assert (end["reason"], end["error"]["code"]) == ("error", "REFUSED")
    message = next(e for e in events if e.type == "assistant/message")
    assert message.data["message"]["content"] == [{"type": "text", "text": SORRY}]
