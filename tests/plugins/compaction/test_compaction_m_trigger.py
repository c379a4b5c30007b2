"""Found by mutation testing: the trigger beside a concurrent manual compaction,
overflow after a threshold attempt, and the settings' bounds and defaults."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
import pytest
from compaction_util import (
    CHARS,
    OVERFLOW,
    WINDOW,
    events_of,
    harness,
    options,
    reads,
    summarizer,
    summary_of,
)
from pydantic import ValidationError

from dsh import (
    DshError,
    Message,
    UserMessage,
    hookimpl,
)
from dsh.testing import ScriptedModel, fail, run_turn
from dsh_compaction import (
    SUMMARY_HEADER,
    CompactionSettings,
    compact_now,
)
from dsh_compaction._state import state_for

pytestmark = pytest.mark.plugins("compaction")


# --- the trigger and a concurrent manual compaction -----------------------------------------


class SlowSummary:
    """Summarises for a manual compaction once turn 2's first step waits for the
    compaction lock; a later call (the step's own compaction) fails."""

    def __init__(self, *, barely: bool) -> None:
        self.barely = barely  # a summary one token smaller than what it replaces
        self.calls = 0
        self.summarising = anyio.Event()  # the manual compaction holds the lock
        self.step_asks = anyio.Event()

    @hookimpl(tryfirst=True)  # registered after compaction: runs just before its impl
    def agent_request(self, turn: int) -> None:
        if turn == 2:
            self.step_asks.set()

    @hookimpl(optionalhook=True)
    async def compaction_summarize(self, agent: Any, messages: Sequence[Message]) -> str:
        self.calls += 1
        if self.calls > 1:
            raise RuntimeError("the step's own compaction")
        self.summarising.set()
        with anyio.fail_after(5):
            await self.step_asks.wait()
        assert state_for(agent).lock.statistics().tasks_waiting == 1
        if not self.barely:
            return "manual summary"
        return "x" * (sum(map(CHARS.count_message, messages)) - len(SUMMARY_HEADER) - 1)


async def manual_while_a_step_waits(
    slow: SlowSummary, task: str = "task", script: Sequence[Any] = (), **settings: Any
) -> tuple[Any, list[Any], list[Message]]:
    """Turn 1 (by default four reads and a long answer) ends just under the threshold;
    ``compact_now`` runs while turn 2's first request (5636 tokens) waits for it.
    Returns the model, turn 2's events and the history when the model was called."""
    script = script or [*reads(4)[:-1], "d" * 700]
    model = ScriptedModel([*script, "after"], context_window=WINDOW)
    async with harness(model, extra=[("slow", slow)]) as h:
        agent = await h.agents.create("a", options=options(**settings))
        await run_turn(agent, task)
        results = []

        async def manual() -> None:
            results.append(await compact_now(agent))

        async with anyio.create_task_group() as tg:
            tg.start_soon(manual)
            with anyio.fail_after(5):
                await slow.summarising.wait()
            events = await run_turn(agent, "next")
        history = list(agent.session.history)[:-1]
    assert [r.outcome for r in results] == ["summarized"]
    assert events[-1].data["reason"] == "completed"
    return model, events, history


async def test_a_step_waiting_for_a_manual_compaction_sends_the_compacted_history() -> None:
    slow = SlowSummary(barely=False)

    model, events, history = await manual_while_a_step_waits(slow)

    sent = list(model.requests[-1].messages)
    assert sent[0] == summary_of("manual summary")
    assert sent == history
    assert events_of(events, "compact/start") == []  # under the threshold: no second one
    assert slow.calls == 1


async def test_a_step_still_over_the_threshold_after_a_manual_compaction_sends_its_history() -> (
    None
):
    slow = SlowSummary(barely=True)

    model, events, history = await manual_while_a_step_waits(slow)

    # the step's own compaction failed: it sends the history as the manual one left it
    assert [e.data["outcome"] for e in events_of(events, "compact/end")] == ["summarized", "failed"]
    sent = list(model.requests[-1].messages)
    assert sent == history and len(sent) == 4


async def test_a_manual_compaction_that_keeps_the_history_length_is_noticed_too() -> None:
    # the manual compaction replaces the task (5704 tokens with the answer) by one
    # summary message: the history the step waited with has the same length
    slow = SlowSummary(barely=False)

    model, events, history = await manual_while_a_step_waits(
        slow, "t" * 3000, ["d" * 2700], keep_last_user_message=False
    )

    sent = list(model.requests[-1].messages)
    assert (
        sent == history == [summary_of("manual summary"), history[1], UserMessage(content="next")]
    )
    assert events_of(events, "compact/start") == []


# --- overflow after a threshold attempt -------------------------------------------------------


async def test_overflow_compacts_in_a_later_step_of_a_turn_whose_threshold_compaction_failed() -> (
    None
):
    model = ScriptedModel([*reads(6)[:-1], OVERFLOW, "done"], context_window=WINDOW)
    summariser = summarizer(fail("SERVER", "down"), "summary")
    async with harness(model, summariser) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    starts = events_of(events, "compact/start")
    ends = events_of(events, "compact/end")
    assert [(e.data["reason"], e.data["step"]) for e in starts] == [
        ("threshold", 6),
        ("overflow", 7),
    ]
    assert [e.data["outcome"] for e in ends] == ["failed", "summarized"]
    assert events[-1].data["reason"] == "completed"
    model.assert_complete()


async def test_overflow_right_after_a_threshold_compaction_of_the_same_step_tries_again() -> None:
    model = ScriptedModel([*reads(5)[:-1], OVERFLOW, "done"], context_window=WINDOW)
    summariser = summarizer("first", "second")
    async with harness(model, summariser) as h:
        agent = await h.agents.create("a", options=options(keep_last_user_message=False))
        events = await run_turn(agent, "task")

    starts = events_of(events, "compact/start")
    assert [(e.data["reason"], e.data["step"]) for e in starts] == [
        ("threshold", 6),
        ("overflow", 6),
    ]
    ends = events_of(events, "compact/end")
    assert [e.data["reason"] for e in ends] == ["threshold", "overflow"]


async def test_overflow_with_nothing_to_compact_ends_the_turn_without_a_retry() -> None:
    model = ScriptedModel([OVERFLOW, "never sent"], context_window=WINDOW)
    async with harness(model, summarizer()) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "hi")

    end = events_of(events, "compact/end")[0]
    assert (end.data["reason"], end.data["error"]["code"]) == ("overflow", "NOTHING")
    assert not any(e.type == "step/retry" for e in events)
    assert events[-1].data["error"]["code"] == "CONTEXT_WINDOW_EXCEEDED"
    assert len(model.requests) == 1


