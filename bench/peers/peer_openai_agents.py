"""openai-agents (``agents``): ``Runner.run`` with a fake ``Model``; see _common.py.

The fake model answers from the input it is given: no tool output yet, a
``function_call`` of ``add``; after the ``function_call_output``, a message "3".
Tracing is disabled (``set_tracing_disabled``): the SDK would otherwise build trace and
span objects per run and try to export them; that is its optional cost, not the loop's.
"""

from __future__ import annotations

import json
from typing import Any

from _common import ARGS, COUNTS, PROMPT, Scenario, add_impl, serve
from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

ARGUMENTS = json.dumps(ARGS)


@function_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return add_impl(a, b)


def _answered(items: Any) -> bool:
    if isinstance(items, str) or not items:
        return False
    last = items[-1]
    kind = last.get("type") if isinstance(last, dict) else getattr(last, "type", None)
    return kind == "function_call_output"


class AddModel(Model):
    """Zero latency: calls ``add`` until the input holds its output, then says "3"."""

    async def get_response(
        self,
        system_instructions: Any,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        *,
        previous_response_id: Any = None,
        conversation_id: Any = None,
        prompt: Any = None,
        **extra: Any,
    ) -> ModelResponse:
        COUNTS.model_calls += 1
        usage = Usage(requests=1, input_tokens=10, output_tokens=2, total_tokens=12)
        if _answered(input):
            text = ResponseOutputText(text="3", type="output_text", annotations=[])
            item: Any = ResponseOutputMessage(
                id="msg-1", content=[text], role="assistant", status="completed", type="message"
            )
        else:
            item = ResponseFunctionToolCall(
                arguments=ARGUMENTS, call_id="call-1", name="add", type="function_call"
            )
        return ModelResponse(output=[item], usage=usage, response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the scenario uses Runner.run (not streamed)")


def build() -> Scenario:
    set_tracing_disabled(True)
    agent = Agent(name="bench", instructions="", model=AddModel(), tools=[add])

    async def turn() -> str:
        result = await Runner.run(agent, PROMPT)
        return str(result.final_output)

    def idle_agent() -> Any:
        return Agent(name="bench", instructions="", model=AddModel(), tools=[add])

    return Scenario(
        turn=turn,
        idle_agent=idle_agent,
        distributions=("openai-agents", "openai", "pydantic"),
        memory_note="Agent(model=own fake Model, tools=[shared add]) + inbox queue + "
        "parked task + history list",
    )


if __name__ == "__main__":
    serve(build)
