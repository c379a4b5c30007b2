"""Review of the sixteenth session's compaction changes (the compaction that goes on
after a too-large tool result's stub, ``_Run`` in ``_compact.py``), by hand mutation:
each test here failed on a mutant of dsh_compaction's source that the other compaction
tests let through (the mutant is named in the test's docstring), or on the bug it
fixes (named there too).

``compact`` is called directly, as ``compact_now`` calls it, on a history built by
turns with a window too large to compact; ``CharCounter``: one token a character."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from compaction_util import CHARS, Dump, events_of, harness, summarizer

from dsh import hookimpl
from dsh.testing import ScriptedModel, fail, run_turn, text, tool_calls
from dsh_compaction import SUMMARY_HEADER, _host, compact_now
from dsh_compaction._compact import CompactionResult, Reason, compact
from dsh_compaction._state import state_for

pytestmark = pytest.mark.plugins("compaction")


async def compacted(
    questions: list[str],
    summary: Any,
    *,
    reason: Reason,
    window: int,
    last: str = "dump it",
    tail_tokens: int | None = None,
    extra: tuple[tuple[str, object], ...] = (),
) -> tuple[CompactionResult, int, list[Any], Any]:
    """Turns asking ``questions`` (answered "ok"), then ``last``, whose step dumps 20,000
    characters; then ``compact`` with ``window`` (no reserve; ``tail_tokens`` if
    given; ``extra`` plugins): the result, the tokens before it, its events and the
    agent."""
    steps = ["ok"] * len(questions) + [tool_calls(("dump", {"size": 20_000})), "done"]
    model = ScriptedModel(steps, context_window=1_000_000)
    settings: dict[str, Any] = {"model": "summarizer", "prune_chars": 0}
    if tail_tokens is not None:
        settings["tail_tokens"] = tail_tokens
    options = {"model": "scripted", "compaction": settings}
    summariser = summarizer(text(summary) if isinstance(summary, str) else summary)
    async with harness(model, summariser, extra=[("dump", Dump()), *extra]) as h:
        agent = await h.agents.create("a", options=options)
        for question in questions:
            await run_turn(agent, question)
        await run_turn(agent, last)
        history_before = list(agent.session.history)
        state = state_for(agent.agent)
        settings = state.settings(agent.agent)
        async with state.lock:
            request = _host.base_request(agent.agent)
            before = sum(map(CHARS.count_message, request.messages))
            result = await compact(
                agent.agent, state, settings, request, reason=reason, window=window, reserve=0
            )
        await _host.flush(agent.agent)
        events = [e for e in agent.agent.session.events if e.type.startswith("compact/")]
        assert len(agent.session.history) <= len(history_before)
        return result, before, events, agent


async def test_a_summary_after_the_stub_is_the_result_from_the_first_tokens_before() -> None:
    """docs: "Its result is then the second's, from the first's tokens_before".
    Mutants: the ``rest.changed`` branch dropped (the stub's ``pruned`` result), its
    ``before`` replaced by the second's ``tokens_before``, its ``summary`` dropped."""
    questions = [str(i) * 2000 for i in range(4)]  # 8,000 + the stub: over 8,000
    result, before, events, agent = await compacted(
        questions, "the summary", reason="threshold", window=10_000
    )
    ends = [(e.data["outcome"], e.data["tokens_before"]) for e in events_of(events, "compact/end")]
    assert [outcome for outcome, _ in ends] == ["pruned", "summarized"]
    assert ends[0][1] == before > 20_000
    assert ends[1][1] < 9_000  # the second starts from the stubbed history
    assert (result.outcome, result.reason, result.error) == ("summarized", "threshold", None)
    assert result.tokens_before == before
    assert result.tokens_after == sum(map(CHARS.count_message, agent.session.history)) < 8_000
    assert result.summary == "the summary"
    assert str(agent.session.history[0].content).startswith(SUMMARY_HEADER)


class KeepAll:
    """Marks every message to keep: nothing can be summarised."""

    @hookimpl(optionalhook=True)
    def compaction_keep(self, messages: Any, keep: Any) -> Any:
        return keep | set(range(len(messages)))


KEEP_ALL = ("keep", KeepAll())


async def test_an_overflow_with_nothing_left_after_the_stub_keeps_the_stub_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The stub changed the history (the retry goes ahead); the second compaction finds
    nothing more (``skipped``, code NOTHING in its ``compact/end``). The result is the
    stub's, without an error: the second did not fail. Mutant: its ``error`` kept
    whatever the second's outcome. Bug fixed: the warning said "nothing could be
    compacted to fit the context window (overflow); the history is unchanged" though
    the stub had just changed it."""
    caplog.set_level(logging.DEBUG, logger="dsh_compaction")
    result, before, events, _ = await compacted(
        [], "unused", reason="overflow", window=3_000, last="q" * 5_000, extra=(KEEP_ALL,)
    )
    ends = [e.data for e in events_of(events, "compact/end")]
    assert [(e["outcome"], e.get("error", {}).get("code")) for e in ends] == [
        ("pruned", None),
        ("skipped", "NOTHING"),
    ]
    assert (result.outcome, result.error, result.changed) == ("pruned", None, True)
    assert result.tokens_before == before and result.tokens_after < 6_000
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warned == [
        "agent 'a': too-large tool results were stubbed, but nothing else could be "
        "compacted to fit the context window (overflow): the compaction_keep marks of "
        "plugin 'keep' keep every message a summary would replace"
    ]


async def test_a_failed_summary_after_the_stub_does_not_say_the_history_is_unchanged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The result is the stub's with the summary's error (the turn's compaction failed).
    Bug fixed: the warning said "compaction (threshold) failed, the history is
    unchanged" though the stub had just changed it."""
    caplog.set_level(logging.WARNING, logger="dsh_compaction")
    questions = [str(i) * 2000 for i in range(4)]
    down = fail("SERVER", "the summariser is down")
    result, before, _, _ = await compacted(questions, down, reason="threshold", window=10_000)
    assert (result.outcome, result.tokens_before) == ("pruned", before)
    assert result.error is not None and result.error["code"] == "SERVER"
    (warned,) = [r.getMessage() for r in caplog.records]
    assert warned.startswith(
        "agent 'a': compaction (threshold) failed after too-large tool results were "
        "stubbed, the rest of the history is unchanged: SERVER: "
    ), warned


async def test_a_failed_manual_compaction_is_not_also_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A manual compaction's failure is its caller's to tell (``/compact`` prints the
    result); only the automatic ones warn. Mutant: ``_Run.end`` warning whatever the
    reason (``reason != "manual"`` dropped)."""
    caplog.set_level(logging.WARNING, logger="dsh_compaction")
    down = fail("SERVER", "the summariser is down")
    model = ScriptedModel(["ok"] * 3, context_window=1_000_000)
    options = {"model": "scripted", "compaction": {"model": "summarizer", "tail_tokens": 10}}
    async with harness(model, summarizer(down)) as h:
        agent = await h.agents.create("a", options=options)
        for i in range(3):
            await run_turn(agent, str(i) * 500)
        result = await compact_now(agent)
    assert (result.outcome, result.error and result.error["code"]) == ("failed", "SERVER")
    assert caplog.records == []


async def test_a_stub_that_brings_the_request_to_the_limit_exactly_is_enough() -> None:
    """ "Over the limit" is more than it, as for the threshold itself. Mutant: the second
    compaction also when the stubbed request is exactly at the limit (``<`` for
    ``<=``)."""
    questions = [str(i) * 2000 for i in range(4)]
    probe, _, events, _ = await compacted(questions, "s", reason="threshold", window=10_000)
    stubbed = events_of(events, "compact/end")[0].data["tokens_after"]
    questions[0] += "0" * (-stubbed % 4)  # the limit is 0.8 of the window: a whole number
    exact = stubbed + (-stubbed % 4)
    result, _, events, _ = await compacted(
        questions, "s", reason="threshold", window=exact * 5 // 4
    )
    assert probe.outcome == "summarized"  # the probe's window left it over the limit
    assert [e.data["outcome"] for e in events_of(events, "compact/end")] == ["pruned"]
    assert (result.outcome, result.tokens_after) == ("pruned", exact)
