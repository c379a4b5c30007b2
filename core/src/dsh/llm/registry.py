"""The models a harness can call, by name, with the plugin each came from.

A harness's registry hides the harness's secrets (``Harness.secrets()``: the model API
keys, the plugins' secret variables, ``add_secrets``) from the answers of the models
plugins register that are no ``HttpModel`` (which hides the keys itself, unless its
``stream`` is its own): any object with ``info`` and ``stream`` may say a key, and the
answer is logged as it streams. It keeps such a model wrapped, whose ``stream`` asks for
the secrets each time: with none known, it returns the model's own stream, unwrapped,
so a harness without secrets (the scripted models of tests and benchmarks) pays a call
or two a step.

It also keeps the keys written into the settings (``base_url`` query, credential
``headers``) of the HTTP models registered (``written_keys``), which ``Harness.secrets``
adds to its own: an ``HttpModel`` registered as it is, or held by a plugin's model that
wraps it, as ``__wrapped__`` (``functools.wraps``' name) or as one of the attributes
``model``, ``inner``, ``wrapped`` (with or without a leading ``_``) of its ``__dict__``,
looked through at registration, a few levels deep. Not found: one held otherwise (in a
list, a slot, a property, or built after registration, at each request); its keys are
hidden from log records all the same (every ``HttpModel`` remembers its own as it is
built, ``dsh._secrets.known_keys``), from tool results only if the plugin adds them
(``Harness.add_secrets``).

A model is checked as it is registered (``dsh.llm._registered``), and a plugin's model
whose entry of ``models:`` sets limits is handed out with them on top of its ``info``
(``set_limits``, ``dsh.llm._plugin_entries``): by the same wrapper, so a model is
wrapped once (``_Held``).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import replace
from typing import Any, Final, final

from dsh._config_secrets import key_like_model, key_like_name
from dsh.errors import DshError, ModelError
from dsh.llm._registered import checked
from dsh.llm.base import Chunk, Model, ModelInfo
from dsh.messages import ModelRequest

__all__ = ["ModelRegistry"]


@final
class ModelRegistry:
    """``secrets``: what the answers of the models that do not hide keys themselves are
    cleared of, asked for at each request (longest first, each of 8 characters or more:
    ``Harness.secrets``); None (a registry of no harness's) hides nothing.
    ``config_source``: the config its harness read (a file's path, ``<string>`` for
    ``config_text``), None when it read none; a NO_MODEL error for an agent given no
    model says where one is set accordingly."""

    __slots__ = ("_models", "_origin", "_secrets", "_written", "config_source")

    def __init__(self, *, secrets: Callable[[], tuple[str, ...]] | None = None) -> None:
        self._models: dict[str, Model] = {}
        self._origin: dict[str, str] = {}
        self._secrets = secrets
        self._written: frozenset[str] = frozenset()
        self.config_source: str | None = "dsh.yml"

    def add(self, plugin: str, model: Model, name: str | None = None) -> None:
        """The ``register`` callback of ``register_models`` (stamped with ``plugin``)."""
        if not isinstance(model, Model):
            raise DshError(f"plugin {plugin!r} registered {model!r}, which is not a dsh Model")
        info = checked(plugin, model, name)  # once here, not at each turn
        key = name or info.name
        if key in self._models:
            raise DshError(
                f"model {key!r} is registered twice: by {self._origin[key]!r} and {plugin!r}"
            )
        written = _written_keys(model)
        if not written <= self._written:
            self._written = self._written | written  # a new set: Harness.secrets renews
        if self._secrets is not None and not _hides_keys(model):
            model = _Held(model, self._secrets)
        self._models[key] = model
        self._origin[key] = plugin

    def get(self, name: str | None, *, agent: str) -> Model:
        """The model called ``name``; a clear NO_MODEL error naming the agent otherwise."""
        if name is None:
            source = self.config_source
            if source is None:
                where = (
                    "this harness read no config file (Harness(config=...) names one); "
                    "pass options={'model': ...}"
                )
            elif source == "<string>":
                where = "set `model:` in the config text it read (config_text=...) or pass one"
            else:
                where = f"set `model:` in {source} or pass one"
            raise ModelError(
                "NO_MODEL",
                f"agent {agent!r} has no model: {where} "
                "(registered models: " + (", ".join(self._models) or "none") + ")",
            )
        model = self._models.get(name)
        if model is None:
            registered = ", ".join(self._models) or "none"
            if key_like_name(name):  # a key pasted there: not shown
                said = key_like_model(f"registered: {registered}")
                raise ModelError("NO_MODEL", f"agent {agent!r} asks for an {said}")
            raise ModelError(
                "NO_MODEL",
                f"agent {agent!r} asks for model {name!r}, which is not registered "
                f"(registered: {registered})",
            )
        return model

    def served(self) -> dict[str, tuple[str, str]]:
        """The models registered: name -> (who registered it, its ``info.provider``)."""
        return {name: (self._origin[name], m.info.provider) for name, m in self._models.items()}

    def set_limits(self, name: str, limits: Mapping[str, Any]) -> None:
        """Hand model ``name`` out with ``limits`` (``context_window``,
        ``max_output_tokens``, ``max_wait``) on top of its ``info``: those of its entry of
        ``models:`` when a plugin registered it (``dsh.llm._plugin_entries``)."""
        if limits:
            model = self._models[name]
            held = model if isinstance(model, _Held) else _Held(model)
            self._models[name] = held.limited(limits)

    def written_keys(self) -> frozenset[str]:
        """The keys written into the settings of the ``HttpModel`` models registered,
        wrapped or not (see the module); another set object after each registration that
        adds one."""
        return self._written

    def __contains__(self, name: object) -> bool:
        return name in self._models

    def origin(self, name: str) -> str:
        return self._origin[name]

    def names(self) -> list[str]:
        return list(self._models)


@final
class _Held:
    """A registered model as the registry hands it out: its answers have ``secrets()``
    hidden (``dsh.llm._redact_answer.hidden``; None: hidden by the model itself, or no
    harness's registry), and its ``info`` has ``limits`` on top (an entry of ``models:``;
    None: the model's own). Its other attributes are the model's, and ``__wrapped__``
    is the model (as ``functools.wraps`` names a wrapped function)."""

    __slots__ = ("__wrapped__", "_info", "_limits", "_secrets", "_seen")

    def __init__(
        self,
        model: Model,
        secrets: Callable[[], tuple[str, ...]] | None = None,
        limits: Mapping[str, Any] | None = None,
    ) -> None:
        self.__wrapped__ = model
        self._secrets = secrets
        self._limits = limits
        self._seen: ModelInfo | None = None
        self._info: ModelInfo | None = None

    def limited(self, limits: Mapping[str, Any]) -> _Held:
        """This model with ``limits`` on top of its ``info`` too: a new wrapper."""
        return _Held(self.__wrapped__, self._secrets, {**(self._limits or {}), **limits})

    @property
    def info(self) -> ModelInfo:
        limits = self._limits
        if limits is None:  # the model's own info, as it is
            return self.__wrapped__.info
        info = self.__wrapped__.info
        if info is not self._seen or self._info is None:  # the same info: the same answer
            self._seen, self._info = info, replace(info, **limits)
        return self._info

    def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        chunks = self.__wrapped__.stream(request)
        secrets = None if self._secrets is None else self._secrets()
        if not secrets:  # the usual case: the model's own stream, as it is
            return chunks
        from dsh.llm._redact_answer import hidden

        return hidden(chunks, secrets)

    def __getattr__(self, name: str) -> Any:
        if name == "__wrapped__":  # not set yet (a copy being made): not the model's own
            raise AttributeError(name)
        return getattr(self.__wrapped__, name)

    def __repr__(self) -> str:
        limits = "" if self._limits is None else f", limits={self._limits!r}"
        return f"_Held({self.__wrapped__!r}{limits})"


#: The attributes a plugin's model wrapping another may hold it in (``_written_keys``).
_INNER: Final = ("__wrapped__", "model", "inner", "wrapped", "_model", "_inner", "_wrapped")


def _written_keys(model: object) -> frozenset[str]:
    """The keys written into the settings of ``model``, an ``HttpModel``, or of those a
    model holds in ``_INNER`` (``__wrapped__`` or its ``__dict__``'s), 4 levels deep;
    without ``dsh.llm._http`` imported, there is none."""
    http = sys.modules.get("dsh.llm._http")
    if http is None:
        return frozenset()
    found: set[str] = set()
    level = [model]
    for _ in range(5):
        inner = []
        for each in level:
            if issubclass(type(each), http.HttpModel):  # type(): no __class__ property
                # an attribute: a subclass whose __init__ is its own may have none
                found.update(getattr(each, "_written_secrets", ()))
                continue
            try:  # as stored: no property, no __getattr__ of the plugin's is run
                held = object.__getattribute__(each, "__dict__")
            except Exception:  # slots only, or a class whose __dict__ is its own
                continue
            if isinstance(held, dict):
                inner += [held[name] for name in _INNER if name in held]
        level = inner
    return frozenset(found)


def _hides_keys(model: object) -> bool:
    """Whether ``model`` is an ``HttpModel`` with the ``stream`` that hides the keys dsh
    has read in its answers (not one of its own); without ``dsh.llm._http`` imported,
    none is (and httpx is not imported to tell)."""
    http = sys.modules.get("dsh.llm._http")
    kind: Any = type(model)  # not model.__class__: a plugin's property would run
    if http is None or not issubclass(kind, http.HttpModel):
        return False
    return kind.stream is http.HttpModel.stream
