"""The finding tools and ``bash`` at their edges: caps at exactly their size, ``glob``
and ``grep`` filters, what ``grep`` skips and says, line numbers that agree with
``read``; and for ``bash``: a real bash, an empty stdin, a grace for SIGTERM, a prompt
return, and no hang on a process that left the group."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest
import regex

from dsh.builtin_tools import _bash, _search
from dsh.messages import ToolResult

CallTool = Callable[..., Awaitable[ToolResult]]
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX")
LIMIT = 10  # seconds any single wait in these tests may take


def tree(root: Path, files: dict[str, str]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


# -- ls and glob ----------------------------------------------------------------------------


async def test_ls_and_glob_at_exactly_their_cap_add_no_note(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_search, "MAX_LS_ENTRIES", 3)
    monkeypatch.setattr(_search, "MAX_GLOB_RESULTS", 3)
    tree(workspace, {f"f{n}.txt": "" for n in range(3)})
    assert (await call_tool("ls")).content == "f0.txt\nf1.txt\nf2.txt"
    assert (await call_tool("glob", pattern="*.txt")).content == "f0.txt\nf1.txt\nf2.txt"


@pytest.mark.parametrize(
    ("path", "message"),
    [("nope", "nope does not exist"), ("a.txt", "a.txt is a file, not a directory (use read)")],
)
async def test_glob_needs_an_existing_directory(
    call_tool: CallTool, workspace: Path, path: str, message: str
) -> None:
    tree(workspace, {"a.txt": "x"})
    result = await call_tool("glob", pattern="*", path=path)
    assert result.is_error and message in result.content


@pytest.mark.parametrize("pattern", ["~/*", "~root/*"])
async def test_glob_patterns_cannot_start_at_home(call_tool: CallTool, pattern: str) -> None:
    result = await call_tool("glob", pattern=pattern)
    assert result.is_error and "must be relative and stay below path" in result.content


# -- grep: what it searches -----------------------------------------------------------------

PROJECT = {
    "src/app.py": "def main():\n    pass\n",
    "src/util/helpers.py": "def todo():\n    pass\n",
    "helpers.txt": "def other():\n",
}


@pytest.mark.parametrize("glob", ["helpers.py", "src/**/helpers.py", "he*.py"])
async def test_grep_glob_finds_files_at_any_depth(
    call_tool: CallTool, workspace: Path, glob: str
) -> None:
    tree(workspace, PROJECT)
    result = await call_tool("grep", pattern="def", glob=glob)
    assert result.content == "src/util/helpers.py:1: def todo():"


async def test_grep_skips_git_directories(call_tool: CallTool, workspace: Path) -> None:
    tree(workspace, {".git/config": "needle\n", "sub/.git/HEAD": "needle\n", "a.txt": "needle\n"})
    assert (await call_tool("grep", pattern="needle")).content == "a.txt:1: needle"


async def test_grep_lists_files_in_sorted_order_across_directories(
    call_tool: CallTool, workspace: Path
) -> None:
    names = ["m", "b", "x", "a", "q", "c", "z", "k"]
    tree(workspace, {f"{d}/{f}.txt": "hit\n" for d in names for f in reversed(names)})
    result = await call_tool("grep", pattern="hit")
    expected = [f"{d}/{f}.txt:1: hit" for d in sorted(names) for f in sorted(names)]
    assert result.content.splitlines() == expected


async def test_grep_follows_symlinks_that_stay_inside(call_tool: CallTool, workspace: Path) -> None:
    tree(workspace, {"a.txt": "needle\n"})
    (workspace / "alias.txt").symlink_to(workspace / "a.txt")
    result = await call_tool("grep", pattern="needle")
    assert result.content == "a.txt:1: needle\nalias.txt:1: needle"


async def test_grep_counts_unreadable_files(call_tool: CallTool, workspace: Path) -> None:
    tree(workspace, {"a.txt": "needle\n"})
    (workspace / "gone.txt").symlink_to(workspace / "missing.txt")  # dangling, inside
    result = await call_tool("grep", pattern="needle")
    assert (result.is_error, result.content) == (
        False,
        "a.txt:1: needle\n[files skipped: 1 unreadable]",
    )


async def test_grep_searches_a_file_of_exactly_the_size_limit(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_search, "MAX_GREP_FILE_BYTES", 10)
    tree(workspace, {"fits.txt": "needle 123", "over.txt": "needle 1234"})
    result = await call_tool("grep", pattern="needle")
    assert result.content == "fits.txt:1: needle 123\n[files skipped: 1 too large]"


@pytest.mark.parametrize("separator", ["\x0c", "\x1c", "\u2028", "\r", "\x85"])
async def test_grep_line_numbers_agree_with_read(
    call_tool: CallTool, workspace: Path, separator: str
) -> None:
    # only \n ends a line, for read and grep alike
    (workspace / "s.txt").write_bytes(f"a{separator}b\nneedle\n".encode())
    grep = await call_tool("grep", pattern="needle")
    assert grep.content == "s.txt:2: needle"
    read = await call_tool("read", path="s.txt")
    assert read.content.split("\n")[1] == "     2\tneedle"


async def test_grep_matches_crlf_lines_without_their_carriage_return(
    call_tool: CallTool, workspace: Path
) -> None:
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    result = await call_tool("grep", pattern=r"^(one|two)$")
    assert result.content == "w.txt:1: one\nw.txt:2: two"


# -- grep: what it says ---------------------------------------------------------------------


async def test_grep_finding_nothing_names_the_path_and_what_was_skipped(
    call_tool: CallTool, workspace: Path
) -> None:
    tree(workspace, {"a.txt": "hay\n"})
    (workspace / "b.bin").write_bytes(b"zebra\0")
    result = await call_tool("grep", pattern="zebra")
    assert (result.is_error, result.content) == (
        False,
        "no matches for 'zebra' in .\n[files skipped: 1 binary]",
    )


async def test_grep_says_where_a_bad_pattern_breaks(call_tool: CallTool) -> None:
    with pytest.raises(regex.error) as caught:  # grep's engine (the `regex` module)
        regex.compile("a(b")
    result = await call_tool("grep", pattern="a(b")
    assert result.is_error
    assert f"'a(b' is not a valid Python regular expression: {caught.value}" in result.content
    assert "missing ) at position 3" in result.content


@pytest.mark.parametrize("cap", [52, 62])
async def test_grep_shows_each_line_with_its_newline_within_the_character_cap(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch, cap: int
) -> None:
    # "a.txt:N: hit" is 12 characters, 13 with its newline: 4 lines fit in 52 and 62
    monkeypatch.setattr(_search, "MAX_GREP_CHARS", cap)
    tree(workspace, {"a.txt": "hit\n" * 9})
    *lines, note = (await call_tool("grep", pattern="hit")).content.split("\n")
    assert lines == [f"a.txt:{n}: hit" for n in range(1, 5)]
    assert len("\n".join(lines)) <= cap
    assert note == "[showing 4 of 9 matching lines; narrow the pattern, path or glob]"


async def test_grep_stops_at_the_character_cap_without_skipping_lines(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_search, "MAX_GREP_CHARS", 60)
    tree(workspace, {"a.txt": "hit one\nhit two\nhit " + "x" * 200 + "\nhit\nhit\nhit\n"})
    result = await call_tool("grep", pattern="hit")
    assert result.content.splitlines() == [
        "a.txt:1: hit one",
        "a.txt:2: hit two",
        "[showing 2 of 6 matching lines; narrow the pattern, path or glob]",
    ]


# -- bash -----------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
async def test_bash_runs_commands_with_bash(call_tool: CallTool) -> None:
    result = await call_tool("bash", command="[[ -n $BASH_VERSION ]] && echo bash")
    assert result.content == "bash\n[exit code 0]"


@posix_only
async def test_bash_never_reads_the_harness_stdin(call_tool: CallTool) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, b"typed for the harness\n")
    os.close(write_end)
    saved = os.dup(0)
    os.dup2(read_end, 0)
    try:
        result = await call_tool("bash", command='read line; echo "got [$line]"')
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(read_end)
    assert result.content == "got []\n[exit code 0]"


@posix_only
async def test_bash_gives_left_over_jobs_a_grace_to_clean_up(call_tool: CallTool) -> None:
    """The group gets SIGTERM first: a job that traps it finishes its cleanup (and its
    output is kept) when that takes less than the grace."""
    job = (
        "(trap 'sleep 0.3; echo cleaned up; exit 0' TERM; : > ready; while :; do sleep 0.05; done)"
    )
    command = f"{job} & while [ ! -e ready ]; do sleep 0.01; done; echo started"
    with anyio.fail_after(LIMIT):
        result = await call_tool("bash", command=command)
    lines = result.content.splitlines()  # bash may also report the killed sleep
    assert (lines[0], lines[-2:]) == ("started", ["cleaned up", "[exit code 0]"])


@posix_only
async def test_bash_returns_promptly_when_sigterm_ends_the_group(
    call_tool: CallTool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once SIGTERM has ended the group the call returns, without waiting out the grace:
    the killed jobs may stay zombies for a while (an init that reaps orphans late), and
    zombies do not count."""
    monkeypatch.setattr(_bash, "KILL_GRACE", 25.0)
    started = time.monotonic()
    result = await call_tool("bash", command="sleep 30 & sleep 31 & echo started")
    assert result.content == "started\n[exit code 0]"
    assert time.monotonic() - started < 12.0  # far below the grace it must not wait out


@posix_only
@pytest.mark.skipif(shutil.which("setsid") is None, reason="needs setsid")
async def test_bash_does_not_wait_for_a_process_that_left_the_group(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process in its own session keeps the output pipe open; the call still returns
    (after a short drain) and the process is left alone, as the docs say."""
    monkeypatch.setattr(_bash, "_DRAIN", 0.2)
    escape = "setsid sh -c 'echo $$ > escaped.pid; exec sleep 30' &"
    command = f"{escape} while [ ! -s escaped.pid ]; do sleep 0.01; done; echo started"
    try:
        with anyio.fail_after(LIMIT):
            result = await call_tool("bash", command=command)
        assert result.content == "started\n[exit code 0]"
        pid = int((workspace / "escaped.pid").read_text())
        os.kill(pid, 0)  # still running: it escaped
    finally:
        pid_file = workspace / "escaped.pid"
        if pid_file.exists() and pid_file.read_text().strip():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
