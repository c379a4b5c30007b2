"""The hooks dsh-compaction offers other plugins: keep marks, a plugin's own summary,
an exact token counter."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from compaction_util import (
    WINDOW,
    RequestSpy,
    events_of,
    harness,
    options,
    pairing_problems,
    reads,
    summarizer,
)

from dsh import Message, ToolResultMessage, hookimpl
from dsh.testing import ScriptedModel, check_invariants, run_turn
from dsh_compaction import TextTokenCounter

pytestmark = pytest.mark.plugins("compaction")


class KeepSecondRead:
    """Marks the result of the read of f1.py; the hook sees the history each time."""

    def __init__(self) -> None:
        self.seen: list[frozenset[int]] = []

    @hookimpl(optionalhook=True)
    def compaction_keep(self, messages: Sequence[Message], keep: frozenset[int]) -> set[int]:
        self.seen.append(keep)
        marked = {
            i
            for i, m in enumerate(messages)
            if isinstance(m, ToolResultMessage) and m.content.startswith("f1.py")
        }
        return keep | marked


async def test_b44_marked_messages_survive_verbatim_with_their_tool_call() -> None:
    keeper = KeepSecondRead()
    spy = RequestSpy()
    model = ScriptedModel(reads(5), context_window=WINDOW)
    summariser = summarizer("sum")
    async with harness(model, summariser, extra=[("keeper", keeper), ("spy", spy)]) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    before, sent = spy.before[5], list(model.requests[5].messages)
    summary = events_of(events, "compact/summary")[0]
    # the task (kept by default), then the f1 read as a unit: call and result
    assert summary.data["kept"] == [0, 3, 4]
    assert sent[1:4] == [before[0], before[3], before[4]]
    assert sent[3].content.startswith("f1.py")
    assert pairing_problems(sent) == []
    assert keeper.seen == [frozenset({0})]  # the built-in mark came first
    transcript = summariser.requests[0].messages[0].content
    assert "f0.py: 0123" in transcript
    assert "f1.py" not in transcript  # kept messages are not summarised
    assert check_invariants(agent.session.events) == []


async def test_keep_last_user_message_can_be_turned_off() -> None:
    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, summarizer("sum")) as h:
        agent = await h.agents.create("a", options=options(keep_last_user_message=False))
        events = await run_turn(agent, "task")

    assert events_of(events, "compact/summary")[0].data["kept"] == []
    assert len(model.requests[5].messages) == 3  # summary, last call, last result


async def test_a_plugin_can_write_the_summary() -> None:
    class Summarize:
        def __init__(self) -> None:
            self.calls: list[tuple[int, str | None]] = []

        @hookimpl(optionalhook=True)
        async def compaction_summarize(
            self, messages: Sequence[Message], previous_summary: str | None
        ) -> str:
            self.calls.append((len(messages), previous_summary))
            return f"{len(messages)} messages about files"

    summarize = Summarize()
    model = ScriptedModel([*reads(5), *reads(5)], context_window=WINDOW)
    summariser = summarizer()  # never called
    async with harness(model, summariser, extra=[("summarize", summarize)]) as h:
        agent = await h.agents.create("a", options=options())
        first = await run_turn(agent, "task one")
        await run_turn(agent, "task two")

    # turn 1: eight messages (four reads) after the kept task; turn 2 merges
    assert summarize.calls[0] == (8, None)
    assert summarize.calls[1][1] == "8 messages about files"
    summary = events_of(first, "compact/summary")[0]
    assert summary.data["source"] == "plugin" and "model" not in summary.data
    assert summariser.requests == []


async def test_a_token_counter_from_a_plugin_is_used_incrementally() -> None:
    class Heavy:
        """Each message costs 1000 tokens: the third request (5 messages) passes 0.8."""

        def __init__(self) -> None:
            self.counted = 0
            self.models: list[str | None] = []

        def count(self, text: str) -> int:
            return 0

        @hookimpl(optionalhook=True)
        def compaction_token_counter(self, model: str | None) -> TextTokenCounter:
            self.models.append(model)
            heavy = self

            class Counter(TextTokenCounter):
                def count_message(self, message: Message) -> int:
                    heavy.counted += 1
                    return 1000

            return Counter(self.count, call_overhead=0)

    heavy = Heavy()
    model = ScriptedModel(reads(3), context_window=WINDOW)
    summariser = summarizer("sum")
    async with harness(model, summariser, extra=[("heavy", heavy)], chars=False) as h:
        agent = await h.agents.create("a", options=options(tail_tokens=2000))
        events = await run_turn(agent, "task")

    assert heavy.models == ["scripted"]  # asked once per agent and model
    (start,) = events_of(events, "compact/start")
    assert (start.data["step"], start.data["tokens"]) == (4, 7000)
    # steps 1-4 count 1 + 2 + 2 + 2 messages (not 1 + 3 + 5 + 7); the compaction counts
    # an empty and the new summary message (2), then the compacted history once (4); the
    # summariser's one request is measured whole before it is sent (1)
    assert heavy.counted == 7 + 2 + 4 + 1


async def test_a_summary_that_is_not_text_is_a_failure_naming_the_plugin() -> None:
    class Wrong:
        @hookimpl(optionalhook=True)
        def compaction_summarize(self) -> Any:
            return 42

    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, extra=[("wrong", Wrong())]) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    (end,) = events_of(events, "compact/end")
    error = end.data["error"]
    assert (end.data["outcome"], error["code"], error["plugin"]) == ("failed", "HOOK", "wrong")
    # the impl that answered, named as dsh names a raising one
    assert "failed in hook compaction_summarize (impl " in error["message"]
    assert ".Wrong.compaction_summarize()" in error["message"]
    assert "returned int, not str" in error["message"]
    assert events[-1].data["reason"] == "completed"


@pytest.mark.parametrize("counter", [RuntimeError("no tokenizer"), "not a counter"])
async def test_a_broken_token_counters_warning_names_its_plugin(
    counter: Any, caplog: pytest.LogCaptureFixture
) -> None:
    class Counts:
        @hookimpl(optionalhook=True)
        def compaction_token_counter(self) -> Any:
            if isinstance(counter, Exception):
                raise counter
            return counter

    caplog.set_level("WARNING", logger="dsh_compaction")
    model = ScriptedModel(["fine"], context_window=WINDOW)
    async with harness(model, extra=[("counts", Counts())], chars=False) as h:
        agent = await h.agents.create("a", options=options())
        await run_turn(agent, "task")

    (warning,) = [r.getMessage() for r in caplog.records if r.name == "dsh_compaction"]
    assert warning.startswith("agent 'a': compaction_token_counter of plugin 'counts' ")
    if isinstance(counter, str):
        tail = "returned 'not a counter', not a TokenCounter; counting with the heuristic"
        assert warning.endswith(tail)
    else:
        assert "' failed, counting with the heuristic: plugin 'counts' failed" in warning
        assert warning.endswith("RuntimeError: no tokenizer")
