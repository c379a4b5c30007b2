"""A rule that keeps a file from being read (deny or ask on ``read``) covers every tool
given paths that may read them: a plugin's own tool (docs/tools.md's ``word_count``), one
added in code (an MCP bridge's), as well as ``grep`` and ``edit``. A tool declared with
``reads=False`` (the built-in ``write``, ``ls``, ``glob``) is left to its own rules; an
allow rule for ``read`` allows ``read`` alone."""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

import dsh_permissions
from dsh import hookimpl
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls
from dsh.tools import Tool, tool
from dsh_permissions import PermissionAnswer, PermissionRequest
from dsh_permissions._rules import Rule

pytestmark = pytest.mark.plugins("permissions")

DOCS = Path(__file__).parents[3] / "docs" / "tools.md"
SECRET = "TOKEN=hunter2\n"


def documented_plugin() -> types.ModuleType:
    """The plugin of docs/tools.md's "Your own tools", run as written."""
    section = DOCS.read_text().split("## Your own tools", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert "word_count" in code and 'path_args=["path"]' in code
    module = types.ModuleType("words")
    exec(compile(code, str(DOCS), "exec"), module.__dict__)
    return module


class Tools:
    """A plugin registering ``tools``; each run is recorded in ``ran``."""

    def __init__(self, *makers: Callable[[list[str]], Tool]) -> None:
        self.ran: list[str] = []
        self.tools = [make(self.ran) for make in makers]

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        for each in self.tools:
            register(each)


def file_size(ran: list[str]) -> Tool:
    @tool(path_args=("path",), reads=False)
    def file_size(path: str) -> str:
        """Say how big a file is (its contents are not read)."""
        ran.append(f"file_size {path}")
        return "14 bytes"

    return file_size


def append_line(ran: list[str]) -> Tool:
    @tool(mutating=True, path_args=("path",))
    def append_line(path: str, line: str) -> str:
        """Append a line to a file (declares nothing about reading: taken to read)."""
        ran.append(f"append_line {path}")
        return "appended"

    return append_line


class Front:
    """A front end answering "deny"; records each request's tool and reason."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.reasons: list[str] = []

    @hookimpl(optionalhook=True)
    async def permission_ask(self, request: PermissionRequest) -> PermissionAnswer:
        self.asked.append(request.tool)
        self.reasons.append(request.reason)
        return PermissionAnswer.deny("no")


async def results(
    workspace: Path,
    rules: dict[str, Any],
    calls: Sequence[tuple[str, dict[str, Any]]],
    plugins: Sequence[tuple[str, object]] = (),
    added: Sequence[Tool] = (),
    front: Front | None = None,
) -> list[str]:
    """What the model read back from each call (one a step); ``added``: tools added to
    the harness's registry in code once it started."""
    (workspace / ".env").write_text(SECRET)
    (workspace / "notes.txt").write_text("three small words\n")
    model = ScriptedModel([*(tool_calls(c) for c in calls), text("done")])
    loaded = [("permissions", dsh_permissions), ("front", front or Front()), *plugins]
    async with scripted_harness(
        model, plugins=loaded, load_entry_points=False, workspace=workspace
    ) as harness:
        for each in added:
            harness.tools.add("bridge", each)
        agent = await harness.agents.create(
            "a", options={"model": "scripted", "permissions": rules}
        )
        with anyio.fail_after(30):
            events = await run_turn(agent, "go")
    model.assert_complete()
    return [e.data["content"] for e in events if e.type == "tool/result"]


def count(path: str) -> tuple[str, dict[str, Any]]:
    return "word_count", {"path": path}


@pytest.mark.parametrize("action", ["deny", "ask"])
async def test_the_documented_tool_is_kept_out_of_a_file_read_rules_cover(
    tmp_path: Path, action: str
) -> None:
    front = Front()
    on_env, spelt, on_notes = await results(
        tmp_path,
        {action: ["read(.env)"]},
        [count(".env"), count("./notes.txt/../.env"), count("notes.txt")],
        [("words", documented_plugin())],
        front=front,
    )
    for refused in (on_env, spelt):
        assert refused.startswith("Permission denied") and "1 words" not in refused
    # the reason tells why a rule of `read` covers another tool
    for reason in [on_env, spelt] if action == "deny" else front.reasons:
        assert "'word_count' does not declare reads=False" in reason
    assert front.asked == (["word_count", "word_count"] if action == "ask" else [])
    assert on_notes == "notes.txt: 3 words"  # the rule covers only the file it names


@pytest.mark.parametrize("mode", ["bypass", "accept-edits", "plan"])
async def test_a_read_deny_rule_covers_the_tool_in_every_mode(tmp_path: Path, mode: str) -> None:
    rules = {"mode": mode, "deny": ["read(.env)"]}
    steps = [count(".env"), ("read", {"path": ".env"})]
    by_tool, by_read = await results(tmp_path, rules, steps, [("words", documented_plugin())])
    assert by_tool.startswith("Permission denied") and by_read.startswith("Permission denied")


async def test_bypass_sets_aside_an_ask_rule_for_the_tool_as_for_read(tmp_path: Path) -> None:
    rules = {"mode": "bypass", "ask": ["read(.env)"]}
    steps = [count(".env"), ("read", {"path": ".env"})]
    by_tool, by_read = await results(tmp_path, rules, steps, [("words", documented_plugin())])
    assert by_tool == ".env: 1 words" and "hunter2" in by_read


async def test_a_tool_declared_not_reading_is_left_to_its_own_rules(tmp_path: Path) -> None:
    plugin = Tools(file_size)
    size = ("file_size", {"path": ".env"})
    (free,) = await results(tmp_path, {"deny": ["read(.env)"]}, [size], [("t", plugin)])
    assert free == "14 bytes"
    for rule in ("file_size(.env)", "*(.env)"):
        (held,) = await results(tmp_path, {"deny": [rule]}, [size], [("t", Tools(file_size))])
        assert held.startswith("Permission denied"), rule
    assert plugin.ran == ["file_size .env"]


async def test_the_built_in_writers_and_listers_are_unchanged(tmp_path: Path) -> None:
    rules = {"mode": "accept-edits", "deny": ["read(.env)"]}
    steps = [
        ("ls", {"path": "."}),
        ("glob", {"pattern": "*"}),
        ("write", {"path": ".env", "content": "A=1\n"}),
    ]
    listed, found, written = await results(tmp_path, rules, steps)
    assert ".env" in listed.splitlines() and ".env" in found.splitlines()
    assert written.startswith("overwrote .env")


async def test_a_mutating_tool_that_may_read_is_covered_like_edit(tmp_path: Path) -> None:
    # accept-edits runs file edits in the workspace, but not past a read rule
    plugin = Tools(append_line)
    steps = [
        ("append_line", {"path": ".env", "line": "x"}),
        ("append_line", {"path": "notes.txt", "line": "x"}),
    ]
    rules = {"mode": "accept-edits", "deny": ["read(.env)"]}
    held, done = await results(tmp_path, rules, steps, [("t", plugin)])
    assert held.startswith("Permission denied") and done == "appended"
    assert plugin.ran == ["append_line notes.txt"]


async def test_allowing_read_allows_no_other_tool(tmp_path: Path) -> None:
    front = Front()
    plugin = Tools(append_line)
    rules = {"allow": ["read(**)"], "deny": ["word_count(.env)"]}
    steps = [count(".env"), ("append_line", {"path": "notes.txt", "line": "x"})]
    denied, asked = await results(
        tmp_path, rules, steps, [("words", documented_plugin()), ("t", plugin)], front=front
    )
    assert denied.startswith("Permission denied") and asked.startswith("Permission denied")
    assert front.asked == ["append_line"] and plugin.ran == []


class Paths(BaseModel):
    paths: list[str]


async def test_a_tool_added_in_code_with_path_args_is_covered(tmp_path: Path) -> None:
    """An MCP bridge's tool, made as a ``Tool`` and added to the registry in code."""
    ran: list[str] = []

    def read_files(paths: list[str]) -> str:
        ran.extend(paths)
        return "contents"

    bridged = Tool(
        name="mcp_fs_read_files",
        description="Read files.",
        arguments=Paths,
        run=read_files,
        path_args=("paths",),
    )
    rules = {"allow": ["mcp_*"], "deny": ["read(.env)"]}
    steps = [
        ("mcp_fs_read_files", {"paths": ["notes.txt", ".env"]}),
        ("mcp_fs_read_files", {"paths": ["."]}),  # the directory holds .env
        ("mcp_fs_read_files", {"paths": ["notes.txt"]}),
    ]
    one, directory, other = await results(tmp_path, rules, steps, added=[bridged])
    assert one.startswith("Permission denied") and directory.startswith("Permission denied")
    assert other == "contents" and ran == ["notes.txt"]


def test_read_rules_apply_by_what_a_tool_declares_allow_rules_by_name() -> None:
    deny, ask, allow = (Rule.compile(a, "read(.env)", "/w") for a in ("deny", "ask", "allow"))
    for rule in (deny, ask):
        assert rule.applies_to("word_count", reads_paths=True)
        assert not rule.applies_to("write", reads_paths=False)
        assert rule.applies_to("read", reads_paths=False)  # its own tool, always
    assert not allow.applies_to("word_count", reads_paths=True)
    assert not Rule.compile("deny", "grep(.env)", "/w").applies_to("word_count", True)
