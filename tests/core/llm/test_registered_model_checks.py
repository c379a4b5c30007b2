"""A model a plugin registers is checked at ``register``: an ``info`` that is a method
(no ``@property``) and an ``async def stream`` that returns instead of yielding are
refused there, naming the plugin and what to change, not at the first turn."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from dsh.errors import DshError
from dsh.llm import Finish, ModelInfo, ModelRegistry, TextDelta


class InfoMethod:
    def info(self) -> ModelInfo:  # @property forgotten
        return ModelInfo("boom", "bad")

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        yield Finish("end_turn")


class ReturnsAList:
    @property
    def info(self) -> ModelInfo:
        return ModelInfo("boom", "bad")

    async def stream(self, request: Any) -> Any:  # returns: a coroutine, not an iterator
        return [TextDelta("hi"), Finish("end_turn")]


class Fine:
    @property
    def info(self) -> ModelInfo:
        return ModelInfo("fine", "good")

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        yield Finish("end_turn")


@pytest.mark.parametrize("name", [None, "given"])
def test_an_info_method_is_refused_naming_the_plugin(name: str | None) -> None:
    with pytest.raises(DshError, match=r"plugin 'bad' .*@property above `def info`"):
        ModelRegistry().add("bad", InfoMethod(), name)  # type: ignore[arg-type]


@pytest.mark.parametrize(("name", "said"), [(None, "boom"), ("given", "given")])
def test_an_async_def_stream_that_returns_is_refused(name: str | None, said: str) -> None:
    with pytest.raises(DshError, match=rf"plugin 'bad' .*'{said}'.*stream is an `async def`"):
        ModelRegistry().add("bad", ReturnsAList(), name)


def test_a_good_model_is_registered() -> None:
    registry = ModelRegistry()
    registry.add("good", Fine())
    assert registry.names() == ["fine"]
