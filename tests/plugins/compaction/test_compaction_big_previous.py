"""A previous summary larger than the room a summariser request plans for it (a
plugin's summary, one written under a larger ``max_summary_tokens`` or for a larger
summariser window, one of a summariser that ignores ``max_tokens``) is summarised as part
of the transcript, split across chunks, so that no summariser request is larger than the
window it is planned for (docs/compaction.md, step 4).

Before: the plan assumed the previous summary was at most one answer long; every
request carried it whole and was too large for the summariser's window, so every
compaction failed (CONTEXT_WINDOW_EXCEEDED), /compact too, and the session could not go
on once its history passed the window.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from compaction_util import BY_HAND, StatingSummariser, by_hand, harness

from dsh import Message, ModelRequest, hookimpl
from dsh.testing import ScriptedModel, check_invariants
from dsh_compaction._transcript import continued, earlier

pytestmark = pytest.mark.plugins("compaction")

SMALL = 2048  # the summariser's window: it refuses a request over it
#: the first summary, a plugin's: ~3,000 tokens by the heuristic, more than SMALL
BIG = "\n".join(f"- fact {i}: the value of setting s{i} is {i * 7}" for i in range(280))


#: ~700 tokens: more than the answer a request reserves (512), less than leaves no room
MID = "\n".join(f"- fact {i}: the value of setting s{i} is {i * 7}" for i in range(64))


class BigOnce:
    """Writes the first summary (``text``), then lets the summariser model write them."""

    def __init__(self, text: str = "") -> None:
        self.calls = 0
        self.text = text or BIG

    @hookimpl(optionalhook=True)
    def compaction_summarize(
        self, messages: Sequence[Message], previous_summary: str | None
    ) -> str | None:
        self.calls += 1
        return self.text if self.calls == 1 else None


def prompt(n: int) -> str:
    return f"request {n}: " + " ".join(f"word{n}x{i}" for i in range(700))  # ~1,300 tokens


async def test_a_previous_summary_larger_than_the_summariser_window_is_summarised_in_chunks() -> (
    None
):
    summariser = StatingSummariser(SMALL)
    model = ScriptedModel(["ok"] * 12, context_window=100_000)
    options: dict[str, Any] = {**BY_HAND, "compaction": {**BY_HAND["compaction"]}}
    options["compaction"]["tail_tokens"] = 200
    async with harness(model, summariser.model, extra=[("big", BigOnce())], chars=False) as h:
        agent = await h.agents.create("a", options=options)
        first = await by_hand(agent, *(prompt(n) for n in range(4)))
        assert first.outcome == "summarized" and first.summary == BIG
        second = await by_hand(agent, *(prompt(n) for n in range(4, 7)))
        assert check_invariants(agent.session.events) == []

    assert second.outcome == "summarized", second
    assert summariser.needed and max(summariser.needed) <= SMALL, summariser.needed
    # every line of the big summary reached the summariser, in one request or another
    contents = [r.messages[0].content for r in summariser.requests]
    parts = [c.split("<conversation>\n")[1].split("\n</conversation>")[0] for c in contents]
    assert BIG in "".join(parts).replace(continued(earlier(BIG)), "")
    assert second.summary == f"summary {len(summariser.requests)}"


class Merging(StatingSummariser):
    """Answers with the previous summary and a line more (a merge keeps it)."""

    def answer(self, request: ModelRequest) -> Any:
        answered = super().answer(request)
        return answered if not isinstance(answered, str) else f"{MID}\n- {answered}"


async def test_a_previous_summary_past_one_answer_that_leaves_room_is_merged_whole() -> None:
    summariser = Merging(SMALL)
    model = ScriptedModel(["ok"] * 12, context_window=100_000)
    options: dict[str, Any] = {**BY_HAND, "compaction": {**BY_HAND["compaction"]}}
    options["compaction"]["tail_tokens"] = 200
    async with harness(model, summariser.model, extra=[("big", BigOnce(MID))], chars=False) as h:
        agent = await h.agents.create("a", options=options)
        first = await by_hand(agent, *(prompt(n) for n in range(4)))
        assert first.outcome == "summarized" and first.summary == MID
        second = await by_hand(agent, *(prompt(n) for n in range(4, 7)))

    assert second.outcome == "summarized", second
    assert max(summariser.needed) <= SMALL, summariser.needed
    # merged as the previous summary, whole, its room taken from the chunk
    assert (
        f"<previous-summary>\n{MID}\n</previous-summary>"
        in summariser.requests[0].messages[0].content
    )


class Wordy(StatingSummariser):
    """Answers past max_tokens: about nine tenths of its request's message (a summary
    shorter than what it summarises, but no shorter than the room one answer has)."""

    def answer(self, request: ModelRequest) -> Any:
        answered = super().answer(request)
        if not isinstance(answered, str):
            return answered
        size = len(request.messages[0].content) * 9 // 10
        return f"{answered}: " + "note " * (size // 5)


async def test_a_summary_so_far_past_max_tokens_leaving_no_room_is_summarised_on() -> None:
    summariser = Wordy(SMALL)
    model = ScriptedModel(["ok"] * 12, context_window=100_000)
    options: dict[str, Any] = {**BY_HAND, "compaction": {**BY_HAND["compaction"]}}
    options["compaction"]["tail_tokens"] = 200
    async with harness(model, summariser.model, extra=[("big", BigOnce(MID))], chars=False) as h:
        agent = await h.agents.create("a", options=options)
        await by_hand(agent, *(prompt(n) for n in range(4)))
        second = await by_hand(agent, *(prompt(n) for n in range(4, 7)))

    assert second.outcome == "summarized", second
    assert max(summariser.needed) <= SMALL, summariser.needed
    contents = [r.messages[0].content for r in summariser.requests]
    # an answer that left no room beside it was summarised with the next chunk
    assert any("[summary of the conversation before this]\nsummary " in c for c in contents)


class Capped(StatingSummariser):
    """Honours ``max_tokens``: answers with a summary of about the answer's room (four
    characters a token, the heuristic's)."""

    def answer(self, request: ModelRequest) -> Any:
        answered = super().answer(request)
        if not isinstance(answered, str):
            return answered
        size = (request.max_tokens or 0) * 4
        return ("## Goal\n" + " ".join(f"f{i}" for i in range(size)))[:size]


