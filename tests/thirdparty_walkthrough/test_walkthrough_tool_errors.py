"""What the model reads when an async tool of a third-party plugin fails inside a task
group, as a tool that fetches several things at once does (hooks.md, register_tools:
"the model reads an error result ... so say in the message what the model should do
instead")."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest

from dsh import ToolResultMessage, hookimpl
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls


class Fetcher:
    @hookimpl
    def register_tools(self, register: Callable[..., None]) -> None:
        from dsh.tools import tool

        @tool
        async def fetch(keys: list[str]) -> str:
            """Fetch several keys at once."""

            async def one(key: str) -> None:
                await anyio.lowlevel.checkpoint()
                raise LookupError(f"no entry {key!r}; known keys: a, b")

            async with anyio.create_task_group() as group:
                for key in keys:
                    group.start_soon(one, key)
            return "fetched"

        register(fetch)


@pytest.mark.xfail(
    strict=True,
    reason=(
        "dsh.tools' executor words a raising tool's error as f'{type(exc).__name__}: "
        "{exc}'; for the ExceptionGroup a task group raises that is 'ExceptionGroup: "
        "unhandled errors in a TaskGroup (2 sub-exceptions)', so the model never reads "
        "the sub-exceptions' messages"
    ),
)
async def test_the_model_reads_why_each_task_of_the_tool_failed() -> None:
    model = ScriptedModel([tool_calls(("fetch", {"keys": ["x", "y"]})), text("none")])
    async with scripted_harness(
        model, plugins=[("fetcher", Fetcher())], load_entry_points=False
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "fetch x and y")
    seen = model.requests[1].messages[-1]
    assert isinstance(seen, ToolResultMessage) and seen.is_error
    assert seen.content.startswith("tool 'fetch' failed: ")
    assert "no entry 'x'" in seen.content and "no entry 'y'" in seen.content
