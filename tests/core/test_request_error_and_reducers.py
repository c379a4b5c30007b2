"""The agent_request_error hook (retry a failed model call) and plugin history reducers."""

from __future__ import annotations

from typing import Any

import pytest

from dsh import (
    DshError,
    ModelError,
    ModelRequest,
    RequestErrorDecision,
    UserMessage,
    hookimpl,
)
from dsh.testing import (
    InMemoryPersistence,
    ScriptedModel,
    check_invariants,
    fail,
    run_turn,
    scripted_harness,
)

OPTIONS = {"model": "scripted"}


class RetryOnOverflow:
    def __init__(self) -> None:
        self.errors: list[str] = []

    @hookimpl
    def agent_request_error(self, error: ModelError) -> RequestErrorDecision | None:
        self.errors.append(error.code)
        if error.code == "CONTEXT_WINDOW_EXCEEDED":
            return RequestErrorDecision(action="retry", reason="trimmed")
        return None


class TrimAfterFailure:
    """Drops all but the last message once a retry was logged in this step."""

    @hookimpl
    def agent_request(self, agent: Any, request: ModelRequest) -> ModelRequest | None:
        if agent.session.events[-1].type == "step/retry":
            return request.model_copy(update={"messages": list(request.messages[-1:])})
        return None


async def test_retry_calls_the_model_again_after_agent_request_ran_again() -> None:
    model = ScriptedModel([fail("CONTEXT_WINDOW_EXCEEDED", "too long"), "ok"])
    retry = RetryOnOverflow()
    plugins = [("retry", retry), ("trim", TrimAfterFailure())]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        await run_turn(agent, "first")
        model.extend(fail("CONTEXT_WINDOW_EXCEEDED", "too long"), "ok again")
        events = await run_turn(agent, "second")
    retried = [e for e in events if e.type == "step/retry"]
    assert [e.data for e in retried] == [
        {
            "turn": 2,
            "step": 1,
            "attempt": 1,
            "code": "CONTEXT_WINDOW_EXCEEDED",
            "message": "too long",
            "reason": "trimmed",
        }
    ]
    assert events[-1].data["reason"] == "completed"
    assert len(model.requests[2].messages) == 3  # the failed request: the whole history
    assert model.requests[3].messages == [UserMessage(content="second")]
    assert retry.errors == ["CONTEXT_WINDOW_EXCEEDED", "CONTEXT_WINDOW_EXCEEDED"]
    assert check_invariants(agent.session.events) == []
    model.assert_complete()


async def test_the_default_is_fail_with_the_providers_code() -> None:
    model = ScriptedModel([fail("RATE_LIMIT", "slow down")])
    retry = RetryOnOverflow()
    async with scripted_harness(model, plugins=[("retry", retry)], load_entry_points=False) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        events = await run_turn(agent, "hi")
    assert not any(e.type == "step/retry" for e in events)
    assert events[-1].data["reason"] == "error"
    assert events[-1].data["error"] == {
        "code": "RATE_LIMIT",
        "message": "model 'scripted': slow down",
    }
    assert retry.errors == ["RATE_LIMIT"]


async def test_retries_are_bounded_per_step() -> None:
    overflow = fail("CONTEXT_WINDOW_EXCEEDED", "still too long")
    model = ScriptedModel([overflow, overflow, overflow])
    options = {**OPTIONS, "max_request_retries": 2}
    async with scripted_harness(
        model, plugins=[("retry", RetryOnOverflow())], load_entry_points=False
    ) as h:
        agent = await h.agents.create("a", options=options)
        events = await run_turn(agent, "hi")
    assert [e.data["attempt"] for e in events if e.type == "step/retry"] == [1, 2]
    assert events[-1].data["error"]["code"] == "CONTEXT_WINDOW_EXCEEDED"
    model.assert_complete()


class Notes:
    """Pins a note (a plugin event) that derived history shows to the model."""

    @hookimpl
    def register_history_reducers(self, register: Any) -> None:
        register("notes/pinned", self.reduce)

    @staticmethod
    def reduce(history: list[Any], event: Any) -> None:
        history.append(UserMessage(content=f"Note: {event.data['text']}"))

    @hookimpl
    async def agent_request(self, agent: Any, step: int) -> None:
        if step == 1 and not any(e.type == "notes/pinned" for e in agent.session.events):
            await agent.session.emit("notes/pinned", {"text": "use metric units"})


async def test_plugin_reducers_shape_history_and_survive_resume() -> None:
    store = InMemoryPersistence()
    model = ScriptedModel(["one", "two"])
    plugins = [("notes", Notes()), ("mem", store)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        await run_turn(agent, "hi")
        live = list(agent.session.history)
        session_id = agent.session.id
    # the note logged during step 1 is in the *next* request, and in history
    assert UserMessage(content="Note: use metric units") in live
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        resumed = await h.agents.resume("a", session_id, options=OPTIONS)
        assert list(resumed.session.history) == live
        await run_turn(resumed, "again")
    assert model.requests[1].messages[:3] == live


async def test_a_second_reducer_for_a_type_stops_start_up() -> None:
    class Clash:
        @hookimpl
        def register_history_reducers(self, register: Any) -> None:
            register("user/message", lambda history, event: None)

    with pytest.raises(DshError, match=r"'clash'.*'user/message'"):
        async with scripted_harness(plugins=[("clash", Clash())], load_entry_points=False):
            pass
