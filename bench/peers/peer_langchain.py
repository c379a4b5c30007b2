"""LangChain v1 ``create_agent`` (a LangGraph graph) with a fake chat model; see
_common.py.

The fake chat model is a ``BaseChatModel`` with a native ``_agenerate`` (the default
one would run ``_generate`` in a thread) and a ``bind_tools`` that binds the tool names
only (a real model also converts each tool's schema). No checkpointer, no callbacks, no
LangSmith tracing (``LANGSMITH_TRACING`` is cleared): the least the agent can do.
"""

from __future__ import annotations

import os
from typing import Any

os.environ.pop("LANGSMITH_TRACING", None)
os.environ.pop("LANGCHAIN_TRACING_V2", None)

from _common import ARGS, COUNTS, PROMPT, Scenario, add_impl, serve
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return add_impl(a, b)


class AddChatModel(BaseChatModel):
    """Zero latency: calls ``add`` until the last message is its result, then "3"."""

    @property
    def _llm_type(self) -> str:
        return "bench-add"

    def _answer(self, messages: list[BaseMessage]) -> ChatResult:
        COUNTS.model_calls += 1
        usage = {"input_tokens": 10, "output_tokens": 2, "total_tokens": 12}
        if messages and isinstance(messages[-1], ToolMessage):
            message = AIMessage(content="3", usage_metadata=usage)
        else:
            call = {"name": "add", "args": dict(ARGS), "id": "call-1", "type": "tool_call"}
            message = AIMessage(content="", tool_calls=[call], usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(self, messages: list[BaseMessage], stop: Any = None, **kwargs: Any) -> Any:
        return self._answer(messages)

    async def _agenerate(self, messages: list[BaseMessage], stop: Any = None, **kwargs: Any) -> Any:
        return self._answer(messages)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        names = [getattr(t, "name", None) or getattr(t, "__name__", str(t)) for t in tools]
        return self.bind(tools=names, **kwargs)


def build() -> Scenario:
    agent = create_agent(AddChatModel(), tools=[add])

    async def turn() -> str:
        state = await agent.ainvoke({"messages": [{"role": "user", "content": PROMPT}]})
        return str(state["messages"][-1].content)

    def idle_agent() -> Any:
        return create_agent(AddChatModel(), tools=[add])

    return Scenario(
        turn=turn,
        idle_agent=idle_agent,
        distributions=("langchain", "langchain-core", "langgraph"),
        memory_note="create_agent(own fake chat model, tools=[shared add]) (a compiled "
        "graph) + inbox queue + parked task + history list",
    )


if __name__ == "__main__":
    serve(build)
