"""The harness gives tools a context with the agent's workspace; a plugin's tool resolves
paths as the built-in file tools do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dsh import hookimpl
from dsh.testing import ScriptedModel, run_turn, scripted_harness


async def test_tools_can_ask_for_a_context_with_the_workspace(tmp_path: Any) -> None:
    from dsh.testing import tool_calls
    from dsh.tools import ToolContext, tool

    @tool
    def where(name: str, context: ToolContext) -> str:
        "Say where the agent works."
        return f"{name}@{context.workspace}#{context.call.id}"

    class Tools:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(where)

    assert "context" not in where.spec.parameters["properties"]
    model = ScriptedModel([tool_calls(("where", {"name": "x"})), "done"])
    plugins = [("tools", Tools())]
    async with scripted_harness(
        model, plugins=plugins, load_entry_points=False, workspace=tmp_path
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "where?")
    result = next(e for e in events if e.type == "tool/result")
    assert result.data["content"] == f"x@{tmp_path}#call-0"


async def test_a_tool_resolves_paths_as_the_built_in_file_tools_do(tmp_path: Path) -> None:
    from dsh.testing import tool_calls
    from dsh.tools import ToolContext, tool

    @tool
    def size(path: str, context: ToolContext) -> str:
        "The size of a file in the workspace."
        return str(context.resolve_path(path).stat().st_size)

    class Tools:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(size)

    work, shared = tmp_path / "work", tmp_path / "shared"
    (work / "src").mkdir(parents=True)
    shared.mkdir()
    (work / "src" / "a.txt").write_text("four")
    (shared / "b.txt").write_text("eleven char")
    (work / "out").symlink_to(tmp_path)
    calls = [
        ("src/../src/a.txt", "4"),
        (str(work / "src" / "a.txt"), "4"),
        ("../shared/b.txt", "11"),  # an extra root
        ("out/shared/b.txt", "11"),  # a symlink into an extra root
        ("out/secret", "'out/secret' (resolves to {tmp}/secret) is outside the workspace"),
        ("/etc/passwd", "'/etc/passwd' is outside the workspace {tmp}/work or the extra"),
        ("  ", "the path is empty; use '.' for the workspace itself"),
    ]
    model = ScriptedModel([tool_calls(*[("size", {"path": path}) for path, _ in calls]), "done"])
    async with scripted_harness(
        model, plugins=[("tools", Tools())], load_entry_points=False, workspace=work
    ) as h:
        options = {"model": "scripted", "extra_roots": ["../shared"]}
        agent = await h.agents.create("a", options=options)
        events = await run_turn(agent, "sizes?")
    results = [e.data for e in events if e.type == "tool/result"]
    for (path, expected), result in zip(calls, results, strict=True):
        expected = expected.format(tmp=tmp_path)
        if expected.isdigit():
            assert (result["is_error"], result["content"]) == (False, expected), path
        else:
            assert result["is_error"] and expected in result["content"], (path, result)
