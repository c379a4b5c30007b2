"""Compaction in the middle of a tool loop with reasoning (extended thinking).

Anthropic requires, while a turn's tool loop runs, the turn's thinking back unchanged:
the blocks of the last assistant message with their signatures (``redacted_thinking``
data as it came), and the turn's final assistant run (the assistant messages after the
last user message that is not tool results) must start with a thinking block. Without
interleaved thinking the model thinks once, in the turn's first step: the later steps'
messages hold tool calls only, so the thinking that opens the turn is in the first
assistant message of the turn.

A compaction triggered by a tool result (the request of the next step is over the
threshold) must then keep the last assistant message (reasoning, signatures, calls) and
its results exactly, and, when the tail it keeps starts inside the turn at a message
that does not open with reasoning, keep the turn's opening assistant message (with its
results) too, so that the request still starts the turn's run with its thinking.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from compaction_util import (
    CHARS,
    events_of,
    harness,
    opening,
    options,
    pairing_problems,
    result,
    summarizer,
    summary_of,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh import (
    AssistantMessage,
    Message,
    ModelRequest,
    ReasoningBlock,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from dsh.llm.base import Chunk, Finish, ReasoningDelta, ToolCallDelta, UsageChunk
from dsh.session import SessionEvent
from dsh.testing import Reply, ScriptedModel, check_invariants, run_turn
from dsh_compaction._events import previous_summary, reduce_summary
from dsh_compaction._plan import last_user_message, plan_compaction

pytestmark = pytest.mark.plugins("compaction")

# CharCounter: a read step adds ~1250 tokens; the request after the third read (about
# 3750) is over 0.8 of 4000, the first two (about 2500) are not. The tail budget (0.3 of
# the window: 1200) is smaller than one step, so the tail is the last step alone.
WINDOW = 4000


def step(n: int, *, thinking: bool, redacted: bool = False, calls: int = 1) -> Reply:
    """Step ``n``: (``thinking``) a signed thinking block, (``redacted``) a redacted one,
    then ``calls`` reads (ids ``toolu_<n>_<k>``)."""
    chunks: list[Chunk] = []
    if thinking:
        chunks += [ReasoningDelta(f"plan of step {n}"), ReasoningDelta("", signature=f"sig-{n}")]
    if redacted:
        chunks.append(ReasoningDelta("", redacted=f"opaque-{n}=="))
    for k in range(calls):
        chunks.append(ToolCallDelta(k, id=f"toolu_{n}_{k}", name="read"))
        chunks.append(ToolCallDelta(k, arguments=json.dumps({"path": f"f{n}{k}.py"})))
    return Reply(
        (*chunks, UsageChunk(Usage(input_tokens=10, output_tokens=1)), Finish("tool_calls"))
    )


def turn_run(messages: Sequence[Message]) -> list[Message]:
    """The turn's final run: the messages after the last user message (a summary
    message too: the API sees a user message), what Anthropic calls the final assistant
    turn while tool results are sent."""
    users = [i for i, m in enumerate(messages) if isinstance(m, UserMessage)]
    return list(messages[users[-1] + 1 if users else 0 :])


def opens_with_reasoning(messages: Sequence[Message]) -> bool:
    first = next(m for m in messages if isinstance(m, AssistantMessage))
    return bool(first.content) and isinstance(first.content[0], ReasoningBlock)


def last_step(messages: Sequence[Message]) -> list[Message]:
    """The last assistant message and everything after it (its results)."""
    last = max(i for i, m in enumerate(messages) if isinstance(m, AssistantMessage))
    return list(messages[last:])


async def run(*steps: Reply) -> tuple[ModelRequest, list[Any]]:
    """Run a turn of ``steps`` then ``done``: the request of the step after the last
    tool result (the one compacted first), and the turn's events."""
    model = ScriptedModel([*steps, "done"], context_window=WINDOW)
    async with harness(model, summarizer("the summary")) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "read the files")
        assert check_invariants(agent.session.events) == []
    model.assert_complete()
    assert events[-1].data["reason"] == "completed"
    assert [e.data["outcome"] for e in events_of(events, "compact/end")] == ["summarized"]
    return model.requests[-1], events


