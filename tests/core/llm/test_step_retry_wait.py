"""The step retry (``agent_request_error`` answering ``retry``) waits the ``retry_after``
the failed call's error carries, within the model's ``max_wait``.

Before: the loop called the model again at once, whatever wait the server had asked
for (a 429's ``Retry-After``, read by the adapters into ``ModelError.retry_after``), so
a retry after a rate limit was all but sure to be limited again. Now ``step/retry``
says the wait (``wait``) and the loop sleeps that long inside the turn's cancel scope
(an abort ends the wait); a wait longer than the model's ``max_wait`` (``ModelInfo``,
``models.<name>.max_wait`` in dsh.yml) ends the turn with the error, without asking.
Waits are checked from below only (a slow machine waits longer, never shorter)."""

from __future__ import annotations

from typing import Any

import anyio
from llm_wire import WireServer, error, sse
from loop_support import LIMIT, Seen, ends, turn_events
from test_providers_study_openai import answer

from dsh import ModelError, RequestErrorDecision, hookimpl
from dsh.harness import Harness
from dsh.messages import ModelRequest
from dsh.testing import Reply, ScriptedModel, run_turn, scripted_harness


class Retry:
    """Answers every failed call with ``retry``, counting the times it is asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    @hookimpl
    def agent_request_error(self, error: ModelError) -> RequestErrorDecision:
        self.asked.append(error.code)
        return RequestErrorDecision(action="retry", reason="rate limited")


def limited(wait: float, at: list[float]) -> Any:
    """A script entry: the call fails RATE_LIMIT asking for ``wait`` s; its time is kept."""

    def entry(request: ModelRequest) -> Reply:
        at.append(anyio.current_time())
        return Reply(error=ModelError("RATE_LIMIT", "slow down", retry_after=wait))

    return entry


def answered(at: list[float]) -> Any:
    def entry(request: ModelRequest) -> str:
        at.append(anyio.current_time())
        return "done"

    return entry


async def test_a_step_retry_waits_the_retry_after_of_the_error() -> None:
    at: list[float] = []
    model = ScriptedModel([limited(0.3, at), answered(at)])
    events = await turn_events(model, Retry(), prompt="hi")
    assert ends(events) == [(1, "completed")]
    [data] = [e.data for e in events if e.type == "step/retry"]
    assert data == {
        "turn": 1,
        "step": 1,
        "attempt": 1,
        "code": "RATE_LIMIT",
        "message": "slow down",
        "reason": "rate limited",
        "wait": 0.3,
    }
    first, second = at
    assert second - first >= 0.25
    model.assert_complete()


async def test_a_retry_after_longer_than_max_wait_ends_the_turn_without_asking() -> None:
    at: list[float] = []
    model = ScriptedModel([limited(5, at), answered(at)], max_wait=1)
    retry = Retry()
    events = await turn_events(model, retry, prompt="hi")
    assert retry.asked == [] and len(at) == 1
    assert not [e for e in events if e.type == "step/retry"]
    assert events[-1].data["error"] == {
        "code": "RATE_LIMIT",
        "message": "model 'scripted': slow down",
        "retry_after": 5,
    }


async def test_an_abort_ends_the_wait_before_the_retry() -> None:
    at: list[float] = []
    model = ScriptedModel([limited(30, at), answered(at)])
    seen = Seen()
    plugins = [Retry(), ("seen", seen)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        agent.send("hi")
        with anyio.fail_after(LIMIT):
            await seen["step/retry"].wait()
            agent.abort()
            await agent.when_idle()
        assert ends(agent.session.events) == [(1, "aborted")]
    assert len(at) == 1  # the retry never ran


async def test_a_429_over_http_is_retried_by_the_step_after_its_retry_after() -> None:
    """The adapter retries nothing (max_retries: 0), so the loop's retry waits the
    429's Retry-After (within max_wait from dsh.yml) before the second request."""
    text = (
        "models:\n  wire:\n    provider: openai-compatible\n    model: m\n"
        "    base_url: {url}\n    max_retries: 0\n    max_wait: 5\n"
        "agents:\n  - id: main\n    model: wire\n"
    )
    busy = error(429, {"error": {"message": "slow down"}}, {"retry-after": "0.3"})
    async with WireServer([busy, sse(answer("hi."))]) as server:
        config = text.format(url=server.url)
        async with Harness(config_text=config, plugins=[Retry()], load_entry_points=False) as h:
            agent = h.agents.get("main")
            assert agent is not None
            with anyio.fail_after(LIMIT):
                events = await run_turn(agent, "hello")
        first, second = server.requests
    assert ends(events) == [(1, "completed")]
    [data] = [e.data for e in events if e.type == "step/retry"]
    assert data["wait"] == 0.3
    assert second.at - first.at >= 0.25


async def test_a_retry_after_over_http_beyond_max_wait_is_not_retried() -> None:
    text = (
        "models:\n  wire:\n    provider: openai-compatible\n    model: m\n"
        "    base_url: {url}\n    max_retries: 0\n    max_wait: 1\n"
        "agents:\n  - id: main\n    model: wire\n"
    )
    busy = error(429, {"error": {"message": "slow down"}}, {"retry-after": "2"})
    retry = Retry()
    async with WireServer([busy, sse(answer("hi."))]) as server:
        config = text.format(url=server.url)
        async with Harness(config_text=config, plugins=[retry], load_entry_points=False) as h:
            agent = h.agents.get("main")
            assert agent is not None
            with anyio.fail_after(LIMIT):
                events = await run_turn(agent, "hello")
        assert len(server.requests) == 1
    assert retry.asked == []
    assert events[-1].data["error"]["retry_after"] == 2
