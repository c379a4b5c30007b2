"""A refused summary when the request must shrink to fit the window: the oldest messages
are dropped without a summary, the previous summary kept (a ``compact/summary`` whose
``source`` is ``fallback``), instead of every later turn failing on the overflow."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from compaction_util import (
    OUTPUT,
    OVERFLOW,
    PREVIOUS,
    WINDOW,
    Dump,
    WindowServer,
    events_of,
    harness,
    options,
    reads,
    second_turn,
    summarizer,
    summary_of,
)

from dsh.testing import (
    InMemoryPersistence,
    ScriptedModel,
    fail,
    run_turn,
    tool_calls,
)
from dsh_compaction import SUMMARY_HEADER, CompactionResult, compact_now
from dsh_compaction._answers import COPY_CHARS
from dsh_compaction._summarise import AFTER

pytestmark = pytest.mark.plugins("compaction")

SUMMARISER = {"compaction": {"model": "summarizer"}}


def dropped_note(count: int, code: str) -> str:
    return (
        f"[{count} older messages were dropped without a summary: the summariser's "
        f"answer was refused ({code}).]"
    )


REFUSED = {
    "SUMMARY_TOO_SHORT": "noted",
    "SUMMARY_COPIED": f"noted\n\n[tool result: read]\nf4.py: {OUTPUT[:COPY_CHARS]}",
    "SUMMARY_ECHOED": AFTER,
}


@pytest.mark.parametrize("code", list(REFUSED))
async def test_an_overflow_whose_summary_is_refused_drops_the_oldest_messages(code: str) -> None:
    events, history = await second_turn([OVERFLOW, "fits now"], REFUSED[code])

    start, summary, end = events_of(events)
    assert start.data["reason"] == "overflow"
    assert summary.data["source"] == "fallback"
    assert summary.data["refused"]["code"] == code
    dropped = summary.data["summarised"]
    assert dropped > 0
    assert summary.data["summary"] == PREVIOUS + "\n\n" + dropped_note(dropped, code)
    assert end.data["outcome"] == "dropped" and "error" not in end.data
    assert end.data["tokens_after"] < end.data["tokens_before"]
    assert [e.type for e in events].count("step/retry") == 1
    assert events[-1].data["reason"] == "completed"
    # the previous summary's facts stay, first; the rest is the tail, as logged (the
    # reducer of compact/summary derives it: a replay derives the same history)
    assert history[0] == summary_of(summary.data["summary"])


async def test_the_summariser_is_tried_once_more_on_the_overflow_of_a_refused_step() -> None:
    """The threshold compaction of a step is refused and the request, sent anyway, is
    over the window: the overflow compaction asks the summariser once more (a weak
    model's next answer may be a summary) instead of ending the turn."""
    script = [*reads(4, then=OVERFLOW), "fits now"]  # over at step 5, as compacted
    events, history = await second_turn(script, "noted", "a good summary " * 30)

    compactions = [e for e in events_of(events) if e.type == "compact/end"]
    assert [e.data["outcome"] for e in compactions] == ["failed", "summarized"]
    assert [e.data["reason"] for e in compactions] == ["threshold", "overflow"]
    assert compactions[0].data["step"] == compactions[1].data["step"]
    assert history[0] == summary_of(("a good summary " * 30).strip())
    assert events[-1].data["reason"] == "completed"


async def test_a_threshold_compaction_refused_over_the_window_drops_at_once() -> None:
    """A step's result takes the request past the window, not just the threshold: the
    request cannot be sent as it is, so the refused summary's messages are dropped
    before it is (no refused request, no second summariser call)."""
    script = [tool_calls(("dump", {"size": 5300})), "done again"]
    events, history = await second_turn(script, "noted", extra=[("dump", Dump())])
    start, summary, end = events_of(events)
    assert (start.data["reason"], start.data["tokens"]) == ("threshold", end.data["tokens_before"])
    assert start.data["tokens"] > WINDOW
    assert (summary.data["source"], end.data["outcome"]) == ("fallback", "dropped")
    assert end.data["tokens_after"] < WINDOW  # the result itself is in the tail
    assert "step/retry" not in [e.type for e in events]
    assert history[0].content.endswith(
        dropped_note(summary.data["summarised"], "SUMMARY_TOO_SHORT")
    )


async def test_a_threshold_compaction_refused_under_the_window_changes_nothing() -> None:
    """Under the window the request still fits: the refusal leaves the history (the
    next turn tries again), no message is dropped."""
    events, history = await second_turn(reads(5), "noted")

    (end,) = [e for e in events_of(events) if e.type == "compact/end"]
    assert end.data["outcome"] == "failed"
    assert history[0] == summary_of(PREVIOUS)


async def test_a_refused_manual_compaction_drops_nothing() -> None:
    model = ScriptedModel([*reads(5), "done again"], context_window=WINDOW)
    summariser = summarizer(PREVIOUS, "noted")
    async with harness(model, summariser) as h:
        agent = await h.agents.create("a", options=options())
        await run_turn(agent, "task one")
        await run_turn(agent, "more")
        before = list(agent.session.history)
        result = await compact_now(agent)
        assert list(agent.session.history) == before
    assert result.outcome == "failed"


async def test_the_fallback_is_reported_and_the_warning_names_the_refusal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="dsh_compaction"):
        events, _ = await second_turn([OVERFLOW, "fits now"], "noted")

    (summary,) = [e for e in events if e.type == "compact/summary"]
    warned = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert len(warned) == 1
    assert "SUMMARY_TOO_SHORT" in warned[0]
    assert f"{summary.data['summarised']} older messages were dropped" in warned[0]
    assert "(overflow, turn 2, step 1), the previous summary kept." in warned[0]


