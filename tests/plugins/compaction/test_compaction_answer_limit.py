"""A reasoning summariser that spends all of ``max_summary_tokens`` thinking, stopped at
``max_tokens`` with no text: the answer limit ran out, which is no refusal. The
compaction fails ``INCOMPLETE`` (saying to raise ``max_summary_tokens``) and leaves the
history as it was, after an overflow too (nothing dropped without a summary)."""

from __future__ import annotations

import pytest
from compaction_util import OVERFLOW, WINDOW, events_of, harness, options, reads

from dsh.llm import Finish, ReasoningDelta, TextDelta
from dsh.testing import Reply, ScriptedModel, check_invariants, run_turn

pytestmark = pytest.mark.plugins("compaction")

THINKS = Reply(
    (ReasoningDelta("Let me think about what the user wants... " * 20), Finish("max_tokens"))
)


@pytest.mark.parametrize("overflow", [False, True])
async def test_an_answer_cut_off_while_thinking_is_incomplete(overflow: bool) -> None:
    small = ScriptedModel([THINKS], name="summarizer", context_window=100_000)
    script = [*reads(3, then=OVERFLOW)] if overflow else reads(5)
    model = ScriptedModel(script, context_window=WINDOW)
    async with harness(model, small) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")
        assert check_invariants(agent.session.events) == []
    assert not any(e.type == "compact/summary" for e in events)  # nothing dropped
    end = events_of(events, "compact/end")[-1]
    assert end.data["outcome"] == "failed"
    assert "refused" not in end.data
    error = end.data["error"]
    assert error["code"] == "INCOMPLETE"
    assert "max_summary_tokens" in error["message"]
    assert "'summarizer'" in error["message"]
    assert end.data["messages_after"] == end.data["messages_before"]


async def test_an_empty_answer_that_stopped_is_still_empty_summary() -> None:
    """Only the answer limit running out makes an empty answer INCOMPLETE."""
    small = ScriptedModel([Reply((TextDelta(" "), Finish("stop")))], name="summarizer")
    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, small) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")
    assert events_of(events, "compact/end")[-1].data["error"]["code"] == "EMPTY_SUMMARY"


@pytest.mark.parametrize(
    ("window", "max_output", "says"),
    [
        (100_000, None, "raise max_summary_tokens"),
        (100_000, 256, "its max_output_tokens (256)"),
        (4_000, None, "a quarter of its context window (1,000 tokens)"),
        # max_summary_tokens is the quarter: raising it would not raise the limit
        (8_192, None, "a quarter of its context window (2,048 tokens)"),
    ],
)
async def test_the_incomplete_answer_says_what_set_its_limit(
    window: int, max_output: int | None, says: str
) -> None:
    # raising max_summary_tokens helps only when it is what set the answer limit
    small = ScriptedModel(
        [THINKS], name="summarizer", context_window=window, max_output_tokens=max_output
    )
    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, small) as h:
        agent = await h.agents.create("a", options=options(max_summary_tokens=2048))
        events = await run_turn(agent, "task")
    error = events_of(events, "compact/end")[-1].data["error"]
    assert error["code"] == "INCOMPLETE"
    assert says in error["message"]
    if max_output or window <= 8_192:
        assert "raise max_summary_tokens" not in error["message"]
