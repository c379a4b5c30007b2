"""The core's own behaviour, written as a plugin on the public hooks (registered first,
its impls ``trylast``) so that any plugin can run before it or replace it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh.hookspecs import hookimpl
from dsh.messages import ToolCall, ToolResult
from dsh.tools import ToolContext

if TYPE_CHECKING:
    from dsh.loop import ReactLoopAgent


@hookimpl(trylast=True)
async def tools_execute(agent: ReactLoopAgent, call: ToolCall) -> ToolResult:
    """The core executor: run the registered tool (errors become results)."""
    return await agent.tools.execute(call, ToolContext(agent, agent.workspace, call))
