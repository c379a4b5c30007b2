"""pydantic-ai: ``Agent.run`` with a ``FunctionModel``; see _common.py.

The model function answers from the messages it is given: a ``ToolCallPart`` for
``add`` until the last request carries a ``ToolReturnPart``, then a ``TextPart`` "3".
No instrumentation (Logfire/OpenTelemetry is off unless configured).
"""

from __future__ import annotations

from typing import Any

from _common import ARGS, COUNTS, PROMPT, Scenario, add_impl, serve
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return add_impl(a, b)


def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    COUNTS.model_calls += 1
    last = messages[-1] if messages else None
    if isinstance(last, ModelRequest) and any(
        isinstance(part, ToolReturnPart) for part in last.parts
    ):
        return ModelResponse(parts=[TextPart("3")])
    return ModelResponse(parts=[ToolCallPart("add", dict(ARGS), tool_call_id="call-1")])


def build() -> Scenario:
    agent = Agent(FunctionModel(answer), tools=[add])

    async def turn() -> str:
        result = await agent.run(PROMPT)
        return str(result.output)

    def idle_agent() -> Any:
        return Agent(FunctionModel(answer), tools=[add])

    return Scenario(
        turn=turn,
        idle_agent=idle_agent,
        distributions=("pydantic-ai-slim", "pydantic-graph", "pydantic"),
        memory_note="Agent(own FunctionModel, tools=[add]) + inbox queue + parked task + "
        "history list",
    )


if __name__ == "__main__":
    serve(build)
