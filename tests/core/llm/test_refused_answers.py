"""An answer the provider stopped (stop reason ``error``: Anthropic's ``refusal``, an
OpenAI-compatible ``content_filter``, OpenRouter's ``error``) runs none of its tool
calls and ends the turn ``error`` with code ``REFUSED``, its text kept in the log and
the history; the next prompt runs as usual. Before, the step's complete calls ran (a
tool with side effects, from an answer the provider had stopped) and the turn ended
``completed``.

As for a failed model call (the agent loop issue: the turn ends ``error`` with the
code, no tool of that step runs), with the difference that the answer's text is kept."""

from __future__ import annotations

import json
from typing import Any

import anyio
from llm_wire import WireServer, sse

from dsh import hookimpl
from dsh.harness import Harness
from dsh.llm import Finish, TextDelta, ToolCallDelta, UsageChunk
from dsh.messages import AssistantMessage, Usage
from dsh.testing import Reply, ScriptedModel, check_invariants, run_turn, scripted_harness
from dsh.tools import tool

RAN: list[str] = []


@tool
def write_file(path: str) -> str:
    """Write a file."""
    RAN.append(path)
    return f"wrote {path}"


class Tools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(write_file)


def stopped(say: str, *paths: str) -> Reply:
    """An answer that says ``say``, calls write_file for each path (whole calls), and
    is stopped by the provider."""
    chunks: list[Any] = [TextDelta(say)]
    for index, path in enumerate(paths):
        chunks.append(ToolCallDelta(index, id=f"call-{index}", name="write_file"))
        chunks.append(ToolCallDelta(index, arguments=json.dumps({"path": path})))
    usage = UsageChunk(Usage(input_tokens=10, output_tokens=3))
    return Reply((*chunks, usage, Finish("error")))


async def test_a_stopped_answer_runs_no_call_and_ends_the_turn_refused() -> None:
    RAN.clear()
    model = ScriptedModel([stopped("I'll write", "a.txt", "b.txt"), "fine"])
    async with scripted_harness(model, plugins=[("tools", Tools())]) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(5):
            events = await run_turn(agent, "write two files")
            after = await run_turn(agent, "never mind")
        check_invariants(agent.session.events)
    assert RAN == []
    types = [e.type for e in events if e.type != "assistant/chunk"]
    assert types == [
        "turn/start",
        "user/message",
        "step/start",
        "assistant/message",
        "step/end",
        "turn/end",
    ]
    (logged,) = [e.data["message"] for e in events if e.type == "assistant/message"]
    message = AssistantMessage.model_validate(logged)
    assert (message.text, message.tool_calls, message.stop_reason) == ("I'll write", [], "error")
    end = events[-1].data
    assert (end["reason"], end["error"]["code"]) == ("error", "REFUSED")
    assert "model 'scripted': the provider stopped the answer" in end["error"]["message"]
    assert end["usage"]["output_tokens"] == 3  # the stopped answer's usage counts
    # the next prompt runs, with the stopped answer's text in its history
    assert after[-1].data["reason"] == "completed"
    said = [(m.role, getattr(m, "text", None) or m.content) for m in model.requests[1].messages]
    assert said == [
        ("user", "write two files"),
        ("assistant", "I'll write"),
        ("user", "never mind"),
    ]


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


async def test_a_content_filter_after_a_whole_call_runs_nothing_over_the_wire() -> None:
    RAN.clear()
    whole = {"index": 0, "id": "call_a", "type": "function"}
    whole["function"] = {"name": "write_file", "arguments": '{"path": "a.txt"}'}
    second = {"index": 1, "id": "call_b", "type": "function"}
    second["function"] = {"name": "write_file", "arguments": '{"pa'}
    body = (
        chunk({"content": "Writing."})
        + chunk({"tool_calls": [whole]})
        + chunk({"tool_calls": [second]})
        + chunk({}, "content_filter")
        + b"data: [DONE]\n\n"
    )
    async with WireServer([sse(body)]) as server:
        config = (
            f"models:\n  wire:\n    provider: openai-compatible\n    model: m\n"
            f"    base_url: {server.url}\nagents:\n  - id: main\n    model: wire\n"
        )
        harness = Harness(config_text=config, plugins=[("tools", Tools())], load_entry_points=False)
        async with harness as h:
            agent = h.agents.get("main")
            assert agent is not None
            with anyio.fail_after(10):
                events = await run_turn(agent, "write a.txt")
            check_invariants(agent.session.events)
    assert RAN == []
    assert not [e for e in events if e.type.startswith("tool/")]
    assert events[-1].data["reason"] == "error"
    assert events[-1].data["error"]["code"] == "REFUSED"
