"""Found by mutation testing (mutant C17): a step that waited for a manual compaction
checks the compacted history against the limit that leaves room for the output the
request reserves (``limit_for``), not against the threshold's share of the window."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
import pytest
from compaction_util import CHARS, events_of, harness

from dsh import Message, hookimpl
from dsh.testing import ScriptedModel, run_turn
from dsh_compaction import SUMMARY_HEADER, compact_now
from dsh_compaction._state import state_for

pytestmark = pytest.mark.plugins("compaction")

WINDOW = 10_000  # CharCounter: one token a character
RESERVE = 3_000  # the limit: min(0.8 * 10,000, 10,000 - 3,000) = 7,000


class ManualFirst:
    """The manual compaction's summary (1,500 tokens with its header) is written once
    turn 4's first step waits for the compaction lock; the step's own compaction gets
    a short one."""

    def __init__(self) -> None:
        self.calls = 0
        self.summarising = anyio.Event()
        self.step_asks = anyio.Event()

    @hookimpl(tryfirst=True)  # registered after compaction: runs just before its impl
    def agent_request(self, turn: int) -> None:
        if turn == 4:
            self.step_asks.set()

    @hookimpl(optionalhook=True)
    async def compaction_summarize(self, agent: Any, messages: Sequence[Message]) -> str:
        self.calls += 1
        if self.calls > 1:
            return "the step's summary"
        self.summarising.set()
        with anyio.fail_after(5):
            await self.step_asks.wait()
        assert state_for(agent).lock.statistics().tasks_waiting == 1
        return "s" * (1500 - len(SUMMARY_HEADER))


async def test_a_step_between_the_limit_and_the_threshold_after_a_manual_one_compacts() -> None:
    """Turns 1-3 (1,000-token question and answer each) make 6,000 tokens; turn 4 asks
    4,000 more (10,000: over the limit), and waits for a manual compaction that leaves
    1,500 + 2,000 + 4,000 = 7,500 tokens: under 0.8 of the window, over the window less
    the reserve. The step compacts again before it sends."""
    slow = ManualFirst()
    model = ScriptedModel(["a" * 1000] * 3 + ["done"], context_window=WINDOW)
    options = {"model": "scripted", "max_tokens": RESERVE, "compaction": {"prune_chars": 0}}
    async with harness(model, extra=[("slow", slow)]) as h:
        agent = await h.agents.create("a", options=options)
        for i in range(3):
            await run_turn(agent, str(i) * 1000)
        results = []

        async def manual() -> None:
            results.append(await compact_now(agent))

        async with anyio.create_task_group() as tg:
            tg.start_soon(manual)
            with anyio.fail_after(5):
                await slow.summarising.wait()
            events = await run_turn(agent, "4" * 4000)

    assert [r.tokens_after for r in results] == [7500]  # with turn 4's question
    assert events[-1].data["reason"] == "completed"
    ends = [(e.data["reason"], e.data["outcome"]) for e in events_of(events, "compact/end")]
    assert ends == [("manual", "summarized"), ("threshold", "summarized")]
    sent = model.requests[-1]
    assert sum(map(CHARS.count_message, sent.messages)) <= WINDOW - RESERVE
