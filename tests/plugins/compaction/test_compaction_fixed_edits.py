"""An earlier plugin's edit of the request's messages is not taken for a fixed part
that reaches the compaction limit: what the edit adds, net, is counted beside the
system prompt and tools, not every message it copied or replaced. Counting those
(a copy of each message, a rewritten first message with a note, a sliding window)
made the whole history look fixed, and the threshold never compacted again."""

from __future__ import annotations

from typing import Any

import pytest
from compaction_util import events_of, harness, options, reads, summarizer

from dsh import ModelRequest, UserMessage, hookimpl
from dsh.testing import ScriptedModel, run_turn

pytestmark = pytest.mark.plugins("compaction")


class RewriteAndNote:
    @hookimpl(tryfirst=True)
    def agent_request(self, request: ModelRequest) -> ModelRequest:
        first = UserMessage(content="the task, rewritten")
        note = UserMessage(content="n" * 10)
        messages = (first, *request.messages[1:], note)
        return request.model_copy(update={"messages": messages})


class CopyAll:
    @hookimpl(tryfirst=True)
    def agent_request(self, request: ModelRequest) -> ModelRequest:
        messages = tuple(m.model_copy() for m in request.messages)
        return request.model_copy(update={"messages": messages})


class DropOldestAndNote:
    @hookimpl(tryfirst=True)
    def agent_request(self, request: ModelRequest) -> ModelRequest:
        m = request.messages
        kept = (*m[:1], *m[3:]) if len(m) > 3 else tuple(m)
        return request.model_copy(update={"messages": (*kept, UserMessage(content="n"))})


class ListCopy:
    @hookimpl(tryfirst=True)
    def agent_request(self, request: ModelRequest) -> ModelRequest:
        return request.model_copy(update={"messages": list(request.messages)})


@pytest.mark.parametrize("plugin", [RewriteAndNote, CopyAll, DropOldestAndNote, ListCopy])
async def test_the_threshold_compacts_a_history_an_earlier_plugin_edits(
    plugin: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("WARNING", logger="dsh_compaction")
    model = ScriptedModel(reads(8), context_window=7000)
    async with harness(model, summarizer("s1", "s2", "s3"), extra=[("p", plugin())]) as h:
        agent = await h.agents.create("a", options=options(tail_tokens=1000))
        events = await run_turn(agent, "task")
    compactions = [e.data["reason"] for e in events_of(events, "compact/end")]
    assert "threshold" in compactions  # the limit is 5,600; system prompt and tools ~0
    assert not [r for r in caplog.records if "already reach" in r.getMessage()]
    # nor is the room below the limit planned as if the copied history were a note:
    # the tail was capped at ~0
    assert not [r for r in caplog.records if "tail_tokens" in r.getMessage()]


class BigSystem:
    """A system prompt over the limit (5,600) while ``on``."""

    on = True

    @hookimpl(tryfirst=True)
    def agent_request(self, request: ModelRequest) -> ModelRequest | None:
        return request.model_copy(update={"system": "s" * 6000}) if self.on else None


async def test_the_warning_comes_again_when_the_fixed_part_reaches_the_limit_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("WARNING", logger="dsh_compaction")
    big = BigSystem()
    model = ScriptedModel([*reads(6), *reads(6), *reads(6)], context_window=7000)
    compacted = []
    async with harness(model, summarizer("a", "b", "c", "d"), extra=[("big", big)]) as h:
        agent = await h.agents.create("a", options=options())
        for on in (True, False, True):
            big.on = on
            events = await run_turn(agent, "task")
            compacted.append(len(events_of(events, "compact/end")))
    assert compacted[0] == 0 and compacted[1] > 0 and compacted[2] == 0
    warned = [r for r in caplog.records if "already reach" in r.getMessage()]
    assert len(warned) == 2  # once, and once more after compaction had resumed
