"""``keep_last_user_message`` and ``tail_tokens``: the turn's prompts kept verbatim
before the tail are taken out of the tail budget once (the tail shrinks to make room
for them; a prompt already in the tail is not counted again), and finding them costs
no rescan of the turn's events at every compaction (``_task``: the turn's start is
remembered per agent, ``AgentState.turn_task``)."""

from __future__ import annotations

import pytest
from compaction_util import CharCounter, Dump, events_of, harness, options, summarizer

from dsh import UserMessage
from dsh.testing import ScriptedModel, check_invariants, run_turn, tool_calls
from dsh_compaction import SUMMARY_HEADER

pytestmark = pytest.mark.plugins("compaction")

TASK = "T" * 500
TAIL = 1000


def dumps(count: int) -> list[object]:
    return [*(tool_calls(("dump", {"size": 200})) for _ in range(count)), "done"]


async def test_b44_the_kept_prompt_and_the_tail_together_fit_tail_tokens() -> None:
    model = ScriptedModel(dumps(30), context_window=7000)
    async with harness(model, summarizer("summary", "summary 2"), extra=[("dump", Dump())]) as h:
        agent = await h.agents.create("a", options=options(tail_tokens=TAIL))
        events = await run_turn(agent, TASK)
        assert check_invariants(agent.session.events) == []
    assert events_of(events, "compact/summary")
    counter = CharCounter()
    compacted = [
        r.messages for r in model.requests if r.messages[0].content.startswith(SUMMARY_HEADER)
    ]
    first = compacted[0]  # the request the first compaction rebuilt
    assert first[1] == UserMessage(content=TASK)  # the task, kept verbatim
    verbatim = sum(counter.count_message(m) for m in first[1:])
    assert verbatim <= TAIL  # the prompt's 500 tokens come out of the tail's 1000


class Counting(list):  # type: ignore[type-arg]
    """The session's event list, counting the events read from it one by one (as
    ``_task`` reads it)."""

    visited = 0

    def __getitem__(self, key: object) -> object:
        found = super().__getitem__(key)  # type: ignore[index]
        if not isinstance(key, slice):  # run_turn slices the turn's events off it
            Counting.visited += 1
        return found


async def test_compaction_in_a_long_turn_does_not_rescan_the_turns_events() -> None:
    model = ScriptedModel(dumps(150), context_window=7000)
    summaries = [f"summary {i}" for i in range(20)]
    async with harness(model, summarizer(*summaries), extra=[("dump", Dump())]) as h:
        long_turn = {**options(tail_tokens=TAIL), "max_steps": 200}
        agent = await h.agents.create("a", options=long_turn)
        session = agent.session
        session._events = Counting(session._events)
        Counting.visited = 0
        events = await run_turn(agent, TASK)
        total = len(session.events)
    assert len(events_of(events, "compact/summary")) >= 3
    # each compaction reads the events logged since the one before (back to the turn's
    # start at most), not the whole turn again: all of them together, one pass
    assert Counting.visited <= total, (Counting.visited, total)
