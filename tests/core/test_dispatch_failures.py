"""The async dispatcher when impls fail or are cancelled: errors name the plugin and hook,
``tools_execute`` fails closed, notifications and observers contain failures,
cancellation is not swallowed.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest
from dispatch_support import CALL

from dsh import (
    ContinuationDecision,
    HookError,
    PluginManager,
    ToolCall,
    ToolResult,
    hookimpl,
)


async def test_waterfall_error_names_plugin_and_hook(
    dsh_register: Any, dsh_pm: PluginManager
) -> None:
    class Broken:
        @hookimpl
        def agent_turn_continuation(self, decision: ContinuationDecision) -> None:
            raise ValueError("boom")

    dsh_register(Broken(), "broken")
    with pytest.raises(HookError) as info:
        await dsh_pm.relay.agent_turn_continuation(
            agent=None,  # type: ignore[arg-type]
            decision=ContinuationDecision(action="stop"),
            turn=1,
            step=1,
        )
    assert info.value.plugin == "broken"
    assert info.value.hook == "agent_turn_continuation"
    assert "broken" in str(info.value) and "agent_turn_continuation" in str(info.value)
    assert "boom" in str(info.value)


async def test_tools_execute_fails_closed(dsh_register: Any, dsh_pm: PluginManager) -> None:
    ran: list[str] = []
    reported: list[HookError] = []
    dsh_pm.dispatcher.report = reported.append

    class Executor:
        @hookimpl(trylast=True)
        def tools_execute(self, call: ToolCall) -> ToolResult:
            ran.append(call.id)
            return ToolResult(call_id=call.id, content="ran")

    class BrokenGuard:
        @hookimpl(tryfirst=True)
        def tools_execute(self, call: ToolCall) -> None:
            raise RuntimeError("policy file unreadable")

    dsh_register(Executor(), "executor")
    dsh_register(BrokenGuard(), "guard")
    result = await dsh_pm.relay.tools_execute(agent=None, call=CALL, turn=1, step=1)  # type: ignore[arg-type]
    assert ran == []
    assert result is not None and result.is_error and result.call_id == "c1"
    assert "guard" in result.content and "policy file unreadable" in result.content
    assert [e.plugin for e in reported] == ["guard"]


async def test_notify_contains_failures_and_runs_everyone(
    dsh_register: Any, dsh_pm: PluginManager
) -> None:
    reported: list[HookError] = []
    dsh_pm.dispatcher.report = reported.append
    seen: list[str] = []

    class Good:
        @hookimpl
        async def session_event(self, event: Any) -> None:
            seen.append(event)

    class Bad:
        @hookimpl
        def session_event(self, session: Any) -> None:
            raise OSError("disk gone")

    dsh_register(Good(), "good1")
    dsh_register(Bad(), "bad")
    dsh_register(Good(), "good2")
    await dsh_pm.relay.session_event(session=None, event="e")  # type: ignore[arg-type]
    assert seen == ["e", "e"]
    assert len(reported) == 1
    assert reported[0].plugin == "bad" and reported[0].hook == "session_event"


async def test_cancellation_is_not_swallowed(dsh_register: Any, dsh_pm: PluginManager) -> None:
    class Slow:
        @hookimpl
        async def agent_status(self) -> None:
            await anyio.sleep(10)

    dsh_register(Slow(), "slow")
    with anyio.move_on_after(0.05) as scope:
        await dsh_pm.relay.agent_status(agent=None, status="idle")  # type: ignore[arg-type]
    assert scope.cancelled_caught


async def test_session_event_reaches_every_observer_despite_cancellation(
    dsh_register: Any, dsh_pm: PluginManager
) -> None:
    seen: list[str] = []

    def observer(name: str) -> object:
        class Plugin:
            @hookimpl
            async def session_event(self, event: str) -> None:
                await anyio.sleep(0.02)
                seen.append(name)

        return Plugin()

    dsh_register(observer("first"), "first")
    dsh_register(observer("second"), "second")
    with anyio.CancelScope() as scope:
        scope.cancel()
        await dsh_pm.relay.session_event(session=None, event="e")  # type: ignore[arg-type]
    assert seen == ["second", "first"]


async def test_b37_a_raising_sync_observer_is_reported_and_the_next_still_runs(
    dsh_register: Any, dsh_pm: PluginManager
) -> None:
    reported: list[HookError] = []
    dsh_pm.dispatcher.report = reported.append
    seen: list[str] = []

    class Bad:
        @hookimpl
        def session_event(self, event: Any) -> None:
            raise OSError("disk gone")

    class Good:
        @hookimpl
        def session_event(self, event: Any) -> None:
            seen.append(event)

    dsh_register(Good(), "good")
    dsh_register(Bad(), "bad")  # LIFO: runs first
    await dsh_pm.relay.session_event(session=None, event="e")  # type: ignore[arg-type]
    assert seen == ["e"]
    assert [(e.plugin, e.hook) for e in reported] == [("bad", "session_event")]
