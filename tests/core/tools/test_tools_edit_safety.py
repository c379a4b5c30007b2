"""``edit`` against a file changed under it, and the line endings of the lines it adds."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from dsh.builtin_tools import _files
from dsh.messages import ToolResult

CallTool = Callable[..., Awaitable[ToolResult]]


async def test_edit_refuses_a_file_changed_since_it_read_it(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = workspace / "n.txt"
    path.write_text("alpha\nbeta\n")
    real = _files.write_file

    def racing(target: Path, shown: str, data: bytes, **keywords: Any) -> None:
        with open(target, "a") as file:  # the user's editor saves a line meanwhile
            file.write("gamma (the user's)\n")
        real(target, shown, data, **keywords)

    monkeypatch.setattr(_files, "write_file", racing)
    result = await call_tool("edit", path="n.txt", old="alpha", new="ALPHA")
    assert result.is_error
    assert "n.txt changed since it was read" in result.content
    assert "read it again" in result.content
    assert path.read_text() == "alpha\nbeta\ngamma (the user's)\n"


@pytest.mark.parametrize(
    ("before", "old", "new", "after"),
    [
        # a \n file with one \r\n (in a string literal): the new lines get \n
        (
            b"x = 1\nS = 'a\r\nb'\nz = 3\n",
            "z = 3\n",
            "z = 3\nw = 4\n",
            b"x = 1\nS = 'a\r\nb'\nz = 3\nw = 4\n",
        ),
        # a \r\n file with one bare \n: the new lines get \r\n
        (b"a\r\nb\r\nc\nd\r\n", "b", "b\nB", b"a\r\nb\r\nB\r\nc\nd\r\n"),
        # old found only once its \n are \r\n: new's too
        (b"p\r\nq\nr\ns\n", "p\nq", "P\nQ", b"P\r\nQ\nr\ns\n"),
    ],
)
async def test_edit_gives_new_lines_the_files_dominant_ending(
    call_tool: CallTool, workspace: Path, before: bytes, old: str, new: str, after: bytes
) -> None:
    (workspace / "m.py").write_bytes(before)
    result = await call_tool("edit", path="m.py", old=old, new=new)
    assert not result.is_error, result.content
    assert (workspace / "m.py").read_bytes() == after
