"""Hook call helpers shared by the dispatcher tests (test_dispatch_*.py)."""

from __future__ import annotations

from typing import Any

from dsh import (
    ModelRequest,
    PluginManager,
    ToolCall,
    hookimpl,
)

REQ = ModelRequest(system="base")


CALL = ToolCall(id="c1", name="add", arguments='{"a": 1}')


async def request_through(pm: PluginManager) -> ModelRequest:
    return await pm.relay.agent_request(agent=None, request=REQ, turn=1, step=1)  # type: ignore[arg-type]


def appender(tag: str, **opts: Any) -> object:
    class Plugin:
        @hookimpl(**opts)
        def agent_request(self, request: ModelRequest) -> ModelRequest:
            return request.model_copy(update={"system": request.system + tag})

    return Plugin()
