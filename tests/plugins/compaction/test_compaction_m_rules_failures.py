"""Found by mutation testing: compaction failures and what they report (a skipped
compaction, ``compaction_keep`` impls, summaries that are not smaller, a history changed
meanwhile, a raising summariser, a plugin's summary).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from compaction_util import (
    CHARS,
    WINDOW,
    events_of,
    harness,
    options,
    reads,
    summarizer,
)

from dsh import (
    Message,
    ToolResultMessage,
    hookimpl,
)
from dsh.testing import ScriptedModel, check_invariants, run_turn
from dsh_compaction import (
    SUMMARY_HEADER,
    compact_now,
)

pytestmark = pytest.mark.plugins("compaction")

# --- failures, and what they report -------------------------------------------------------


async def test_compact_now_reports_the_error_of_a_skipped_compaction() -> None:
    model = ScriptedModel(["hi"], context_window=1_000_000)
    async with harness(model, summarizer()) as h:
        agent = await h.agents.create("a", options=options())
        await run_turn(agent, "hello")
        result = await compact_now(agent)
        end = events_of(list(agent.session.events), "compact/end")[0]

    assert result.error == {"code": "NOTHING", "message": "nothing to compact"}
    assert (end.data["reason"], end.data["error"]) == ("manual", result.error)


class Keep:
    """A ``compaction_keep`` impl that raises, or returns ``value``."""

    def __init__(self, value: Any) -> None:
        self.value = value

    @hookimpl(optionalhook=True)
    def compaction_keep(self) -> Any:
        if isinstance(self.value, Exception):
            raise self.value
        return self.value


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (RuntimeError("no marks today"), "RuntimeError: no marks today"),
        ("0, 1", "TypeError: returned '0, 1', not a collection of indices"),
        ([0, "1"], "TypeError: returned [0, '1'], not a collection of indices"),
    ],
)
async def test_a_failing_compaction_keep_impl_is_a_logged_failure_naming_it(
    value: Any, message: str
) -> None:
    """A raising impl, or one returning something other than a collection of indices:
    the failure names its plugin and impl (a chain's result has no single author, so
    each impl's result is checked as it returns it)."""
    model = ScriptedModel(reads(5), context_window=WINDOW)
    summariser = summarizer("s")
    async with harness(model, summariser, extra=[("keeper", Keep(value))]) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")
        assert check_invariants(agent.session.events) == []

    start, end = events_of(events)
    assert (start.type, start.data["step"]) == ("compact/start", 6)
    error = end.data["error"]
    assert (end.data["outcome"], error["code"], error["plugin"]) == ("failed", "HOOK", "keeper")
    assert error["message"] == (
        "plugin 'keeper' failed in hook compaction_keep (impl Keep.compaction_keep()): " + message
    )
    assert summariser.requests == []
    assert events[-1].data["reason"] == "completed"


async def test_a_wrong_compaction_keep_result_is_its_own_impls_failure_not_the_next_ones() -> None:
    """``wrong`` returns a text; the impl after it adds to what it is given, and a text
    makes it raise: the failure is ``wrong``'s, before ``adding`` runs."""

    class Adding:
        calls = 0

        @hookimpl(optionalhook=True)
        def compaction_keep(self, keep: Any) -> Any:
            self.calls += 1
            return keep | {0}

    adding = Adding()
    model = ScriptedModel(reads(5), context_window=WINDOW)
    # the later registered runs first
    extra = [("adding", adding), ("wrong", Keep("0, 1"))]
    async with harness(model, summarizer("s"), extra=extra) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    (end,) = events_of(events, "compact/end")
    assert (end.data["error"]["plugin"], adding.calls) == ("wrong", 0)
    assert "not a collection of indices" in end.data["error"]["message"]


async def test_a_plain_compaction_keep_impl_returning_a_coroutine_is_named() -> None:
    """As dsh's dispatcher says it for any hook (the check never sees the coroutine)."""

    class Plain:
        @hookimpl(optionalhook=True)
        def compaction_keep(self, keep: Any) -> Any:
            async def later() -> Any:
                return keep

            return later()

    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, summarizer("s"), extra=[("plain", Plain())]) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    (end,) = events_of(events, "compact/end")
    assert end.data["error"]["plugin"] == "plain"
    assert end.data["error"]["message"].endswith(
        "TypeError: returned coroutine from a plain def; make the impl async def so that "
        "it is awaited"
    )


@pytest.mark.parametrize(("shorter", "outcome"), [(0, "failed"), (1, "summarized")])
async def test_a_summary_must_be_smaller_than_what_it_replaces(shorter: int, outcome: str) -> None:
    class Sized:
        @hookimpl(optionalhook=True)
        def compaction_summarize(self, messages: Sequence[Message]) -> str:
            replaced = sum(CHARS.count_message(m) for m in messages)
            return "x" * (replaced - len(SUMMARY_HEADER) - shorter)

    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, extra=[("sized", Sized())]) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    end = events_of(events, "compact/end")[0]
    assert end.data["outcome"] == outcome
    if outcome == "failed":
        assert end.data["error"]["code"] == "SUMMARY_NOT_SMALLER"


async def test_a_history_changed_while_the_summary_was_written_is_left_as_it_is() -> None:
    class PruneMeanwhile:
        """Changes the last summarised message (just before the cut) while summarising."""

        @hookimpl(optionalhook=True)
        async def compaction_summarize(self, agent: Any, messages: Sequence[Message]) -> str:
            last = messages[-1]
            assert isinstance(last, ToolResultMessage)
            index = next(i for i, m in enumerate(agent.session.history) if m is last)
            entry = {"index": index, "call_id": last.call_id, "content": "gone"}
            await agent.session.emit("compact/prune", {"pruned": [entry], "tokens_saved": 0})
            return "summary"

    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, extra=[("meanwhile", PruneMeanwhile())]) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")
        history = list(agent.session.history)

    end = events_of(events, "compact/end")[0]
    assert (end.data["outcome"], end.data["error"]["code"]) == ("failed", "HISTORY_CHANGED")
    assert not events_of(events, "compact/summary")
    assert len(history) == 12 and history[8].content == "gone"


async def test_a_summariser_stream_raising_a_plain_exception_is_a_model_failure() -> None:
    def broken(request: Any) -> str:
        raise RuntimeError("connection reset")

    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, summarizer(broken)) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    end = events_of(events, "compact/end")[0]
    assert end.data["error"] == {"code": "UNKNOWN", "message": "RuntimeError: connection reset"}


@pytest.mark.parametrize(
    ("written", "outcome", "detail"),
    [
        ("  the summary \n", "summarized", "the summary"),
        ("", "failed", "EMPTY_SUMMARY"),
        (" \n ", "failed", "EMPTY_SUMMARY"),
        (42, "failed", "HOOK"),  # naming the plugin
    ],
)
async def test_a_plugins_summary_is_stripped_and_must_be_a_non_empty_str(
    written: Any, outcome: str, detail: str
) -> None:
    class Writes:
        @hookimpl(optionalhook=True)
        def compaction_summarize(self) -> Any:
            return written

    model = ScriptedModel(reads(5), context_window=WINDOW)
    summariser = summarizer()  # never asked, not even after an empty summary
    async with harness(model, summariser, extra=[("writes", Writes())]) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    end = events_of(events, "compact/end")[0]
    assert end.data["outcome"] == outcome
    if outcome == "summarized":
        assert events_of(events, "compact/summary")[0].data["summary"] == detail
    else:
        assert end.data["error"]["code"] == detail
    assert summariser.requests == []