# --- settings ---------------------------------------------------------------------------------


def test_the_documented_defaults_of_pruning_keeping_and_estimating() -> None:
    settings = CompactionSettings()

    assert (settings.prune_chars, settings.keep_last_user_message) == (2000, True)
    assert (settings.chars_per_token, settings.tail_tokens) == (4.0, None)


@pytest.mark.parametrize(
    "invalid",
    [
        {"threshold": 0},
        {"tail_ratio": 0},
        {"tail_ratio": 1},
        {"prune_chars": -1},
        {"max_summary_tokens": 0},
        {"context_window": 0},
        {"tail_tokens": 0},
        {"chars_per_token": 0},
        {"tresh0ld": 0.5},
    ],
)
def test_out_of_range_settings_are_refused(invalid: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        CompactionSettings(**invalid)


async def run_with(compaction: Any) -> list[Any]:
    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, summarizer("s")) as h:
        agent = await h.agents.create("a", options={"model": "scripted", "compaction": compaction})
        return await run_turn(agent, "task")


async def test_the_agent_option_may_be_a_settings_object() -> None:
    events = await run_with(CompactionSettings(model="summarizer", prune_chars=0, threshold=0.5))

    assert events_of(events, "compact/start")[0].data["step"] == 4  # 3704 > 0.5 * 7000


@pytest.mark.parametrize(
    ("compaction", "message"),
    [
        ("off", "option 'compaction' must be a mapping of compaction settings, not str"),
        ({"treshold": 0.5}, "option 'compaction': treshold:"),
    ],
)
async def test_a_wrong_agent_option_ends_the_turn_saying_what_is_wrong(
    compaction: Any, message: str
) -> None:
    """Given when the agent is created, the option is refused there (the core checks it
    by the plugin's settings model); set on a live agent, the plugin's own check ends
    the turn."""
    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, summarizer("s")) as h:
        with pytest.raises(DshError, match="option compaction"):
            await h.agents.create("a", options={"model": "scripted", "compaction": compaction})
        agent = await h.agents.create("a", options={"model": "scripted"})
        agent.agent.options["compaction"] = compaction
        events = await run_turn(agent, "task")

    assert events[-1].data["reason"] == "error"
    assert message in events[-1].data["error"]["message"]


async def test_compact_now_inside_a_turn_leaves_flushing_to_the_loop() -> None:
    from dsh.testing import InMemoryPersistence, tool_calls

    store = InMemoryPersistence()
    flushes: list[tuple[int, int]] = []

    class CompactTool:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            from dsh.tools import tool

            @tool(name="compact")
            async def compact(context: Any) -> str:
                """Compact the history now."""
                before = store.flushes
                await compact_now(context.agent)
                flushes.append((before, store.flushes))
                return "compacted"

            register(compact)

    script = [*reads(3)[:-1], tool_calls(("compact", {})), "done"]
    model = ScriptedModel(script, context_window=1_000_000)
    extra = [("tool", CompactTool()), ("mem", store)]
    async with harness(model, summarizer("mid-turn"), extra=extra) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    assert events_of(events, "compact/summary")
    ((before, after),) = flushes
    assert after == before  # durable with the rest of the turn, when it ends
