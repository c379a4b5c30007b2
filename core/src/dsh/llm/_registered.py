"""The check of a model a plugin registers (``register_models``' ``register``), made
once, at registration: an ``info`` that is no ``ModelInfo`` (a method left without
``@property``) and a ``stream`` that is an ``async def`` returning (a coroutine, not an
async iterator) fail there, naming the plugin and what to change, not at the first
turn with an ``AttributeError`` or a ``TypeError`` about ``async for``."""

from __future__ import annotations

import inspect

from dsh.errors import DshError
from dsh.llm.base import Model, ModelInfo

__all__ = ["checked"]


def checked(plugin: str, model: Model, name: str | None = None) -> ModelInfo:
    """``model``'s ``info``, once its ``info`` and ``stream`` are checked; a
    ``DshError`` naming ``plugin`` (and the model) saying what to change otherwise."""
    info: object = model.info  # what the plugin wrote, whatever its annotation says
    kind = f"class {type(model).__name__}"
    if not isinstance(info, ModelInfo):
        if inspect.ismethod(info):
            fix = "info is a method: put @property above `def info`"
        else:
            fix = f"info is a {type(info).__name__}"
        raise DshError(
            f"plugin {plugin!r} registered a model ({kind}) whose {fix}; it must be a "
            "property returning a dsh.llm.ModelInfo"
        )
    if inspect.iscoroutinefunction(model.stream):
        raise DshError(
            f"plugin {plugin!r} registered model {name or info.name!r} ({kind}) whose stream "
            "is an `async def` that returns "
            "instead of yielding: yield each chunk (an async generator: `yield "
            "TextDelta(...)`, ending with `yield Finish(...)`), or make stream a plain "
            "`def` returning an async iterator"
        )
    return info
