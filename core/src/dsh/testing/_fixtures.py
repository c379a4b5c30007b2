"""The pytest fixtures of ``dsh.testing`` (``pytest_plugins = ["dsh.testing"]``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from dsh.plugins import PluginManager, create_plugin_manager
from dsh.testing._doubles import ErrorRecorder
from dsh.testing._hooks import HookRecorder

__all__ = ["dsh_hook_recorder", "dsh_pm", "dsh_register"]

RECORDER = "dsh-hook-recorder"


@pytest.fixture
def dsh_pm() -> PluginManager:
    """A fresh plugin manager: core defaults only, no entry points. Its relay checks
    what interception and ``tools_approval`` impls return, as a harness's does (a
    wrong type is a HookError)."""
    from dsh._relay import hook_returns

    pm = create_plugin_manager(load_entry_points=False)
    pm.dispatcher.returns.update(hook_returns())
    return pm


@pytest.fixture
def dsh_register(dsh_pm: PluginManager) -> Iterator[Callable[..., str | None]]:
    """Register a plugin on ``dsh_pm`` for the duration of one test (an
    ``ErrorRecorder`` then records the failures ``dsh_pm`` reports)."""
    registered: list[object] = []

    def register(plugin: object, name: str | None = None) -> str | None:
        result = dsh_pm.register(plugin, name)
        registered.append(plugin)
        if isinstance(plugin, ErrorRecorder):  # its failures: what dsh_pm reports
            plugin.watch(dsh_pm)
        return result

    yield register
    for plugin in reversed(registered):
        if dsh_pm.is_registered(plugin):
            dsh_pm.unregister(plugin)


@pytest.fixture
def dsh_hook_recorder(dsh_pm: PluginManager) -> Iterator[HookRecorder]:
    """A ``HookRecorder`` registered on ``dsh_pm`` for one test. Its impls run before
    every other plugin's, ``tryfirst`` ones registered later included, so it sees each
    call, even one a ``firstresult`` impl answers."""
    recorder = HookRecorder(dsh_pm)
    dsh_pm.dispatcher.first.add(RECORDER)
    dsh_pm.register(recorder, RECORDER)
    yield recorder
    if dsh_pm.is_registered(recorder):
        dsh_pm.unregister(recorder)
    dsh_pm.dispatcher.first.discard(RECORDER)
    dsh_pm.dispatcher.invalidate()
