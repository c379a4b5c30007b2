"""What the model reads when an async tool of a third-party plugin fails inside a task
group, as a tool that fetches several things at once does (hooks.md, register_tools:
"the model reads an error result ... so say in the message what the model should do
instead")."""

from __future__ import annotations

from collections.abc import Callable

import anyio

from dsh import ToolCall, ToolResultMessage, hookimpl
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls
from dsh.tools import ToolRegistry, tool


class Fetcher:
    @hookimpl
    def register_tools(self, register: Callable[..., None]) -> None:
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


async def test_nested_groups_are_flattened_and_a_long_one_is_cut() -> None:
    """Groups inside groups give their own exceptions; past ten, the rest is counted."""

    @tool
    def many() -> str:
        """Fail in many ways at once."""
        inner = ExceptionGroup("inner", [KeyError(f"k{i}") for i in range(12)])
        raise ExceptionGroup("outer", [ValueError("first"), inner])

    registry = ToolRegistry()
    registry.add("test", many)
    result = await registry.execute(ToolCall(id="c", name="many", arguments="{}"))
    assert result.is_error
    assert result.content.startswith(
        "tool 'many' failed: ExceptionGroup: outer (2 sub-exceptions): ValueError: first; "
        "KeyError: 'k0'; "
    )
    assert result.content.endswith("KeyError: 'k8'; and 3 more")
