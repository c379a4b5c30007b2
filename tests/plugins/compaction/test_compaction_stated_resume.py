"""A context window a server stated survives a resume: the overflow's ``compact/start``
records it (``stated``), and an agent resumed (or forked) from that log plans its
threshold checks with it from its first request.

Before: the stated window lived in the agent's memory only, and every continued
session (``dsh run --continue``) paid a refused request and an overflow compaction to
learn it again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from compaction_util import (
    REAL,
    BulkyTool,
    CountChars,
    RealWindow,
    events_of,
    options,
    reads,
    summarizer,
)

import dsh_compaction
from dsh.testing import check_invariants, run_turn, scripted_harness

pytestmark = pytest.mark.plugins("compaction", "persistence")


def harness(tmp_path: Path, server: RealWindow, *summaries: str) -> Any:
    """A harness storing sessions as JSONL in ``tmp_path`` (dsh-persistence)."""
    persistence = pytest.importorskip("dsh_persistence")
    plugins = [
        ("compaction", dsh_compaction),
        ("persistence", persistence),
        ("bulky", BulkyTool()),
        ("chars", CountChars()),
    ]
    return scripted_harness(
        server.model,
        summarizer(*summaries),
        plugins=plugins,
        load_entry_points=False,
        config_text=f"persistence:\n  directory: {str(tmp_path)!r}\n",
    )


async def learned(tmp_path: Path) -> str:
    """A stored session whose turn 2 was refused by a server stating its window."""
    server = RealWindow([*reads(3), *reads(3)])
    async with harness(tmp_path, server, "summary 1") as h:
        agent = await h.agents.create("a", options=options())
        await run_turn(agent, "task")
        second = await run_turn(agent, "next")
        session_id: str = agent.session.id
    assert len(server.refused) == 1
    start, *_ = events_of(second, "compact/start")
    assert start.data["reason"] == "overflow"
    assert start.data["stated"] == {"model": "scripted", "context_window": REAL}
    return session_id


async def test_a_resumed_agent_compacts_at_the_stated_windows_threshold(tmp_path: Path) -> None:
    session_id = await learned(tmp_path)

    server = RealWindow(reads(4))
    async with harness(tmp_path, server, "summary 2") as h:
        resumed = await h.agents.resume("a", session_id, options=options())
        events = await run_turn(resumed, "more")
        assert check_invariants(resumed.session.events) == []

    assert server.refused == []  # no refused request to learn it again
    starts = events_of(events, "compact/start")
    assert [(e.data["reason"], e.data["context_window"]) for e in starts] == [("threshold", REAL)]
    assert "stated" not in starts[0].data  # recorded once, when learned
    assert events[-1].data["reason"] == "completed"


async def test_a_fork_keeps_the_stated_window_too(tmp_path: Path) -> None:
    session_id = await learned(tmp_path)

    server = RealWindow(reads(4))
    async with harness(tmp_path, server, "summary 2") as h:
        forked = await h.agents.fork("b", session_id, 2, options=options())
        events = await run_turn(forked, "more")

    assert server.refused == []
    assert [e.data["reason"] for e in events_of(events, "compact/start")] == ["threshold"]
