"""How the file tools touch files: regular files only, changed in place.

A named pipe, a socket or a device is refused with a ``ToolError``, never opened in a
way that waits: opening a FIFO blocks until a writer comes, in a worker thread that
cannot be cancelled (and that the process waits for at exit). Files are checked with
``stat`` first and opened with ``O_NONBLOCK``, then checked again with ``fstat``, so
one swapped in between is refused too (``open_checked``).

``write_file`` writes into the file itself, never a new file renamed over it: the same
file (inode) keeps its mode, owner, ACLs, extended attributes, hard links and bind
mounts, and no temporary file is ever made. It is written from the start without
truncating first, then cut to the new length. The space is reserved beforehand
(``posix_fallocate``), so a full disk or quota is found before anything changes; should
a write fail all the same, the old content (held in memory, up to ``KEPT_AT_MOST``
bytes: a larger file relies on the reservation alone) is written back. A new file
is created with ``O_EXCL`` and mode 0o666 less the umask. Paths reach here resolved
(``_paths``), so a symlink's target is written and the link kept.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO, Final

from dsh.builtin_tools._paths import symlink_loop
from dsh.tools import ToolError

__all__ = [
    "file_kind",
    "file_status",
    "open_regular",
    "special_file",
    "status_or_none",
    "write_file",
]

_KINDS: Final = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)
#: The largest old content held in memory to put back after a failed write (64 MiB):
#: overwriting a file of gigabytes must not need as much memory again.
KEPT_AT_MOST: Final = 64 << 20
#: posix_fallocate's answer where the filesystem cannot reserve space (go on without).
_NO_FALLOCATE: Final = (errno.EOPNOTSUPP, errno.EINVAL, getattr(errno, "ENOTSUP", 0))


def file_kind(mode: int) -> str:
    """What a file that is neither regular nor a directory is: "a socket"..."""
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def special_file(mode: int, shown: str) -> ToolError:
    """The refusal of a file that is neither regular nor a directory."""
    return ToolError(
        f"{shown} is {file_kind(mode)}, not a regular file; file tools open regular files only"
    )


def status_or_none(target: Path, shown: str) -> os.stat_result | None:
    """The status of ``target``, or None when it does not exist (nor does a directory
    on its way); a ``ToolError`` when a symlink on its way loops."""
    try:
        return os.stat(target)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # Python 3.13 resolves a loop without an error
            raise symlink_loop(shown) from None
        raise


def file_status(target: Path, shown: str, hint: str) -> os.stat_result:
    """The status of the existing regular file ``target``; a ``ToolError`` when it is
    missing, a directory (``hint`` says what to do instead) or a special file."""
    status = status_or_none(target, shown)
    if status is None:
        raise ToolError(f"{shown} does not exist")
    if stat.S_ISDIR(status.st_mode):
        raise ToolError(f"{shown} is a directory, not a file ({hint})")
    if not stat.S_ISREG(status.st_mode):
        raise special_file(status.st_mode, shown)
    return status


def open_checked(target: Path, shown: str, flags: int) -> int:
    """``target`` opened with ``flags`` (without waiting), if it is a regular file."""
    fd = os.open(target, flags | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise special_file(mode, shown)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(target: Path, shown: str) -> BinaryIO:
    """``target`` opened for reading in binary, if it is a regular file (see above)."""
    return os.fdopen(open_checked(target, shown, os.O_RDONLY), "rb")


#: Ask with the effective ids where the OS can, as the open that failed did (a root
#: without its DAC capabilities, or a set-uid process, is told why it was refused).
_EFFECTIVE = os.access in os.supports_effective_ids


def _open_existing(target: Path, shown: str) -> int:
    try:
        return open_checked(target, shown, os.O_RDWR)
    except PermissionError:
        mode = stat.S_IMODE(os.stat(target).st_mode)
        if not os.access(target, os.W_OK, effective_ids=_EFFECTIVE):
            raise ToolError(f"{shown} is not writable (mode {mode:#o})") from None
        raise ToolError(
            f"{shown} is not readable (mode {mode:#o}); edit and write read a file's old "
            "content before changing it"
        ) from None


def _create(target: Path, shown: str) -> int:
    try:
        return os.open(target, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    except PermissionError:
        raise ToolError(f"{shown} cannot be created: its directory is not writable") from None
    except FileExistsError:
        raise ToolError(
            f"{shown} was created by something else meanwhile; nothing was written"
        ) from None


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _reserve(fd: int, size: int, old_size: int) -> None:
    """Reserve ``size`` bytes for ``fd`` where the filesystem can; on an error, the
    file is left at ``old_size`` (a part reserved may have grown it)."""
    if size == 0 or not hasattr(os, "posix_fallocate"):
        return
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as exc:
        if exc.errno in _NO_FALLOCATE:
            return
        with contextlib.suppress(OSError):
            if os.fstat(fd).st_size != old_size:
                os.ftruncate(fd, old_size)
        raise


def _put(fd: int, data: bytes) -> None:
    os.lseek(fd, 0, os.SEEK_SET)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.ftruncate(fd, len(data))
    os.fsync(fd)


def _failed(shown: str, exc: OSError, outcome: str) -> ToolError:
    return ToolError(f"{shown} could not be written: {exc.strerror or exc}; {outcome}")


def write_file(
    target: Path, shown: str, data: bytes, *, new: bool, was: bytes | None = None
) -> None:
    """Make ``data`` the content of ``target``, in place (see above); ``new``: create
    it (it must not exist yet); ``was``: the content ``target`` must still have (what
    ``edit`` read), else a ``ToolError`` and the file is left as it is."""
    fd = _create(target, shown) if new else _open_existing(target, shown)
    try:
        size = 0 if new else os.fstat(fd).st_size
        keep = size <= KEPT_AT_MOST or was is not None
        old = b"" if new else _read_all(fd) if keep else None
        if was is not None and old != was:
            raise ToolError(
                f"{shown} changed since it was read (something else wrote to it meanwhile); "
                "it was left as it is: read it again and redo the change"
            )
        reserved = False
        try:
            _reserve(fd, len(data), size)
            reserved = True
            _put(fd, data)
        except OSError as exc:
            if new:
                with contextlib.suppress(OSError):
                    os.unlink(target)
                raise _failed(shown, exc, "it was not created") from None
            if not reserved:
                raise _failed(shown, exc, "it is unchanged") from None
            if old is None:
                outcome = "its old content (over 64 MiB) was not held to put back"
                raise _failed(shown, exc, f"{outcome}, so it may be half written") from None
            try:
                _put(fd, old)
            except OSError as again:
                outcome = f"putting its old content back failed too ({again.strerror or again})"
                raise _failed(shown, exc, f"{outcome}, so it may be half written") from None
            raise _failed(shown, exc, "its old content was put back") from None
    finally:
        os.close(fd)
