"""A too-large tool result's stub that leaves the request still over the limit: the
automatic compaction goes on with the stubbed history (docs/compaction.md, Prune).

The model is an OpenAI-like server (``WindowServer``): a request whose prompt plus its
output reservation exceeds the window is refused with CONTEXT_WINDOW_EXCEEDED."""

from __future__ import annotations

from typing import Any

import pytest
from compaction_util import Dump, WindowServer, events_of, harness

from dsh import ModelRequest
from dsh.testing import ScriptedModel, fail, run_turn, tool_calls

pytestmark = pytest.mark.plugins("compaction")


class BrokenSummariser:
    """A summariser model that fails every request (and counts them)."""

    def __init__(self) -> None:
        self.calls = 0
        self.model = ScriptedModel([self.answer] * 20, name="broken", context_window=100_000)

    def answer(self, request: ModelRequest) -> Any:
        self.calls += 1
        return fail("SERVER", "the summariser is down")


async def test_a_failed_summary_after_the_stub_keeps_the_stub_and_is_not_retried() -> None:
    """The stub is a compaction of its own (``pruned``); the summary of the rest that
    follows fails (``failed``, the stubbed history unchanged). The failure counts as the
    turn's failed automatic compaction: the overflow that follows does not ask the
    broken summariser again, and the provider's error ends the turn."""
    turns = 3
    server = WindowServer(6000, ["ok"] * turns + [tool_calls(("dump", {"size": 20_000})), "done"])
    broken = BrokenSummariser()
    options = {"model": "scripted", "max_tokens": 1500, "compaction": {"model": "broken"}}
    async with harness(server.model, broken.model, extra=[("dump", Dump())], chars=False) as h:
        agent = await h.agents.create("a", options=options)
        for i in range(turns):
            await run_turn(agent, str(i) * 4600)  # 1150 tokens a turn
        events = await run_turn(agent, "dump it")

    ends = [e.data for e in events_of(events, "compact/end")]
    assert [(e["reason"], e["outcome"], e.get("error", {}).get("code")) for e in ends] == [
        ("threshold", "pruned", None),
        ("threshold", "failed", "SERVER"),  # before the request was sent
    ]
    assert broken.calls == 1
    # the request sent (and refused) had the stub, not the 20,000 characters
    (refused,) = server.refused
    assert "y" * 1000 not in str(refused.messages[-1])
    assert "removed:" in str(refused.messages[-1])
    assert events[-1].data["reason"] == "error"
    assert events[-1].data["error"]["code"] == "CONTEXT_WINDOW_EXCEEDED"
