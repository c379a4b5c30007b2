"""An overflow whose error gives the server's count of the refused request
(``ModelError.request_tokens``) as well as its window: the window is kept in dsh's
estimated tokens, scaled by the ratio of dsh's estimate of that request to the
server's count (within ``MAX_RATIO``), for the overflow's plan and the threshold check
of the steps after it.

Before: the stated window (the server's tokens) was compared with dsh's estimates as
it was; with an estimate of half the server's count, the threshold never came and the
server refused a request at nearly every step, each paid with an overflow compaction."""

from __future__ import annotations

from typing import Any

import pytest
from compaction_util import REAL, RealWindow, events_of, harness, options, reads, summarizer

from dsh.testing import run_turn
from dsh_compaction._stated import MAX_RATIO, logged_windows

pytestmark = pytest.mark.plugins("compaction")


async def eight_reads(factor: float) -> tuple[RealWindow, list[Any]]:
    """A turn of eight reads, its server's tokens ``factor`` times the estimate."""
    server = RealWindow(reads(8), factor=factor)
    summaries = summarizer(*(f"summary {n}" for n in range(1, 9)))
    async with harness(server.model, summaries) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")
    return server, events


async def test_the_window_is_kept_in_estimated_tokens() -> None:
    server, events = await eight_reads(2.0)

    assert len([size for size in server.sizes if size > REAL]) == 1  # then the threshold
    overflow, *after = events_of(events, "compact/start")
    assert overflow.data["reason"] == "overflow"
    assert overflow.data["context_window"] == REAL // 2  # planned in estimated tokens
    stated = overflow.data["stated"]
    assert stated["context_window"] == REAL
    assert stated["request_tokens"] == 2 * stated["estimated"]
    assert after and {e.data["reason"] for e in after} == {"threshold"}
    assert events[-1].data["reason"] == "completed"
    assert logged_windows(events) == {"scripted": REAL // 2}  # as a resume reads it


async def test_the_scale_is_bounded() -> None:
    _, events = await eight_reads(5.0)

    overflow, *_ = events_of(events, "compact/start")
    assert overflow.data["stated"]["request_tokens"] > 4 * overflow.data["stated"]["estimated"]
    assert logged_windows(events) == {"scripted": int(REAL / MAX_RATIO)}


async def test_an_estimate_equal_to_the_servers_count_records_the_window_alone() -> None:
    _, events = await eight_reads(1.0)

    overflow, *_ = events_of(events, "compact/start")
    assert overflow.data["stated"] == {"model": "scripted", "context_window": REAL}
