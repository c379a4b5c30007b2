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
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from dsh.hookspecs import CALL_STYLES, hookimpl
from dsh.plugins import PluginManager, create_plugin_manager

__all__ = [
    "HookCall",
    "HookRecorder",
    "dsh_hook_recorder",
    "dsh_pm",
    "dsh_register",
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
