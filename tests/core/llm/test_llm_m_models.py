"""Models as objects, continued: an HTTP model's lifetime and retry delays, building
models from config and shorthand, the registry, which model the CLI chooses, the local
model's registration, and chunks as logged and as assembled into a message."""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest
from llm_wire import WireServer, collect, sse
from test_llm_http import ASK, TEXT, openai

from dsh.config import ModelConfig
from dsh.errors import ConfigError, DshError, ModelError
from dsh.harness import Harness
from dsh.llm import (
    Assembler,
    Finish,
    ModelRegistry,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    UsageChunk,
)
from dsh.llm._sse import SSEParser
from dsh.llm.choose import choose_model, starts_local
from dsh.llm.openai import OpenAICompatibleModel
from dsh.llm.providers import build_model, known_limits, parse_model_shorthand
from dsh.messages import ReasoningBlock, ToolCall, Usage
from dsh.testing import ScriptedModel, scripted_harness

# -- an HTTP model's lifetime ------------------------------------------------------------


async def test_a_model_still_works_after_aclose() -> None:
    async with WireServer([sse(TEXT), sse(TEXT)]) as server:
        model = openai(server.url)
        await collect(model, ASK)  # closes the model's connections
        _, message = await collect(model, ASK)
    assert message.text.startswith("Voilà")


async def test_a_model_used_from_another_event_loop_opens_its_own_connections() -> None:
    async with WireServer([sse(TEXT), sse(TEXT)]) as server:
        model = openai(server.url)
        await collect(model, ASK, keep_open=True)
        first_client = model._client  # bound to this loop; closed below
        _, message = await anyio.to_thread.run_sync(anyio.run, lambda: collect(model, ASK))
        assert first_client is not None
        await first_client.aclose()
    assert message.text.startswith("Voilà")
    assert server.connections == 2


async def test_a_stream_whose_last_line_ends_with_a_lone_cr_is_complete() -> None:
    cr_only = TEXT.replace(b"\r\n", b"\r")
    assert cr_only.endswith(b"data: [DONE]\r\r")  # the last CR could still be a CRLF
    async with WireServer([sse(cr_only)]) as server:
        _, message = await collect(openai(server.url), ASK)
    assert message.stop_reason == "stop"


def test_a_bom_is_skipped_only_at_the_start_of_the_stream() -> None:
    parser = SSEParser()
    assert parser.feed("\ufeffdata: a\n\n".encode()) == ["a"]
    # later, a line starting with U+FEFF names another field than "data"
    assert parser.feed("\ufeffdata: b\n\n".encode()) == []


def test_an_adapter_built_without_a_base_url_names_the_missing_key() -> None:
    with pytest.raises(ConfigError) as caught:
        OpenAICompatibleModel("q", ModelConfig(provider="openai-compatible"))
    assert caught.value.path == "models.q.base_url"


def test_retry_delays_double_with_jitter_up_to_a_cap_and_honour_retry_after() -> None:
    config = ModelConfig(provider="openai-compatible", base_url="http://x/v1")
    model = OpenAICompatibleModel("m", config, backoff=0.5, max_wait=60.0)
    for attempt, low, high in [(0, 0.25, 0.5), (1, 0.5, 1.0), (3, 2.0, 4.0), (10, 4.0, 8.0)]:
        delays = [model._delay(attempt, None) for _ in range(20)]
        assert all(d is not None and low <= d <= high for d in delays), (attempt, delays)
    assert model._delay(0, 60.0) == 60.0
    assert model._delay(0, 60.5) is None


# -- building models ----------------------------------------------------------------------


def test_a_configured_output_cap_wins_over_the_known_one() -> None:
    model = build_model("g", ModelConfig(provider="openai", model="gpt-4o", max_output_tokens=100))
    assert (model.info.context_window, model.info.max_output_tokens) == (128_000, 100)


def test_known_limits_match_the_start_of_the_name_only() -> None:
    assert known_limits("o1-mini") == (200_000, 100_000)
    assert known_limits("marco-o1") == (None, None)  # a 7B model that merely ends in "o1"


