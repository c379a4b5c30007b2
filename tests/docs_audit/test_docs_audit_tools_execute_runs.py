"""hooks.md, ``tools_execute``: "To run a call yourself, with a time limit ... hand it to
the agent's tools" (``agent.tools.execute``), and "Make such an impl a plain
``@hookimpl``, not ``tryfirst``": the page's example, run. A ``tryfirst`` impl that runs
the tool itself, registered after dsh-permissions, ran a call a deny rule covers: the
check never saw it (found writing a third-party timeout plugin from the docs)."""

from __future__ import annotations

import re
import types
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh import hookimpl
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls

HOOKS_MD = Path(__file__).parents[2] / "docs" / "hooks.md"


def example() -> types.ModuleType:
    """The example of the page that runs a call itself, as a plugin module."""
    blocks = re.findall(r"```python\n(.*?)```", HOOKS_MD.read_text(encoding="utf-8"), re.S)
    [block] = [b for b in blocks if "agent.tools.execute(" in b]
    module = types.ModuleType("hooks_md_timeout")
    exec(compile(block, str(HOOKS_MD), "exec"), module.__dict__)
    return module


class Tools:
    """``wait`` never returns on its own; ``quick`` answers at once."""

    @hookimpl
    def register_tools(self, register: Any) -> None:
        from dsh.tools import tool

        @tool
        async def wait() -> str:
            """Wait for ever."""
            await anyio.Event().wait()
            return "never"

        @tool
        def quick(word: str) -> str:
            """Say the word."""
            return word

        register(wait)
        register(quick)


async def test_a_call_over_the_time_limit_is_stopped(tmp_path: Path) -> None:
    model = ScriptedModel(
        [tool_calls(("wait", {}), ("quick", {"word": "hi"}), ("quick", {})), text("ok")]
    )
    plugins = [("timeout", example()), ("tools", Tools())]
    async with scripted_harness(
        model, plugins=plugins, load_entry_points=False, workspace=tmp_path
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted", "tool_timeout": 0.05})
        events = await run_turn(agent, "go", timeout=10)
    results = [(e.data["is_error"], e.data["content"]) for e in events if e.type == "tool/result"]
    assert results == [
        (True, "wait ran over 0.05 s and was stopped"),
        (False, "hi"),
        (True, "invalid arguments for 'quick': word: Field required"),
    ]
    model.assert_complete()


@pytest.mark.plugins("permissions")
async def test_the_plain_impl_runs_only_what_the_permission_check_passed(
    tmp_path: Path,
) -> None:
    dsh_permissions = pytest.importorskip("dsh_permissions")
    model = ScriptedModel([tool_calls(("quick", {"word": "hi"})), text("ok")])
    # registered after dsh-permissions: a tryfirst impl there would run first
    plugins = [("permissions", dsh_permissions), ("zz-timeout", example()), ("tools", Tools())]
    async with scripted_harness(
        model,
        plugins=plugins,
        load_entry_points=False,
        config_text="permissions: {deny: [quick]}",
        workspace=tmp_path,
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted", "tool_timeout": 5})
        events = await run_turn(agent, "go", timeout=10)
    [result] = [e.data for e in events if e.type == "tool/result"]
    assert result["is_error"]
    assert result["content"].startswith("Permission denied: 'quick' was not run")
    model.assert_complete()
