"""A streamed OpenAI-compatible tool call with a name but no ``id`` (StepFun, kimi on
NVIDIA's endpoint, GLM on Mistral, SGLang for calls after the first, Ollama through
LiteLLM) gets an id of dsh's own, unique in the session, since its tool result names it.
A call without a name stays MALFORMED_RESPONSE, and so does any id-less call of a
model of a plugin's own: the assembler stays strict.

Before: every such answer ended the turn MALFORMED_RESPONSE ("a streamed tool call has
no id or no name"). The made id is 9 letters and digits, the only ids Mistral's API
takes back (it refused the earlier ``call_<index>_<16 hex digits>``); id-less calls at
one wire index (or with none) are separate calls by the rule used for ids (they were
joined into one call the model never made)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from llm_wire import WireServer, collect, sse

from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.harness import Harness
from dsh.llm import Assembler, Finish, ToolCallDelta
from dsh.llm._call_slots import CallSlots
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import ModelRequest, UserMessage
from dsh.testing import run_turn

ASK = ModelRequest(messages=(UserMessage(content="hi"),))
MADE = re.compile(r"[a-zA-Z0-9]{9}")


def calls(*pieces: dict[str, Any], finish: str = "tool_calls") -> bytes:
    """An answer whose deltas carry ``pieces`` (one wire tool-call piece each)."""
    chunks = [{"choices": [{"index": 0, "delta": {"tool_calls": [p]}}]} for p in pieces]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    lines = b"".join(b"data: %s\n\n" % json.dumps(c).encode() for c in chunks)
    return lines + b"data: [DONE]\n\n"


def piece(index: int, name: str | None = None, arguments: str = "", **more: Any) -> dict[str, Any]:
    function = {"arguments": arguments} if name is None else {"name": name, "arguments": arguments}
    return {"index": index, "type": "function", "function": function, **more}


async def answer(body: bytes) -> tuple[list[Any], Any]:
    async with WireServer([sse(body)]) as server:
        config = ModelConfig(provider="openai-compatible", model="m", base_url=server.url)
        return await collect(OpenAICompatibleModel("wire", config), ASK)


async def test_a_named_call_without_an_id_gets_one() -> None:
    chunks, message = await answer(calls(piece(0, "read", '{"path": "a"}')))
    (call,) = message.tool_calls
    assert (call.name, call.arguments) == ("read", '{"path": "a"}')
    assert MADE.fullmatch(call.id), call.id
    assert message.stop_reason == "tool_calls"
    # the id comes as a piece of its own before the finish, so the log has it too
    assert chunks[-2:] == [ToolCallDelta(0, id=call.id), Finish("tool_calls")]


async def test_each_call_without_an_id_gets_its_own() -> None:
    # SGLang: the first call has its id, the next ones none; StepFun: none has one
    _, message = await answer(
        calls(
            piece(0, "read", '{"p": 1}', id="call_a"),
            piece(1, "ls", "{}"),
            piece(2, "ls", "{"),
            piece(2, arguments="}"),
        )
    )
    ids = [call.id for call in message.tool_calls]
    assert ids[0] == "call_a" and MADE.fullmatch(ids[1]) and MADE.fullmatch(ids[2])
    assert len(set(ids)) == 3
    assert [c.arguments for c in message.tool_calls] == ['{"p": 1}', "{}", "{}"]
    _, again = await answer(calls(piece(0, "ls", "{}")))
    assert again.tool_calls[0].id not in ids  # not the index alone: unique in the session


async def test_an_id_sent_after_the_name_is_kept() -> None:
    _, message = await answer(calls(piece(0, "read", "{"), piece(0, arguments="}", id="late")))
    assert [(c.id, c.arguments) for c in message.tool_calls] == [("late", "{}")]


async def test_a_call_without_a_name_is_still_malformed() -> None:
    with pytest.raises(ModelError) as caught:
        await answer(calls(piece(0, arguments="{}", id="call_a")))
    assert caught.value.code == "MALFORMED_RESPONSE"
    with pytest.raises(ModelError) as caught:
        await answer(calls(piece(0, arguments="{}")))
    assert caught.value.code == "MALFORMED_RESPONSE"


def test_the_assembler_stays_strict_for_a_plugin_model() -> None:
    assembler = Assembler()
    assembler.add(ToolCallDelta(0, name="read", arguments="{}"))
    assembler.add(Finish("tool_calls"))
    with pytest.raises(ModelError, match="no id or no name"):
        assembler.message()


async def test_the_tool_result_names_the_made_id() -> None:
    config = (
        "models:\n  wire:\n    provider: openai-compatible\n    model: m\n"
        "    base_url: {url}\nagents:\n  - id: main\n    model: wire\n"
    )
    done = b'data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n'
    replies = [sse(calls(piece(0, "nope", "{}"))), sse(done + b"data: [DONE]\n\n")]
    async with WireServer(replies) as server:
        text = config.format(url=server.url)
        async with Harness(config_text=text, load_entry_points=False) as harness:
            agent = harness.agents.get("main")
            assert agent is not None
            events = await run_turn(agent, "hi")
        second = server.requests[1].json()["messages"]
    assert events[-1].data["reason"] == "completed"
    (call,) = [e.data for e in events if e.type == "tool/call"]
    (result,) = [e.data for e in events if e.type == "tool/result"]
    assert MADE.fullmatch(call["id"]) and result["call_id"] == call["id"]
    assert second[-2]["tool_calls"][0]["id"] == call["id"]
    assert second[-1] == {"role": "tool", "tool_call_id": call["id"], "content": result["content"]}


async def test_calls_without_ids_at_one_index_stay_apart() -> None:
    # another name, or the same name once the arguments are whole, is the next call
    _, message = await answer(
        calls(
            piece(0, "read", '{"path": "a"}'),
            piece(0, "bash", '{"command": "ls"}'),
            piece(0, "bash", '{"command": '),
            piece(0, "bash", '"pwd"}'),
            piece(0, "bash", '{"command": "id"}'),
        )
    )
    found = [(c.name, c.arguments) for c in message.tool_calls]
    assert found == [
        ("read", '{"path": "a"}'),
        ("bash", '{"command": "ls"}'),
        ("bash", '{"command": "pwd"}'),
        ("bash", '{"command": "id"}'),
    ]
    assert len({c.id for c in message.tool_calls}) == 4


def test_calls_without_an_index_or_ids_stay_apart() -> None:
    slots = CallSlots()
    read = {"function": {"name": "read", "arguments": '{"path": "a"}'}}
    bash = {"function": {"name": "bash", "arguments": '{"command": "ls"}'}}
    assert [slots.delta(p, 0).index for p in (read, bash)] == [0, 1]


def test_made_ids_are_unique_in_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    # a draw that repeats an id of the answer is drawn again
    drawn = iter("a" * 18 + "b" * 9)
    monkeypatch.setattr("dsh.llm._call_slots.secrets.choice", lambda _: next(drawn))
    slots = CallSlots()
    slots.delta(piece(0, "ls", "{}"), 0)
    slots.delta(piece(1, "ls", "{}"), 0)
    assert [d.id for d in slots.made_ids()] == ["aaaaaaaaa", "bbbbbbbbb"]
    slots = CallSlots()
    slots.delta(piece(0, "ls", "{}", id="aaaaaaaaa"), 0)
    slots.delta(piece(1, "ls", "{}"), 0)
    drawn = iter("a" * 9 + "c" * 9)
    assert [d.id for d in slots.made_ids()] == ["ccccccccc"]