def test_shorthand_whitespace_is_ignored_and_a_bad_url_reason_is_plain() -> None:
    assert parse_model_shorthand("  deepseek:deepseek-chat\n")[0] == "deepseek:deepseek-chat"
    with pytest.raises(ConfigError) as caught:
        parse_model_shorthand("openai-compatible:q@http://me:pw@h/v1")
    assert caught.value.reason.startswith("must not hold a user name or password")


# -- the registry ------------------------------------------------------------------------


def test_the_registry_refuses_what_is_not_a_model_and_names_both_plugins_of_a_clash() -> None:
    registry = ModelRegistry()
    with pytest.raises(DshError, match=r"plugin 'mine' registered .*not a dsh Model"):
        registry.add("mine", object())  # type: ignore[arg-type]
    registry.add("first", ScriptedModel(name="a"))
    with pytest.raises(DshError, match="'a' is registered twice: by 'first' and 'second'"):
        registry.add("second", ScriptedModel(), "a")
    assert ("a" in registry, "scripted" in registry) == (True, False)


def test_no_model_errors_name_the_agent_and_list_what_is_registered() -> None:
    registry = ModelRegistry()
    with pytest.raises(ModelError, match=r"has no model: .*\(registered models: none\)$"):
        registry.get(None, agent="main")
    registry.add("p", ScriptedModel(name="a"))
    registry.add("p", ScriptedModel(name="b"))
    with pytest.raises(ModelError) as caught:
        registry.get(None, agent="main")
    assert caught.value.code == "NO_MODEL"
    assert caught.value.message == (
        "agent 'main' has no model: set `model:` in dsh.yml or pass one (registered models: a, b)"
    )
    with pytest.raises(ModelError, match=r"asks for model 'c', .*\(registered: a, b\)$"):
        registry.get("c", agent="main")


# -- which model the CLI uses --------------------------------------------------------------

KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "DEEPSEEK_API_KEY")


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in KEYS:
        monkeypatch.delenv(variable, raising=False)


@pytest.mark.usefixtures("no_keys")
@pytest.mark.parametrize(
    ("env", "name", "why"),
    [
        (dict.fromkeys(KEYS, "k"), "anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY is set"),
        (
            {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "k"},  # an empty key is no key
            "openai:gpt-4.1-mini",
            "OPENAI_API_KEY is set",
        ),
        ({"DEEPSEEK_API_KEY": "k"}, "deepseek:deepseek-chat", "DEEPSEEK_API_KEY is set"),
        ({}, "local", "no model is configured and no provider key is set"),
    ],
)
async def test_without_a_model_named_the_first_provider_key_set_chooses(
    env: dict[str, str], name: str, why: str
) -> None:
    async with Harness(load_entry_points=False) as harness:
        choice = choose_model(harness, None, env)
        assert (choice.name, choice.why) == (name, why)
        assert starts_local(harness, choice) == (name == "local")
        if name != "local":
            assert harness.models.get(name, agent="a").api_key() == "k"  # type: ignore[attr-defined]


CONFIG = "model: fast\nmodels:\n  fast: {provider: openai-compatible, base_url: 'http://h/v1'}\n"


async def test_the_default_model_beats_provider_keys_but_never_an_unknown_preference() -> None:
    async with Harness(config_text=CONFIG, load_entry_points=False) as harness:
        env = {"OPENAI_API_KEY": "k"}
        choice = choose_model(harness, None, env)
        assert (choice.name, choice.why) == ("fast", "the default model in <string>")
        assert choose_model(harness, "local", env).name == "local"
        error = "the session's model ('gone') is not defined in <string>; choose a model with -m"
        with pytest.raises(DshError, match=f"^{re.escape(error)}$"):
            choose_model(harness, None, env, preferred=("gone", "the session's model"))
        assert "fast" in harness.models.names() and len(harness.models.names()) == 1


async def test_a_shorthand_chosen_twice_is_built_once() -> None:
    async with Harness(load_entry_points=False) as harness:
        shorthand = "openai-compatible:q@http://h/v1"
        assert choose_model(harness, shorthand, {}).name == "openai-compatible:q"
        model = harness.models.get("openai-compatible:q", agent="a")
        assert choose_model(harness, shorthand, {}).name == "openai-compatible:q"
        assert harness.models.get("openai-compatible:q", agent="a") is model


