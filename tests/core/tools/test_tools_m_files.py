"""The file tools at their edges: a workspace reached through a symlink, the exact
refusal messages, binary sniffing across the whole first 8 KiB, lines at and beyond
the cut in any script, the byte cap at a whole line, and ``edit``'s hints and counts."""

from __future__ import annotations

import os
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from dsh.builtin_tools._files import MAX_READ_BYTES, MAX_READ_LINE_CHARS
from dsh.builtin_tools._text import SNIFF_BYTES
from dsh.messages import ToolResult

CallTool = Callable[..., Awaitable[ToolResult]]
LIMIT = MAX_READ_LINE_CHARS


def numbered(*lines: tuple[int, str]) -> str:
    return "\n".join(f"{n:>6}\t{text}" for n, text in lines)


def cut(text: str) -> str:
    return f"{text} [... line cut at {LIMIT} characters]"


# -- confinement ----------------------------------------------------------------------------


class TestAWorkspaceReachedThroughASymlink:
    """A workspace given as a symlink is the directory it leads to (paths resolve)."""

    @pytest.fixture
    def workspace(self, tmp_path: Path) -> Path:
        real = tmp_path / "real"
        real.mkdir()
        link = tmp_path / "link"
        link.symlink_to(real, target_is_directory=True)
        return link

    async def test_file_tools_work_inside_it(self, call_tool: CallTool, workspace: Path) -> None:
        written = await call_tool("write", path="a.txt", content="alpha\n")
        assert (written.is_error, written.content) == (False, "created a.txt (1 line, 6 bytes)")
        for path in ["a.txt", str(workspace / "a.txt"), str(workspace.parent / "real" / "a.txt")]:
            assert (await call_tool("read", path=path)).content == numbered((1, "alpha"))
        assert (await call_tool("ls")).content == "a.txt"
        assert (await call_tool("grep", pattern="alp")).content == "a.txt:1: alpha"


async def test_a_refusal_names_the_path_the_workspace_and_the_way_out(
    call_tool: CallTool, workspace: Path, outside: Path
) -> None:
    result = await call_tool("read", path=str(outside / "secret.txt"))
    assert result.content == (
        f"tool 'read' failed: OutsideWorkspaceError: '{outside / 'secret.txt'}' is outside the "
        f"workspace {workspace}; file tools only work inside it (the agent option "
        "'extra_roots' allows more roots)"
    )


async def test_extra_roots_may_be_a_tuple(call_tool: CallTool, outside: Path) -> None:
    result = await call_tool("ls", path=str(outside), options={"extra_roots": (str(outside),)})
    assert (result.is_error, result.content) == (False, "secret.txt")


# a value is named by its kind, as agents.create and dsh.yml name a bad option's
# (dsh._options.core_option_problem): an item was quoted whole (repr), a key given in
# the wrong place or a 1 MB value with it
@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("../outside", "must be a list of paths, not a str"),
        (3, "must be a list of paths, not 3"),
        ({"a": "b"}, "must be a list of paths, not a dict"),
        (["ok", 7], "must be a list of paths, not a list holding an int"),
        (["ok", b"sk-live-SECRET-0123456789"], "not a list holding a bytes"),
        (("ok", {"api_key": "sk-live-SECRET-0123456789"}), "not a tuple holding a dict"),
        (["ok", [b"x" * 1_000_000]], "must be a list of paths, not a list holding a list"),
        ([None], "must be a list of paths, not a list holding None"),  # not "a NoneType"
    ],
)
async def test_a_malformed_extra_roots_says_what_it_got(
    call_tool: CallTool, bad: object, message: str
) -> None:
    result = await call_tool("ls", options={"extra_roots": bad})
    assert result.is_error
    assert "TypeError: the agent option 'extra_roots' " in result.content
    assert message in result.content
    assert "SECRET" not in result.content and len(result.content) < 300


# -- binary files ---------------------------------------------------------------------------


