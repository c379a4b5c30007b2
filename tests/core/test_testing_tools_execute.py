"""Testing a ``tools_execute`` impl on ``dsh_pm`` alone (docs/testing.md): with a
placeholder agent (``None``) the core executor has no tools to run the call with, so it
passes the call on too, and a guard that passes a call on shows it as ``None`` instead
of the core executor crashing (AttributeError, blamed on dsh, logged as an ERROR)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from dsh import HookError, ToolCall, ToolResult, hookimpl
from dsh.plugins import PluginManager


class Guard:
    @hookimpl(tryfirst=True)
    def tools_execute(self, call: ToolCall) -> ToolResult | None:
        if call.name == "bash":
            return ToolResult(call_id=call.id, content="no", is_error=True)
        return None


async def test_a_call_the_guard_passes_on_comes_back_as_none(
    dsh_pm: PluginManager, dsh_register: Any, caplog: pytest.LogCaptureFixture
) -> None:
    reported: list[HookError] = []
    dsh_pm.dispatcher.report = reported.append
    dsh_register(Guard(), "guard")
    with caplog.at_level(logging.ERROR):
        passed = await dsh_pm.relay.tools_execute(None, ToolCall(id="1", name="ls"), 1, 1)  # type: ignore[arg-type]
        denied = await dsh_pm.relay.tools_execute(None, ToolCall(id="2", name="bash"), 1, 1)  # type: ignore[arg-type]
    assert passed is None
    assert denied == ToolResult(call_id="2", content="no", is_error=True)
    assert reported == []
    assert caplog.records == []
