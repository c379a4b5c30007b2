"""``read`` and ``edit`` of big files and of files that are not UTF-8. ``read`` with
``limit=3`` read every line of the file to count them (a 530 MB file took 26 s, and an
aborted read kept its thread scanning); ``edit`` read a whole file (1 GiB) into memory
before its binary check; ``read`` showed bytes that are not UTF-8 as U+FFFD without a
word, and ``edit`` told the model to ``write`` such a file, which would lose them."""

from __future__ import annotations

import io
import threading
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.to_thread
import pytest

from dsh.builtin_tools import _files, _text
from dsh.messages import ToolResult
from dsh.tools import ToolError

CallTool = Callable[..., Awaitable[ToolResult]]


def numbered(*lines: tuple[int, str]) -> str:
    return "\n".join(f"{n:>6}\t{text}" for n, text in lines)


# -- read: counting the lines after those shown -----------------------------------------


@pytest.mark.parametrize(
    ("data", "lines"),
    [(b"", 0), (b"a", 1), (b"a\n", 1), (b"a\nb", 2), (b"\n\n\n", 3), (b"x\n" * 1000, 1000)],
)
def test_the_lines_after_a_point_are_counted_in_chunks(data: bytes, lines: int) -> None:
    stop = threading.Event()
    assert _text.count_lines(io.BytesIO(data), stop, most=10_000, chunk=7) == (lines, True)


def test_counting_stops_at_its_byte_limit_saying_so() -> None:
    counted, whole = _text.count_lines(io.BytesIO(b"x\n" * 1000), threading.Event(), most=100)
    assert not whole
    assert 50 <= counted < 1000


def test_counting_stops_when_told_to() -> None:
    stop = threading.Event()
    stop.set()
    file = io.BytesIO(b"x\n" * 1000)
    with pytest.raises(ToolError, match="stopped"):
        _text.count_lines(file, stop, most=10_000, chunk=10)
    assert file.tell() <= 10


async def test_read_of_a_few_lines_of_a_big_file_says_at_least_how_many(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_files, "MAX_COUNT_BYTES", 1000)
    data = b"".join(b"line %d\n" % n for n in range(1, 10_001))
    (workspace / "big.txt").write_bytes(data)
    result = await call_tool("read", path="big.txt", limit=3)
    *lines, note = result.content.split("\n")
    assert lines == numbered((1, "line 1"), (2, "line 2"), (3, "line 3")).split("\n")
    assert note.startswith("[showing lines 1-3 of at least ")
    assert note.endswith(f" lines ({len(data)} bytes) in big.txt; continue with offset=4]")
    counted = int(note.split()[6])
    assert 100 < counted < 10_000


async def test_read_counts_every_line_of_a_file_within_the_limit(
    call_tool: CallTool, workspace: Path
) -> None:
    (workspace / "f.txt").write_bytes(b"a\n" * 5000 + b"end")
    result = await call_tool("read", path="f.txt", offset=2, limit=2)
    assert result.content.split("\n")[-1] == (
        "[showing lines 2-3 of 5001 in f.txt; continue with offset=4]"
    )


