"""The models a harness can call, by name, with the plugin each came from."""

from __future__ import annotations

from typing import final

from dsh.errors import DshError, ModelError
from dsh.llm.base import Model

__all__ = ["ModelRegistry"]


@final
class ModelRegistry:
    __slots__ = ("_models", "_origin")

    def __init__(self) -> None:
        self._models: dict[str, Model] = {}
        self._origin: dict[str, str] = {}

    def add(self, plugin: str, model: Model, name: str | None = None) -> None:
        """The ``register`` callback of ``register_models`` (stamped with ``plugin``)."""
        if not isinstance(model, Model):
            raise DshError(f"plugin {plugin!r} registered {model!r}, which is not a dsh Model")
        key = name or model.info.name
        if key in self._models:
            raise DshError(
                f"model {key!r} is registered twice: by {self._origin[key]!r} and {plugin!r}"
            )
        self._models[key] = model
        self._origin[key] = plugin

    def get(self, name: str | None, *, agent: str) -> Model:
        """The model called ``name``; a clear NO_MODEL error naming the agent otherwise."""
        if name is None:
            raise ModelError(
                "NO_MODEL",
                f"agent {agent!r} has no model: set `model:` in dsh.yml or pass one "
                "(registered models: " + (", ".join(self._models) or "none") + ")",
            )
        model = self._models.get(name)
        if model is None:
            raise ModelError(
                "NO_MODEL",
                f"agent {agent!r} asks for model {name!r}, which is not registered "
                "(registered: " + (", ".join(self._models) or "none") + ")",
            )
        return model

    def __contains__(self, name: object) -> bool:
        return name in self._models

    def origin(self, name: str) -> str:
        return self._origin[name]

    def names(self) -> list[str]:
        return list(self._models)
