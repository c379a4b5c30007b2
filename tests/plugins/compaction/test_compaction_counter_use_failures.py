"""A token counter a plugin supplied that fails when it is used (a tokenizer that raises
on some text, as tiktoken does on '<|endoftext|>' by default; a count that is negative,
NaN or not an int) is passed over for that count: the heuristic counts it, one warning
names the plugin and what its counter did, and the failure is reported as dsh reports one
it contains (``ErrorRecorder``).

Before: the raise left the compaction's ``agent_request`` impl, and the turn ended HOOK
blamed on 'compaction'; the message stayed in the history, so every later turn ended the
same way. A negative count kept compaction from ever triggering; NaN ended the turn with
an EventDataError on ``compact/start``.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import pytest
from compaction_util import WINDOW, events_of, harness, options, reads, summarizer

from dsh import hookimpl
from dsh.testing import ErrorRecorder, ScriptedModel, check_invariants, run_turn
from dsh_compaction import TextTokenCounter

pytestmark = pytest.mark.plugins("compaction")

KEY = "sk-test-aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7n"  # sk-test- and 40 more


#: the heuristic compacts reads(5) once in a window this large
HEURISTIC_WINDOW = 2500


def strict(text: str) -> int:
    """Counts like tiktoken's ``encode`` with its default ``disallowed_special="all"``."""
    if "<|endoftext|>" in text:
        raise ValueError(f"Encountered disallowed special token '<|endoftext|>' ({KEY})")
    return len(text)


class Tokens:
    """Supplies a ``TextTokenCounter`` of ``count``, with no overheads unless ``framed``
    (the default ones, added to what ``count`` returns)."""

    def __init__(self, count: Any, *, framed: bool = False) -> None:
        self.count = count
        self.framed = framed

    @hookimpl(optionalhook=True)
    def compaction_token_counter(self) -> TextTokenCounter:
        if self.framed:
            return TextTokenCounter(self.count)
        return TextTokenCounter(self.count, message_overhead=0, call_overhead=0)


def messages_of(records: list[logging.LogRecord]) -> list[str]:
    return [
        r.getMessage()
        for r in records
        if r.name == "dsh_compaction" and "counter" in r.getMessage()
    ]


async def test_a_counter_that_raises_on_a_message_leaves_every_turn_working(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    errors = ErrorRecorder()
    model = ScriptedModel(["one", "two", "three"], context_window=WINDOW)
    extra = [("tokens", Tokens(strict)), errors]
    with caplog.at_level(logging.WARNING):
        async with harness(model, summarizer(), extra=extra, chars=False) as h:
            agent = await h.agents.create("a", options=options())
            reasons = [
                (await run_turn(agent, prompt))[-1].data["reason"]
                for prompt in ("hello", "what does <|endoftext|> mean?", "next")
            ]
            assert check_invariants(agent.session.events) == []

    assert reasons == ["completed"] * 3
    assert {(f.plugin, f.hook) for f in errors.failures} == {("tokens", "compaction_token_counter")}
    assert len(errors.failures) == 1  # once, not at every count
    assert isinstance(errors.failures[0].cause, ValueError)
    warnings = messages_of(caplog.records)
    assert len(warnings) == 1, warnings
    assert "'tokens'" in warnings[0] and "raised" in warnings[0] and "heuristic" in warnings[0]
    assert "ValueError" in warnings[0] and KEY not in warnings[0]


@pytest.mark.parametrize(
    "count",
    [lambda s: -len(s), lambda s: math.nan, lambda s: len(s) / 2, lambda s: str(len(s))],
    ids=["negative", "nan", "float", "str"],
)
async def test_a_counter_returning_a_wrong_count_is_passed_over_for_the_heuristic(
    count: Any, caplog: pytest.LogCaptureFixture
) -> None:
    await _passed_over(Tokens(count), caplog)


@pytest.mark.parametrize(
    "count", [lambda s: True, lambda s: -1, lambda s: 1.0], ids=["bool", "small-negative", "float"]
)
async def test_a_wrong_count_under_the_overheads_is_passed_over_for_the_heuristic(
    count: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """``TextTokenCounter`` checks what its function returns: the overheads added to it
    (4 + True == 5, 4 - 1 == 3) made a valid-looking count the guard let through, and the
    threshold never fired."""
    await _passed_over(Tokens(count, framed=True), caplog)


async def _passed_over(tokens: Tokens, caplog: pytest.LogCaptureFixture) -> None:
    errors = ErrorRecorder()
    model = ScriptedModel(reads(5), context_window=HEURISTIC_WINDOW)
    extra = [("tokens", tokens), errors]
    with caplog.at_level(logging.WARNING):
        async with harness(model, summarizer("sum"), extra=extra, chars=False) as h:
            agent = await h.agents.create("a", options=options())
            events = await run_turn(agent, "task")
            assert check_invariants(agent.session.events) == []

    assert events[-1].data["reason"] == "completed"
    # the heuristic counted: the history passed the threshold and was summarised
    ends = events_of(events, "compact/end")
    assert [e.data["outcome"] for e in ends] == ["summarized"]
    assert {(f.plugin, f.hook) for f in errors.failures} == {("tokens", "compaction_token_counter")}
    assert len(errors.failures) == 1
    warnings = messages_of(caplog.records)
    assert len(warnings) == 1, warnings
    assert "'tokens'" in warnings[0] and "returned" in warnings[0]


async def test_a_counter_failing_for_many_agents_is_warned_about_and_reported_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One plugin's counter, supplied to each agent of a harness, is one failure: one
    warning, one report (before: one of each per agent, 30 agents ~400 log lines)."""
    errors = ErrorRecorder()
    model = ScriptedModel(["ok"] * 5, context_window=WINDOW)
    extra = [("tokens", Tokens(strict)), errors]
    with caplog.at_level(logging.WARNING):
        async with harness(model, summarizer(), extra=extra, chars=False) as h:
            for n in range(5):
                agent = await h.agents.create(f"a{n}", options=options())
                done = await run_turn(agent, "what does <|endoftext|> mean?")
                assert done[-1].data["reason"] == "completed"

    assert len(errors.failures) == 1, errors.failures
    warnings = messages_of(caplog.records)
    assert len(warnings) == 1, warnings
    assert "'tokens'" in warnings[0]


async def test_a_message_less_failure_of_a_counter_is_worded_by_its_type_alone(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A counter that raises an exception with no message (``RuntimeError()``) is worded
    as dsh words one (``dsh.errors.exception_words``): 'raised RuntimeError in ...', not
    'raised RuntimeError:  in ...'."""

    def silent(text: str) -> int:
        raise RuntimeError

    model = ScriptedModel(["ok"], context_window=WINDOW)
    with caplog.at_level(logging.WARNING):
        async with harness(model, summarizer(), extra=[("tokens", Tokens(silent))]) as h:
            agent = await h.agents.create("a", options=options())
            assert (await run_turn(agent, "hello"))[-1].data["reason"] == "completed"

    warnings = messages_of(caplog.records)
    assert len(warnings) == 1, warnings
    assert "raised RuntimeError in count_" in warnings[0], warnings[0]
