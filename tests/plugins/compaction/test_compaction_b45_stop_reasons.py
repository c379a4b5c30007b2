"""Behaviour 45: a summary must be a finished answer. A summariser answer the provider
stopped (stop reason ``error``: a refusal, a content filter, an error inside the
answer) or that did not finish (``aborted``, ``paused``, ``tool_calls``) is a failure
that leaves the history as it was; ``stop`` is a summary, ``max_tokens`` a truncated
one (kept, as before)."""

from __future__ import annotations

from typing import Any

import pytest
from compaction_util import WINDOW, RequestSpy, events_of, harness, options, reads, summarizer

from dsh import StopReason
from dsh.llm import Finish, TextDelta
from dsh.testing import Reply, ScriptedModel, check_invariants, run_turn

pytestmark = pytest.mark.plugins("compaction")


def stopped(reason: StopReason, text: str = "I'm sorry, but I can't") -> Reply:
    return Reply((TextDelta(text), Finish(reason)))


async def run(summariser: ScriptedModel) -> tuple[Any, Any, Any]:
    model = ScriptedModel(reads(5), context_window=WINDOW)
    spy = RequestSpy()
    async with harness(model, summariser, extra=[("spy", spy)]) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")
        assert check_invariants(agent.session.events) == []
    return events, model, spy


@pytest.mark.parametrize(
    ("reason", "code"),
    [
        ("error", "REFUSED"),
        ("aborted", "INCOMPLETE"),
        ("paused", "INCOMPLETE"),
        ("tool_calls", "INCOMPLETE"),
    ],
)
async def test_b45_an_unfinished_or_refused_summary_leaves_history_unchanged(
    reason: StopReason, code: str
) -> None:
    events, model, spy = await run(summarizer(stopped(reason)))

    assert [list(r.messages) for r in model.requests] == spy.before  # nothing compacted
    assert not any(e.type in ("compact/summary", "compact/prune") for e in events)
    end = events_of(events)[-1]
    assert end.data["outcome"] == "failed"
    assert end.data["error"]["code"] == code
    assert f"stop reason {reason!r}" in end.data["error"]["message"]
    assert "'summarizer'" in end.data["error"]["message"]
    assert end.data["messages_after"] == end.data["messages_before"]
    assert events[-1].type == "turn/end" and events[-1].data["reason"] == "completed"
    model.assert_complete()


async def test_b45_a_refusal_in_a_later_chunk_fails_the_whole_summary() -> None:
    # a small summariser window: one call per chunk; the third chunk's answer is refused
    script: list[Any] = [
        "chunk 1",
        "chunk 2",
        stopped("error"),
        *(f"chunk {i}" for i in range(4, 9)),
    ]
    small = ScriptedModel(script, name="summarizer", context_window=8192)

    events, model, spy = await run(small)

    assert [list(r.messages) for r in model.requests] == spy.before
    end = events_of(events)[-1]
    assert (end.data["outcome"], end.data["error"]["code"]) == ("failed", "REFUSED")
    assert len(small.requests) == 3  # no call after the refused one


async def test_b45_a_finished_and_a_truncated_summary_are_both_applied() -> None:
    finished: tuple[tuple[StopReason, bool], ...] = (("stop", False), ("max_tokens", True))
    for reason, truncated in finished:
        events, _, _ = await run(summarizer(stopped(reason, "the summary")))
        summary = events_of(events, "compact/summary")[0]
        assert (summary.data["summary"], summary.data["truncated"]) == ("the summary", truncated)
