"""A server's CONTEXT_WINDOW_EXCEEDED that states the model's window
(``ModelError.context_window``) smaller than the one configured: the overflow's
compaction plans with the server's window, and the agent keeps it for the model, so
the threshold check of later requests compacts below it before the server refuses
again; one warning names the model and both windows.

Before: the overflow planned for the refused request's estimated size, and the next
turns' threshold checks used the configured window (a llama.cpp server with
``--ctx-size 2048`` behind ``context_window: 16384``): every later turn filled the real
window again and paid a refused request and a compaction."""

from __future__ import annotations

from typing import Any

import pytest
from compaction_util import (
    CONFIGURED,
    REAL,
    RealWindow,
    chars,
    events_of,
    harness,
    options,
    reads,
    summarizer,
)

from dsh import ModelError
from dsh.testing import ScriptedModel, check_invariants, run_turn
from dsh_compaction._summary_errors import too_long

pytestmark = pytest.mark.plugins("compaction")


async def turns(server: RealWindow, *prompts: str) -> tuple[list[list[Any]], Any]:
    """The agent's turns, one per prompt (the summariser answers each compaction)."""
    summariser = summarizer(*(f"summary {n}" for n in range(1, 6)))
    async with harness(server.model, summariser) as h:
        agent = await h.agents.create("a", options=options())
        events = [await run_turn(agent, prompt) for prompt in prompts]
        assert check_invariants(agent.session.events) == []
        return events, agent


async def test_the_overflow_plans_with_the_window_the_server_states(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("WARNING", logger="dsh_compaction")
    # turn 1: ~3,700 tokens; turn 2's third read is refused (~6,100)
    server = RealWindow([*reads(3), *reads(3)])

    (first, second), _ = await turns(server, "task", "next")

    assert events_of(first) == [] and len(server.refused) == 1
    start, *_ = events_of(second, "compact/start")
    assert (start.data["reason"], start.data["context_window"]) == ("overflow", REAL)
    requests = server.model.requests
    retried = requests[requests.index(server.refused[0]) + 1]
    assert chars(retried) <= 0.8 * REAL  # planned below the threshold of the real window
    assert second[-1].data["reason"] == "completed"
    warned = [r.getMessage() for r in caplog.records if "context window" in r.getMessage()]
    assert warned == [
        "agent 'a': model 'scripted': the server says its context window is 5,000 tokens "
        "(the configured one: 1,000,000 tokens); compaction plans with the server's from "
        "now on; set context_window in dsh.yml (the model's entry, or compaction:) to 5000"
    ]


async def test_the_next_turns_threshold_uses_the_servers_window() -> None:
    server = RealWindow([*reads(3), *reads(3), *reads(4), *reads(4)])

    (_, _, third, fourth), _ = await turns(server, "task", "next", "more", "again")

    assert len(server.refused) == 1  # turn 2's, then never again
    for events in (third, fourth):
        starts = events_of(events, "compact/start")
        assert starts, "the threshold compacts before the server's window is full"
        assert {(e.data["reason"], e.data["context_window"]) for e in starts} == {
            ("threshold", REAL)
        }
        assert events[-1].data["reason"] == "completed"


async def test_an_error_that_states_no_window_plans_for_the_refused_size_as_before() -> None:
    server = RealWindow([*reads(3), *reads(3)], stated=False)

    (_, second), _ = await turns(server, "task", "next")

    start, *_ = events_of(second, "compact/start")
    assert start.data["reason"] == "overflow"
    assert start.data["context_window"] == chars(server.refused[0])  # the estimate


def test_the_summarisers_refusal_keeps_the_sizes_the_server_stated() -> None:
    refused = ModelError("CONTEXT_WINDOW_EXCEEDED", "no", context_window=2048, request_tokens=4461)
    error = too_long("summ", 16_384, refused)
    assert "planned for a context window of 16,384 tokens" in error.message
    assert (error.context_window, error.request_tokens) == (2048, 4461)


async def test_the_stated_window_is_kept_for_that_model_only() -> None:
    server = RealWindow([*reads(3), *reads(3), *reads(2)])
    other = ScriptedModel(reads(2), name="other", context_window=CONFIGURED)
    async with harness(server.model, other, summarizer("summary 1", "summary 2")) as h:
        agent = await h.agents.create("a", options=options())
        for prompt in ("task", "next"):
            await run_turn(agent, prompt)
        agent.options["model"] = "other"
        on_other = await run_turn(agent, "on other")
        agent.options["model"] = "scripted"
        back = await run_turn(agent, "back")

    assert len(server.refused) == 1
    assert events_of(on_other) == []  # over 4,000 tokens, far below the other's window
    assert max(chars(request) for request in other.requests) > 0.8 * REAL
    assert [e.data["reason"] for e in events_of(back, "compact/start")] == ["threshold"]
