"""Test helpers for people who write dsh plugins (public API).

Opt in from a ``conftest.py`` (or a test module)::

    pytest_plugins = ["dsh.testing"]

Fixtures:

- ``dsh_pm`` — a fresh ``PluginManager`` with the core defaults and no entry points,
  so installed plugins never leak into a test.
- ``dsh_register`` — ``dsh_register(plugin, name=None)`` registers a plugin for this
  test only; it is unregistered at teardown even when the test fails.
- ``dsh_hook_recorder`` — a ``HookRecorder`` registered ``tryfirst`` on every
  non-registration core hook; ``calls`` holds ``HookCall(name, kwargs)`` in call order.

Helpers (see docs/testing.md): ``ScriptedModel`` and its replies (``text``,
``tool_calls``, ``max_tokens``, ``fail``, ``hang``), ``scripted_harness`` (a started
harness with a scripted model), ``run_turn``, ``EventRecorder``, ``ErrorRecorder``,
``InMemoryPersistence`` and ``check_invariants``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from dsh.hookspecs import CALL_STYLES, hookimpl
from dsh.invariants import check_invariants
from dsh.plugins import PluginManager, create_plugin_manager
from dsh.testing._doubles import ErrorRecorder, EventRecorder, InMemoryPersistence
from dsh.testing._scripted import (
    Reply,
    ScriptedModel,
    fail,
    hang,
    max_tokens,
    text,
    tool_calls,
)

if TYPE_CHECKING:
    from dsh.agent import AgentHandle
    from dsh.harness import Harness
    from dsh.session import SessionEvent

__all__ = [
    "ErrorRecorder",
    "EventRecorder",
    "HookCall",
    "HookRecorder",
    "InMemoryPersistence",
    "Reply",
    "ScriptedModel",
    "check_invariants",
    "dsh_hook_recorder",
    "dsh_pm",
    "dsh_register",
    "fail",
    "hang",
    "max_tokens",
    "run_turn",
    "scripted_harness",
    "text",
    "tool_calls",
]


@dataclass(frozen=True, slots=True)
class HookCall:
    name: str
    kwargs: dict[str, Any]


class HookRecorder:
    """Records every call of the core's interception, observation and lifecycle hooks.

    Its impls are ``tryfirst`` and return None, so they change nothing: waterfall values
    are recorded as the first impl saw them.
    """

    def __init__(self, pm: PluginManager) -> None:
        self.calls: list[HookCall] = []
        for hook, style in CALL_STYLES.items():
            if style != "register":
                spec = getattr(pm.hook, hook).spec
                assert spec is not None
                setattr(self, hook, self._impl(hook, spec.argnames))

    def _impl(self, hook: str, argnames: tuple[str, ...]) -> Callable[..., None]:
        # pluggy binds arguments by the impl's code object, so each impl is compiled
        # with exactly the hook's parameter names.
        params = ", ".join(argnames)
        source = f"def {hook}({params}):\n    record({hook!r}, {{{_pairs(argnames)}}})\n"
        namespace: dict[str, Any] = {"record": self._record}
        exec(source, namespace)
        return hookimpl(tryfirst=True)(namespace[hook])  # type: ignore[no-any-return]

    def _record(self, name: str, kwargs: dict[str, Any]) -> None:
        self.calls.append(HookCall(name, kwargs))

    def names(self) -> list[str]:
        return [call.name for call in self.calls]

    def get(self, name: str) -> list[HookCall]:
        return [call for call in self.calls if call.name == name]


def _pairs(argnames: tuple[str, ...]) -> str:
    return ", ".join(f"{name!r}: {name}" for name in argnames)


@pytest.fixture
def dsh_pm() -> PluginManager:
    """A fresh plugin manager: core defaults only, no entry points."""
    return create_plugin_manager(load_entry_points=False)


@pytest.fixture
def dsh_register(dsh_pm: PluginManager) -> Iterator[Callable[..., str | None]]:
    """Register a plugin on ``dsh_pm`` for the duration of one test."""
    registered: list[object] = []

    def register(plugin: object, name: str | None = None) -> str | None:
        result = dsh_pm.register(plugin, name)
        registered.append(plugin)
        return result

    yield register
    for plugin in reversed(registered):
        if dsh_pm.is_registered(plugin):
            dsh_pm.unregister(plugin)


@pytest.fixture
def dsh_hook_recorder(dsh_pm: PluginManager) -> Iterator[HookRecorder]:
    """A ``HookRecorder`` registered on ``dsh_pm`` for one test."""
    recorder = HookRecorder(dsh_pm)
    dsh_pm.register(recorder, "dsh-hook-recorder")
    yield recorder
    if dsh_pm.is_registered(recorder):
        dsh_pm.unregister(recorder)


class _ModelPlugin:
    def __init__(self, models: Iterable[Any]) -> None:
        self.models = list(models)

    @hookimpl
    def register_models(self, register: Callable[..., None]) -> None:
        for model in self.models:
            register(model)


@asynccontextmanager
async def scripted_harness(
    *models: ScriptedModel,
    plugins: Iterable[object | tuple[str, object]] = (),
    pm: PluginManager | None = None,
    load_entry_points: bool = True,
    config_text: str | None = None,
    workspace: str | os.PathLike[str] | None = None,
) -> AsyncIterator[Harness]:
    """A started ``Harness`` whose models include ``models`` (registered through
    ``register_models`` by a plugin named ``scripted-models``)."""
    from dsh.harness import Harness

    extra: list[object | tuple[str, object]] = [("scripted-models", _ModelPlugin(models))]
    if pm is not None:
        for item in [*extra, *plugins]:
            name, plugin = item if isinstance(item, tuple) else (None, item)
            pm.register(plugin, name)
        harness = Harness(pm=pm, config_text=config_text, workspace=workspace)
    else:
        harness = Harness(
            plugins=[*extra, *plugins],
            load_entry_points=load_entry_points,
            config_text=config_text,
            workspace=workspace,
        )
    async with harness:
        yield harness


async def run_turn(agent: AgentHandle, prompt: str) -> list[SessionEvent]:
    """Send ``prompt``, wait until the agent is idle, return the events it added."""
    start = len(agent.session.events)
    agent.send(prompt)
    await agent.when_idle()
    return list(agent.session.events[start:])
