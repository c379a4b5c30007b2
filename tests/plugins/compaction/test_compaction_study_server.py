"""A user study of compaction, in process: long sessions against one model that, like an
OpenAI-compatible server (vLLM, OpenAI), refuses a request whose prompt plus its output
reservation (``max_tokens``) exceeds its window, and that also writes the summaries
(the default summariser is the agent's own model).

It checks what the other compaction tests do not: a turn that crosses the threshold
again and again (each summary built on the last, every request after a compaction
fitting, whole tool-call/result pairs kept), the summariser's own request on a small
window (its answer capped at a quarter of the window), and the output reservation the
server counts against the window.
"""

from __future__ import annotations

from typing import Any

import pytest
from compaction_util import (
    WindowServer as Server,
)
from compaction_util import (
    call,
    events_of,
    harness,
    pairing_problems,
    prompt_tokens,
    result,
    summary_of,
)

from dsh import UserMessage
from dsh.testing import ScriptedModel, check_invariants, run_turn, tool_calls
from dsh_compaction import DEFAULT_PROMPT, SUMMARY_HEADER, HeuristicCounter
from dsh_compaction._events import previous_summary
from dsh_compaction._plan import too_large

pytestmark = pytest.mark.plugins("compaction")


def two_reads(steps: int, then: str = "done") -> list[Any]:
    """``steps`` steps each calling ``read`` twice at once (ids ``call-0``, ``call-1``
    in every step, as providers that number calls per message send them)."""
    calls = [
        tool_calls(("read", {"path": f"a{i}.py"}), ("read", {"path": f"b{i}.py"}))
        for i in range(steps)
    ]
    return [*calls, then]


async def test_a_long_turn_compacts_again_and_again_each_summary_built_on_the_last() -> None:
    server = Server(6000, two_reads(24), lambda n: f"summary {n}: " + "notes " * 40)
    async with harness(server.model, chars=False) as h:
        options = {"model": "scripted", "compaction": {"prune_chars": 0}}
        agent = await h.agents.create("a", options=options)
        events = await run_turn(agent, "the task")
        assert check_invariants(agent.session.events) == []

    assert events[-1].data["reason"] == "completed"
    ends = events_of(events, "compact/end")
    assert [e.data["outcome"] for e in ends] == ["summarized"] * len(ends)
    assert len(ends) >= 3
    assert server.refused == []  # no request was too large for the server
    # each summariser call merges the summary so far (a chunk's, or the last compaction's)
    texts = [f"summary {n}: " + "notes " * 40 for n in range(1, len(server.summarising) + 1)]
    for previous, request in zip(texts, server.summarising[1:], strict=False):
        (message,) = request.messages
        assert f"<previous-summary>\n{previous.strip()}\n</previous-summary>" in message.content
    written = events_of(events, "compact/summary")
    calls = [e.data["calls"] for e in written]
    assert sum(calls) == len(server.summarising)
    last_calls = [sum(calls[: k + 1]) for k in range(len(calls))]
    assert [e.data["summary"] for e in written] == [texts[n - 1].strip() for n in last_calls]
    assert [e.data["merged_previous"] for e in written] == [False] + [True] * (len(written) - 1)
    for end in ends:
        assert end.data["tokens_after"] <= 0.8 * 6000 < end.data["tokens_before"]
    compacted = [r for r in server.sent if r.messages[0].content.startswith(SUMMARY_HEADER)]
    # the request after each compaction starts with that compaction's summary
    assert {r.messages[0] for r in compacted} == {summary_of(e.data["summary"]) for e in written}
    for request in compacted:
        messages = list(request.messages)
        assert prompt_tokens(request) <= 6000  # really fits
        assert pairing_problems(messages) == []  # whole call/result pairs, no orphans
        # one summary, the latest, then the task kept verbatim
        assert not any(previous_summary(m) is not None for m in messages[1:])
        assert messages[1] == UserMessage(content="the task")


async def test_the_summary_request_fits_a_small_window() -> None:
    long_summary = "## Progress\n" + "read a file and noted its contents; " * 180  # ~1600
    server = Server(4096, two_reads(12), lambda n: f"{n}. {long_summary}")
    async with harness(server.model, chars=False) as h:
        options = {"model": "scripted", "compaction": {"prune_chars": 0}}
        agent = await h.agents.create("a", options=options)
        events = await run_turn(agent, "the task")

    assert [r for r in server.refused if r.system == DEFAULT_PROMPT] == []
    assert all(e.data["outcome"] == "summarized" for e in events_of(events, "compact/end"))
    assert events[-1].data["reason"] == "completed"


