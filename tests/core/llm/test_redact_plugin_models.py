"""A model a plugin registers that is no ``HttpModel`` (any object with ``info`` and
``stream``) has the harness's secrets hidden from its answer as the HTTP adapters have
(``dsh.llm.registry``: the harness's models wrap its stream in ``AnswerRedactor``):
the answer is logged as it streams, in ``assistant/chunk`` and ``assistant/message``.
With no secret known, the model's own stream is what the loop gets."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio

from dsh import hookimpl
from dsh.harness import Harness
from dsh.llm import Chunk, Finish, ModelInfo, ModelRegistry, TextDelta, ToolCallDelta
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import ModelRequest
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text

KEY = "plugin-secret-4f2a9c7e1b6d8a30"


class PluginModel:
    """A model of a plugin's own: it says the key in pieces, and calls a tool with it."""

    def __init__(self, chunks: list[Chunk]) -> None:
        self.info = ModelInfo(name="own", provider="plugin")
        self.chunks = chunks
        self.streams: list[AsyncIterator[Chunk]] = []

    def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        stream = self._answer()
        self.streams.append(stream)
        return stream

    async def _answer(self) -> AsyncIterator[Chunk]:
        for chunk in self.chunks:
            yield chunk


class Serves:
    def __init__(self, model: object, secret: str | None = KEY) -> None:
        self.model, self.secret = model, secret

    @hookimpl
    def register_models(self, register: Any) -> None:
        if self.model is not None:
            register(self.model)

    @hookimpl
    def harness_started(self, harness: Harness) -> None:
        if self.secret:
            harness.add_secrets([self.secret])


def logged(events: list[Any]) -> str:
    return json.dumps(
        [e.data for e in events if e.type in ("assistant/chunk", "assistant/message")]
    )


async def test_a_plugin_models_answer_is_logged_with_the_key_hidden() -> None:
    half = len(KEY) // 2
    said = [
        TextDelta("the key is " + KEY[:half]),
        TextDelta(KEY[half:] + " ok"),
        ToolCallDelta(0, "c1", "nothing", '{"key": "' + KEY[:5]),
        ToolCallDelta(0, arguments=KEY[5:] + '"}'),
        Finish("tool_calls"),
    ]
    model = PluginModel(said)
    after = ScriptedModel([text("done")], name="after")
    async with scripted_harness(after, plugins=[Serves(model)], load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "own"})
        with anyio.fail_after(10):
            events = await run_turn(agent, "go")
    shown = logged(events)
    assert KEY[:8] not in shown and KEY[-8:] not in shown
    message = next(e.data["message"] for e in events if e.type == "assistant/message")
    assert message["content"][0] == {"type": "text", "text": "the key is *** ok"}
    assert message["content"][1]["arguments"] == '{"key": "***"}'


async def test_the_scripted_models_answer_is_redacted_too() -> None:
    model = ScriptedModel([text(f"here: {KEY}.")])
    async with scripted_harness(model, plugins=[Serves(None)], load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(10):
            events = await run_turn(agent, "go")
    assert KEY not in logged(events)
    assert "here: ***." in logged(events)


async def test_no_secret_known_the_models_own_stream_is_used() -> None:
    model = PluginModel([TextDelta("hi"), Finish("end_turn")])
    async with scripted_harness(plugins=[Serves(model, None)], load_entry_points=False) as h:
        assert h.secrets() == ()
        found = h.models.get("own", agent="a")
        assert found.__wrapped__ is model  # type: ignore[attr-defined]
        assert found.info is model.info and found.chunks is model.chunks  # type: ignore[attr-defined]
        request = ModelRequest(model="own", messages=[])
        stream = found.stream(request)
        assert stream is model.streams[-1]  # unwrapped: the hot path pays nothing
        await stream.aclose()  # type: ignore[attr-defined]


class OwnStream(OpenAICompatibleModel):
    """An HTTP adapter's subclass whose ``stream`` is its own: ``chunks`` is skipped."""

    @property
    def info(self) -> ModelInfo:
        return ModelInfo(name="own-stream", provider="plugin")

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:  # type: ignore[override]
        yield TextDelta(f"said {KEY}")
        yield Finish("stop")


class Adapter(OpenAICompatibleModel):
    @property
    def info(self) -> ModelInfo:
        return ModelInfo(name="adapter", provider="plugin")


async def test_an_http_adapter_whose_stream_is_its_own_is_wrapped_too() -> None:
    registry = ModelRegistry(secrets=lambda: (KEY,))
    registry.add("p", object.__new__(OwnStream))  # (not built: no config needed here)
    registry.add("p", object.__new__(Adapter))
    assert not hasattr(registry.get("adapter", agent="a"), "__wrapped__")  # hides keys itself
    found = registry.get("own-stream", agent="a")
    said = [c async for c in found.stream(ModelRequest())]
    assert "".join(c.text for c in said if isinstance(c, TextDelta)) == "said ***"
    assert said[-1] == Finish("stop")


async def test_a_model_with_limits_still_has_the_keys_hidden_by_its_one_wrapper() -> None:
    """Limits set on a model whose answers the registry clears of keys: the one wrapper
    does both, ``__wrapped__`` is the object registered, and ``info`` is made once per
    info of the model. Mutants: ``set_limits`` dropping the secrets; no cached info."""
    model = PluginModel([TextDelta(f"said {KEY}"), Finish("end_turn")])
    registry = ModelRegistry(secrets=lambda: (KEY,))
    registry.add("p", model)
    registry.set_limits("own", {"context_window": 100, "max_wait": 3.0})
    found: Any = registry.get("own", agent="a")
    assert found.__wrapped__ is model and found.chunks is model.chunks
    assert (found.info.context_window, found.info.max_wait) == (100, 3.0)
    assert found.info is found.info and found.info.name == "own"
    said = [c async for c in found.stream(ModelRequest())]
    assert "".join(c.text for c in said if isinstance(c, TextDelta)) == "said ***"
