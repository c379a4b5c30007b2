"""The relay's interception waterfalls with no impl return their value without a
dispatch, and an impl registered later is still called (the relay reads the
dispatcher's plans, which registration empties)."""

from __future__ import annotations

from typing import Any

from dsh import hookimpl
from dsh.messages import AssistantMessage, ContinuationDecision, ModelRequest
from dsh.plugins import create_plugin_manager


class Changer:
    @hookimpl
    def agent_request(self, request: ModelRequest) -> ModelRequest:
        return request.model_copy(update={"system": "changed"})

    @hookimpl
    def agent_step_result(self, message: AssistantMessage) -> AssistantMessage:
        return message.model_copy(update={"model": "changed"})

    @hookimpl
    def agent_turn_continuation(self, decision: ContinuationDecision) -> ContinuationDecision:
        return ContinuationDecision(action="stop", reason="changed")


async def test_no_impl_gives_the_value_and_a_later_impl_runs() -> None:
    pm = create_plugin_manager(load_entry_points=False)
    relay = pm.relay
    agent: Any = object()
    request = ModelRequest(system="s")
    message = AssistantMessage()
    decision = ContinuationDecision(action="continue")
    assert await relay.agent_request(agent, request, 1, 1) is request
    assert await relay.agent_step_result(agent, message, 1, 1) is message
    assert await relay.agent_turn_continuation(agent, decision, 1, 1) is decision
    pm.register(Changer(), name="changer")
    assert (await relay.agent_request(agent, request, 1, 1)).system == "changed"
    assert (await relay.agent_step_result(agent, message, 1, 1)).model == "changed"
    assert (await relay.agent_turn_continuation(agent, decision, 1, 1)).reason == "changed"
    pm.unregister(name="changer")
    assert await relay.agent_request(agent, request, 1, 1) is request