async def test_a_summariser_refusing_its_request_leaves_the_history_and_names_compaction(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """What a user sees when the summary request does not fit: a summariser that writes
    far past its ``max_tokens`` (~3,500 tokens on a 4,096 window), so that no chunk fits
    beside the summary so far."""
    caplog.set_level("WARNING", logger="dsh_compaction")
    long_summary = "## Progress\n" + "read a file and noted its contents; " * 400
    server = Server(4096, two_reads(12), lambda n: f"{n}. {long_summary}")
    async with harness(server.model, chars=False) as h:
        options = {"model": "scripted", "compaction": {"prune_chars": 0}}
        agent = await h.agents.create("a", options=options)
        events = await run_turn(agent, "the task")
        history = list(agent.session.history)
        assert check_invariants(agent.session.events) == []

    failed = [e for e in events_of(events, "compact/end") if e.data["outcome"] == "failed"]
    assert failed and failed[0].data["error"]["code"] == "CONTEXT_WINDOW_EXCEEDED"
    warnings = [r.getMessage() for r in caplog.records if r.name == "dsh_compaction"]
    assert any(
        "compaction (threshold, turn 1) failed, the history is unchanged: "
        "CONTEXT_WINDOW_EXCEEDED: the summariser's request was too long" in w
        for w in warnings
    )
    # nothing of what the agent did is lost: every step's call and result is still there
    assert pairing_problems(history) == []
    # the overflow compaction fails the same way: the turn ends in the provider's error
    assert events[-1].data["reason"] == "error"
    assert events[-1].data["error"]["code"] == "CONTEXT_WINDOW_EXCEEDED"


async def test_a_request_let_through_by_the_threshold_fits_with_its_output_reservation() -> None:
    server = Server(8000, two_reads(16), lambda n: f"summary {n}")
    async with harness(server.model, chars=False) as h:
        options = {"model": "scripted", "max_tokens": 2500, "compaction": {"prune_chars": 0}}
        agent = await h.agents.create("a", options=options)
        events = await run_turn(agent, "the task")

    assert events[-1].data["reason"] == "completed"
    assert [e for e in events if e.type == "step/retry"] == []  # no overflow retry needed
    assert server.refused == []


async def test_the_models_output_limit_is_reserved_when_the_request_sets_none() -> None:
    """No ``max_tokens`` option: the provider sends the model's ``max_output_tokens``,
    so that is what the threshold leaves room for."""
    server = Server(8000, two_reads(16), lambda n: f"summary {n}", max_output=2500)
    async with harness(server.model, chars=False) as h:
        options = {"model": "scripted", "compaction": {"prune_chars": 0}}
        agent = await h.agents.create("a", options=options)
        events = await run_turn(agent, "the task")

    assert events[-1].data["reason"] == "completed"
    assert events_of(events, "compact/end")  # it compacted...
    assert server.refused == []  # ...before any request was refused


async def test_a_reserve_as_large_as_the_window_is_left_out_of_the_threshold() -> None:
    """A ``max_tokens`` the window cannot hold is the server's to refuse; the threshold
    does not compact every request for it."""
    model = ScriptedModel(["word " * 300, "done"], context_window=4000)
    async with harness(model, chars=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted", "max_tokens": 4000})
        await run_turn(agent, "the first task")
        events = await run_turn(agent, "the second task")

    assert events_of(events, "compact/start") == []
    assert len(model.requests[-1].messages) == 3  # the whole history was sent


def test_only_results_larger_than_the_room_are_stubbed_and_none_without_room() -> None:
    """``too_large``: a result over the room below the threshold is stubbed wherever it
    is; with no room at all (the system prompt and tools fill it) no result is blamed."""
    counter = HeuristicCounter()
    history = [
        UserMessage(content="go"),
        call("c1"),
        result("c1", "small"),
        call("c2"),
        result("c2", "x" * 8000),
    ]
    counts = [counter.count_message(m) for m in history]
    (stubbed,) = too_large(history, counts, 1000, counter)
    assert (stubbed.index, stubbed.call_id) == (4, "c2")
    assert stubbed.stub.startswith("[output of read removed: 8000 characters, about ")
    assert 0 < stubbed.saves < counts[4]
    assert too_large(history, counts, counts[4], counter) == ()  # not over the room
    assert too_large(history, counts, 0, counter) == ()
    assert too_large(history, counts, 1, counter) == (stubbed,)  # "small" is no larger stubbed
