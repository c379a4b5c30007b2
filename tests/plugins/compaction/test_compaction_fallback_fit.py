"""When the fallback of a refused summary drops nothing: dropping could not make the
request fit; a summary that is one (a first summary quoting the user, a later chunk
adding nothing) is not refused. A plugin's refused summary falls back too, and the
fallback's own failure is the one reported."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import pytest
from compaction_util import (
    OVERFLOW,
    PREVIOUS,
    WINDOW,
    WindowServer,
    events_of,
    harness,
    options,
    reads,
    summarizer,
    summary_of,
)

from dsh import Message, ToolResultMessage, hookimpl
from dsh.testing import ScriptedModel, check_invariants, run_turn, tool_calls
from dsh_compaction._fallback import unfit

pytestmark = pytest.mark.plugins("compaction")


async def test_a_prompt_larger_than_the_window_drops_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A prompt over the window on its own: dropping the older messages (for good, in
    the log) would leave the request over the window all the same. The threshold does
    not summarise (nothing kept verbatim gets under the limit); the overflow compaction
    fails with the refusal; the history is as it was."""
    steps: list[Any] = [tool_calls(("read", {"path": f"f{i}.py"})) for i in range(12)]
    server = WindowServer(4_000, [*steps, "done", "never"], max_output=0)
    summariser = summarizer(PREVIOUS, *["noted"] * 5)
    with caplog.at_level(logging.WARNING, logger="dsh_compaction"):
        async with harness(server.model, summariser, chars=False) as h:
            agent = await h.agents.create("a", options=options())
            await run_turn(agent, "task one")
            before = list(agent.session.history)
            events = await run_turn(agent, "please review this: " + "lorem ipsum " * 1700)
            after = list(agent.session.history)

    assert events[-1].data["error"]["code"] == "CONTEXT_WINDOW_EXCEEDED"
    assert after[: len(before)] == before
    ends = [e for e in events_of(events) if e.type == "compact/end"]
    # no summary brings it under the limit: the threshold does not summarise (warned)
    assert [e.data["reason"] for e in ends] == ["overflow"]
    assert [r for r in caplog.records if "cannot get under" in r.getMessage()]
    for end in ends:
        assert (end.data["outcome"], end.data["error"]["code"]) == ("failed", "SUMMARY_TOO_SHORT")
        assert end.data["error"]["message"].endswith("would not make the request fit either")
        assert end.data["tokens_after"] == end.data["tokens_before"]
    assert "compact/summary" not in [e.type for e in events]
    assert not [r for r in caplog.records if "dropped" in r.getMessage()]


async def test_an_overflows_first_summary_quoting_the_users_spec_is_kept() -> None:
    spec = (
        "The endpoint must accept a JSON body with fields name, email and role; reject "
        "unknown fields with 422; log every rejection with the request id. "
    ) * 8
    good = f'## Goal\nThe user\'s spec, verbatim:\n"{spec.strip()}"\n\n## Progress\nRead f0.py.'
    model = ScriptedModel([*reads(2, then="ok"), OVERFLOW, "fits now"], context_window=100_000)
    async with harness(model, summarizer(good)) as h:
        agent = await h.agents.create("a", options=options())
        await run_turn(agent, spec)
        events = await run_turn(agent, "go on")
        assert check_invariants(agent.session.events) == []
        history = list(agent.session.history)

    (summary,) = [e for e in events if e.type == "compact/summary"]
    assert summary.data["source"] == "model"
    assert history[0] == summary_of(good)


async def test_a_later_chunk_adding_nothing_keeps_the_summary_so_far() -> None:
    """The summariser's window takes the region in chunks; every chunk after the first
    adds nothing (more of the same files), and its answer is the summary so far: a
    summary of all of them, not a refusal dropping the later chunks' messages."""
    first = "## Goal\n" + "Files f0..f4 were read; all hold the same digits 0-9 repeated. " * 6
    small = ScriptedModel([first] * 20, name="summarizer", context_window=8192)
    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, small) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")
        history = list(agent.session.history)

    assert len(small.requests) > 1  # chunked
    (summary,) = [e for e in events if e.type == "compact/summary"]
    assert (summary.data["source"], summary.data["calls"]) == ("model", len(small.requests))
    assert history[0] == summary_of(first.strip())
    assert events[-1].data["reason"] == "completed"


class NotSmaller:
    @hookimpl(optionalhook=True)
    def compaction_summarize(self) -> str:
        return "x" * 50_000  # a deterministic impl that cannot shrink this history


async def test_a_plugins_refused_summary_falls_back_and_the_warning_names_the_plugin(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ScriptedModel([*reads(3, then=OVERFLOW), "fits"], context_window=WINDOW)
    with caplog.at_level(logging.WARNING, logger="dsh_compaction"):
        async with harness(model, extra=[("mine", NotSmaller())]) as h:
            agent = await h.agents.create("a", options=options())
            events = await run_turn(agent, "task")

    summary, end = [e for e in events_of(events) if e.type != "compact/start"]
    assert (summary.data["source"], end.data["outcome"]) == ("fallback", "dropped")
    refused = {"code": "SUMMARY_NOT_SMALLER", "plugin": "mine"}
    assert refused.items() <= end.data["refused"].items()
    (warned,) = [r.getMessage() for r in caplog.records]
    assert warned.endswith(
        "The refused summary was written by plugin 'mine' (compaction_summarize)"
    )
    assert "compaction.model" not in warned
    assert events[-1].data["reason"] == "completed"


class EmptyMeanwhile:
    """Changes the last summarised message while summarising, and writes nothing."""

    @hookimpl(optionalhook=True)
    async def compaction_summarize(self, agent: Any, messages: Sequence[Message]) -> str:
        last = messages[-1]
        assert isinstance(last, ToolResultMessage)
        index = next(i for i, m in enumerate(agent.session.history) if m is last)
        entry = {"index": index, "call_id": last.call_id, "content": "gone"}
        await agent.session.emit("compact/prune", {"pruned": [entry], "tokens_saved": 0})
        return ""


async def test_a_failed_fallback_reports_its_own_failure_beside_the_refusal() -> None:
    model = ScriptedModel([*reads(3, then=OVERFLOW)], context_window=WINDOW)
    async with harness(model, extra=[("meanwhile", EmptyMeanwhile())]) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    (end,) = [e for e in events_of(events) if e.type == "compact/end"]
    assert (end.data["outcome"], end.data["error"]["code"]) == ("failed", "HISTORY_CHANGED")
    assert (end.data["refused"]["code"], end.data["refused"]["plugin"]) == (
        "EMPTY_SUMMARY",
        "meanwhile",
    )
    assert "compact/summary" not in [e.type for e in events]


@pytest.mark.parametrize(
    ("after", "fits", "dropped"),
    [(99, float("inf"), True), (100, float("inf"), False), (99, 99, True), (99, 98, False)],
)
def test_dropping_must_shrink_the_request_into_the_known_window(
    after: int, fits: float, dropped: bool
) -> None:
    """A request of 100 tokens: dropping must leave it smaller (a note no smaller than
    what it stands for would not), and within the known window less the reserve."""
    assert unfit(after, 100, fits) is not dropped
