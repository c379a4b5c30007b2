"""A tool's expected refusal (a missing file, a binary one) reads as a plain message,
``tool 'read' failed: x.dat is a binary file ...``, without the Python exception's name
(``ValueError:``), which reads as a bug; ``dsh.tools.ToolError`` is how a tool says
one. Any other exception keeps its type: that may be a bug (found by the user-journey
review of session 27)."""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from dsh.messages import ToolCall, ToolResult
from dsh.tools import ToolError, ToolRegistry, tool

CallTool = Callable[..., Awaitable[ToolResult]]


@pytest.mark.parametrize(
    ("setup", "arguments", "message"),
    [
        ("", {"path": "missing.txt"}, "missing.txt does not exist"),
        ("", {"path": "dir"}, "dir is a directory, not a file (use ls to list it)"),
        ("", {"path": "f.dat"}, "f.dat is a binary file (3 bytes); read shows text only"),
        ("", {"path": "one.txt", "offset": 3}, "offset 3 is past the end of one.txt (1 line)"),
    ],
    ids=["missing", "directory", "binary", "past-the-end"],
)
async def test_the_refusals_of_read_are_plain_messages(
    call_tool: CallTool, workspace: Path, setup: str, arguments: dict[str, Any], message: str
) -> None:
    (workspace / "dir").mkdir()
    (workspace / "f.dat").write_bytes(b"a\0b")
    (workspace / "one.txt").write_text("one\n")
    result = await call_tool("read", **arguments)
    assert result.is_error
    assert result.content == f"tool 'read' failed: {message}"


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("edit", {"path": "one.txt", "old": "two", "new": "2"}, "old was not found in one.txt"),
        ("edit", {"path": "one.txt", "old": "x", "new": "x"}, "old and new are the same"),
        ("write", {"path": "dir", "content": ""}, "dir is a directory; give the path of a file"),
        ("ls", {"path": "one.txt"}, "one.txt is a file, not a directory (use read)"),
        ("grep", {"pattern": "(", "path": "."}, "'(' is not a valid Python regular expression"),
        ("glob", {"pattern": "../*"}, "the pattern '../*' must be relative"),
    ],
    ids=["edit-not-found", "edit-same", "write-directory", "ls-file", "grep-regex", "glob-up"],
)
async def test_the_other_file_tools_refuse_plainly_too(
    call_tool: CallTool, workspace: Path, name: str, arguments: dict[str, Any], message: str
) -> None:
    (workspace / "dir").mkdir()
    (workspace / "one.txt").write_text("one\n")
    result = await call_tool(name, **arguments)
    assert result.is_error
    assert result.content.startswith(f"tool {name!r} failed: {message}")


async def test_a_tool_error_is_said_as_is_and_another_exception_with_its_type() -> None:
    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        if key == "known":
            raise ToolError("no entry for 'known' yet; add one first")
        raise KeyError(key)

    registry = ToolRegistry()
    registry.add("test", lookup)

    async def call(key: str) -> str:
        result = await registry.execute(
            ToolCall(id="c1", name="lookup", arguments=json.dumps({"key": key}))
        )
        assert result.is_error
        return result.content

    assert await call("known") == "tool 'lookup' failed: no entry for 'known' yet; add one first"
    assert await call("other") == "tool 'lookup' failed: KeyError: 'other'"


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("read", {"path": ""}, "the path is empty; use '.' for the workspace itself"),
        (
            "read",
            {"path": "~nosuchuser-dsh/x"},
            "the path '~nosuchuser-dsh/x' starts with '~nosuchuser-dsh', a home directory "
            "that cannot be found; give the path without '~'",
        ),
        (
            "grep",
            {"pattern": "x", "path": "a\0b"},
            "the path 'a\\x00b' holds a NUL byte, which no file name can contain",
        ),
        (
            "write",
            {"path": "one.txt/x", "content": ""},
            "one.txt is a file, not a directory: one.txt/x cannot be created below it",
        ),
        (
            "write",
            {"path": "new/", "content": ""},
            "'new/' ends with '/', so it names a directory; give the path of a file",
        ),
        ("glob", {"pattern": ""}, "the pattern is empty; give one, such as '**/*.py'"),
        (
            "bash",
            {"command": "echo a\0b"},
            "the command holds a NUL byte, which a shell command cannot contain",
        ),
        ("read", {"path": "loop"}, "the path 'loop' goes through a symlink loop"),
        ("edit", {"path": "loop", "old": "a", "new": "b"}, "the path 'loop' goes through a"),
        ("write", {"path": "loop", "content": "x"}, "the path 'loop' goes through a symlink"),
    ],
    ids=[
        *("empty-path", "unknown-user", "nul-path", "parent-file", "slash", "empty-glob"),
        *("nul-cmd", "read-loop", "edit-loop", "write-loop"),
    ],
)
async def test_bad_paths_patterns_and_commands_are_refused_plainly(
    call_tool: CallTool, workspace: Path, name: str, arguments: dict[str, Any], message: str
) -> None:
    (workspace / "one.txt").write_text("one\n")
    (workspace / "loop").symlink_to("loop")
    result = await call_tool(name, **arguments)
    assert result.is_error and result.content.startswith(f"tool {name!r} failed: {message}")
    assert sorted(os.listdir(workspace)) == ["loop", "one.txt"]
