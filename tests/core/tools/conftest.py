"""Fixtures for the built-in tool tests.

``workspace`` is a directory with a sibling ``outside`` directory (``outside``), so
escapes have somewhere real to land. ``call_tool(name, options=None, **arguments)``
runs one built-in tool through ``ToolRegistry.execute`` with a ``ToolContext`` whose
agent has ``options``; ``in_loop(*calls, options=None)`` runs ``(name, arguments)``
calls as one step of a real agent turn (scripted model, no entry-point plugins, the
same workspace) and returns the logged tool results (``call_id``, ``content``,
``is_error``) in call order. ``fifo`` is a named pipe ``pipe`` in the workspace, with a
safety net: should a tool block opening it, its other end is opened every few seconds,
so the test fails instead of hanging (a thread blocked in ``open`` cannot be cancelled).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from dsh.builtin_tools import builtin_tools
from dsh.messages import ToolCall, ToolResult
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls
from dsh.tools import ToolContext, ToolRegistry

CallTool = Callable[..., Awaitable[ToolResult]]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path.resolve()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_text("top secret\n")
    return path.resolve()


@pytest.fixture
def fifo(workspace: Path) -> Iterator[Path]:
    path = workspace / "pipe"
    os.mkfifo(path)
    stop = threading.Event()

    def unblock() -> None:
        while not stop.wait(3):
            for flags in (os.O_RDONLY | os.O_NONBLOCK, os.O_WRONLY | os.O_NONBLOCK):
                with contextlib.suppress(OSError):
                    os.close(os.open(path, flags))

    thread = threading.Thread(target=unblock, daemon=True)
    thread.start()
    yield path
    stop.set()
    thread.join()


@pytest.fixture
def call_tool(workspace: Path) -> CallTool:
    registry = ToolRegistry()
    for built_in in builtin_tools():
        registry.add("dsh.builtin_tools", built_in)

    async def call(
        name: str, /, options: dict[str, Any] | None = None, **arguments: Any
    ) -> ToolResult:
        tool_call = ToolCall(id="c1", name=name, arguments=json.dumps(arguments))
        agent = SimpleNamespace(options=options or {})
        return await registry.execute(tool_call, ToolContext(agent, workspace, tool_call))

    return call


@pytest.fixture
def in_loop(workspace: Path) -> Callable[..., Awaitable[list[dict[str, Any]]]]:
    async def run(
        *calls: tuple[str, dict[str, Any]], options: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        model = ScriptedModel([tool_calls(*calls), text("done")])
        async with scripted_harness(model, load_entry_points=False, workspace=workspace) as harness:
            agent_options = {"model": "scripted", **(options or {})}
            agent = await harness.agents.create("a", options=agent_options)
            events = await run_turn(agent, "go")
        model.assert_complete()
        assert [e.data["reason"] for e in events if e.type == "turn/end"] == ["completed"]
        return [e.data for e in events if e.type == "tool/result"]

    return run