async def test_the_last_step_keeps_its_thinking_signatures_and_results_interleaved() -> None:
    # interleaved thinking: every step thinks; the last one also has redacted thinking
    # and two calls
    request, events = await run(
        step(1, thinking=True),
        step(2, thinking=True),
        step(3, thinking=True, redacted=True, calls=2),
    )

    messages = list(request.messages)
    assert previous_summary(messages[0]) is not None
    assert pairing_problems(messages) == []
    last = last_step(messages)
    assert last[0] == AssistantMessage(
        content=(
            ReasoningBlock(text="plan of step 3", signature="sig-3"),
            ReasoningBlock(text="", redacted="opaque-3=="),
            ToolCall(id="toolu_3_0", name="read", arguments='{"path": "f30.py"}'),
            ToolCall(id="toolu_3_1", name="read", arguments='{"path": "f31.py"}'),
        ),
        stop_reason="tool_calls",
        model="scripted",
        usage=last[0].usage,  # type: ignore[union-attr]
    )
    assert [type(m) for m in last[1:]] == [ToolResultMessage, ToolResultMessage]
    assert [m.call_id for m in last[1:]] == ["toolu_3_0", "toolu_3_1"]  # type: ignore[union-attr]
    assert all(m.content.startswith("f3") for m in last[1:])  # type: ignore[union-attr]
    assert opens_with_reasoning(turn_run(messages))
    (summary,) = events_of(events, "compact/summary")
    assert summary.data["kept"] == [0]  # the task only: step 3 opens the run itself


async def test_a_turn_that_thinks_once_keeps_its_opening_thinking_with_the_last_step() -> None:
    # thinking once, at the start of the turn (no interleaved thinking): the later
    # steps' messages hold calls only
    request, events = await run(
        step(1, thinking=True, redacted=True),
        step(2, thinking=False),
        step(3, thinking=False),
    )

    messages = list(request.messages)
    assert previous_summary(messages[0]) is not None
    assert pairing_problems(messages) == []
    run_ = turn_run(messages)
    assert opens_with_reasoning(run_)
    opening = run_[0]
    assert isinstance(opening, AssistantMessage)
    assert opening.content[:2] == (
        ReasoningBlock(text="plan of step 1", signature="sig-1"),
        ReasoningBlock(text="", redacted="opaque-1=="),
    )
    assert isinstance(run_[1], ToolResultMessage) and run_[1].call_id == "toolu_1_0"
    last = last_step(messages)
    assert [type(m) for m in last] == [AssistantMessage, ToolResultMessage]
    assert last[0].tool_calls[0].id == "toolu_3_0"  # type: ignore[union-attr]
    (summary,) = events_of(events, "compact/summary")
    assert summary.data["kept"] == [0, 1, 2]  # the task, step 1 and its result


def _call(call_id: str, *, thinking: bool) -> AssistantMessage:
    blocks: list[ReasoningBlock | ToolCall] = []
    if thinking:
        blocks.append(ReasoningBlock(text="why", signature=f"sig-{call_id}"))
    blocks.append(ToolCall(id=call_id, name="read", arguments="{}"))
    return AssistantMessage(content=tuple(blocks), stop_reason="tool_calls")


def _plan(messages: Sequence[Message], budget: int) -> object:
    counts = [CHARS.count_message(m) for m in messages]
    return plan_compaction(
        messages, counts, tail_budget=budget, keep=(), prune_chars=0, counter=CHARS, summary=None
    )


