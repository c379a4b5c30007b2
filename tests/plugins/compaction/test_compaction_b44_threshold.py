"""Behaviour 44: over the threshold, older history becomes one summary message plus the
recent tail, the next request shows exactly that, and no tool call loses its result."""

from __future__ import annotations

import pytest
from compaction_util import (
    RequestSpy,
    events_of,
    harness,
    pairing_problems,
    reads,
    summarizer,
    summary_of,
)

from dsh import ToolResultMessage, UserMessage
from dsh.testing import ScriptedModel, check_invariants, run_turn
from dsh_compaction import DEFAULT_PROMPT

pytestmark = pytest.mark.plugins("compaction")

# CharCounter: a read step adds 1232 tokens; with a 7000 window step 6 (6168) passes 0.8.
OPTIONS = {"model": "scripted", "compaction": {"model": "summarizer", "prune_chars": 0}}


async def test_b44_over_the_threshold_the_next_request_is_summary_plus_tail() -> None:
    model = ScriptedModel(reads(5), context_window=7000)
    summariser = summarizer("Goal: read f0-f3.")
    spy = RequestSpy()
    async with harness(model, summariser, extra=[("spy", spy)]) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        events = await run_turn(agent, "task one")
        history = list(agent.session.history)

    assert len(model.requests) == 6
    before, sent = spy.before[5], list(model.requests[5].messages)
    # summary, the turn's task kept verbatim, then the last read (call + result)
    assert sent == [summary_of("Goal: read f0-f3."), UserMessage(content="task one"), *before[-2:]]
    assert isinstance(sent[-1], ToolResultMessage)
    assert pairing_problems(sent) == []
    assert [list(r.messages) for r in model.requests[:5]] == spy.before[:5]  # untouched
    assert history == [*sent, history[-1]]
    assert history[-1].text == "done"

    start, summary, end = events_of(events)
    assert [start.type, summary.type, end.type] == [
        "compact/start",
        "compact/summary",
        "compact/end",
    ]
    assert start.data["reason"] == "threshold"
    assert (start.data["turn"], start.data["step"], start.data["messages"]) == (1, 6, len(before))
    assert start.data["tokens"] > 0.8 * 7000
    assert summary.data["summary"] == "Goal: read f0-f3."
    assert summary.data["replaces"] == len(before) - 2
    assert summary.data["kept"] == [0]
    assert summary.data["source"] == "model" and summary.data["model"] == "summarizer"
    assert end.data["outcome"] == "summarized"
    assert end.data["tokens_after"] < 0.5 * end.data["tokens_before"]
    assert (end.data["messages_before"], end.data["messages_after"]) == (len(before), 4)
    # logged inside step 6, before its model call
    types = [e.type for e in events]
    step6 = next(i for i, e in enumerate(events) if e.type == "step/start" and e.data["step"] == 6)
    assert step6 < types.index("compact/start") < types.index("compact/end")
    assert types.index("compact/end") < types.index("assistant/chunk", step6)
    assert check_invariants(agent.session.events) == []


async def test_b44_the_summariser_gets_a_transcript_and_the_structured_prompt() -> None:
    model = ScriptedModel(reads(5), context_window=7000)
    summariser = summarizer("summary")
    async with harness(model, summariser) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        await run_turn(agent, "task one")

    (request,) = summariser.requests
    assert request.model == "summarizer"
    assert request.system == DEFAULT_PROMPT
    assert "file path" in DEFAULT_PROMPT and "Open tasks" in DEFAULT_PROMPT
    assert request.tools == () and request.max_tokens == 2048
    (message,) = request.messages
    assert isinstance(message, UserMessage)
    for i in range(4):  # the summarised reads, with their arguments and outputs
        assert f'[assistant calls read]\n{{"path": "f{i}.py"}}' in message.content
        assert f"[tool result: read]\nf{i}.py: 0123" in message.content
    assert "f4.py" not in message.content  # the tail is not summarised
    assert "<previous-summary>" not in message.content


