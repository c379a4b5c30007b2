"""The async dispatcher's registration: callbacks stamped with their plugin, hook errors
naming it, plans following register/unregister and blocking, ``implemented``.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
from dispatch_support import appender, request_through

from dsh import (
    HookError,
    PluginManager,
    hookimpl,
)


def test_register_callback_stamps_the_plugin(dsh_register: Any, dsh_pm: PluginManager) -> None:
    class Tools:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register("add")
            register("sub")

    dsh_register(Tools(), "maths")
    got: list[tuple[str, str]] = []
    dsh_pm.relay.register_tools(lambda plugin, tool: got.append((plugin, tool)))
    assert [entry for entry in got if entry[0] == "maths"] == [("maths", "add"), ("maths", "sub")]


def test_register_hook_error_names_plugin(dsh_register: Any, dsh_pm: PluginManager) -> None:
    class Bad:
        @hookimpl
        def register_models(self, register: Any) -> None:
            raise ImportError("no module named heavy")

    dsh_register(Bad(), "heavy")
    with pytest.raises(HookError, match=r"heavy.*register_models.*no module named heavy"):
        dsh_pm.relay.register_models(lambda *a: None)


@pytest.mark.parametrize("code", [3, None, "bye"])
def test_register_impl_exiting_is_its_failure(
    dsh_register: Any, dsh_pm: PluginManager, code: int | str | None
) -> None:
    """Was: a ``SystemExit`` went through ``except Exception``: start-up ended with a
    bare exit (or a BaseExceptionGroup traceback) naming no plugin."""

    class Exits:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            sys.exit(code)

    dsh_register(Exits(), "exiter")
    with pytest.raises(HookError, match=r"'exiter'.*register_tools.*SystemExit") as caught:
        dsh_pm.relay.register_tools(lambda *a: None)
    assert isinstance(caught.value.cause, SystemExit)


def test_register_impl_keyboard_interrupt_propagates(
    dsh_register: Any, dsh_pm: PluginManager
) -> None:
    class Interrupted:
        @hookimpl
        def register_settings(self, register: Any) -> None:
            raise KeyboardInterrupt

    dsh_register(Interrupted(), "interrupted")
    with pytest.raises(KeyboardInterrupt):
        dsh_pm.relay.register_settings(lambda *a: None)


async def test_plans_follow_register_and_unregister(dsh_pm: PluginManager) -> None:
    plugin = appender("-x")
    assert (await request_through(dsh_pm)).system == "base"
    dsh_pm.register(plugin, "x")
    assert (await request_through(dsh_pm)).system == "base-x"
    dsh_pm.unregister(plugin)
    assert (await request_through(dsh_pm)).system == "base"


async def test_blocked_plugin_is_not_called(dsh_pm: PluginManager) -> None:
    dsh_pm.set_blocked("x")
    assert dsh_pm.register(appender("-x"), "x") is None
    assert (await request_through(dsh_pm)).system == "base"


async def test_blocking_a_registered_plugin_removes_it(dsh_pm: PluginManager) -> None:
    dsh_pm.register(appender("-x"), "x")
    dsh_pm.set_blocked("x")
    assert (await request_through(dsh_pm)).system == "base"


def test_implemented_follows_the_plugins(dsh_register: Any, dsh_pm: PluginManager) -> None:
    assert dsh_pm.relay.implemented("agent_step_result") is False

    class Plugin:
        @hookimpl
        def agent_step_result(self) -> None:
            return None

    dsh_register(Plugin(), "p")
    assert dsh_pm.relay.implemented("agent_step_result") is True
