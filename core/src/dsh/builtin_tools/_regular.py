"""How the file tools touch files: regular files only, and whole replacements.

A named pipe, a socket or a device is refused with a ``ToolError``, never opened in a
way that waits: opening a FIFO blocks until a writer comes, in a worker thread that
cannot be cancelled (and that the process waits for at exit). Files are checked with
``stat`` first and opened with ``O_NONBLOCK``, then checked again with ``fstat``, so
one swapped in between is refused too.

``replace_file`` writes a file whole into a new file beside it, then renames that over
it (``os.replace``): a write that fails leaves the old file as it was, never empty or
half written. The new file gets the old one's permission bits and owner. Paths reach
here resolved (``_paths``), so a symlink's target is replaced and the link kept. Where
that cannot be done (the directory may not be written but the file may, or the file
belongs to another user), the file is written in place.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path
from typing import BinaryIO, Final

from dsh.builtin_tools._paths import symlink_loop
from dsh.tools import ToolError

__all__ = ["file_status", "open_regular", "replace_file", "special_file", "writable"]

_KINDS: Final = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def special_file(mode: int, shown: str) -> ToolError:
    """The refusal of a file that is neither regular nor a directory."""
    kind = next((name for test, name in _KINDS if test(mode)), "a special file")
    return ToolError(f"{shown} is {kind}, not a regular file; file tools open regular files only")


def file_status(target: Path, shown: str, hint: str) -> os.stat_result:
    """The status of the existing regular file ``target``; a ``ToolError`` when it is
    missing, a directory (``hint`` says what to do instead) or a special file."""
    try:
        status = os.stat(target)
    except (FileNotFoundError, NotADirectoryError):
        raise ToolError(f"{shown} does not exist") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise symlink_loop(shown) from None
        raise
    if stat.S_ISDIR(status.st_mode):
        raise ToolError(f"{shown} is a directory, not a file ({hint})")
    if not stat.S_ISREG(status.st_mode):
        raise special_file(status.st_mode, shown)
    return status


def open_regular(target: Path, shown: str) -> BinaryIO:
    """``target`` opened for reading in binary, if it is a regular file (see above)."""
    fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise special_file(mode, shown)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def writable(target: Path, shown: str, status: os.stat_result) -> None:
    """Refuse a file the process may not write: replacing it would succeed (its
    directory is writable), but would ignore its permission bits."""
    if not os.access(target, os.W_OK):
        raise ToolError(f"{shown} is not writable (mode {stat.S_IMODE(status.st_mode):#o})")


def _write_in_place(target: Path, shown: str, data: bytes) -> None:
    fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise special_file(mode, shown)
        os.set_blocking(fd, True)
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _take_over(fd: int, old: os.stat_result) -> bool:
    """Give the file ``fd`` the owner and permission bits of ``old``; False when the
    owner cannot be given (only root may give a file to another user)."""
    new = os.fstat(fd)
    if (new.st_uid, new.st_gid) != (old.st_uid, old.st_gid):
        try:
            os.fchown(fd, old.st_uid, old.st_gid)
        except PermissionError:
            return False
    os.fchmod(fd, stat.S_IMODE(old.st_mode))  # after fchown, which drops setuid bits
    return True


def replace_file(target: Path, shown: str, data: bytes, old: os.stat_result | None) -> None:
    """Make ``data`` the content of ``target`` in one step (see above). ``old``: the
    status of the file it replaces; ``None`` for a new file (0o666 less the umask)."""
    temporary = target.with_name(f".dsh-{secrets.token_hex(6)}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    except PermissionError:  # the directory is not writable
        if old is None:
            raise ToolError(f"{shown} cannot be created: its directory is not writable") from None
        _write_in_place(target, shown, data)
        return
    try:
        with os.fdopen(fd, "wb") as file:
            owned = old is None or _take_over(file.fileno(), old)
            if owned:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
        if owned:
            os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    if not owned:  # the file belongs to another user
        os.unlink(temporary)
        _write_in_place(target, shown, data)
