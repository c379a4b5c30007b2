"""``edit`` and ``write`` change a file in place: the same file (inode) gets the new
content, so its mode, extended attributes and hard links are kept; a failed or refused
call leaves the old content, and a new file is created with the usual mode."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from unprivileged import as_file_modes_say

from dsh.builtin_tools import _files
from dsh.messages import ToolResult

CallTool = Callable[..., Awaitable[ToolResult]]
CHANGES: list[tuple[str, dict[str, str]]] = [
    ("write", {"content": "b\n"}),
    ("edit", {"old": "a", "new": "b"}),
]


async def test_edit_that_cannot_encode_new_leaves_the_file_whole(
    call_tool: CallTool, workspace: Path
) -> None:
    (workspace / "v.txt").write_text("keep me\nline2\n")
    result = await call_tool("edit", path="v.txt", old="line2", new="x\ud800")
    assert (result.is_error, result.content) == (
        True,
        "tool 'edit' failed: new cannot be written as UTF-8: surrogates not allowed "
        "(character 1, '\\ud800'); v.txt is unchanged",
    )
    assert (workspace / "v.txt").read_bytes() == b"keep me\nline2\n"
    assert os.listdir(workspace) == ["v.txt"]


async def test_write_that_cannot_encode_creates_nothing(
    call_tool: CallTool, workspace: Path
) -> None:
    result = await call_tool("write", path="new/dir/f.txt", content="ab\udc80")
    assert result.content == (
        "tool 'write' failed: content cannot be written as UTF-8: surrogates not allowed "
        "(character 2, '\\udc80'); nothing was written"
    )
    assert os.listdir(workspace) == []


async def test_edit_and_write_keep_the_mode_and_go_through_a_symlink(
    call_tool: CallTool, workspace: Path
) -> None:
    real = workspace / "real.sh"
    real.write_text("echo 1\n")
    real.chmod(0o751)
    (workspace / "link.sh").symlink_to("real.sh")
    edited = await call_tool("edit", path="link.sh", old="1", new="2")
    assert edited.content == "edited real.sh: replaced 1 occurrence (line 1)"
    written = await call_tool("write", path="link.sh", content="echo 3\n")
    assert written.content == "overwrote real.sh (1 line, 7 bytes)"
    assert (workspace / "link.sh").is_symlink() and real.read_text() == "echo 3\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o751
    assert sorted(os.listdir(workspace)) == ["link.sh", "real.sh"]


async def test_write_creates_a_file_with_the_usual_mode(
    call_tool: CallTool, workspace: Path
) -> None:
    (workspace / "by-touch").touch()  # 0o666 less the umask
    await call_tool("write", path="by-write", content="x")
    modes = {stat.S_IMODE((workspace / name).stat().st_mode) for name in ["by-touch", "by-write"]}
    assert len(modes) == 1


@pytest.mark.parametrize(("name", "arguments"), CHANGES)
async def test_the_same_file_is_changed_so_hard_links_see_it(
    call_tool: CallTool, workspace: Path, name: str, arguments: dict[str, str]
) -> None:
    (workspace / "f.txt").write_text("a\nlonger old content\n")
    os.link(workspace / "f.txt", workspace / "hard.txt")
    inode = os.stat(workspace / "f.txt").st_ino
    result = await call_tool(name, path="f.txt", **arguments)
    assert not result.is_error, result.content
    assert os.stat(workspace / "f.txt").st_ino == inode
    assert (workspace / "hard.txt").read_text() == (workspace / "f.txt").read_text()
    assert (workspace / "f.txt").read_text().startswith("b\n")
    assert sorted(os.listdir(workspace)) == ["f.txt", "hard.txt"]


@pytest.mark.parametrize(("name", "arguments"), CHANGES)
async def test_extended_attributes_are_kept(
    call_tool: CallTool, workspace: Path, name: str, arguments: dict[str, str]
) -> None:
    (workspace / "x.txt").write_text("a\n")
    try:
        os.setxattr(workspace / "x.txt", "user.dsh-test", b"kept")
    except (AttributeError, OSError):
        pytest.skip("this filesystem (or platform) does not take user.* extended attributes")
    result = await call_tool(name, path="x.txt", **arguments)
    assert not result.is_error, result.content
    assert os.getxattr(workspace / "x.txt", "user.dsh-test") == b"kept"


@pytest.fixture
def file_modes_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    """Root may write any file: the edit and write tools' file work (in a worker thread)
    runs without root's DAC capabilities (tests/unprivileged.py), as any user's would."""
    for name in ("_write", "_edit"):
        real = getattr(_files, name)

        def unprivileged(*args: Any, real: Callable[..., str] = real) -> str:
            with as_file_modes_say():
                return real(*args)

        monkeypatch.setattr(_files, name, unprivileged)


@pytest.mark.usefixtures("file_modes_apply")
@pytest.mark.parametrize(("name", "arguments"), CHANGES)
async def test_a_read_only_file_is_refused(
    call_tool: CallTool, workspace: Path, name: str, arguments: dict[str, str]
) -> None:
    (workspace / "r.txt").write_text("a\n")
    (workspace / "r.txt").chmod(0o444)
    result = await call_tool(name, path="r.txt", **arguments)
    assert result.content == f"tool {name!r} failed: r.txt is not writable (mode 0o444)"
    assert (workspace / "r.txt").read_text() == "a\n"


@pytest.mark.usefixtures("file_modes_apply")
async def test_a_read_only_directory_keeps_its_files_writable_and_takes_no_new_ones(
    call_tool: CallTool, workspace: Path
) -> None:
    (workspace / "d").mkdir()
    (workspace / "d" / "f.txt").write_text("a\n")
    (workspace / "d").chmod(0o555)
    try:
        edited = await call_tool("edit", path="d/f.txt", old="a", new="b")
        assert edited.content == "edited d/f.txt: replaced 1 occurrence (line 1)"
        assert (workspace / "d" / "f.txt").read_text() == "b\n"
        created = await call_tool("write", path="d/g.txt", content="x")
        assert created.content == (
            "tool 'write' failed: d/g.txt cannot be created: its directory is not writable"
        )
        below = await call_tool("write", path="d/sub/h.txt", content="x")
        assert below.content == (
            "tool 'write' failed: d/sub/h.txt cannot be created: d may not be written "
            "(permission denied), so d/sub cannot be made"
        )
        assert os.listdir(workspace / "d") == ["f.txt"]
    finally:
        (workspace / "d").chmod(0o755)


def _fail_on(monkeypatch: pytest.MonkeyPatch, target: Path, name: str, *, after: int) -> None:
    """Make ``os.<name>`` on ``target``'s file fail with ENOSPC, once, after it has
    written ``after`` bytes (a full disk cannot be made portably)."""
    real = getattr(os, name)
    inode = os.stat(target).st_ino
    done = False

    def failing(fd: int, *args: Any) -> Any:
        nonlocal done
        if done or os.fstat(fd).st_ino != inode:
            return real(fd, *args)
        done = True
        if after:
            os.write(fd, b"X" * after)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, name, failing)


@pytest.mark.parametrize(("name", "arguments"), CHANGES)
async def test_no_space_to_reserve_leaves_the_file_unchanged(
    call_tool: CallTool,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    arguments: dict[str, str],
) -> None:
    (workspace / "f.txt").write_text("a\n")
    if not hasattr(os, "posix_fallocate"):
        pytest.skip("no posix_fallocate on this platform")
    _fail_on(monkeypatch, workspace / "f.txt", "posix_fallocate", after=0)
    result = await call_tool(name, path="f.txt", **arguments)
    assert result.content == (
        f"tool {name!r} failed: f.txt could not be written: No space left on device; "
        "it is unchanged"
    )
    assert (workspace / "f.txt").read_bytes() == b"a\n"


@pytest.mark.parametrize(("name", "arguments"), CHANGES)
async def test_a_write_that_fails_midway_puts_the_old_content_back(
    call_tool: CallTool,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    arguments: dict[str, str],
) -> None:
    (workspace / "f.txt").write_text("a\n")
    _fail_on(monkeypatch, workspace / "f.txt", "write", after=1)
    result = await call_tool(name, path="f.txt", **arguments)
    assert result.content == (
        f"tool {name!r} failed: f.txt could not be written: No space left on device; "
        "its old content was put back"
    )
    assert (workspace / "f.txt").read_bytes() == b"a\n"
    assert os.listdir(workspace) == ["f.txt"]


async def test_a_file_over_the_kept_size_is_not_read_into_memory(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over ``KEPT_AT_MOST`` the old content is not held to put back (overwriting a
    large file doubled the memory dsh used): a failed write says it may be half
    written."""
    from dsh.builtin_tools import _regular

    monkeypatch.setattr(_regular, "KEPT_AT_MOST", 4)
    monkeypatch.setattr(_regular, "_read_all", None)  # called: a TypeError
    (workspace / "f.txt").write_text("more than four\n")
    _fail_on(monkeypatch, workspace / "f.txt", "write", after=1)
    result = await call_tool("write", path="f.txt", content="b\n")
    assert result.content == (
        "tool 'write' failed: f.txt could not be written: No space left on device; its "
        "old content (over 64 MiB) was not held to put back, so it may be half written"
    )
    assert (await call_tool("write", path="f.txt", content="c\n")).is_error is False
    assert (workspace / "f.txt").read_bytes() == b"c\n"


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
async def test_a_new_file_that_cannot_be_written_whole_is_removed(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.write
    target = str(workspace / "new.txt")

    def failing(fd: int, data: Any) -> int:
        if os.readlink(f"/proc/self/fd/{fd}") == target:
            raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT))
        return real(fd, data)

    monkeypatch.setattr(os, "write", failing)
    result = await call_tool("write", path="new.txt", content="x")
    assert result.content == (
        f"tool 'write' failed: new.txt could not be written: {os.strerror(errno.EDQUOT)}; "
        "it was not created"
    )
    assert os.listdir(workspace) == []