async def test_m_naming_a_model_when_none_is_defined_says_so() -> None:
    async with Harness(load_entry_points=False) as harness:
        with pytest.raises(DshError, match=r"-m 'fast': unknown model, and no model is defined"):
            choose_model(harness, "fast", {})


# -- the local model ----------------------------------------------------------------------


class FakeServer:
    base_url = "http://127.0.0.1:9/v1"
    stopped = 0

    def stop(self) -> None:
        self.stopped += 1


async def test_the_local_model_is_registered_with_its_window_or_its_server_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dsh.llm import llama
    from dsh.llm.local import LOCAL_CONTEXT, start_local

    server = FakeServer()
    monkeypatch.setattr(llama, "start", lambda **_: server)
    async with scripted_harness(ScriptedModel([]), load_entry_points=False) as harness:
        started: object = await start_local(harness)
        assert started is server
        local: Any = harness.models.get("local", agent="a")
        assert (local.info.context_window, local.base_url) == (LOCAL_CONTEXT, server.base_url)
        assert server.stopped == 0
        with pytest.raises(DshError, match="registered twice"):
            await start_local(harness)  # "local" is taken: the new server must not run on
        assert server.stopped == 1


# -- chunks: as logged, and assembled ----------------------------------------------------


def assemble(*chunks: Any) -> Any:
    assembler = Assembler()
    for chunk in chunks:
        assembler.add(chunk)
    return assembler.message()


def test_a_signature_with_text_ends_its_block() -> None:
    """A signature ends its block, with text too (a thinking block sent whole at its
    start): reasoning after it is the next block (it was joined to the signed one)."""
    message = assemble(ReasoningDelta("a", signature="s"), ReasoningDelta("b"), Finish("stop"))
    assert message.content == (
        ReasoningBlock(text="a", signature="s"),
        ReasoningBlock(text="b", signature=None),
    )


def test_a_signature_after_text_signs_the_text_before_it() -> None:
    message = assemble(
        ReasoningDelta("a"), ReasoningDelta("b", signature="s"), ReasoningDelta("c"), Finish("stop")
    )
    assert message.content == (
        ReasoningBlock(text="ab", signature="s"),
        ReasoningBlock(text="c", signature=None),
    )


def test_a_call_without_arguments_gets_an_empty_object() -> None:
    message = assemble(ToolCallDelta(0, id="c", name="n"), Finish("tool_calls"))
    assert message.content == (ToolCall(id="c", name="n", arguments="{}"),)


@pytest.mark.parametrize("piece", [ToolCallDelta(0, id="c"), ToolCallDelta(0, name="n")])
def test_a_call_without_an_id_or_a_name_is_malformed(piece: ToolCallDelta) -> None:
    with pytest.raises(ModelError) as caught:
        assemble(piece, Finish("tool_calls"))
    assert caught.value.code == "MALFORMED_RESPONSE"


@pytest.mark.parametrize(
    ("chunk", "data"),
    [
        (TextDelta("a"), {"kind": "text", "text": "a"}),
        (ReasoningDelta("r"), {"kind": "reasoning", "text": "r"}),
        (ReasoningDelta("", signature="s"), {"kind": "reasoning", "text": "", "signature": "s"}),
        (ToolCallDelta(1), {"kind": "tool_call", "index": 1}),
        (
            ToolCallDelta(0, id="c", name="n", arguments="{}"),
            {"kind": "tool_call", "index": 0, "id": "c", "name": "n", "arguments": "{}"},
        ),
        (
            UsageChunk(
                Usage(input_tokens=1, output_tokens=2, cache_read_tokens=3, cache_write_tokens=4)
            ),
            {
                "kind": "usage",
                "usage": {
                    "input_tokens": 1,
                    "output_tokens": 2,
                    "cache_read_tokens": 3,
                    "cache_write_tokens": 4,
                },
            },
        ),
        (Finish("max_tokens"), {"kind": "finish", "reason": "max_tokens"}),
    ],
)
def test_each_chunk_is_logged_as_its_fields_leaving_out_the_unset(chunk: Any, data: Any) -> None:
    assert chunk.to_data() == data
