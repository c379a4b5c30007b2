"""Behaviour 45: a failing summariser logs the failure, leaves history unchanged, and
the step proceeds."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest
from compaction_util import WINDOW, RequestSpy, events_of, harness, options, reads, summarizer

from dsh import hookimpl
from dsh.testing import ScriptedModel, check_invariants, fail, hang, run_turn, text

pytestmark = pytest.mark.plugins("compaction")


async def run_failing(summariser: ScriptedModel, *, steps: int = 5, **settings: Any) -> Any:
    """A turn of ``steps`` reads whose compaction fails; returns (events, model, spy)."""
    model = ScriptedModel(reads(steps), context_window=WINDOW)
    spy = RequestSpy()
    async with harness(model, summariser, extra=[("spy", spy)]) as h:
        agent = await h.agents.create("a", options=options(**settings))
        events = await run_turn(agent, "task")
        assert check_invariants(agent.session.events) == []
    return events, model, spy


def assert_unchanged_and_completed(
    events: list[Any], model: ScriptedModel, spy: RequestSpy
) -> None:
    assert [list(r.messages) for r in model.requests] == spy.before  # nothing compacted
    assert not any(e.type in ("compact/summary", "compact/prune") for e in events)
    assert events[-1].type == "turn/end" and events[-1].data["reason"] == "completed"
    model.assert_complete()


async def test_b45_a_summariser_error_leaves_history_unchanged_and_the_turn_proceeds() -> None:
    summariser = summarizer(fail("SERVER", "summariser is down"))

    events, model, spy = await run_failing(summariser, steps=7)

    assert_unchanged_and_completed(events, model, spy)
    start, end = events_of(events)
    assert start.data["step"] == 6
    assert end.data["outcome"] == "failed"
    assert end.data["error"] == {"code": "SERVER", "message": "summariser is down"}
    assert end.data["tokens_after"] == end.data["tokens_before"]
    assert end.data["messages_after"] == end.data["messages_before"]
    # steps 7 and 8 are over the threshold too, but this turn does not try again
    assert len(summariser.requests) == 1


async def test_b45_a_summariser_timeout_leaves_history_unchanged_and_the_turn_proceeds() -> None:
    summariser = summarizer(hang("partial summ"))
    started = time.monotonic()

    events, model, spy = await run_failing(summariser, timeout=0.2)

    assert time.monotonic() - started < 5
    assert_unchanged_and_completed(events, model, spy)
    _, end = events_of(events)
    assert end.data["outcome"] == "failed"
    assert end.data["error"]["code"] == "TIMEOUT"
    assert "0.2 s" in end.data["error"]["message"]
    assert summariser.aborted == 1  # the summariser's stream was closed


async def test_b45_a_summary_not_smaller_than_what_it_replaces_is_rejected() -> None:
    summariser = summarizer("x" * 10_000)

    events, model, spy = await run_failing(summariser)

    assert_unchanged_and_completed(events, model, spy)
    _, end = events_of(events)
    assert end.data["error"]["code"] == "SUMMARY_NOT_SMALLER"


async def test_b45_an_empty_summary_is_rejected() -> None:
    events, model, spy = await run_failing(summarizer(text("  ")))

    assert_unchanged_and_completed(events, model, spy)
    assert events_of(events)[-1].data["error"]["code"] == "EMPTY_SUMMARY"


async def test_b45_an_unknown_summariser_model_is_a_logged_failure() -> None:
    # given at creation, the core refuses it there (test_compaction_settings); set on a
    # live agent (or `local` when the program never started it), compaction finds it
    model = ScriptedModel(reads(5), context_window=WINDOW)
    spy = RequestSpy()
    async with harness(model, summarizer(), extra=[("spy", spy)]) as h:
        agent = await h.agents.create("a", options=options())
        agent.agent.options["compaction"] = options(model="nope")["compaction"]
        events = await run_turn(agent, "task")

    assert_unchanged_and_completed(events, model, spy)
    error = events_of(events)[-1].data["error"]
    assert error["code"] == "NO_MODEL" and "'nope'" in error["message"]


async def test_b45_a_raising_compaction_summarize_impl_is_a_failure_naming_the_plugin() -> None:
    class Broken:
        @hookimpl(optionalhook=True)
        def compaction_summarize(self) -> str:
            raise RuntimeError("no summary today")

    model = ScriptedModel(reads(5), context_window=WINDOW)
    spy = RequestSpy()
    async with harness(model, summarizer(), extra=[("broken", Broken()), ("spy", spy)]) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    assert_unchanged_and_completed(events, model, spy)
    error = events_of(events)[-1].data["error"]
    assert error["code"] == "HOOK" and error["plugin"] == "broken"
    assert "no summary today" in error["message"]


async def test_b45_an_abort_while_summarising_ends_the_turn_aborted_and_logs_it() -> None:
    class AbortOnStart:
        def __init__(self) -> None:
            self.agent: Any = None

        @hookimpl
        def session_event(self, event: Any) -> None:
            if event.type == "compact/start" and self.agent is not None:
                self.agent.abort()

    watcher = AbortOnStart()
    model = ScriptedModel([*reads(5), "after"], context_window=WINDOW)
    summariser = summarizer(hang(), "summary")
    async with harness(model, summariser, extra=[("watcher", watcher)]) as h:
        agent = watcher.agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")
        calls = len(model.requests)
        watcher.agent = None
        with anyio.fail_after(5):
            later = await run_turn(agent, "again")

    _, end = events_of(events)
    assert end.data["outcome"] == "aborted"
    assert events[-1].data["reason"] == "aborted"
    assert calls == 5  # step 6 never called the model
    assert check_invariants(agent.session.events) == []
    # the next turn compacts normally
    assert [e.data.get("outcome") for e in events_of(later, "compact/end")] == ["summarized"]
    assert later[-1].data["reason"] == "completed"


async def test_b45_a_failed_automatic_compaction_is_a_warning_a_person_sees(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # dsh run and chat show warnings on stderr: without one the failure was only in the log
    caplog.set_level("WARNING", logger="dsh_compaction")
    await run_failing(summarizer(fail("SERVER", "summariser is down")), steps=7)
    warnings = [r.getMessage() for r in caplog.records if r.name.startswith("dsh_compaction")]
    assert warnings == [
        "agent 'a': compaction (threshold, turn 1) failed, the history is unchanged: SERVER: "
        "summariser is down"
    ]