async def test_a_directory_that_cannot_be_made_is_named(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def denied(path: Any, *args: Any, **kwargs: Any) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    (workspace / "d").mkdir()
    monkeypatch.setattr(os, "mkdir", denied)
    result = await call_tool("write", path="d/sub/h.txt", content="x")
    assert result.content == (
        "tool 'write' failed: d/sub/h.txt cannot be created: d may not be written "
        "(permission denied), so d/sub cannot be made"
    )


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
async def test_a_new_file_that_cannot_be_written_leaves_no_directory_it_made(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.write
    target = str(workspace / "kept" / "new" / "deep" / "n.txt")

    def failing(fd: int, data: Any) -> int:
        if os.readlink(f"/proc/self/fd/{fd}") == target:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    (workspace / "kept").mkdir()
    monkeypatch.setattr(os, "write", failing)
    result = await call_tool("write", path="kept/new/deep/n.txt", content="x")
    assert result.content.endswith("; it was not created")
    assert os.listdir(workspace) == ["kept"]
    assert os.listdir(workspace / "kept") == []


async def test_a_directory_with_too_long_a_name_is_named_and_none_is_left(
    call_tool: CallTool, workspace: Path
) -> None:
    """Only a denied permission removed the directories made: another error left them
    (here 'a' and 'a/b') and showed as a raw OSError."""
    path = f"a/b/{'n' * 300}/f.txt"
    result = await call_tool("write", path=path, content="x")
    assert result.content == (
        f"tool 'write' failed: {path} cannot be created: a/b/{'n' * 300} cannot be made "
        f"({os.strerror(errno.ENAMETOOLONG)})"
    )
    assert os.listdir(workspace) == []


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EDQUOT])
async def test_a_directory_that_cannot_be_made_leaves_none_made_before_it(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    real = os.mkdir

    def failing(path: Any, *args: Any, **kwargs: Any) -> None:
        if os.fspath(path) == str(workspace / "x" / "y"):
            raise OSError(code, os.strerror(code), os.fspath(path))
        real(path, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", failing)
    result = await call_tool("write", path="x/y/z.txt", content="x")
    assert result.content == (
        f"tool 'write' failed: x/y/z.txt cannot be created: x/y cannot be made "
        f"({os.strerror(code)})"
    )
    assert os.listdir(workspace) == []


async def test_a_failed_write_keeps_a_directory_another_process_made_meanwhile(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between the check of which directories are missing and their making, another
    process made 'shared': it was counted as made for the file, and removed."""
    from dsh.builtin_tools import _files
    from dsh.tools import ToolError

    real = os.mkdir
    shared = workspace / "shared"

    def racing(path: Any, *args: Any, **kwargs: Any) -> None:
        if os.fspath(path) == str(shared) and not shared.exists():
            real(shared)  # the other process, just before this one
        real(path, *args, **kwargs)

    def full(*args: Any, **kwargs: Any) -> None:
        raise ToolError("disk full")

    monkeypatch.setattr(os, "mkdir", racing)
    monkeypatch.setattr(_files, "write_file", full)
    result = await call_tool("write", path="shared/sub/f.txt", content="x")
    assert result.content == "tool 'write' failed: disk full"
    assert os.listdir(workspace) == ["shared"]
    assert os.listdir(shared) == []  # 'sub', made for the file, is removed


@pytest.mark.parametrize("made", ["file", "link"])
async def test_a_file_another_process_made_where_a_directory_was_to_be_is_named(
    call_tool: CallTool,
    workspace: Path,
    outside: Path,
    monkeypatch: pytest.MonkeyPatch,
    made: str,
) -> None:
    """Between the check of which directories are missing and the making of 'q/last',
    another process made a file 'last' (the write failed with a raw OSError) or a link
    to a directory outside the roots (never resolved: the file was written there)."""
    real = os.mkdir
    last = workspace / "q" / "last"

    def racing(path: Any, *args: Any, **kwargs: Any) -> None:
        if os.fspath(path) == str(last):  # the other process, just before this one
            last.write_text("raced") if made == "file" else last.symlink_to(outside)
        real(path, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", racing)
    result = await call_tool("write", path="q/last/x.txt", content="x")
    assert result.content == (
        "tool 'write' failed: q/last is a file, not a directory: q/last/x.txt cannot be "
        "created below it"
    )
    assert sorted(os.listdir(outside)) == ["secret.txt"]
