"""Behaviour 44, as properties over random histories: a compaction never separates a
tool call from its result, whatever the history, the budget and the kept messages."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from compaction_util import opening, pairing_problems, summary_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from dsh.session import SessionEvent
from dsh_compaction import HeuristicCounter
from dsh_compaction._boundaries import choose_cut, cut_points
from dsh_compaction._events import reduce_summary
from dsh_compaction._plan import plan_compaction

pytestmark = pytest.mark.plugins("compaction")

COUNTER = HeuristicCounter()


@st.composite
def unit(draw: st.DrawFn) -> list[Message]:
    """A user message, a text answer, or an assistant message with 1-3 tool calls
    followed by their results (in any order, sometimes with steering in between). Call
    ids repeat across units, as providers that number calls per message make them."""
    kind = draw(st.sampled_from(["user", "text", "calls"]))
    if kind == "user":
        return [UserMessage(content="u" * draw(st.integers(1, 400)))]
    if kind == "text":
        return [AssistantMessage(content=(TextBlock(text="a" * draw(st.integers(1, 400))),))]
    ids = draw(st.lists(st.sampled_from(["c0", "c1", "c2", "x"]), min_size=1, max_size=3))
    ids = list(dict.fromkeys(ids))  # unique within one message
    calls = tuple(ToolCall(id=i, name="read", arguments="{}") for i in ids)
    results: list[Message] = [
        ToolResultMessage(call_id=i, name="read", content="r" * draw(st.integers(1, 3000)))
        for i in draw(st.permutations(ids))
    ]
    if len(results) > 1 and draw(st.booleans()):
        results.insert(1, UserMessage(content="steering"))
    return [AssistantMessage(content=calls, stop_reason="tool_calls"), *results]


@st.composite
def history(draw: st.DrawFn) -> list[Message]:
    messages: list[Message] = [summary_of("old")] if draw(st.booleans()) else []
    for part in draw(st.lists(unit(), max_size=25)):
        messages += part
    if draw(st.booleans()):  # a step still running: calls without results yet
        pending = ToolCall(id="pending", name="read", arguments="{}")
        messages.append(AssistantMessage(content=(pending,), stop_reason="tool_calls"))
    return messages


def separable(messages: Sequence[Message], point: int) -> bool:
    """Brute force: nothing before ``point`` waits for a result, nothing from ``point``
    on answers a call before it, and the tail does not start with a result."""
    if isinstance(messages[point], ToolResultMessage):
        return False
    return pairing_problems(messages[:point]) == [] and not any(
        "without its call" in p for p in pairing_problems(messages[point:])
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history())
def test_b44_cut_points_are_exactly_the_separable_indices(messages: list[Message]) -> None:
    points = cut_points(messages)

    assert points == [p for p in range(1, len(messages)) if separable(messages, p)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history(), st.integers(0, 20_000), st.data())
def test_b44_a_compacted_history_keeps_every_call_with_its_result(
    messages: list[Message], budget: int, data: st.DataObject
) -> None:
    counts = [COUNTER.count_message(m) for m in messages]
    keep = data.draw(st.sets(st.integers(0, max(len(messages) - 1, 0))))

    plan = plan_compaction(
        messages,
        counts,
        tail_budget=budget,
        keep=keep,
        prune_chars=1000,
        counter=COUNTER,
        summary=opening(messages),
    )

    if plan is None:
        return
    event = SessionEvent(
        "compact/summary", 0, 0.0, {"summary": "new", "replaces": plan.cut, "kept": plan.kept}
    )
    compacted = reduce_summary(messages, event)
    pending = set(pairing_problems(messages))  # only the running step's call
    assert set(pairing_problems(compacted)) <= pending
    assert compacted[0] == summary_of("new")
    tail = compacted[1 + len(plan.kept) :]
    assert tail == messages[plan.cut :] and tail
    assert not isinstance(tail[0], ToolResultMessage)
    first = 1 if plan.previous is not None else 0
    assert set(plan.kept) | set(plan.summarised) == set(range(first, plan.cut))
    assert not set(plan.kept) & set(plan.summarised)
    assert {i for i in keep if first <= i < plan.cut} <= set(plan.kept)
    for pruned in plan.prune:  # only bulky tool results the summary covers (or the
        # turn's first step kept for its reasoning: none here)
        message = messages[pruned.index]
        assert isinstance(message, ToolResultMessage) and len(message.content) > 1000
        assert pruned.index in (*plan.summarised, *plan.opening)
        assert pruned.call_id == message.call_id


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.integers(1, 500), min_size=2, max_size=40),
    st.integers(0, 5000),
    st.data(),
)
def test_b44_the_tail_is_the_largest_that_fits_the_budget(
    counts: list[int], budget: int, data: st.DataObject
) -> None:
    points = sorted(data.draw(st.sets(st.integers(1, len(counts) - 1), min_size=1)))

    cut = choose_cut(points, counts, budget)

    assert cut in points
    fitting = [p for p in points if sum(counts[p:]) <= budget]
    assert cut == (fitting[0] if fitting else points[-1])