async def test_b44_the_next_turn_sends_the_compacted_history() -> None:
    model = ScriptedModel([*reads(5), "second answer"], context_window=7000)
    summariser = summarizer("summary")
    async with harness(model, summariser) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        await run_turn(agent, "task one")
        compacted = list(agent.session.history)
        events = await run_turn(agent, "next")

    assert list(model.requests[6].messages) == [*compacted, UserMessage(content="next")]
    assert events_of(events) == []  # under the threshold again: no compaction
    summariser.assert_complete()


async def test_b44_a_second_compaction_merges_the_previous_summary() -> None:
    model = ScriptedModel([*reads(5), *reads(5)], context_window=7000)
    summariser = summarizer("first summary", "merged summary")
    async with harness(model, summariser) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        await run_turn(agent, "task one")
        await run_turn(agent, "task two")
        history = list(agent.session.history)

    second = summariser.requests[1].messages[0].content
    assert "<previous-summary>\nfirst summary\n</previous-summary>" in second
    assert SUMMARY_HEADER_TEXT not in second  # merged as text, not as a message
    assert history[0] == summary_of("merged summary")
    assert history[1] == UserMessage(content="task two")
    assert not any(m == summary_of("first summary") for m in history)
    assert pairing_problems(history) == []


SUMMARY_HEADER_TEXT = "[Summary of the earlier conversation"


async def test_b44_under_the_threshold_nothing_happens() -> None:
    model = ScriptedModel(reads(5), context_window=8192)  # the core suite's window
    summariser = summarizer()
    async with harness(model, summariser, chars=False) as h:  # the default heuristic
        agent = await h.agents.create("a", options=OPTIONS)
        events = await run_turn(agent, "task one")

    assert events_of(events) == []
    assert summariser.requests == []
    assert events[-1].data["reason"] == "completed"


async def test_b44_bulky_old_tool_results_are_pruned_first_without_a_model_call() -> None:
    model = ScriptedModel(reads(5), context_window=7000)
    summariser = summarizer()  # any call would fail the compaction
    options = {"model": "scripted", "compaction": {"model": "summarizer", "prune_chars": 500}}
    async with harness(model, summariser) as h:
        agent = await h.agents.create("a", options=options)
        events = await run_turn(agent, "task one")
        history = list(agent.session.history)

    _start, prune, end = events_of(events)
    assert prune.type == "compact/prune"
    assert [p["index"] for p in prune.data["pruned"]] == [2, 4, 6, 8]
    assert end.data["outcome"] == "pruned"
    assert end.data["tokens_after"] <= 0.8 * 7000 < end.data["tokens_before"]
    sent = list(model.requests[5].messages)
    assert len(sent) == len(history) - 1  # same messages, nothing summarised
    for index in (2, 4, 6, 8):
        assert sent[index].content.startswith("[output of read removed to save context")
    assert sent[10].content.startswith("f4.py: 0123")  # the tail keeps its output
    assert pairing_problems(sent) == []
    assert summariser.requests == []
    assert check_invariants(agent.session.events) == []


async def test_b44_a_region_larger_than_the_summarisers_window_is_summarised_in_chunks() -> None:
    model = ScriptedModel(reads(5), context_window=7000)
    # a small window: each chunk of the transcript gets its own call, merged in turn
    small = ScriptedModel(
        [f"after chunk {i}" for i in range(1, 10)], name="summarizer", context_window=8192
    )
    async with harness(model, small) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        events = await run_turn(agent, "task one")

    calls = len(small.requests)
    assert calls > 1
    for i in range(1, calls):
        prompt = small.requests[i].messages[0].content
        assert f"<previous-summary>\nafter chunk {i}\n</previous-summary>" in prompt
    summary = events_of(events, "compact/summary")[0]
    assert summary.data["summary"] == f"after chunk {calls}"
    assert summary.data["calls"] == calls
    transcripts = "".join(r.messages[0].content for r in small.requests)
    assert all(f"f{i}.py: 0123" in transcripts for i in range(4))
