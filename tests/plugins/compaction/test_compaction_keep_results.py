"""What a ``compaction_keep`` impl returns: indices of the ``messages`` it was given.

Before: an index outside them (negative, past the end) or a bool was dropped in
silence (a bool marked message 0 or 1), hiding the plugin's bug; now such a result is
a wrong result, as one that is no collection of indices is: the compaction fails
(``HOOK``, naming the plugin and its impl), the failure is reported, the turn goes on.

And marks that keep everything a summary would replace: every step over the threshold
planned a compaction, found nothing to compact and said so at DEBUG only, until the
provider refused the request; now a warning (once per agent) names the plugin whose
marks left nothing to compact, and the overflow's warning and a manual compaction's
result say so too."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import pytest
from compaction_util import OVERFLOW, WINDOW, events_of, harness, options, reads, summarizer

import dsh_compaction
from dsh import Message, hookimpl
from dsh.testing import ErrorRecorder, ScriptedModel, check_invariants, run_turn

pytestmark = pytest.mark.plugins("compaction")


class Marks:
    def __init__(self, extra: Any) -> None:
        self.extra = extra

    @hookimpl(optionalhook=True)
    def compaction_keep(self, messages: Sequence[Message], keep: frozenset[int]) -> Any:
        extra = self.extra(len(messages)) if callable(self.extra) else self.extra
        return {*keep, *extra}


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ({-1}, "-1"),
        (lambda n: {n}, "outside the"),
        (lambda n: {0, n + 5}, "outside the"),
        ({True}, "True"),
    ],
    ids=["negative", "past-the-end", "far-past-the-end", "bool"],
)
async def test_a_keep_result_with_indices_outside_the_messages_is_a_wrong_result(
    extra: Any, said: str
) -> None:
    errors = ErrorRecorder()
    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, summarizer("sum"), extra=[("pins", Marks(extra)), errors]) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")
        assert check_invariants(agent.session.events) == []

    ends = events_of(events, "compact/end")
    assert ends and all(e.data["outcome"] == "failed" for e in ends)
    error = ends[0].data["error"]
    assert error["code"] == "HOOK" and error["plugin"] == "pins"
    assert "compaction_keep" in error["message"] and said in error["message"]
    assert {(f.plugin, f.hook) for f in errors.failures} == {("pins", "compaction_keep")}
    assert events[-1].data["reason"] == "completed"  # compaction failing ends no turn


async def test_keep_marks_within_the_messages_are_no_wrong_result() -> None:
    errors = ErrorRecorder()
    model = ScriptedModel(reads(5), context_window=WINDOW)
    marks = Marks(lambda n: {0, n - 1})
    async with harness(model, summarizer("sum"), extra=[("pins", marks), errors]) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    assert [e.data["outcome"] for e in events_of(events, "compact/end")] == ["summarized"]
    assert errors.failures == []


def everything(count: int) -> set[int]:
    return set(range(count))


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("dsh_compaction") and r.levelno >= logging.WARNING
    ]


async def test_keep_marks_leaving_nothing_to_compact_are_warned_once_naming_the_plugin(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="dsh_compaction")
    model = ScriptedModel(reads(9), context_window=WINDOW)
    async with harness(model, summarizer(), extra=[("pins", Marks(everything))]) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")
        assert check_invariants(agent.session.events) == []

    assert events_of(events) == []  # over the threshold from step 6 on: nothing compacted
    warned = warnings_of(caplog)
    assert len(warned) == 1, warned
    assert "agent 'a'" in warned[0] and "plugin 'pins'" in warned[0]
    assert "compaction_keep" in warned[0]


async def test_keep_marks_of_the_task_alone_are_not_blamed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A plugin whose marks add nothing (the history is the task and one step) is not
    named: there is nothing to compact without them either."""
    caplog.set_level(logging.WARNING, logger="dsh_compaction")
    model = ScriptedModel(["x" * 6_000], context_window=WINDOW)
    async with harness(model, summarizer(), extra=[("pins", Marks(everything))]) as h:
        agent = await h.agents.create("a", options=options())
        await run_turn(agent, "task")
        result = await dsh_compaction.compact_now(agent)

    assert warnings_of(caplog) == []
    assert result.outcome == "skipped" and result.error is not None
    assert result.error["message"] == "nothing to compact"


async def test_an_overflow_with_everything_marked_names_the_plugin(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="dsh_compaction")
    model = ScriptedModel([*reads(5, then=OVERFLOW)], context_window=1_000_000)
    async with harness(model, summarizer(), extra=[("pins", Marks(everything))]) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    (end,) = (e for e in events_of(events, "compact/end"))
    assert end.data["outcome"] == "skipped"
    assert "plugin 'pins'" in end.data["error"]["message"]
    assert events[-1].data["reason"] == "error"  # the provider's refusal ends the turn
    (warned,) = warnings_of(caplog)
    assert "nothing could be compacted" in warned and "plugin 'pins'" in warned


async def test_a_manual_compaction_with_everything_marked_names_the_plugin() -> None:
    model = ScriptedModel(reads(3), context_window=100_000)
    async with harness(model, summarizer(), extra=[("pins", Marks(everything))]) as h:
        agent = await h.agents.create("a", options=options())
        await run_turn(agent, "task")
        result = await dsh_compaction.compact_now(agent)

    assert result.outcome == "skipped" and result.error is not None
    assert "plugin 'pins'" in result.error["message"]
    assert "plugin 'pins'" in str(result)
