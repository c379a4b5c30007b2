"""The summariser's answer limit keeps to what its model can write: a model whose info
(or its ``models:`` entry) says ``max_output_tokens`` is asked for no more than that,
even when ``max_summary_tokens`` is larger; a provider refuses a request whose
``max_tokens`` is past the model's output limit, and every compaction would fail."""

from __future__ import annotations

import pytest
from compaction_util import WINDOW, WindowServer, events_of, harness, options, reads

from dsh.testing import ScriptedModel, run_turn

pytestmark = pytest.mark.plugins("compaction")


async def test_a_summariser_of_its_own_is_asked_for_no_more_than_its_output_limit() -> None:
    model = ScriptedModel(reads(5), context_window=WINDOW)
    small = ScriptedModel(
        ["the summary"], name="summarizer", context_window=1_000_000, max_output_tokens=512
    )
    async with harness(model, small) as h:
        agent = await h.agents.create("a", options=options(max_summary_tokens=2048))
        events = await run_turn(agent, "task")

    assert [e.data["outcome"] for e in events_of(events, "compact/end")] == ["summarized"]
    assert [r.max_tokens for r in small.requests] == [512]


async def test_the_agents_own_model_as_summariser_keeps_to_its_output_limit() -> None:
    # the default summariser: the agent's model (its steps reserve the same limit)
    server = WindowServer(WINDOW, reads(5), max_output=300)
    async with harness(server.model) as h:
        settings = {"prune_chars": 0, "max_summary_tokens": 1000}
        agent = await h.agents.create("a", options={"model": "scripted", "compaction": settings})
        events = await run_turn(agent, "task")

    assert [e.data["outcome"] for e in events_of(events, "compact/end")] == ["summarized"]
    assert server.summarising
    assert {r.max_tokens for r in server.summarising} == {300}


async def test_a_max_summary_tokens_below_the_output_limit_is_kept() -> None:
    model = ScriptedModel(reads(5), context_window=WINDOW)
    small = ScriptedModel(
        ["the summary"], name="summarizer", context_window=1_000_000, max_output_tokens=4096
    )
    async with harness(model, small) as h:
        agent = await h.agents.create("a", options=options(max_summary_tokens=700))
        await run_turn(agent, "task")

    assert [r.max_tokens for r in small.requests] == [700]
