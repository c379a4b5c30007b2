"""A failure of another plugin's impl of a dsh-compaction hook is reported the way dsh
reports a failure it contains (``agent.relay.report``): logged, and in the
``failures`` of a ``dsh.testing.ErrorRecorder``, so that a test following
docs/testing.md (``assert errors.failures == []``) catches a broken impl.

Before: compaction caught the ``HookError`` itself and only logged it (a ``compact/end``
error, a warning): ``errors.failures`` stayed empty while every compaction failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from compaction_util import WINDOW, events_of, harness, options, reads, summarizer

from dsh import Message, hookimpl
from dsh.testing import ErrorRecorder, ScriptedModel, check_invariants, run_turn

pytestmark = pytest.mark.plugins("compaction")


class RaisingSummary:
    @hookimpl(optionalhook=True)
    async def compaction_summarize(
        self, messages: Sequence[Message], previous_summary: str | None
    ) -> str:
        raise RuntimeError("the summary service is down")


class NumberSummary:
    @hookimpl(optionalhook=True)
    def compaction_summarize(self, messages: Sequence[Message]) -> Any:
        return 42


class RaisingKeep:
    @hookimpl(optionalhook=True)
    def compaction_keep(self, keep: frozenset[int]) -> set[int]:
        raise KeyError("no marks")


class GarbageKeep:
    @hookimpl(optionalhook=True)
    def compaction_keep(self, keep: frozenset[int]) -> Any:
        return "all of them"


class RaisingCounter:
    @hookimpl(optionalhook=True)
    def compaction_token_counter(self, model: str | None) -> Any:
        raise RuntimeError("no tokenizer for this model")


class GarbageCounter:
    @hookimpl(optionalhook=True)
    def compaction_token_counter(self, model: str | None) -> Any:
        return len


@pytest.mark.parametrize(
    ("plugin", "hook", "cause"),
    [
        (RaisingSummary(), "compaction_summarize", RuntimeError),
        (NumberSummary(), "compaction_summarize", TypeError),
        (RaisingKeep(), "compaction_keep", KeyError),
        (GarbageKeep(), "compaction_keep", TypeError),
    ],
    ids=["summarize-raises", "summarize-number", "keep-raises", "keep-garbage"],
)
async def test_a_broken_compaction_hook_impl_is_in_the_recorded_failures(
    plugin: object, hook: str, cause: type[BaseException]
) -> None:
    errors = ErrorRecorder()
    model = ScriptedModel(reads(5), context_window=WINDOW)
    extra = [("broken", plugin), errors]
    async with harness(model, summarizer("sum"), extra=extra) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    ends = events_of(events, "compact/end")
    assert ends and all(e.data["outcome"] in ("failed", "dropped") for e in ends)
    assert ends[0].data.get("error", ends[0].data.get("refused", {}))["plugin"] == "broken"
    assert errors.failures, "the broken impl's failure was not recorded"
    assert {(f.plugin, f.hook) for f in errors.failures} == {("broken", hook)}
    assert all(isinstance(f.cause, cause) for f in errors.failures)
    assert events[-1].data["reason"] == "completed"  # compaction failing ends no turn
    assert check_invariants(agent.session.events) == []


@pytest.mark.parametrize(
    ("plugin", "cause"),
    [(RaisingCounter(), RuntimeError), (GarbageCounter(), TypeError)],
    ids=["counter-raises", "counter-garbage"],
)
async def test_a_broken_token_counter_impl_is_in_the_recorded_failures(
    plugin: object, cause: type[BaseException]
) -> None:
    errors = ErrorRecorder()
    model = ScriptedModel(reads(3), context_window=WINDOW)
    extra = [("broken", plugin), errors]
    async with harness(model, summarizer("sum"), extra=extra, chars=False) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    assert events[-1].data["reason"] == "completed"  # counted with the heuristic
    assert errors.failures, "the broken impl's failure was not recorded"
    assert {(f.plugin, f.hook) for f in errors.failures} == {("broken", "compaction_token_counter")}
    assert all(isinstance(f.cause, cause) for f in errors.failures)
