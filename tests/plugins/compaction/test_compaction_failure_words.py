"""A compaction failing with an exception that has no message logs its type alone."""

from __future__ import annotations

import pytest
from compaction_util import WINDOW, events_of, harness, options, reads, summarizer

from dsh import ModelRequest
from dsh.testing import ScriptedModel, run_turn
from dsh_compaction._failures import error_of

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