@pytest.mark.parametrize("at", [0, SNIFF_BYTES // 2, SNIFF_BYTES - 1])
async def test_a_nul_anywhere_in_the_first_8_kib_makes_a_file_binary(
    call_tool: CallTool, workspace: Path, at: int
) -> None:
    data = bytearray(b"x" * (SNIFF_BYTES + 10))
    data[at] = 0
    (workspace / "f.dat").write_bytes(data)
    read = await call_tool("read", path="f.dat")
    assert read.is_error and f"f.dat is a binary file ({len(data)} bytes)" in read.content
    edit = await call_tool("edit", path="f.dat", old="xx", new="y", replace_all=True)
    assert edit.is_error and "f.dat is a binary file; edit changes text files only" in edit.content
    grep = await call_tool("grep", pattern="x")
    assert (grep.is_error, grep.content) == (
        False,
        "no matches for 'x' in .\n[files skipped: 1 binary]",
    )
    assert (workspace / "f.dat").read_bytes() == data


# -- read: long lines and the byte cap ------------------------------------------------------


async def test_read_shows_lines_of_exactly_the_limit_whole_in_any_script(
    call_tool: CallTool, workspace: Path
) -> None:
    wide = ["a" * LIMIT, "é" * LIMIT, "€" * LIMIT]  # 1, 2 and 3 bytes a character
    (workspace / "w.txt").write_text("\n".join([*wide, "end"]) + "\n", encoding="utf-8")
    result = await call_tool("read", path="w.txt")
    assert result.content == numbered(*enumerate([*wide, "end"], start=1))


async def test_read_cuts_a_long_line_of_four_byte_characters(
    call_tool: CallTool, workspace: Path
) -> None:
    (workspace / "e.txt").write_text("😀" * (LIMIT + 500) + "\nend\n", encoding="utf-8")
    result = await call_tool("read", path="e.txt")
    assert result.content == numbered((1, cut("😀" * LIMIT)), (2, "end"))


@pytest.mark.parametrize("ending", ["\n", "\r\n", ""])
async def test_read_does_not_call_a_line_of_exactly_the_limit_cut(
    call_tool: CallTool, workspace: Path, ending: str
) -> None:
    # 8000 bytes, or 7999 and the "\r": what one read takes
    line = "😀" * (LIMIT - 1) + "€" if ending == "\r\n" else "😀" * LIMIT
    if ending:
        (workspace / "e.txt").write_bytes(f"{line}{ending}end{ending}".encode())
        result = await call_tool("read", path="e.txt")
        assert result.content == numbered((1, line), (2, "end"))
    else:  # the last line, without an ending
        (workspace / "e.txt").write_bytes(line.encode())
        result = await call_tool("read", path="e.txt")
        assert result.content == numbered((1, line))


@pytest.mark.parametrize(
    "length", [4 * LIMIT - 2, 4 * LIMIT - 1, 4 * LIMIT, 4 * LIMIT + 1, 8 * LIMIT, 8 * LIMIT + 1]
)
async def test_read_counts_the_lines_after_a_long_one(
    call_tool: CallTool, workspace: Path, length: int
) -> None:
    (workspace / "l.txt").write_text("a" * length + "\nnext\nlast\n")
    result = await call_tool("read", path="l.txt")
    assert result.content == numbered((1, cut("a" * LIMIT)), (2, "next"), (3, "last"))


async def test_read_shows_as_many_whole_lines_as_fit_the_byte_cap(
    call_tool: CallTool, workspace: Path
) -> None:
    # 50 lines of exactly 1000 bytes shown ("{n:>6}\t" + 992 + newline), then 50 more
    rows = ["x" * 992] * (MAX_READ_BYTES // 1000) + ["y" * 42]
    (workspace / "c.txt").write_text("\n".join(rows) + "\n")
    result = await call_tool("read", path="c.txt")
    *lines, note = result.content.split("\n")
    fits = MAX_READ_BYTES // 1000
    assert lines == numbered(*enumerate(rows[:fits], start=1)).split("\n")
    assert note == (
        f"[output cap of {MAX_READ_BYTES} bytes reached; showing lines 1-{fits} of {fits + 1}"
        f" in c.txt; continue with offset={fits + 1}]"
    )


async def test_read_stops_at_the_byte_cap_without_skipping_lines(
    call_tool: CallTool, workspace: Path
) -> None:
    # wide lines fill the cap; the short lines after them would still fit, but a read
    # shows a contiguous range, so "continue with offset" loses nothing
    (workspace / "c.txt").write_text(("w" * 999 + "\n") * 60 + "short\n" * 10)
    result = await call_tool("read", path="c.txt")
    *lines, note = result.content.split("\n")
    shown = [int(line.split("\t")[0]) for line in lines]
    assert shown == list(range(1, len(lines) + 1))
    assert note.endswith(
        f"showing lines 1-{len(lines)} of 70 in c.txt; continue with offset={len(lines) + 1}]"
    )


async def test_read_caps_bytes_not_characters(call_tool: CallTool, workspace: Path) -> None:
    (workspace / "u.txt").write_text(("é" * 999 + "\n") * 100, encoding="utf-8")
    result = await call_tool("read", path="u.txt")
    *lines, note = result.content.split("\n")
    assert len("\n".join(lines).encode()) <= MAX_READ_BYTES
    assert note.startswith(f"[output cap of {MAX_READ_BYTES} bytes reached; showing lines 1-")


# -- write and edit -------------------------------------------------------------------------


async def test_write_of_empty_content_counts_no_lines(call_tool: CallTool, workspace: Path) -> None:
    result = await call_tool("write", path="empty.txt", content="")
    assert (result.is_error, result.content) == (False, "created empty.txt (0 lines, 0 bytes)")
    one = await call_tool("write", path="x.txt", content="x")
    assert one.content == "created x.txt (1 line, 1 byte)"
    assert (workspace / "empty.txt").read_bytes() == b""


SOURCE = "def f():\n    return 1\n\n\ndef g():\n    return 1\n"


@pytest.mark.parametrize(
    ("text", "old", "hint"),
    [
        (SOURCE, "\ndef g():\n    return 3", "its first line occurs at line 5, the lines after"),
        ("x = 1\n" * 2, "x = 1\ny = 2", "its first line occurs at line 1, 2, the lines after"),
        ("x = 1\n" * 7, "x = 1\ny = 2", "its first line occurs at line 1, 2, 3, 4, 5 ..., the"),
    ],
)
async def test_edit_hint_finds_the_first_line_that_has_text(
    call_tool: CallTool, workspace: Path, text: str, old: str, hint: str
) -> None:
    (workspace / "m.py").write_text(text)
    result = await call_tool("edit", path="m.py", old=old, new="x")
    assert result.is_error and f"old was not found in m.py; {hint}" in result.content
    assert (workspace / "m.py").read_text() == text


async def test_edit_lists_the_first_ten_lines_of_many_matches(
    call_tool: CallTool, workspace: Path
) -> None:
    (workspace / "m.txt").write_text("same\n" * 12)
    result = await call_tool("edit", path="m.txt", old="same", new="other")
    lines = ", ".join(str(n) for n in range(1, 11))
    assert result.is_error and f"old matches 12 times in m.txt (lines {lines});" in result.content


async def test_edit_replace_all_counts_the_replacements_made(
    call_tool: CallTool, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("aaaaa\naa\n")  # "aa" overlaps 5 times, fits 3 times
    refused = await call_tool("edit", path="a.txt", old="aa", new="b")
    assert refused.content.startswith(
        "tool 'edit' failed: old matches 3 times in a.txt (lines 1, 2), and overlaps itself "
        "(5 matches counting overlaps); "
    )
    result = await call_tool("edit", path="a.txt", old="aa", new="b", replace_all=True)
    assert (workspace / "a.txt").read_text() == "bba\nb\n"
    assert result.content == "edited a.txt: replaced 3 occurrences"


async def test_edit_hint_counts_lines_as_read_and_grep_do(
    call_tool: CallTool, workspace: Path
) -> None:
    (workspace / "m.txt").write_text("a\fb\x1cc\u2028d\r\nx = 1\n")  # one line break: \n
    result = await call_tool("edit", path="m.txt", old="x = 1\ny = 2", new="x")
    assert "its first line occurs at line 2, the lines after it differ" in result.content
    assert (await call_tool("grep", pattern="x = 1")).content == "m.txt:2: x = 1"


async def test_edit_says_why_a_file_is_not_utf8(call_tool: CallTool, workspace: Path) -> None:
    (workspace / "f").write_bytes(b"caf\xe9\n")
    result = await call_tool("edit", path="f", old="caf", new="x")
    assert result.is_error
    assert "f is not UTF-8 text (invalid continuation byte at byte 3); edit" in result.content
    assert "use write" not in result.content  # it would lose the bytes that are not UTF-8


# -- special files --------------------------------------------------------------------------

PIPE = "pipe is a named pipe (FIFO), not a regular file; file tools open regular files only"


@pytest.mark.parametrize(
    ("name", "arguments"),
    [("read", {}), ("edit", {"old": "a", "new": "b"}), ("write", {"content": "x"})],
)
async def test_file_tools_refuse_a_named_pipe_without_waiting_for_a_writer(
    call_tool: CallTool, fifo: Path, name: str, arguments: dict[str, str]
) -> None:
    result = await call_tool(name, path="pipe", **arguments)
    assert (result.is_error, result.content) == (True, f"tool {name!r} failed: {PIPE}")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("name", ["ls", "glob"])
async def test_ls_and_glob_of_a_named_pipe_say_what_it_is(
    call_tool: CallTool, fifo: Path, name: str
) -> None:
    arguments = {"path": "pipe"} if name == "ls" else {"pattern": "*", "path": "pipe"}
    result = await call_tool(name, **arguments)
    assert result.content == (
        f"tool {name!r} failed: pipe is a named pipe (FIFO), not a directory or a regular file"
    )


async def test_read_refuses_a_device(call_tool: CallTool) -> None:
    result = await call_tool("read", path="/dev/null", options={"extra_roots": ["/dev"]})
    assert result.content == (
        "tool 'read' failed: /dev/null is a character device, not a regular file; "
        "file tools open regular files only"
    )
