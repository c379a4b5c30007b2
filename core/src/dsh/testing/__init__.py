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
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from dsh.invariants import check_invariants
from dsh.testing._doubles import ErrorRecorder, EventRecorder, InMemoryPersistence
from dsh.testing._hooks import HookCall, HookRecorder
from dsh.testing._model_plugin import NAME as MODELS_PLUGIN
from dsh.testing._model_plugin import ModelPlugin
from dsh.testing._run_turn import run_turn
from dsh.testing._scripted import (
    Reply,
    ScriptedModel,
    fail,
    hang,
    max_tokens,
    text,
    tool_calls,
)

try:  # only the fixtures need pytest: a plugin may register a ScriptedModel without it
    from dsh.testing._fixtures import dsh_hook_recorder, dsh_pm, dsh_register
except ModuleNotFoundError as missing:
    if missing.name != "pytest":
        raise

if TYPE_CHECKING:
    from dsh.harness import Harness
    from dsh.plugins import PluginManager

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
    ``register_models`` by a plugin named ``scripted-models``, after every other
    plugin's: a name taken already is refused saying by what). An ``ErrorRecorder``
    among its plugins records the hook failures its manager reports (``failures``)."""
    from dsh.harness import Harness

    registers = ModelPlugin(models)
    extra: list[object | tuple[str, object]] = [(MODELS_PLUGIN, registers)]
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
    registers.harness = harness
    # what the manager reports is recorded too; by name: pluggy's get_plugins() is a set,
    # which refuses a plugin that cannot be hashed (a dataclass instance)
    for _, plugin in harness.pm.list_name_plugin():
        if isinstance(plugin, ErrorRecorder):
            plugin.watch(harness.pm)
    async with harness:
        yield harness
