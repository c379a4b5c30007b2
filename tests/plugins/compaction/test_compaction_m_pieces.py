"""Found by mutation testing: where a history may be cut, the plan, the compact/*
events and their reducers on logs they did not write, the token estimate, and the
transcript and chunks the summariser reads."""

from __future__ import annotations

import pytest
from compaction_util import (
    CHARS,
    WINDOW,
    answer,
    call,
    events_of,
    harness,
    options,
    plan,
    reads,
    result,
    summary_of,
)

from dsh import (
    AssistantMessage,
    Message,
    ReasoningBlock,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from dsh.session import SessionEvent
from dsh.testing import ScriptedModel, max_tokens, run_turn
from dsh_compaction import (
    DEFAULT_PROMPT,
    SUMMARY_HEADER,
    HeuristicCounter,
    RequestEstimator,
    TextTokenCounter,
    compact_now,
)
from dsh_compaction._boundaries import answered_by, choose_cut, cut_points
from dsh_compaction._events import previous_summary, prune_stub, reduce_prune, reduce_summary
from dsh_compaction._plan import last_user_message
from dsh_compaction._transcript import _chunks, continued, transcript

pytestmark = pytest.mark.plugins("compaction")


# --- where a history may be cut ------------------------------------------------------


def test_a_result_without_a_waiting_call_is_never_a_cut_point_nor_closes_a_call() -> None:
    duplicate = [
        UserMessage(content="u"),
        call("c"),
        result("c"),
        result("c"),
        UserMessage(content="v"),
    ]
    orphan = [
        UserMessage(content="u"),
        call("a"),
        result("b"),  # answers nothing
        UserMessage(content="steering"),
        result("a"),
        UserMessage(content="v"),
    ]

    assert answered_by(duplicate) == {2: 1}
    assert cut_points(duplicate) == [1, 4]
    assert answered_by(orphan) == {4: 1}
    assert cut_points(orphan) == [1, 5]  # the call of "a" waits until index 4


def test_a_tail_exactly_as_large_as_the_budget_is_kept() -> None:
    counts = [10, 10, 10, 10]

    assert choose_cut([1, 2, 3], counts, budget=20) == 2
    assert choose_cut([1, 2, 3], counts, budget=19) == 3


# --- the plan --------------------------------------------------------------------------


def test_after_a_previous_summary_a_cut_always_takes_something_new() -> None:
    messages = [
        summary_of("old"),
        UserMessage(content="a" * 40),
        answer("b" * 40),
        UserMessage(content="c"),
    ]

    planned = plan(messages, budget=10_000)  # everything would fit in the tail

    assert planned is not None
    assert (planned.cut, planned.summarised, planned.previous) == (2, (1,), "old")
    # the summary stands for the new message and the previous summary together
    assert planned.replaced_tokens == CHARS.count_message(messages[0]) + 40


def test_with_only_kept_messages_after_a_previous_summary_there_is_nothing_to_compact() -> None:
    messages = [
        summary_of("old"),
        UserMessage(content="a" * 40),
        answer("b" * 40),
        UserMessage(content="c"),
    ]

    assert plan(messages, budget=10_000, keep=[1]) is None


def test_the_latest_user_message_is_never_a_previous_summary() -> None:
    assert last_user_message([summary_of("s"), answer("a")], 1) is None
    assert last_user_message([summary_of("s"), UserMessage(content="u"), answer("a")], 1) == 1


def test_a_region_no_larger_than_an_empty_summary_is_not_compacted() -> None:
    header = len(SUMMARY_HEADER)  # what an empty summary message costs (CharCounter)

    assert plan([UserMessage(content="x" * header), answer("a")], budget=0) is None
    assert plan([UserMessage(content="x" * (header + 1)), answer("a")], budget=0) is not None


def test_only_tool_results_longer_than_prune_chars_are_pruned() -> None:
    messages = [
        UserMessage(content="u" * 500),  # long, but not a tool result
        call("c1"),
        result("c1", "x" * 150),  # exactly prune_chars: kept
        call("c2"),
        result("c2", "x" * 151),
        UserMessage(content="tail"),
    ]

    planned = plan(messages, budget=0, prune=150)

    assert planned is not None
    stub = prune_stub(messages[4])
    assert [(p.index, p.call_id, p.stub) for p in planned.prune] == [(4, "c2", stub)]
    assert planned.prune[0].saves == 151 - len(stub)


def test_a_result_whose_stub_saves_nothing_is_not_pruned() -> None:
    messages = [
        UserMessage(content="u" * 300),
        call("c"),
        result("c", "x" * 60),
        UserMessage(content="v"),
    ]

    planned = plan(messages, budget=0, prune=50)  # the stub is longer than 60 characters

    assert planned is not None and planned.prune == ()


# --- the events and their reducers ----------------------------------------------------


def test_the_summary_header_and_the_prune_stub_are_stable() -> None:
    # stored logs replay with them: changing either changes how old sessions derive
    assert SUMMARY_HEADER == (
        "[Summary of the earlier conversation. It was written to keep the session inside "
        "the context window and replaces the messages it covers.]\n\n"
    )
    assert prune_stub(result("c", "x" * 48213)) == (
        "[output of read removed to save context: 48213 characters; run the tool again "
        "if it is still needed]"
    )


def test_only_a_message_that_starts_with_the_header_is_a_previous_summary() -> None:
    assert previous_summary(summary_of("text")) == "text"
    assert previous_summary(UserMessage(content="quoting " + SUMMARY_HEADER + "text")) is None


def test_the_summary_reducer_ignores_kept_indices_outside_the_replaced_messages() -> None:
    history: list[Message] = [UserMessage(content=f"m{i}") for i in range(3)]
    data = {"summary": "s", "replaces": 10, "kept": [-1, "1", 1, 7]}

    reduced = reduce_summary(history, SessionEvent("compact/summary", 0, 0.0, data))

    assert reduced == [summary_of("s"), history[1]]


def test_the_prune_reducer_skips_entries_that_do_not_name_the_result_at_their_index() -> None:
    history: list[Message] = [UserMessage(content="u"), call("c"), result("c", "output")]
    entries = [
        {"index": 5, "call_id": "c", "content": "stub"},  # past the end
        {"index": 0, "call_id": "c", "content": "stub"},  # not a tool result
        {"index": 2, "call_id": "other", "content": "stub"},  # another call's result
    ]

    reduced = reduce_prune(history, SessionEvent("compact/prune", 0, 0.0, {"pruned": entries}))

    assert reduced is None or reduced == history
    entries.append({"index": 2, "call_id": "c", "content": "stub"})
    reduced = reduce_prune(history, SessionEvent("compact/prune", 0, 0.0, {"pruned": entries}))
    assert reduced == [history[0], history[1], result("c", "stub")]


# --- token estimates ----------------------------------------------------------------


def test_the_counters_default_overheads() -> None:
    calling = AssistantMessage(content=(ToolCall(id="c", name="", arguments=""),))

    assert TextTokenCounter(len).count_message(UserMessage(content="")) == 4
    assert TextTokenCounter(len).count_message(calling) == 4 + 8
    assert HeuristicCounter().count_message(UserMessage(content="abcd")) == 4 + 1
    assert HeuristicCounter().count_message(calling) == 4 + 8


def test_changed_tools_are_counted_again() -> None:
    estimator = RequestEstimator(TextTokenCounter(len))
    read = ToolSpec(name="read", description="Read a file.")
    write = ToolSpec(name="write", description="Write a file.")

    one = estimator.fixed("sys", (read,))

    assert estimator.fixed("sys", (read, write)) > one
    assert estimator.fixed("sys", (read,)) == one


def test_a_history_replaced_at_either_end_is_counted_again() -> None:
    estimator = RequestEstimator(TextTokenCounter(len, message_overhead=0))
    a, b, c = (UserMessage(content=t) for t in ("a", "bb", "ccc"))

    assert estimator.messages([a, b, c]) == 6
    assert estimator.messages([UserMessage(content="xxxxx"), b, c]) == 10  # a new first
    assert estimator.messages([a, b, c]) == 6
    assert estimator.messages([a, b, UserMessage(content="yyyy")]) == 7  # a new last
    # the per-message counts follow the history they were asked for
    assert estimator.counts([UserMessage(content="zz"), c]) == [2, 3]
    assert estimator.counts([a, b]) == [1, 2]


# --- the transcript the summariser reads ------------------------------------------------


def test_the_transcript_clips_long_contents_keeping_head_and_tail() -> None:
    exact = "u" * 6000
    long = "a" * 4000 + "b" * 4000 + "c" * 2000

    def read(content: str) -> ToolResultMessage:
        return ToolResultMessage(call_id="c", name="read", content=content)

    # tool data only: what the user and the agent wrote is never clipped
    # (test_compaction_whole_text.py)
    assert transcript([read(exact)]) == [f"[tool result: read]\n{exact}"]
    assert transcript([read(long)]) == [
        "[tool result: read]\n" + "a" * 4000 + "\n[... 4000 characters left out ...]\n" + "c" * 2000
    ]


def test_the_transcript_marks_errors_and_thinking_and_skips_empty_parts() -> None:
    failed = ToolResultMessage(call_id="c", name="read", content="no such file", is_error=True)
    thinking = "t" * 2001
    assistant = AssistantMessage(
        content=(
            ReasoningBlock(text=thinking),
            TextBlock(text=""),
            ToolCall(id="c", name="read", arguments='{"path": "x"}'),
        )
    )

    entries = transcript([assistant, failed, AssistantMessage(content=())])

    clipped = "t" * 1333 + "\n[... 2 characters left out ...]\n" + "t" * 666
    assert entries == [
        f'[assistant, thinking]\n{clipped}\n\n[assistant calls read]\n{{"path": "x"}}',
        "[tool result: read (error)]\nno such file",
    ]


def test_transcript_chunks_fill_up_to_the_budget_and_are_never_empty() -> None:
    six = ["a" * 6, "b" * 6, "c" * 6, "d" * 6]

    assert _chunks(six, CHARS, 12) == [six[:2], six[2:]]
    # an entry over the budget has a chunk of its own; over the room, it is split
    assert _chunks(["x" * 20, "y"], CHARS, 10, 20) == [["x" * 20], ["y"]]
    again = continued("x")  # no header: "[continued]"
    pieces = [["x" * 30], [again + "x" * 18], [again + "x" * 2, "y"]]
    assert _chunks(["x" * 50, "y"], CHARS, 30) == pieces


async def test_the_summariser_works_through_chunks_of_the_documented_budget() -> None:
    # budget: 0.6 of the summariser's window, less its prompt and twice the answer
    # limit: int(4624 * 0.6) - (len("p") + 2 * 100) = 2573 tokens (CharCounter)
    small = ScriptedModel(["after one", "after two"], name="summarizer", context_window=4624)
    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, small) as h:
        agent = await h.agents.create("a", options=options(prompt="p", max_summary_tokens=100))
        await run_turn(agent, "task")

    first, second = (r.messages[0].content for r in small.requests)
    # a read is a 40-token call entry and a 1227-token result entry: two reads (2534)
    # fit, the third call's entry (2574) does not
    assert "f1.py: 0123" in first and '"f2.py"' not in first
    assert second.index('[assistant calls read]\n{"path": "f2.py"}') < second.index("f3.py: 0123")
    assert all(r.system == "p" for r in small.requests)
    small.assert_complete()


