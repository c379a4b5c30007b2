"""Found by mutation testing: when pruning is enough, the tail budget, the latest user
message, and where the threshold is.
"""

from __future__ import annotations

import pytest
from compaction_util import (
    WINDOW,
    events_of,
    harness,
    options,
    reads,
    summarizer,
)

from dsh.testing import ScriptedModel, run_turn
from dsh_compaction import (
    compact_now,
)

pytestmark = pytest.mark.plugins("compaction")

# --- when pruning is enough, and how large the tail is ------------------------------------


@pytest.mark.parametrize(
    ("tail_tokens", "task", "outcome"),
    [
        # tail_tokens 2800: half the room, the most a tail may be (it keeps 2 reads)
        (2800, 1488, "pruned"),  # step 5 prunes two reads: exactly a quarter of the room left
        (2800, 1489, "summarized"),  # one token short of it
        (2800, 2000, "summarized"),  # pruning alone leaves less than a quarter
    ],
)
async def test_pruning_is_the_compaction_only_when_it_frees_a_quarter_of_the_room(
    tail_tokens: int, task: int, outcome: str
) -> None:
    model = ScriptedModel(reads(5), context_window=WINDOW)
    # the task is not kept: its tokens would come out of the tail's (the large task only
    # sizes the request here)
    settings = {"prune_chars": 500, "tail_tokens": tail_tokens, "keep_last_user_message": False}
    async with harness(model, summarizer("s")) as h:
        agent = await h.agents.create("a", options=options(**settings))
        events = await run_turn(agent, "t" * task)

    end = events_of(events, "compact/end")[0]
    assert end.data["outcome"] == outcome
    if outcome == "pruned":
        # threshold 5600, room 5600: pruning must reach 5600 - 5600 / 4
        assert end.data["tokens_after"] == 4200
        (prune,) = events_of(events, "compact/prune")
        saved = end.data["tokens_before"] - end.data["tokens_after"]
        assert prune.data["tokens_saved"] == saved
        assert [p["index"] for p in prune.data["pruned"]] == [
            2,
            4,
        ]  # the tail keeps the 2 latest reads


async def test_the_tail_is_at_most_half_the_room_below_the_threshold() -> None:
    # a manual compaction of 7000 tokens: 3000 of system prompt, 40 messages of 100;
    # threshold 5600 leaves 2600 of room, so the tail is 1300 tokens (not 0.3 * 7000)
    model = ScriptedModel(["a" * 100] * 20, context_window=1_000_000)
    agent_options = {**options(), "system_prompt": "s" * 3000}
    async with harness(model, summarizer("s")) as h:
        agent = await h.agents.create("a", options=agent_options)
        for _ in range(20):
            await run_turn(agent, "u" * 100)
        await compact_now(agent)
        events = list(agent.session.events)

    start, summary, _ = events_of(events)
    assert (start.data["tokens"], start.data["context_window"]) == (7000, 7000)
    assert summary.data["replaces"] == 40 - 13  # a tail of exactly 1300 tokens


async def test_a_manual_compaction_measures_against_a_known_window_smaller_than_the_history() -> (
    None
):
    model = ScriptedModel(reads(3), context_window=2000)
    async with harness(model, summarizer("s")) as h:
        agent = await h.agents.create("a", options=options(enabled=False))
        await run_turn(agent, "task")
        result = await compact_now(agent)
        events = list(agent.session.events)

    start = events_of(events, "compact/start")[0]
    assert start.data["tokens"] > 2000
    assert start.data["context_window"] == 2000
    assert result.outcome == "summarized"


async def test_a_manual_compaction_summarises_even_when_pruning_would_do() -> None:
    model = ScriptedModel(reads(3), context_window=1_000_000)
    async with harness(model, summarizer("by hand")) as h:
        agent = await h.agents.create("a", options=options(prune_chars=500))
        await run_turn(agent, "task")
        result = await compact_now(agent)
        events = events_of(list(agent.session.events))

    assert result.outcome == "summarized"
    assert [e.type for e in events] == ["compact/start", "compact/summary", "compact/end"]


# --- the latest user message --------------------------------------------------------------


@pytest.mark.parametrize(("size", "kept"), [(2100, [0]), (2101, [])])
async def test_the_latest_user_message_is_kept_only_if_it_fits_the_tail_budget(
    size: int, kept: list[int]
) -> None:
    # tail budget: 0.3 * 7000 = 2100 tokens; the fourth request (2100 + 3 reads) passes
    model = ScriptedModel(reads(3), context_window=WINDOW)
    summariser = summarizer("s")
    async with harness(model, summariser) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "t" * size)

    summary = events_of(events, "compact/summary")[0]
    assert summary.data["kept"] == kept
    assert ("t" * 100 in summariser.requests[0].messages[0].content) is not bool(kept)


async def test_nothing_to_compact_at_the_threshold_logs_nothing_and_a_later_step_compacts() -> None:
    # the task alone passes the threshold (nothing to cut); with a read after it, the
    # task (too large to keep) is summarised
    model = ScriptedModel(reads(1), context_window=WINDOW)
    async with harness(model, summarizer("s")) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "t" * 6000)

    start, _, end = events_of(events)
    assert (start.data["step"], end.data["outcome"]) == (2, "summarized")
    assert (end.data["turn"], end.data["step"]) == (1, 2)  # the end says where, too
    assert events[-1].data["reason"] == "completed"


async def test_a_request_exactly_at_the_threshold_is_not_compacted() -> None:
    # the second request: 4368 + a read of 1232 = 5600 = 0.8 * 7000
    model = ScriptedModel(reads(1), context_window=WINDOW)
    async with harness(model, summarizer("s")) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "t" * 4368)

    assert events_of(events) == []
    assert events[-1].data["reason"] == "completed"
