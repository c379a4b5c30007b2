"""Review of the day's llm changes (call slots joined by id, error codes as text,
unwrapped stream errors, ``send_reasoning`` in dsh.yml): cases that no test held.

- A call whose id comes after its first piece is known by that id too: its pieces that
  later move to another index with the id continue it.
- A known id at an index that another call holds continues the known call, not that one.
- A server that gives several calls one id (and the same tool): once the first call's
  arguments are a whole JSON text, a piece at another index with that id and the name
  starts a new call; it was joined to the first (``{"p": 1}{"p": 2}``, one call).
- Error codes: only ``"100"``-``"599"`` are statuses ("600", "4xx" stay the kind); a
  context kind is preferred to the other code beside it.
- ``send_reasoning: false`` on an anthropic model is refused as ``true`` is; the
  adapter's argument wins over the config's.
"""

from __future__ import annotations

import pytest
from llm_wire import unserved
from test_compat_study import DONE, answer, call, chunk, data, failure

from dsh.config import ModelConfig
from dsh.errors import ConfigError
from dsh.harness import Harness
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import AssistantMessage, ModelRequest, ReasoningBlock, ToolCall

END = [chunk({}, "tool_calls"), DONE]
START = chunk({"role": "assistant", "content": "The answ"})


async def test_a_call_whose_id_came_late_is_found_by_it_when_it_moves() -> None:
    body = [
        call(0, name="read", arguments='{"p'),
        call(0, id="call_1", arguments='": '),  # the id after the name
        call(1, id="call_1", arguments="1}"),  # moved with its id
        *END,
    ]
    _, message = await answer(body)
    assert message.tool_calls == [ToolCall(id="call_1", name="read", arguments='{"p": 1}')]


async def test_a_known_id_at_an_index_another_call_holds_continues_its_own_call() -> None:
    body = [
        call(0, id="call_a", name="read", arguments='{"p": '),
        call(1, id="call_b", name="list", arguments='{"d": '),
        call(0, id="call_b", arguments='"x"}'),  # call_b's piece, now at index 0
        call(1, id="call_a", arguments="1}"),
        *END,
    ]
    _, message = await answer(body)
    assert message.tool_calls == [
        ToolCall(id="call_a", name="read", arguments='{"p": 1}'),
        ToolCall(id="call_b", name="list", arguments='{"d": "x"}'),
    ]


async def test_one_id_for_two_whole_calls_of_one_tool_stays_two_calls() -> None:
    # a server that repeats one id for every call: the first is whole when the second
    # starts at the next index, so the second is not a moved piece of the first
    body = [
        call(0, id="call_0", name="read", arguments='{"p": 1}'),
        call(1, id="call_0", name="read", arguments='{"p": 2}'),
        *END,
    ]
    _, message = await answer(body)
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        ("call_0", "read", '{"p": 1}'),
        ("call_0", "read", '{"p": 2}'),
    ]


def in_stream(error: dict[str, object]) -> list[bytes]:
    return [START, data({"error": error}), DONE]


@pytest.mark.parametrize("code", ["600", "4xx", "099"])
async def test_text_that_is_no_status_from_100_to_599_stays_the_kind(code: str) -> None:
    err = await failure(in_stream({"message": "it failed", "code": code}))
    assert (err.code, unserved(err.message)) == (
        "SERVER",
        f"model 'wire': error in the stream: {code}: it failed",
    )


async def test_a_context_kind_wins_over_the_other_code_beside_it() -> None:
    both = {"message": "rejected", "code": "invalid_request_error"}
    err = await failure(in_stream({**both, "type": "context_length_exceeded"}))
    assert (err.code, unserved(err.message)) == (
        "CONTEXT_WINDOW_EXCEEDED",
        "model 'wire': error in the stream: context_length_exceeded: rejected",
    )


@pytest.mark.parametrize("value", ["true", "false"])
async def test_send_reasoning_on_anthropic_is_refused_whatever_its_value(value: str) -> None:
    text = (
        "models:\n  wire:\n    provider: anthropic\n    model: m\n"
        f"    base_url: http://127.0.0.1:9/v1\n    send_reasoning: {value}\n"
        "agents:\n  - id: main\n    model: wire\n"
    )
    with pytest.raises(ConfigError) as caught:
        async with Harness(config_text=text, load_entry_points=False):
            pass
    assert caught.value.path == "models.wire.send_reasoning"
    assert caught.value.reason.endswith("not 'anthropic'")


@pytest.mark.parametrize(("configured", "argument"), [(True, False), (False, True)])
def test_the_adapter_s_argument_wins_over_the_config_s(configured: bool, argument: bool) -> None:
    turn = AssistantMessage(
        content=(ReasoningBlock(text="plan"), ToolCall(id="c", name="n", arguments="{}"))
    )
    config = ModelConfig(provider="deepseek", base_url="http://x/v1", send_reasoning=configured)
    model = OpenAICompatibleModel("d", config, env={}, send_reasoning=argument)
    body = model.request_body(ModelRequest(messages=(turn,), max_tokens=9))
    assert ("reasoning_content" in body["messages"][0]) is argument