async def test_an_aborted_read_tells_its_thread_to_stop(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The thread is abandoned on abort; it is told so (the event its scan checks)."""
    started, told = threading.Event(), threading.Event()

    def scanning(target: Path, shown: str, offset: int, limit: int, stop: Any) -> str:
        started.set()
        if stop.wait(30):  # a safety net, not a timing: the abort sets it at once
            told.set()
        return ""

    monkeypatch.setattr(_files, "_read", scanning)
    (workspace / "f.txt").write_text("a\n")
    async with anyio.create_task_group() as group:
        group.start_soon(partial(call_tool, "read", path="f.txt"))
        await anyio.to_thread.run_sync(started.wait, 30)
        group.cancel_scope.cancel()
    assert await anyio.to_thread.run_sync(told.wait, 30)


@pytest.mark.parametrize(
    ("data", "count", "skipped", "at"),
    [
        (b"a\nb\nc\n", 2, 2, 4),
        (b"a\nb\nc", 5, 2, 4),  # the file ends: at its last line, which has no \n
        (b"a\nb\n", 0, 0, 0),
        (b"\n" * 50 + b"x", 30, 30, 30),
    ],
)
def test_lines_before_an_offset_are_skipped_in_chunks(
    data: bytes, count: int, skipped: int, at: int
) -> None:
    file = io.BufferedReader(io.BytesIO(data))  # type: ignore[arg-type]
    assert _text.skip_lines(file, count, threading.Event(), chunk=3) == skipped
    assert file.tell() == at


async def test_read_from_a_far_offset_skips_to_it(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lines before ``offset`` were read one by one (``readline``)."""
    (workspace / "f.txt").write_bytes(b"".join(b"%d\n" % n for n in range(1, 3001)))
    lines = _files._lines
    read: list[bytes] = []

    def counted(file: IO[bytes], keep: int) -> Iterator[tuple[bytes, bool]]:
        for line in lines(file, keep):
            read.append(line[0])
            yield line

    monkeypatch.setattr(_files, "_lines", counted)
    result = await call_tool("read", path="f.txt", offset=2999)
    assert result.content == numbered((2999, "2999"), (3000, "3000")) + (
        "\n[showing lines 2999-3000 of 3000 in f.txt]"
    )
    assert read == [b"2999", b"3000"]
    past = await call_tool("read", path="f.txt", offset=3001)
    assert past.content == "tool 'read' failed: offset 3001 is past the end of f.txt (3000 lines)"
    assert read == [b"2999", b"3000"]


# -- edit: a size limit, and the binary check first -------------------------------------


async def test_edit_refuses_a_file_over_its_size_limit(
    call_tool: CallTool, workspace: Path
) -> None:
    big = workspace / "big.txt"
    with big.open("wb") as file:  # sparse: no disk used
        file.write(b"old\n" + b"text\n" * 2000)  # no NUL in the first 8 KiB
        file.truncate(_files.MAX_EDIT_BYTES + 1)
    result = await call_tool("edit", path="big.txt", old="old", new="new")
    assert (result.is_error, result.content) == (
        True,
        f"tool 'edit' failed: big.txt is {_files.MAX_EDIT_BYTES + 1} bytes, more than edit "
        f"changes ({_files.MAX_EDIT_BYTES} bytes); change it with bash (sed, for one)",
    )
    assert big.read_bytes()[:4] == b"old\n"


async def test_edit_reads_only_the_first_bytes_of_a_binary_file(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "f.dat").write_bytes(b"\0" + b"x" * 100_000)
    read: list[int] = []
    opened = _files.open_regular

    class Counting(io.RawIOBase):
        def __init__(self, file: IO[bytes]) -> None:
            self.file = file

        def read(self, size: int = -1) -> bytes:
            data = self.file.read(size)
            read.append(len(data))
            return data

    def counting(target: Path, shown: str) -> Any:
        context = opened(target, shown)

        class Wrapped:
            def __enter__(self) -> Counting:
                return Counting(context.__enter__())

            def __exit__(self, *exc: object) -> None:
                context.__exit__(*exc)

        return Wrapped()

    monkeypatch.setattr(_files, "open_regular", counting)
    result = await call_tool("edit", path="f.dat", old="x", new="y")
    assert (
        result.content == "tool 'edit' failed: f.dat is a binary file; edit changes text files only"
    )
    assert sum(read) <= _text.SNIFF_BYTES


# -- bytes that are not UTF-8 -------------------------------------------------------------


async def test_read_says_how_many_bytes_are_not_utf8(call_tool: CallTool, workspace: Path) -> None:
    (workspace / "f.txt").write_bytes(b"caf\xe9\n\xff\xfeok\n\xef\xbf\xbd real\n")
    result = await call_tool("read", path="f.txt")
    assert result.content == "\n".join(
        [
            numbered((1, "caf\ufffd"), (2, "\ufffd\ufffdok"), (3, "\ufffd real")),
            "[3 bytes that are not UTF-8 are shown as U+FFFD]",
        ]
    )
    result = await call_tool("read", path="f.txt", limit=1)
    assert result.content.split("\n")[1:] == [
        "[showing lines 1-1 of 3 in f.txt; continue with offset=2]",
        "[1 byte that is not UTF-8 is shown as U+FFFD]",
    ]


async def test_a_long_utf8_line_cut_mid_character_is_not_called_not_utf8(
    call_tool: CallTool, workspace: Path
) -> None:
    (workspace / "f.txt").write_text("é" * 5000 + "\n", encoding="utf-8")
    result = await call_tool("read", path="f.txt")
    assert "not UTF-8" not in result.content
    assert "line cut at 2000 characters" in result.content


async def test_edit_of_a_file_that_is_not_utf8_points_to_bash_not_write(
    call_tool: CallTool, workspace: Path
) -> None:
    (workspace / "f").write_bytes(b"caf\xe9\n")
    result = await call_tool("edit", path="f", old="caf", new="x")
    assert (result.is_error, result.content) == (
        True,
        "tool 'edit' failed: f is not UTF-8 text (invalid continuation byte at byte 3); "
        "edit changes UTF-8 text only, and write would lose the bytes that are not UTF-8 "
        "(read shows them as U+FFFD): change it with bash (sed, or iconv to convert it to "
        "UTF-8)",
    )
    assert (workspace / "f").read_bytes() == b"caf\xe9\n"
