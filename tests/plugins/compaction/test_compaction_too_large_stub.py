"""The stub of a tool result too large for the window tells the model what to do: a
small model shown only "removed" asked for the same call again, step after step. The
stub says that the same call gives the same result and how to ask for a smaller part:
by the tool's own arguments that choose a part (read from its JSON schema in the
request), else generically."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from compaction_util import Dump, WindowServer, events_of, harness

from dsh import hookimpl
from dsh.testing import run_turn, tool_calls

pytestmark = pytest.mark.plugins("compaction")


class Page:
    """A ``page`` tool that takes ``offset`` and ``limit`` (its output: ``limit`` characters)."""

    @hookimpl
    def register_tools(self, register: Callable[..., None]) -> None:
        from dsh.tools import tool

        @tool
        def page(path: str, offset: int = 0, limit: int = 100) -> str:
            """Page through a file."""
            return "y" * limit

        register(page)


async def stub_of(extra: Any, call: tuple[str, dict[str, Any]]) -> str:
    server = WindowServer(6000, [tool_calls(call), "done"])
    async with harness(server.model, extra=[extra], chars=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "go")
    assert events[-1].data["reason"] == "completed"
    (prune,) = events_of(events, "compact/prune")
    (stub,) = prune.data["pruned"]
    content: str = stub["content"]
    assert server.sent[-1].messages[2].content == content  # what the model reads
    return content


async def test_the_stub_names_the_arguments_that_choose_a_part() -> None:
    stub = await stub_of(("page", Page()), ("page", {"path": "big", "limit": 40_000}))

    assert stub.startswith("[output of page removed: 40000 characters, about ")
    assert "too large for the model's context window" in stub
    assert "the same call again gives the same result" in stub
    assert stub.endswith("ask for a smaller part of it with the arguments offset and limit]")


async def test_without_such_arguments_the_stub_says_how_in_general() -> None:
    stub = await stub_of(("dump", Dump()), ("dump", {"size": 40_000}))

    assert stub.startswith("[output of dump removed: 40000 characters, about ")
    assert "the same call again gives the same result" in stub
    assert stub.endswith(
        "ask for a smaller part of it (a narrower command or query, or fewer lines or items)]"
    )
