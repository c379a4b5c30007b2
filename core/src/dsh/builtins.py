"""The core's own behaviour, written as a plugin on the public hooks (registered first,
its impls ``trylast``) so that any plugin can run before it or replace it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh.hookspecs import hookimpl

if TYPE_CHECKING:
    from dsh.loop import ReactLoopAgent
    from dsh.messages import ToolCall, ToolResult
    from dsh.tools import ToolRegistry


@hookimpl(trylast=True)
async def tools_execute(agent: ReactLoopAgent, call: ToolCall) -> ToolResult | None:
    """The core executor: run the registered tool (errors become results). An agent
    without tools (a placeholder, ``dsh_pm.relay.tools_execute(None, call, ...)`` in a
    plugin's test) has none to run it with: the call is passed on (``None``)."""
    tools: ToolRegistry | None = getattr(agent, "tools", None)
    if tools is None:
        return None
    tool = tools.get(call.name)
    if tool is None or not tool.wants_context:
        return await tools.execute(call)
    from dsh.tools import ToolContext  # imported here: loading plugins must stay cheap

    return await tools.execute(call, ToolContext(agent, agent.workspace, call))
