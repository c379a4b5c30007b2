"""A ``compaction.context_window`` larger than the model's own window (its info's, or
its ``models:`` entry's) would start compaction too late: the provider refuses the
request first. The smaller window is used, with a warning (once per agent and model)
that names both numbers and the setting."""

from __future__ import annotations

import logging

import pytest
from compaction_util import events_of, harness, options, reads, summarizer

from dsh.testing import ScriptedModel, run_turn

pytestmark = pytest.mark.plugins("compaction")


def warned(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "larger than" in r.getMessage()]


async def test_a_setting_larger_than_the_models_window_uses_the_models(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # five reads of ~300 tokens each pass 0.8 of 1,500 tokens, never 0.8 of 100,000
    model = ScriptedModel([*reads(5), *reads(2)], context_window=1_500)
    async with harness(model, summarizer("summary", "summary")) as h:
        with caplog.at_level(logging.INFO, logger="dsh_compaction"):
            a = await h.agents.create("a", options=options(context_window=100_000))
            events = await run_turn(a, "task")
            await run_turn(a, "again")
            b = await h.agents.create("b", options=options(context_window=100_000))
            await run_turn(b, "task")
    starts = [e for e in events_of(events) if e.type == "compact/start"]
    assert starts, "compaction never ran: the setting's window was used"
    assert {e.data["context_window"] for e in starts} == {1_500}
    said = warned(caplog)
    assert len(said) == 2, said  # once per agent and model, not once a request
    assert said[0].startswith("agent 'a': ")
    assert "compaction.context_window (100,000)" in said[0]
    assert "model 'scripted'" in said[0] and "(1,500)" in said[0]
    assert {r.levelno for r in caplog.records if "larger than" in r.getMessage()} == {
        logging.WARNING
    }


async def test_a_setting_smaller_than_the_models_window_is_used_without_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ScriptedModel(reads(5), context_window=100_000)
    async with harness(model, summarizer("summary")) as h:
        with caplog.at_level(logging.INFO, logger="dsh_compaction"):
            agent = await h.agents.create("a", options=options(context_window=1_500))
            events = await run_turn(agent, "task")
    starts = [e for e in events_of(events) if e.type == "compact/start"]
    assert {e.data["context_window"] for e in starts} == {1_500}
    assert warned(caplog) == []
