"""The core's own behaviour, written as a plugin on the public hooks (registered first,
its impls ``trylast``) so that any plugin can run before it or replace it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh.hookspecs import hookimpl

if TYPE_CHECKING:
    from dsh.loop import ReactLoopAgent
    from dsh.messages import ToolCall, ToolResult


@hookimpl(trylast=True)
async def tools_execute(agent: ReactLoopAgent, call: ToolCall) -> ToolResult:
    """The core executor: run the registered tool (errors become results)."""
    tools = agent.tools
    tool = tools.get(call.name)
    if tool is None or not tool.wants_context:
        return await tools.execute(call)
    from dsh.tools import ToolContext  # imported here: loading plugins must stay cheap

    return await tools.execute(call, ToolContext(agent, agent.workspace, call))