@pytest.mark.parametrize(
    ("thinks", "kept"),
    [
        ((True, False, False), (1, 2)),  # the opening step's thinking is kept
        ((True, False, True), ()),  # the tail opens with thinking itself
        ((False, False, False), ()),  # no thinking: nothing to keep
    ],
)
def test_the_plan_keeps_the_opening_reasoning_of_a_turn_it_cuts(
    thinks: tuple[bool, bool, bool], kept: tuple[int, ...]
) -> None:
    messages: list[Message] = [UserMessage(content="task " * 40)]
    for n, thinking in enumerate(thinks):
        messages += [_call(f"c{n}", thinking=thinking), result(f"c{n}", "r" * 300)]

    plan = _plan(messages, budget=320)  # the last step alone fits

    assert plan is not None
    assert plan.cut == 5  # type: ignore[attr-defined]
    assert plan.kept == kept  # type: ignore[attr-defined]


@pytest.mark.parametrize("cut", [6, 3])
def test_a_cut_before_the_turn_or_in_an_earlier_turn_keeps_nothing_more(cut: int) -> None:
    # the tail holds the whole current turn (its opening thinking is in it already), or
    # it starts in an earlier turn, which a text answer ended: that turn's thinking is
    # not needed any more
    messages: list[Message] = [
        UserMessage(content="first " * 40),
        _call("a", thinking=True),
        result("a", "r" * 300),
        _call("b", thinking=False),
        result("b", "r" * 300),
        AssistantMessage.model_validate({"content": [{"type": "text", "text": "ok"}]}),
        UserMessage(content="second"),
        _call("c", thinking=False),
        result("c", "r" * 30),
    ]

    budget = sum(CHARS.count_message(m) for m in messages[cut:])  # a tail from ``cut``

    plan = _plan(messages, budget=budget)

    assert plan is not None
    assert plan.cut == cut  # type: ignore[attr-defined]
    assert plan.kept == ()  # type: ignore[attr-defined]


@st.composite
def loop_history(draw: st.DrawFn) -> list[Message]:
    """Turns of a user message then steps (each may open with thinking, calls 1-2
    tools, results in any order), an earlier turn ending with a text answer."""
    messages: list[Message] = [summary_of("old")] if draw(st.booleans()) else []
    turns = draw(st.integers(1, 3))
    for turn in range(turns):
        messages.append(UserMessage(content="u" * draw(st.integers(1, 300))))
        for n in range(draw(st.integers(1, 6))):
            ids = [f"t{turn}s{n}c{k}" for k in range(draw(st.integers(1, 2)))]
            blocks: list[ReasoningBlock | ToolCall] = []
            if draw(st.booleans()):
                blocks.append(ReasoningBlock(text="w" * draw(st.integers(0, 200)), signature="s"))
            blocks += [ToolCall(id=i, name="read", arguments="{}") for i in ids]
            messages.append(AssistantMessage(content=tuple(blocks), stop_reason="tool_calls"))
            messages += [
                result(i, "r" * draw(st.integers(1, 900))) for i in draw(st.permutations(ids))
            ]
        if turn < turns - 1:
            messages.append(
                AssistantMessage.model_validate({"content": [{"type": "text", "text": "ok"}]})
            )
    return messages


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(loop_history(), st.integers(0, 6000), st.booleans())
def test_a_compacted_tool_loop_opens_with_the_thinking_it_opened_with(
    messages: list[Message], budget: int, keep_task: bool
) -> None:
    counts = [CHARS.count_message(m) for m in messages]
    summary = opening(messages)
    latest = last_user_message(messages, int(summary is not None))
    keep = {latest} if keep_task and latest is not None else set()

    plan = plan_compaction(
        messages,
        counts,
        tail_budget=budget,
        keep=keep,
        prune_chars=0,
        counter=CHARS,
        summary=summary,
    )

    if plan is None:
        return
    event = SessionEvent(
        "compact/summary", 0, 0.0, {"summary": "new", "replaces": plan.cut, "kept": plan.kept}
    )
    compacted = reduce_summary(messages, event)
    assert pairing_problems(compacted) == []
    assert last_step(compacted) == last_step(messages)  # the same objects, unchanged
    before, after = turn_run(messages), turn_run(compacted)
    if opens_with_reasoning(before):
        assert opens_with_reasoning(after)
        assert any(after[0] is m for m in before)  # one of the turn's, not a copy
