"""A fork at turn N holds the log up to the end of turn N (docs/python.md): a manual
compaction made after it, between turns N and N+1, belongs to the turns after, so the
fork at N has turn N's history as it was when the turn ended, and the fork at N+1 the
compacted one (docs/compaction.md, *Manual compaction*)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from compaction_util import BY_HAND, BulkyTool, summarizer

import dsh_compaction
from dsh.testing import ScriptedModel, run_turn, scripted_harness
from dsh_compaction import SUMMARY_HEADER, compact_now

pytestmark = pytest.mark.plugins("compaction", "persistence")


def harness(tmp_path: Path, *models: ScriptedModel) -> Any:
    persistence = pytest.importorskip("dsh_persistence")
    plugins = [("compaction", dsh_compaction), ("persistence", persistence), ("bulky", BulkyTool())]
    return scripted_harness(
        *models,
        plugins=plugins,
        load_entry_points=False,
        config_text=f"persistence:\n  directory: {str(tmp_path)!r}\n",
    )


async def test_a_fork_at_a_turn_leaves_out_a_compaction_made_after_it(tmp_path: Path) -> None:
    model = ScriptedModel(["one done", "two done"], context_window=100_000)
    async with harness(tmp_path, model, summarizer("the summary")) as h:
        agent = await h.agents.create("a", options=BY_HAND)
        await run_turn(agent, "one " * 300)
        assert (await compact_now(agent)).outcome == "summarized"  # between turns 1 and 2
        await run_turn(agent, "two")
        session_id = agent.session.id
    async with harness(tmp_path, ScriptedModel([], context_window=100_000), summarizer()) as h:
        at_one = await h.agents.fork("b", session_id, 1, options=BY_HAND)
        at_two = await h.agents.fork("c", session_id, 2, options=BY_HAND)
        one = list(at_one.session.history)
        two = list(at_two.session.history)
        assert not [e for e in at_one.session.events if e.type.startswith("compact/")]
    assert [m.role for m in one] == ["user", "assistant"]
    assert one[0].content == "one " * 300  # turn 1 as it ended, not summarised
    assert two[0].content == SUMMARY_HEADER + "the summary"