async def test_an_overflow_after_a_failed_compaction_names_it_and_suggests_compact(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The summariser fails (not a refused summary: nothing is dropped) in the step whose
    request then overflows: the turn ends with the provider's error, and the warning
    says which compaction failed and what the user can do."""
    script = [*reads(4, then=OVERFLOW)]
    with caplog.at_level(logging.WARNING, logger="dsh_compaction"):
        events, history = await second_turn(script, fail("SERVER", "summariser down"))

    assert events[-1].data["reason"] == "error"
    assert events[-1].data["error"]["code"] == "CONTEXT_WINDOW_EXCEEDED"
    assert history[0] == summary_of(PREVIOUS)
    (warned,) = [r.getMessage() for r in caplog.records if "does not fit" in r.getMessage()]
    assert warned == (
        "agent 'a': the request does not fit the context window (overflow, turn 2, step 5), "
        "and this step's compaction (threshold, turn 2) failed: SERVER: summariser down; "
        "the turn ends with the provider's error. /compact (dsh chat) compacts the history again"
    )


async def test_a_failed_overflow_compaction_suggests_compact(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="dsh_compaction"):
        events, _ = await second_turn([OVERFLOW], fail("SERVER", "summariser down"))

    assert events[-1].data["error"]["code"] == "CONTEXT_WINDOW_EXCEEDED"
    (warned,) = [r.getMessage() for r in caplog.records]
    assert warned.startswith("agent 'a': compaction (overflow, turn 2, step 1) failed, ")
    assert warned.endswith(
        "SERVER: summariser down; the turn ends with the provider's error. "
        "/compact (dsh chat) compacts the history again"
    )


def test_a_dropped_result_says_what_was_refused() -> None:
    refused = {"code": "SUMMARY_TOO_SHORT", "message": "too short"}
    result = CompactionResult("dropped", "overflow", 9000, 4000, refused=refused)
    assert result.changed
    assert str(result) == (
        "the summary was refused (SUMMARY_TOO_SHORT: too short); "
        "older messages were dropped (~9,000 → ~4,000 tokens)"
    )


async def test_a_resumed_session_derives_the_history_a_fallback_left() -> None:
    store = InMemoryPersistence()
    model = ScriptedModel([*reads(5), OVERFLOW, "fits now"], context_window=WINDOW)
    async with harness(model, summarizer(PREVIOUS, "noted"), extra=[("mem", store)]) as h:
        agent = await h.agents.create("a", options=options())
        await run_turn(agent, "task one")
        events = await run_turn(agent, "task two")
        assert [e.data["source"] for e in events if e.type == "compact/summary"] == ["fallback"]
        live = list(agent.session.history)
        session_id = agent.session.id

    async with harness(ScriptedModel([]), summarizer(), extra=[("mem", store)]) as h:
        resumed = await h.agents.resume("a", session_id, options=options())
        assert list(resumed.session.history) == live


async def test_a_noted_summary_in_the_store_is_not_merged_into_noted_again() -> None:
    """A summary already "noted" (stored before the quarter rule) gives that rule
    nothing to protect: an answer that is the previous summary unchanged is refused."""
    model = ScriptedModel([*reads(5), *reads(5)], context_window=WINDOW)
    async with harness(model, summarizer("noted", "Noted.")) as h:
        agent = await h.agents.create("a", options=options())
        await run_turn(agent, "task one")
        events = await run_turn(agent, "task two")
        assert agent.session.history[0] == summary_of("noted")
    end = events_of(events)[-1]
    assert (end.data["outcome"], end.data["error"]["code"]) == ("failed", "SUMMARY_UNCHANGED")


async def test_without_a_previous_summary_the_note_alone_stands_for_the_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ScriptedModel([*reads(3, then=OVERFLOW), "fits now"], context_window=WINDOW)
    with caplog.at_level(logging.WARNING, logger="dsh_compaction"):
        async with harness(model, summarizer(AFTER)) as h:
            agent = await h.agents.create("a", options=options())
            events = await run_turn(agent, "task one")
            history = list(agent.session.history)

    (summary,) = [e for e in events if e.type == "compact/summary"]
    note = dropped_note(summary.data["summarised"], "SUMMARY_ECHOED")
    assert (summary.data["summary"], summary.data["merged_previous"]) == (note, False)
    assert history[0] == summary_of(note)
    (warned,) = [r.getMessage() for r in caplog.records]
    assert "dropped without a summary (overflow, turn 1, step 4). A stronger" in warned


async def journey(turns: int) -> tuple[list[list[Any]], list[Any], ScriptedModel]:
    """The journey with a weak local model: a server that refuses requests over its
    window (unknown to the agent), a summariser whose first summary is good and every
    later answer "noted". Returns each turn's events, the history and the summariser."""
    steps: list[Any] = []
    for turn in range(turns):
        steps += [tool_calls(("read", {"path": f"t{turn}f{i}.py"})) for i in range(6)]
        steps.append(f"done {turn}")
    server = WindowServer(4_000, steps, max_output=0)
    server.model.context_window = None  # the overflow path alone, as with a stated window
    summariser = summarizer(PREVIOUS, *["noted"] * 20)
    async with harness(server.model, summariser, chars=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted", **SUMMARISER})
        events = [await run_turn(agent, f"task {turn}") for turn in range(turns)]
        return events, list(agent.session.history), summariser


async def test_a_summariser_that_keeps_answering_noted_no_longer_fails_every_turn() -> None:
    """Before, each turn after the first refusal ended CONTEXT_WINDOW_EXCEEDED. Each
    overflow after that drops the oldest messages, and every turn completes."""
    events, history, summariser = await journey(4)

    assert [turn[-1].data["reason"] for turn in events] == ["completed"] * 4
    assert len(summariser.requests) > 2  # refused answers after the first summary
    assert history[0].content.startswith(SUMMARY_HEADER + PREVIOUS + "\n\n[")


async def test_repeated_fallbacks_keep_one_note_counting_every_message_dropped() -> None:
    """With the window unknown, every overflow drops more; each fallback added a note
    of its own after the notes before, and the first message grew by one each time."""
    events, history, _ = await journey(6)

    summaries = [e.data for turn in events for e in turn if e.type == "compact/summary"]
    fallbacks = [data for data in summaries if data["source"] == "fallback"]
    assert len(fallbacks) > 2
    dropped = 0
    for data in fallbacks:
        dropped += data["summarised"]
        assert data["summary"] == PREVIOUS + "\n\n" + dropped_note(dropped, "SUMMARY_TOO_SHORT")
    assert history[0] == summary_of(fallbacks[-1]["summary"])


async def test_a_chunked_summary_refused_in_a_later_chunk_keeps_the_part_summarised() -> None:
    """The summariser's window takes the region in chunks; the first chunk's answer is a
    summary, the second's "noted": the fallback keeps the summary so far (it merges the
    first chunk), not only the summary before it, and says the rest was dropped."""
    first = "## Goal\n" + "The fact of chunk one is 42; keep it. " * 10
    small = ScriptedModel([first, "noted", first, "noted"], name="summarizer", context_window=8192)
    model = ScriptedModel([*reads(5, then=OVERFLOW), "fits now"], context_window=WINDOW)
    async with harness(model, small) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")
        history = list(agent.session.history)
    small.assert_complete()

    (summary,) = [e for e in events if e.type == "compact/summary"]
    count = summary.data["summarised"]
    note = (
        f"[{count} older messages are summarised above only in part, the rest were dropped: "
        "the summariser's answer for a later part was refused (SUMMARY_TOO_SHORT).]"
    )
    assert summary.data["summary"] == first.strip() + "\n\n" + note
    assert history[0] == summary_of(summary.data["summary"])
    assert events[-1].data["reason"] == "completed"


async def test_a_second_fallback_after_a_note_alone_says_no_summary_was_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The summariser writes nothing, every time: the first overflow drops the older
    messages (a note alone stands for them), and the next one replaces that note with
    one counting both. Its warning must not say a previous summary was kept: there was
    none, and the user would take the dropped messages for summarised."""
    server = WindowServer(3000, reads(12))
    summariser = ScriptedModel([""] * 5, name="summarizer", context_window=1_000_000)
    with caplog.at_level(logging.WARNING, logger="dsh_compaction"):
        async with harness(server.model, summariser, chars=False) as h:
            agent = await h.agents.create("a", options=options())
            end = (await run_turn(agent, "task"))[-1]
            summaries = [e for e in agent.session.events if e.type == "compact/summary"]
    assert end.data["reason"] == "completed"
    assert [e.data["source"] for e in summaries] == ["fallback", "fallback"]
    assert summaries[-1].data["summary"].startswith("[20 older messages were dropped")
    warned = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert len(warned) == 2
    assert not [w for w in warned if "previous summary kept" in w]
