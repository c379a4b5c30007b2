"""The file tools: ``read`` (ranges, caps, binary files), ``write``, ``edit``
(exact match, uniqueness, hints, line endings)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from dsh.builtin_tools import _files
from dsh.messages import ToolResult

CallTool = Callable[..., Awaitable[ToolResult]]


def numbered(*lines: tuple[int, str]) -> str:
    return "\n".join(f"{n:>6}\t{text}" for n, text in lines)


def ten_lines(workspace: Path) -> None:
    (workspace / "ten.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))


# -- read -----------------------------------------------------------------------------------


async def test_read_through_the_loop_numbers_the_lines(in_loop: Any, workspace: Path) -> None:
    (workspace / "a.py").write_text("import os\n\nprint(os.sep)\n")
    [result] = await in_loop(("read", {"path": "a.py"}))
    assert not result["is_error"]
    assert result["content"] == numbered((1, "import os"), (2, ""), (3, "print(os.sep)"))


async def test_read_a_range_says_where_to_continue(call_tool: CallTool, workspace: Path) -> None:
    ten_lines(workspace)
    result = await call_tool("read", path="ten.txt", offset=3, limit=2)
    assert result.content == "\n".join(
        [
            numbered((3, "line 3"), (4, "line 4")),
            "[showing lines 3-4 of 10 in ten.txt; continue with offset=5]",
        ]
    )
    tail = await call_tool("read", path="ten.txt", offset=9)
    assert tail.content.splitlines()[-1] == "[showing lines 9-10 of 10 in ten.txt]"


async def test_read_of_a_whole_file_has_no_note(call_tool: CallTool, workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\r\ntwo")  # CRLF shown without \r; no final newline
    assert (await call_tool("read", path="a.txt")).content == numbered((1, "one"), (2, "two"))


async def test_read_caps_lines(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_files, "MAX_READ_LINES", 3)
    ten_lines(workspace)
    result = await call_tool("read", path="ten.txt", limit=50)
    lines = result.content.splitlines()
    assert lines[:3] == numbered((1, "line 1"), (2, "line 2"), (3, "line 3")).splitlines()
    assert lines[3:] == ["[showing lines 1-3 of 10 in ten.txt; continue with offset=4]"]


async def test_read_caps_bytes_at_a_whole_line(call_tool: CallTool, workspace: Path) -> None:
    (workspace / "big.txt").write_text(("x" * 999 + "\n") * 200)
    result = await call_tool("read", path="big.txt")
    *lines, note = result.content.split("\n")
    assert len(result.content.encode()) <= _files.MAX_READ_BYTES + len(note) + 1
    assert all(line.endswith("x" * 999) for line in lines)
    shown = len(lines)
    assert 40 < shown < 50
    assert note == (
        f"[output cap of {_files.MAX_READ_BYTES} bytes reached; showing lines 1-{shown} of 200"
        f" in big.txt; continue with offset={shown + 1}]"
    )


async def test_read_cuts_long_lines_without_losing_count(
    call_tool: CallTool, workspace: Path
) -> None:
    (workspace / "wide.txt").write_text("a" * 100_000 + "\nshort\n")
    result = await call_tool("read", path="wide.txt")
    first, second = result.content.split("\n")
    limit = _files.MAX_READ_LINE_CHARS
    assert first == f"     1\t{'a' * limit} [... line cut at {limit} characters]"
    assert second == "     2\tshort"


async def test_read_refuses_binary_files(call_tool: CallTool, workspace: Path) -> None:
    (workspace / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(100))
    result = await call_tool("read", path="image.png")
    assert result.is_error
    assert "image.png is a binary file (116 bytes); read shows text only" in result.content


@pytest.mark.parametrize(
    ("setup", "arguments", "message"),
    [
        ("", {"path": "missing.txt"}, "missing.txt does not exist"),
        ("dir", {"path": "dir"}, "dir is a directory, not a file (use ls to list it)"),
        (
            "ten",
            {"path": "ten.txt", "offset": 11},
            "offset 11 is past the end of ten.txt (10 lines)",
        ),
        (
            "ten",
            {"path": "ten.txt", "offset": 0},
            "offset: Input should be greater than or equal to 1",
        ),
        (
            "ten",
            {"path": "ten.txt", "limit": 0},
            "limit: Input should be greater than or equal to 1",
        ),
    ],
)
async def test_read_errors(
    call_tool: CallTool, workspace: Path, setup: str, arguments: dict[str, Any], message: str
) -> None:
    if setup == "dir":
        (workspace / "dir").mkdir()
    elif setup == "ten":
        ten_lines(workspace)
    result = await call_tool("read", **arguments)
    assert result.is_error
    assert message in result.content


async def test_read_of_an_empty_file_says_so(call_tool: CallTool, workspace: Path) -> None:
    (workspace / "empty").touch()
    result = await call_tool("read", path="empty")
    assert (result.is_error, result.content) == (False, "(empty is empty)")


# -- write ----------------------------------------------------------------------------------


async def test_write_through_the_loop_creates_parents(in_loop: Any, workspace: Path) -> None:
    [result] = await in_loop(("write", {"path": "src/pkg/mod.py", "content": "x = 1\ny = 2\n"}))
    assert result == {
        "call_id": "call-0",
        "name": "write",
        "content": "created src/pkg/mod.py (2 lines, 12 bytes)",
        "is_error": False,
    }
    assert (workspace / "src/pkg/mod.py").read_text() == "x = 1\ny = 2\n"


async def test_write_overwrites_byte_for_byte(call_tool: CallTool, workspace: Path) -> None:
    (workspace / "a.txt").write_text("old content that is longer\n")
    result = await call_tool("write", path="a.txt", content="né\r\nb")
    assert result.content == "overwrote a.txt (2 lines, 6 bytes)"
    assert (workspace / "a.txt").read_bytes() == "né\r\nb".encode()


async def test_write_refuses_a_directory(call_tool: CallTool, workspace: Path) -> None:
    (workspace / "dir").mkdir()
    result = await call_tool("write", path="dir", content="x")
    assert result.is_error and "dir is a directory" in result.content
    assert (workspace / "dir").is_dir()


# -- edit -----------------------------------------------------------------------------------

SOURCE = "def f():\n    return 1\n\n\ndef g():\n    return 1\n"


async def test_edit_through_the_loop_replaces_a_unique_match(in_loop: Any, workspace: Path) -> None:
    (workspace / "m.py").write_text(SOURCE)
    [result] = await in_loop(
        ("edit", {"path": "m.py", "old": "def g():\n    return 1", "new": "def g():\n    return 2"})
    )
    assert result["content"] == "edited m.py: replaced 1 occurrence (line 5)"
    assert (
        workspace / "m.py"
    ).read_text() == "def f():\n    return 1\n\n\ndef g():\n    return 2\n"


async def test_edit_with_several_matches_says_how_many_and_changes_nothing(
    call_tool: CallTool, workspace: Path
) -> None:
    (workspace / "m.py").write_text(SOURCE)
    result = await call_tool("edit", path="m.py", old="return 1", new="return 2")
    assert result.is_error
    assert "old matches 2 times in m.py (lines 2, 6)" in result.content
    assert "add surrounding lines" in result.content and "replace_all=true" in result.content
    assert (workspace / "m.py").read_text() == SOURCE


async def test_edit_replace_all(call_tool: CallTool, workspace: Path) -> None:
    (workspace / "m.py").write_text(SOURCE)
    result = await call_tool("edit", path="m.py", old="return 1", new="return 2", replace_all=True)
    assert result.content == "edited m.py: replaced 2 occurrences"
    assert (workspace / "m.py").read_text() == SOURCE.replace("return 1", "return 2")


async def test_edit_counts_overlapping_matches_as_ambiguous(
    call_tool: CallTool, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("aaa")
    result = await call_tool("edit", path="a.txt", old="aa", new="b")
    assert result.is_error
    assert "old matches 1 time in a.txt (line 1), and overlaps itself (2 matches" in result.content


@pytest.mark.parametrize(
    ("old", "hint"),
    [
        ("def g():\n  return 1", "it matches if whitespace is ignored"),
        ("def g():\n    return 3", "its first line occurs at line 5, the lines after it differ"),
        ("nothing like it", "read the file and copy the exact text"),
    ],
)
async def test_edit_without_a_match_gives_a_hint(
    call_tool: CallTool, workspace: Path, old: str, hint: str
) -> None:
    (workspace / "m.py").write_text(SOURCE)
    result = await call_tool("edit", path="m.py", old=old, new="x")
    assert result.is_error
    assert "old was not found in m.py" in result.content
    assert hint in result.content
    assert (workspace / "m.py").read_text() == SOURCE


async def test_edit_keeps_crlf_line_endings(call_tool: CallTool, workspace: Path) -> None:
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = await call_tool("edit", path="w.txt", old="one\ntwo", new="1\n2")
    assert not result.is_error, result.content
    assert (workspace / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


@pytest.mark.parametrize(
    ("data", "arguments", "message"),
    [
        (b"a\0b", {"old": "a", "new": "b"}, "is a binary file"),
        (b"caf\xe9\n", {"old": "caf", "new": "x"}, "is not UTF-8 text"),
        (
            b"abc",
            {"old": "", "new": "x"},
            "old is empty; to create or replace a whole file, use write",
        ),
        (b"abc", {"old": "b", "new": "b"}, "old and new are the same"),
    ],
)
async def test_edit_refuses(
    call_tool: CallTool, workspace: Path, data: bytes, arguments: dict[str, Any], message: str
) -> None:
    (workspace / "f").write_bytes(data)
    result = await call_tool("edit", path="f", **arguments)
    assert result.is_error and message in result.content
    assert (workspace / "f").read_bytes() == data


async def test_edit_of_a_missing_file_is_an_error(call_tool: CallTool) -> None:
    result = await call_tool("edit", path="nope.py", old="a", new="b")
    assert result.is_error and "nope.py does not exist" in result.content


async def test_edit_of_a_crlf_file_gives_new_lines_crlf_endings(
    call_tool: CallTool, workspace: Path
) -> None:
    (workspace / "w.txt").write_bytes(b"a = 1\r\nb = 2\r\n")
    result = await call_tool("edit", path="w.txt", old="a = 1", new="a = 1\nc = 3\r\nd = 4")
    assert not result.is_error, result.content
    assert (workspace / "w.txt").read_bytes() == b"a = 1\r\nc = 3\r\nd = 4\r\nb = 2\r\n"