async def test_small_entries_share_a_chunk_of_at_least_1000_tokens() -> None:
    small = ScriptedModel(["one", "two", "three"], name="summarizer", context_window=8192)
    model = ScriptedModel(["a" * 300] * 6, context_window=1_000_000)
    async with harness(model, small) as h:
        agent = await h.agents.create("a", options=options())
        for _ in range(6):
            await run_turn(agent, "u" * 300)
        result = await compact_now(agent)

    # nine summarised entries of ~310 tokens: three per chunk (the prompt and the
    # answer leave no room in this window, so the floor of 1000 applies)
    assert result.outcome == "summarized"
    assert len(small.requests) == 3


async def test_a_summariser_without_a_known_window_chunks_by_the_agents_window() -> None:
    # 0.6 of 7000 leaves no room after the prompt: chunks of the 1000-token floor,
    # one read entry each (not one chunk of a 100,000-token guess)
    blind = ScriptedModel([f"s{i}" for i in range(8)], name="summarizer", context_window=None)
    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, blind) as h:
        agent = await h.agents.create("a", options=options())
        await run_turn(agent, "task")

    assert len(blind.requests) == 8
    blind.assert_complete()


async def test_the_default_summariser_is_the_agents_own_model() -> None:
    # the model's own window is large (one chunk); compaction uses 7000
    model = ScriptedModel([*reads(5)[:-1], "the summary", "done"], context_window=1_000_000)
    compaction = {"prune_chars": 0, "context_window": WINDOW}
    async with harness(model) as h:
        agent = await h.agents.create("a", options={"model": "scripted", "compaction": compaction})
        events = await run_turn(agent, "task")

    summarising = model.requests[5]
    assert (summarising.model, summarising.system, summarising.tools) == (
        "scripted",
        DEFAULT_PROMPT,
        (),
    )
    summary = events_of(events, "compact/summary")[0]
    assert (summary.data["summary"], summary.data["model"]) == ("the summary", "scripted")
    model.assert_complete()


async def test_the_summary_event_reports_usage_and_truncation_over_all_chunks() -> None:
    script = [max_tokens("cut off"), *(f"after chunk {i}" for i in range(2, 9))]
    small = ScriptedModel(script, name="summarizer", context_window=8192)
    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, small) as h:
        agent = await h.agents.create("a", options=options())
        first = await run_turn(agent, "task one")

    summary = events_of(first, "compact/summary")[0]
    assert summary.data["calls"] == 8
    assert summary.data["truncated"] is True  # the first chunk's answer was cut off
    usage = summary.data["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (8 * 10, 8 * 1)
    assert summary.data["summarised"] == 8
    assert summary.data["merged_previous"] is False
