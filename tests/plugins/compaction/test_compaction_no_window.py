"""A model with no known context window is never compacted at the threshold (only when
its provider refuses a request as too long): that is warned, once per agent and model,
naming the setting that fixes it, instead of compaction silently never running."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from compaction_util import events_of, harness, options, reads, summarizer

from dsh.testing import ScriptedModel, run_turn

pytestmark = pytest.mark.plugins("compaction")


def warned(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "no context window" in r.getMessage()]


async def test_a_model_without_a_window_is_warned_once_per_agent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ScriptedModel([*reads(3), *reads(2)], context_window=None)
    async with harness(model, summarizer()) as h:
        with caplog.at_level(logging.INFO, logger="dsh_compaction"):
            a = await h.agents.create("a", options=options())
            events = await run_turn(a, "task")
            b = await h.agents.create("b", options=options())
            await run_turn(b, "task")
    assert events_of(events) == []  # nothing compacted: no window, no threshold
    said = warned(caplog)
    assert len(said) == 2  # one each, not one a request
    assert said[0].startswith("agent 'a': no context window known for model 'scripted'")
    assert "context_window" in said[0] and "models:" in said[0]
    assert "only when the provider refuses a request" in said[0]
    assert said[1].startswith("agent 'b': ")
    # INFO, not a warning: every `dsh run -m openai-compatible:...` printed it
    levels = {r.levelno for r in caplog.records if "no context window" in r.getMessage()}
    assert levels == {logging.INFO}


@pytest.mark.parametrize(
    "settings",
    [
        {"context_window": 100_000},  # the compaction setting gives it
        {"enabled": False},  # nothing compacts automatically anyway
    ],
)
async def test_a_window_given_or_compaction_off_is_not_warned(
    caplog: pytest.LogCaptureFixture, settings: dict[str, Any]
) -> None:
    model = ScriptedModel(reads(2), context_window=None)
    async with harness(model, summarizer()) as h:
        with caplog.at_level(logging.INFO, logger="dsh_compaction"):
            agent = await h.agents.create("a", options=options(**settings))
            await run_turn(agent, "task")
    assert warned(caplog) == []


async def test_a_model_with_a_window_is_not_warned(caplog: pytest.LogCaptureFixture) -> None:
    model = ScriptedModel(reads(2), context_window=100_000)
    async with harness(model, summarizer()) as h:
        with caplog.at_level(logging.INFO, logger="dsh_compaction"):
            agent = await h.agents.create("a", options=options())
            await run_turn(agent, "task")
    assert warned(caplog) == []
