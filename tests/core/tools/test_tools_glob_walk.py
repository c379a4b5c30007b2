"""How ``glob`` (and ``grep``'s ``glob=``) walk the tree: each path listed once
whatever the pattern, a name without wildcards looked up rather than listed, an
abandoned walk stopped, symlinked directories as bash's ``globstar`` treats them and
never entered out of the roots. Counts, never times."""

from __future__ import annotations

import os
import threading
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import pytest

from dsh.messages import ToolResult

CallTool = Callable[..., Awaitable[ToolResult]]
DEPTH = 10


def chain(root: Path) -> Path:
    """``root/d0/d1/.../d9/x``; the deepest directory."""
    deepest = root.joinpath(*(f"d{n}" for n in range(DEPTH)))
    deepest.mkdir(parents=True)
    (deepest / "x").write_text("x\n")
    return deepest


def outside_of(workspace: Path, paths: list[str]) -> list[str]:
    """Those of ``paths`` that really are outside ``workspace``."""
    return [p for p in paths if not Path(p).resolve().is_relative_to(workspace)]


@pytest.fixture
def listed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The directories ``os.scandir`` lists, in order (pathlib's glob uses it too)."""
    calls: list[str] = []
    real = os.scandir

    def scandir(path: Any = ".") -> Iterator[os.DirEntry[str]]:
        calls.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    return calls


@pytest.mark.parametrize("name", ["glob", "grep"])
async def test_repeated_double_stars_list_each_directory_once(
    call_tool: CallTool, workspace: Path, listed: list[str], name: str
) -> None:
    deepest = chain(workspace)
    pattern = "**/**/**/**/x"  # pathlib's glob (3.11) listed the chain 1,000 times
    arguments = {"pattern": pattern} if name == "glob" else {"pattern": "x", "glob": pattern}
    result = await call_tool(name, **arguments)
    shown = deepest.relative_to(workspace).as_posix() + "/x"
    assert result.content == (shown if name == "glob" else f"{shown}:1: x")
    assert len(listed) == len(set(listed)) <= DEPTH + 1


async def test_double_stars_in_a_row_mean_one(call_tool: CallTool, workspace: Path) -> None:
    chain(workspace)
    (workspace / "x").write_text("")
    one = (await call_tool("glob", pattern="**/x")).content
    assert (await call_tool("glob", pattern="**/**/./**/x")).content == one
    assert one.splitlines()[0] == "d0/d1/d2/d3/d4/d5/d6/d7/d8/d9/x"
    assert one.splitlines()[1] == "x"
    assert (await call_tool("glob", pattern="d0/**/**")).content.count("\n") == DEPTH - 1


async def test_an_abandoned_glob_stops_at_its_next_directory(
    call_tool: CallTool, workspace: Path, listed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    chain(workspace)
    first = threading.Event()
    go_on = threading.Event()
    stopped = threading.Event()
    real_check = anyio.from_thread.check_cancelled
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Iterator[os.DirEntry[str]]:
        first.set()
        go_on.wait(30)
        return real_scandir(path)

    def check_cancelled() -> None:
        try:
            real_check()
        except BaseException:
            stopped.set()
            raise

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(anyio.from_thread, "check_cancelled", check_cancelled)
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as group:
            group.start_soon(partial(call_tool, "glob", pattern="**/**/**/**/**/**/x"))
            assert await anyio.to_thread.run_sync(first.wait, 30)
            scope.cancel()  # the abort: the worker thread is abandoned
    go_on.set()
    assert await anyio.to_thread.run_sync(stopped.wait, 30)  # bounds a hang; no timing
    assert listed == [str(workspace)]  # the walk stopped before listing d0


async def test_a_symlinked_directory_is_entered_by_a_named_part_never_by_double_star(
    call_tool: CallTool, workspace: Path
) -> None:
    (workspace / "real").mkdir()
    (workspace / "real" / "a.py").write_text("x\n")
    (workspace / "link").symlink_to("real")
    glob = {
        pattern: (await call_tool("glob", pattern=pattern)).content
        for pattern in ["*/a.py", "link/*", "**/a.py", "**/*", "*"]
    }
    assert glob == {
        "*/a.py": "link/a.py\nreal/a.py",
        "link/*": "link/a.py",
        "**/a.py": "real/a.py",
        "**/*": "link/\nreal/\nreal/a.py",
        "*": "link/\nreal/",
    }
    grep = await call_tool("grep", pattern="x", glob="*/a.py")
    assert grep.content == "link/a.py:1: x\nreal/a.py:1: x"
    assert (await call_tool("grep", pattern="x")).content == "real/a.py:1: x"


@pytest.mark.parametrize(
    ("name", "pattern"),
    [("grep", "*/*.txt"), ("grep", "*/**/*.txt"), ("glob", "*/*.txt"), ("glob", "*/*/*")],
)
async def test_a_symlinked_directory_out_of_the_roots_is_never_entered(
    call_tool: CallTool,
    workspace: Path,
    outside: Path,
    listed: list[str],
    name: str,
    pattern: str,
) -> None:
    """Nothing below it is listed (a link to / walked the disk) nor counted: grep said
    '[files skipped: 1 outside the roots]', telling what is there."""
    (workspace / "out").symlink_to(outside)
    (workspace / "up").symlink_to(workspace.parent)  # holds the workspace: and loops in
    (workspace / "in").mkdir()
    (workspace / "in" / "a.txt").write_text("secret\n")
    arguments = {"pattern": pattern} if name == "glob" else {"pattern": "secret", "glob": pattern}
    result = await call_tool(name, **arguments)
    shown = {"grep": "in/a.txt:1: secret", "glob": "in/a.txt"}[name]
    if pattern == "*/*/*":  # up/workspace/in/ was listed: a name outside the roots
        shown = "no paths match '*/*/*' in ."
    assert result.content == shown
    assert outside_of(workspace, listed) == []
    assert not any(p.startswith((str(workspace / "out"), str(workspace / "up"))) for p in listed)


@pytest.fixture
def resolved(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The paths grep resolves to check that they are in the roots."""
    from dsh.builtin_tools import _paths, _search

    calls: list[Path] = []

    def real_path(path: Path) -> Path | None:
        calls.append(path)
        return _paths.real_path(path)

    monkeypatch.setattr(_search, "real_path", real_path)
    return calls


@pytest.mark.parametrize("glob", [None, "*.py", "*/**/*.py"])
async def test_grep_resolves_each_directory_once_not_each_file(
    call_tool: CallTool, workspace: Path, resolved: list[Path], glob: str | None
) -> None:
    """Each directory a file is read in is checked to be in the roots (another process
    may have swapped it for a link since the walk checked it): once, not per file."""
    for n in range(3):
        (workspace / "src" / f"d{n}").mkdir(parents=True)
        for m in range(4):
            (workspace / "src" / f"d{n}" / f"a{m}.py").write_text("x\n")
    (workspace / "link").symlink_to("src/d0")
    arguments = {"glob": glob} if glob else {}
    result = await call_tool("grep", pattern="x", **arguments)
    shown = [f"src/d{n}/a{m}.py:1: x" for n in range(3) for m in range(4)]
    if glob == "*/**/*.py":
        shown[:0] = [f"link/a{m}.py:1: x" for m in range(4)]
    assert result.content.splitlines() == shown
    directories = [workspace / "src" / f"d{n}" for n in range(3)]
    if glob == "*/**/*.py":
        directories.insert(0, workspace / "link")
    assert resolved == directories


@pytest.mark.parametrize(
    ("pattern", "found", "lists"),
    [
        ("a/b/known.txt", "a/b/known.txt", []),
        ("*/known.txt", "a/known.txt", ["."]),
        ("a/*/known.txt", "a/b/known.txt", ["a"]),
        ("a/dangling", "a/dangling", []),
        ("a/to_b/known.txt", "a/to_b/known.txt", []),
        ("a/b/", "a/b/", []),
        ("a/known.txt/", "no paths match", []),
    ],
)
async def test_a_name_without_wildcards_is_looked_up_not_listed(
    call_tool: CallTool,
    workspace: Path,
    listed: list[str],
    pattern: str,
    found: str,
    lists: list[str],
) -> None:
    """pathlib stat'ed such a part; listing each directory it may be in cost one listing
    per candidate (twice pathlib's for '*/*/.../*/known.txt' through two self-links)."""
    (workspace / "a" / "b").mkdir(parents=True)
    (workspace / "a" / "known.txt").write_text("k\n")
    (workspace / "a" / "b" / "known.txt").write_text("k\n")
    (workspace / "a" / "dangling").symlink_to("nowhere")
    (workspace / "a" / "to_b").symlink_to("b")
    result = await call_tool("glob", pattern=pattern)
    assert result.content.startswith(found), result.content
    assert listed == [str(workspace / d) if d != "." else str(workspace) for d in lists]


@pytest.mark.parametrize(("name", "glob"), [("glob", "x\ud800"), ("grep", "d/x\ud800")])
async def test_a_lone_surrogate_in_a_name_without_wildcards_matches_nothing(
    call_tool: CallTool, workspace: Path, name: str, glob: str
) -> None:
    """The name is looked up, and os.lstat cannot encode it: UnicodeEncodeError."""
    (workspace / "d").mkdir()
    arguments = {"pattern": glob} if name == "glob" else {"pattern": "x", "glob": glob}
    result = await call_tool(name, **arguments)
    assert not result.is_error, result.content
    assert result.content.startswith(("no paths match", "no matches")), result.content


async def test_grep_glob_ending_in_double_star_searches_every_file_below(
    call_tool: CallTool, workspace: Path
) -> None:
    """A last '**' matches directories only (pathlib's rule, which glob keeps): grep's
    glob='src/**' found no file at all."""
    (workspace / "src" / "sub").mkdir(parents=True)
    (workspace / "src" / "a.py").write_text("x\n")
    (workspace / "src" / "sub" / "b.py").write_text("x\n")
    (workspace / "c.py").write_text("x\n")
    for glob in ("src/**", "src/**/**", "{src,none}/**"):
        result = await call_tool("grep", pattern="x", glob=glob)
        assert result.content == "src/a.py:1: x\nsrc/sub/b.py:1: x", glob
    assert (await call_tool("glob", pattern="src/**")).content == "src/\nsrc/sub/"
