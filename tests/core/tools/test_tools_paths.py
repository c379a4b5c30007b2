"""Workspace confinement of the file tools: ``..``, absolute paths, ``~``, symlinks
(to files, to directories, dangling) and the ``extra_roots`` agent option."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from dsh.builtin_tools._paths import Roots, real_path
from dsh.messages import ToolCall, ToolResult
from dsh.tools import ToolContext

CallTool = Callable[..., Awaitable[ToolResult]]

# one call per file tool, each aimed at the path "{target}"
EVERY_FILE_TOOL = [
    ("read", {"path": "{target}"}),
    ("write", {"path": "{target}", "content": "pwned\n"}),
    ("edit", {"path": "{target}", "old": "top secret", "new": "pwned"}),
    ("ls", {"path": "{target}"}),
    ("glob", {"pattern": "*", "path": "{target}"}),
    ("grep", {"pattern": "secret", "path": "{target}"}),
]


def aimed(arguments: dict[str, Any], target: str) -> dict[str, Any]:
    return {
        k: v.replace("{target}", target) if isinstance(v, str) else v for k, v in arguments.items()
    }


def target_for(tool: str, outside: Path, form: str) -> str:
    """``form`` of the outside path: relative with ``..``, or absolute. ls/glob get the
    directory, the others the file."""
    leaf = "" if tool in ("ls", "glob") else "/secret.txt"
    if form == "relative":
        return f"../outside{leaf}"
    return f"{outside}{leaf}"


def names(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


def assert_refused(result: Any, outside: Path) -> None:
    assert result.is_error
    assert "outside the workspace" in result.content
    assert "top secret" not in result.content
    assert (outside / "secret.txt").read_text() == "top secret\n"


@pytest.mark.parametrize("form", ["relative", "absolute"])
@pytest.mark.parametrize(
    ("tool", "arguments"), EVERY_FILE_TOOL, ids=[t for t, _ in EVERY_FILE_TOOL]
)
async def test_every_file_tool_refuses_paths_outside_the_workspace(
    call_tool: CallTool, outside: Path, tool: str, arguments: dict[str, Any], form: str
) -> None:
    result = await call_tool(tool, **aimed(arguments, target_for(tool, outside, form)))
    assert_refused(result, outside)
    assert names(outside) == ["secret.txt"]


@pytest.mark.parametrize(
    ("tool", "arguments"), EVERY_FILE_TOOL, ids=[t for t, _ in EVERY_FILE_TOOL]
)
async def test_every_file_tool_refuses_a_symlinked_directory_leading_outside(
    call_tool: CallTool, workspace: Path, outside: Path, tool: str, arguments: dict[str, Any]
) -> None:
    (workspace / "escape").symlink_to(outside, target_is_directory=True)
    target = "escape" if tool in ("ls", "glob") else "escape/secret.txt"
    result = await call_tool(tool, **aimed(arguments, target))
    assert_refused(result, outside)
    assert f"resolves to {outside}" in result.content


async def test_a_symlink_to_an_outside_file_is_refused_for_read_write_and_edit(
    call_tool: CallTool, workspace: Path, outside: Path
) -> None:
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    assert_refused(await call_tool("read", path="link.txt"), outside)
    assert_refused(await call_tool("write", path="link.txt", content="x"), outside)
    assert_refused(await call_tool("edit", path="link.txt", old="top", new="x"), outside)


async def test_a_dangling_symlink_to_outside_cannot_create_the_file(
    call_tool: CallTool, workspace: Path, outside: Path
) -> None:
    (workspace / "dangling").symlink_to(outside / "new.txt")
    result = await call_tool("write", path="dangling", content="x")
    assert result.is_error and "outside the workspace" in result.content
    assert not (outside / "new.txt").exists()


async def test_symlinks_and_dotdot_that_stay_inside_are_allowed(
    call_tool: CallTool, workspace: Path
) -> None:
    (workspace / "sub").mkdir()
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "sub" / "link.txt").symlink_to(workspace / "a.txt")
    for path in ["sub/../a.txt", "sub/link.txt", str(workspace / "a.txt"), "./a.txt"]:
        result = await call_tool("read", path=path)
        assert not result.is_error, (path, result.content)
        assert result.content == "     1\talpha"


async def test_tilde_is_the_home_directory(
    call_tool: CallTool, workspace: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "home").mkdir()
    (workspace / "home" / "note.txt").write_text("at home\n")
    monkeypatch.setenv("HOME", str(workspace / "home"))
    assert (await call_tool("read", path="~/note.txt")).content == "     1\tat home"
    monkeypatch.setenv("HOME", str(outside))
    assert_refused(await call_tool("read", path="~/secret.txt"), outside)


async def test_extra_roots_opens_more_directories(
    call_tool: CallTool, workspace: Path, outside: Path, tmp_path: Path
) -> None:
    options = {"extra_roots": [str(outside)]}
    read = await call_tool("read", path=str(outside / "secret.txt"), options=options)
    assert read.content == "     1\ttop secret"
    write = await call_tool("write", path="../outside/new.txt", content="ok\n", options=options)
    assert not write.is_error
    assert write.content.startswith(f"created {outside / 'new.txt'} ")  # shown absolute
    assert (outside / "new.txt").read_text() == "ok\n"
    # only what is listed: a sibling of the extra root stays closed
    (tmp_path / "other").mkdir()
    other = await call_tool("ls", path="../other", options=options)
    assert other.is_error and "outside the workspace" in other.content
    assert str(outside) in other.content  # the message names the allowed roots


async def test_relative_extra_roots_are_taken_from_the_workspace(
    call_tool: CallTool, outside: Path
) -> None:
    result = await call_tool("ls", path=str(outside), options={"extra_roots": ["../outside"]})
    assert result.content == "secret.txt"


@pytest.mark.parametrize("bad", ["../outside", 3, [None]])
async def test_extra_roots_must_be_a_list_of_paths(call_tool: CallTool, bad: object) -> None:
    result = await call_tool("ls", options={"extra_roots": bad})
    assert result.is_error
    assert "extra_roots" in result.content


async def test_an_empty_path_is_refused(call_tool: CallTool) -> None:
    result = await call_tool("read", path="  ")
    assert result.is_error and "path is empty" in result.content


async def test_glob_patterns_cannot_climb_out(call_tool: CallTool, outside: Path) -> None:
    for pattern in ["../outside/*", "/etc/*", "sub/../../outside/*"]:
        result = await call_tool("glob", pattern=pattern)
        assert result.is_error, pattern
        assert "must be relative and stay below path" in result.content


async def test_search_tools_do_not_follow_symlinks_out(
    call_tool: CallTool, workspace: Path, outside: Path
) -> None:
    (workspace / "inside.txt").write_text("secret inside\n")
    (workspace / "leak.txt").symlink_to(outside / "secret.txt")
    (workspace / "leakdir").symlink_to(outside, target_is_directory=True)
    grep = await call_tool("grep", pattern="secret")
    assert grep.content.splitlines()[0] == "inside.txt:1: secret inside"
    assert "top secret" not in grep.content
    assert "1 outside the roots" in grep.content
    glob = await call_tool("glob", pattern="**/*.txt")
    assert glob.content == "inside.txt"


async def test_escapes_are_refused_through_the_loop(
    in_loop: Any, workspace: Path, outside: Path
) -> None:
    (workspace / "link").symlink_to(outside / "secret.txt")
    results = await in_loop(
        ("write#w", {"path": "../outside/new.txt", "content": "x"}),
        ("read#r", {"path": "link"}),
        ("read#ok", {"path": str(outside / "secret.txt")}),
        options={"extra_roots": [str(outside)]},
    )
    by_id = {r["call_id"]: r for r in results}
    assert not by_id["w"]["is_error"]  # allowed by extra_roots
    assert by_id["r"]["is_error"] is False  # the link resolves into an extra root
    assert by_id["ok"]["content"] == "     1\ttop secret"
    results = await in_loop(("read#r", {"path": "link"}), ("ls#l", {"path": ".."}))
    assert [r["is_error"] for r in results] == [True, True]
    assert all("outside the workspace" in r["content"] for r in results)
    assert names(outside) == ["new.txt", "secret.txt"]


@pytest.mark.parametrize("raw", ["la", "lb", "la/x", "./lb/../x"])
def test_a_path_through_a_symlink_loop_is_a_value_error_on_every_python(
    workspace: Path, raw: str
) -> None:
    """``resolve_path`` promises a ValueError for a path through a symlink loop;
    Python 3.13's ``Path.resolve(strict=False)`` returns the looping path instead of
    raising, so the path was given back as if it named a file."""
    (workspace / "la").symlink_to("lb")
    (workspace / "lb").symlink_to("la")
    call = ToolCall(id="c1", name="t", arguments="{}")
    context = ToolContext(SimpleNamespace(options={}), workspace, call)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=f"the path {raw!r} goes through a symlink loop"):
        context.resolve_path(raw)
    with pytest.raises(ValueError, match="symlink loop"):
        Roots(workspace).resolve(str(workspace / raw))
    assert real_path(workspace / raw) is None
    assert real_path(workspace / "missing" / "x") == workspace / "missing" / "x"