def capped_options() -> dict[str, Any]:
    options: dict[str, Any] = {**BY_HAND, "compaction": {**BY_HAND["compaction"]}}
    options["compaction"].update(tail_tokens=200, max_summary_tokens=500)
    return options


async def test_a_previous_summary_past_four_answers_merged_whole_takes_a_capped_answer() -> None:
    """A previous summary (a plugin's, ~3,000 tokens) more than four times
    max_summary_tokens (500), beside a chunk in a large window, is merged whole: the
    answer of a summariser keeping to max_tokens is under a quarter of it, and is a
    summary (before: SUMMARY_TOO_SHORT at every later compaction)."""
    summariser = Capped(100_000)
    model = ScriptedModel(["ok"] * 12, context_window=100_000)
    async with harness(model, summariser.model, extra=[("big", BigOnce())], chars=False) as h:
        agent = await h.agents.create("a", options=capped_options())
        first = await by_hand(agent, *(prompt(n) for n in range(4)))
        assert first.outcome == "summarized" and first.summary == BIG
        second = await by_hand(agent, *(prompt(n) for n in range(4, 7)))

    assert second.outcome == "summarized", second
    assert len(summariser.requests) == 1 and second.summary is not None
    assert len(second.summary) * 4 < len(BIG)


async def test_a_noted_answer_merging_a_previous_summary_past_four_answers_is_refused() -> None:
    """The quarter rule, measured against what the answer could hold, still refuses an
    answer that dropped the previous summary."""
    summariser = ScriptedModel(["noted"] * 4, name="summarizer", context_window=100_000)
    model = ScriptedModel(["ok"] * 12, context_window=100_000)
    async with harness(model, summariser, extra=[("big", BigOnce())], chars=False) as h:
        agent = await h.agents.create("a", options=capped_options())
        await by_hand(agent, *(prompt(n) for n in range(4)))
        second = await by_hand(agent, *(prompt(n) for n in range(4, 7)))

    assert second.outcome == "failed" and second.error is not None
    assert second.error["code"] == "SUMMARY_TOO_SHORT", second.error
