"""A compaction failing with an exception that has no message logs its type alone, and
one failing with an error whose message is empty (a ``ModelError("SERVER", "")``) is
said as its code alone, not ``SERVER: ``."""

from __future__ import annotations

import logging

import pytest
from compaction_util import WINDOW, events_of, harness, options, reads, summarizer

import dsh_compaction
from dsh import ModelRequest
from dsh.testing import ScriptedModel, fail, run_turn
from dsh_compaction import CompactionResult
from dsh_compaction._failures import error_of
from dsh_compaction._warn import overflow_after_failure, warn_dropped

pytestmark = pytest.mark.plugins("compaction")


def test_a_bare_failure_is_said_as_its_type() -> None:
    error = error_of(EOFError(), None)  # type: ignore[arg-type]
    assert error == {"code": "INTERNAL", "message": "EOFError"}


async def test_a_summariser_model_raising_a_bare_exception_is_said_as_its_type() -> None:
    """Behaviour 45. A summariser model whose stream raises what is not a ``ModelError``
    with no message (``RuntimeError()``) fails the compaction ``UNKNOWN: RuntimeError``,
    not ``UNKNOWN: RuntimeError: `` (``dsh.errors.exception_words``)."""

    def bare(request: ModelRequest) -> str:
        raise RuntimeError

    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, summarizer(bare)) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    assert events[-1].data["reason"] == "completed"
    ends = events_of(events, "compact/end")
    assert [e.data["error"] for e in ends] == [{"code": "UNKNOWN", "message": "RuntimeError"}]


async def test_a_summariser_model_error_without_a_message_is_said_as_its_code(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Behaviour 45. A ``ModelError("SERVER", "")`` fails the compaction; the warning
    says ``SERVER``, not ``SERVER: `` (as ``dsh.errors.exception_words`` says a bare
    exception), and so does ``/compact``'s sentence."""
    caplog.set_level(logging.WARNING, logger="dsh_compaction")
    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, summarizer(fail("SERVER", ""), fail("SERVER", ""))) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")
        result = await dsh_compaction.compact_now(agent)

    ends = events_of(events, "compact/end")
    assert [e.data["error"] for e in ends] == [{"code": "SERVER", "message": ""}]
    warned = [r.getMessage() for r in caplog.records if r.name.startswith("dsh_compaction")]
    assert warned == [
        "agent 'a': compaction (threshold, turn 1) failed, the history is unchanged: SERVER"
    ]
    assert str(result) == "failed, the history is unchanged (SERVER)"


@pytest.mark.parametrize(
    ("result", "said"),
    [
        (
            CompactionResult("dropped", "overflow", 9, 5, refused={"code": "REFUSED"}),
            "the summary was refused (REFUSED); older messages were dropped (~9 → ~5 tokens)",
        ),
        (
            CompactionResult("pruned", "threshold", 9, 5, {"code": "TIMEOUT", "message": ""}),
            "old tool results were pruned (~9 → ~5 tokens), but compacting the rest failed "
            "(TIMEOUT)",
        ),
    ],
    ids=["dropped", "pruned"],
)
def test_a_result_whose_error_has_no_message_says_its_code(
    result: CompactionResult, said: str
) -> None:
    assert str(result) == said


def test_the_warnings_say_an_error_without_a_message_as_its_code(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="dsh_compaction")
    error = {"code": "SERVER", "message": ""}
    overflow_after_failure("a", error, 2, 3)
    warn_dropped("a", "overflow", error, 4, kept=None, where={"turn": 2, "step": 3})
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 2
    assert "failed: SERVER; the turn ends" in warned[0]
    assert "the summary was refused (SERVER); to fit" in warned[1]
