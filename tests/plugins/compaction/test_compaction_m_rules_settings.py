"""Found by mutation testing: the estimate's token counter and the settings (the prompt,
``chars_per_token``, agent options changed between requests, per-agent state).
"""

from __future__ import annotations

from typing import Any

import pytest
from compaction_util import (
    WINDOW,
    events_of,
    harness,
    options,
    reads,
    summarizer,
)

from dsh import (
    hookimpl,
)
from dsh.testing import ScriptedModel, run_turn
from dsh_compaction._state import state_for
from dsh_compaction._summarise import AFTER

pytestmark = pytest.mark.plugins("compaction")


async def test_the_prompt_setting_replaces_the_summarisers_instructions() -> None:
    summariser = summarizer("s")
    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, summariser) as h:
        agent = await h.agents.create("a", options=options(prompt="Summarise tersely."))
        await run_turn(agent, "task")

    (request,) = summariser.requests
    assert request.system == "Summarise tersely."
    assert request.messages[0].content.endswith("\n</conversation>\n\n" + AFTER)


# --- the estimate's counter and the settings an agent runs with -----------------------------


async def heuristic_start(window: int, *extra: Any, **settings: Any) -> Any:
    """The first compaction's start data of a reads(5) turn without CharCounter."""
    model = ScriptedModel(reads(5), context_window=window)
    async with harness(model, summarizer("s"), extra=list(extra), chars=False) as h:
        agent = await h.agents.create("a", options=options(**settings))
        events = await run_turn(agent, "task")
    assert events[-1].data["reason"] == "completed"
    starts = events_of(events, "compact/start")
    return starts[0].data if starts else None


@pytest.mark.parametrize("counter", [RuntimeError("no tokenizer"), "not a counter"])
async def test_a_broken_token_counter_falls_back_to_the_heuristic(counter: Any) -> None:
    class Counts:
        @hookimpl(optionalhook=True)
        def compaction_token_counter(self) -> Any:
            if isinstance(counter, Exception):
                raise counter
            return counter

    start = await heuristic_start(2000, ("counts", Counts()))

    assert start is not None and start == await heuristic_start(2000)


async def test_chars_per_token_tunes_the_default_estimate() -> None:
    assert await heuristic_start(WINDOW) is None  # ~4 characters a token: far below

    start = await heuristic_start(WINDOW, chars_per_token=1.0)

    assert start is not None and start["tokens"] > 0.8 * WINDOW


async def test_changed_agent_options_apply_from_the_next_request() -> None:
    class Models:
        def __init__(self) -> None:
            self.asked: list[str | None] = []

        @hookimpl(optionalhook=True)
        def compaction_token_counter(self, model: str | None) -> None:
            self.asked.append(model)  # None: the heuristic

    models = Models()
    model = ScriptedModel(reads(5), context_window=WINDOW)
    other = ScriptedModel(["fine", "fine again"], name="other", context_window=WINDOW)
    async with harness(model, other, summarizer("s"), extra=[("m", models)], chars=False) as h:
        agent = await h.agents.create("a", options=options())
        first = await run_turn(agent, "task")  # ~2000 tokens by the heuristic
        agent.agent.options["model"] = "other"
        second = await run_turn(agent, "next")
        asked = list(models.asked)
        agent.agent.options["compaction"] = {"model": "summarizer", "chars_per_token": 1.0}
        third = await run_turn(agent, "again")

    assert events_of(first) == events_of(second) == []
    assert asked == ["scripted", "other"]  # asked once per model
    assert events_of(third, "compact/start")[0].data["step"] == 1  # ~7000 tokens now


def test_an_agent_without_weak_references_keeps_one_state_until_forgotten() -> None:
    from dsh_compaction._state import forget

    class Slotted:
        __slots__ = ("id",)

    agent = Slotted()

    state = state_for(agent)

    assert state_for(agent) is state
    forget(agent)
    assert state_for(agent) is not state
