"""Behaviour 46: after resume, a compacted session derives the same compacted history,
and its next request is the one the live session would have sent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from compaction_util import (
    WINDOW,
    BulkyTool,
    CountChars,
    events_of,
    harness,
    options,
    reads,
    summarizer,
)

import dsh_compaction
from dsh import ModelRequest
from dsh.testing import InMemoryPersistence, ScriptedModel, run_turn, scripted_harness

pytestmark = pytest.mark.plugins("compaction")


def same_request(a: ModelRequest, b: ModelRequest) -> None:
    assert (a.model, a.system, a.tools, a.max_tokens) == (b.model, b.system, b.tools, b.max_tokens)
    assert list(a.messages) == list(b.messages)


async def snapshot(store: InMemoryPersistence, session_id: str) -> InMemoryPersistence:
    """A second store holding what ``store`` holds now (as a copy of the stored log)."""
    copy = InMemoryPersistence()
    stored = await store.load(session_id)
    assert stored is not None
    copy.stored[session_id] = stored
    return copy


SCENARIOS = {
    # one summary (the task kept verbatim after it)
    "summary": ([*reads(5)], ["summary one"], {}),
    # two summaries, the second merging the first
    "merged": ([*reads(5), *reads(5)], ["summary one", "summary two"], {}),
    # pruning only
    "pruned": ([*reads(5)], [], {"prune_chars": 500}),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
async def test_b46_a_resumed_session_derives_the_same_history_and_next_request(
    scenario: str,
) -> None:
    script, summaries, settings = SCENARIOS[scenario]
    turns = len(script) // 6
    store = InMemoryPersistence()
    model = ScriptedModel([*script, "answer"], context_window=WINDOW)
    async with harness(model, summarizer(*summaries), extra=[("mem", store)]) as h:
        agent = await h.agents.create("a", options=options(**settings))
        compacted = []
        for turn in range(turns):
            compacted += events_of(await run_turn(agent, f"task {turn}"))
        live = list(agent.session.history)
        session_id = agent.session.id
        stored = await snapshot(store, session_id)
        await run_turn(agent, "next")
        live_next = model.requests[-1]
    assert any(e.type in ("compact/summary", "compact/prune") for e in compacted)

    model = ScriptedModel(["answer"], context_window=WINDOW)
    async with harness(model, summarizer(), extra=[("mem", stored)]) as h:
        resumed = await h.agents.resume("a", session_id, options=options(**settings))
        assert list(resumed.session.history) == live
        events = await run_turn(resumed, "next")

    assert events_of(events) == []  # resuming does not compact again
    same_request(model.requests[0], live_next)


async def test_b46_without_the_plugin_a_compacted_log_replays_the_full_history() -> None:
    store = InMemoryPersistence()
    model = ScriptedModel([*reads(5)], context_window=WINDOW)
    async with harness(model, summarizer("summary"), extra=[("mem", store)]) as h:
        agent = await h.agents.create("a", options=options())
        await run_turn(agent, "task")
        compacted = list(agent.session.history)
        session_id = agent.session.id

    plugins = [("bulky", BulkyTool()), ("mem", store)]
    async with scripted_harness(plugins=plugins, load_entry_points=False) as h:
        # without its stored compaction settings: they would apply to nothing (refused)
        resumed = await h.agents.resume("a", session_id, {})
        full = list(resumed.session.history)

    assert len(full) == 12 > len(compacted)  # the task, five reads, the answer
    assert full[-1] == compacted[-1]


@pytest.mark.plugins("compaction", "persistence")
async def test_b46_resume_through_the_persistence_plugin(tmp_path: Path) -> None:
    persistence = pytest.importorskip("dsh_persistence")
    config = f"persistence:\n  directory: {str(tmp_path)!r}\n"

    def plugins() -> list[Any]:
        return [
            ("compaction", dsh_compaction),
            ("persistence", persistence),
            ("bulky", BulkyTool()),
            ("chars", CountChars()),
        ]

    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with scripted_harness(
        model,
        summarizer("summary"),
        plugins=plugins(),
        load_entry_points=False,
        config_text=config,
    ) as h:
        agent = await h.agents.create("a", options=options())
        await run_turn(agent, "task")
        live = list(agent.session.history)
        session_id = agent.session.id
    assert len(live) == 5  # summary, task, last read, answer

    model = ScriptedModel(["again"], context_window=WINDOW)
    async with scripted_harness(
        model, summarizer(), plugins=plugins(), load_entry_points=False, config_text=config
    ) as h:
        resumed = await h.agents.resume("a", session_id, options=options())
        assert list(resumed.session.history) == live
        await run_turn(resumed, "next")

    assert list(model.requests[0].messages)[:-1] == live
