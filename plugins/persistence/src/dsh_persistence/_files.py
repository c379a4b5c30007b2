"""Small file-system primitives of the JSONL backend: names, atomic publish, fsync."""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path

from dsh_persistence._errors import PersistenceError, SessionConflictError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, one writer per session
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "LOCKS",
    "MAX_NAME",
    "SUFFIX",
    "TEMP_NAME",
    "denied",
    "file_name",
    "fsync_directory",
    "leads_to",
    "lock_file",
    "may",
    "name_length",
    "open_regular",
    "probe_directory",
    "publish",
    "read_at",
    "session_id_of",
    "still_leads_to",
    "try_lock_file",
    "write_all",
    "write_lines",
]

SUFFIX = ".jsonl"
_PLAIN = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
MAX_NAME = 240
TEMP_NAME = 200  # bytes of a session file's name, in its temp file's


def file_name(session_id: str) -> str:
    """The file name of a session: its id, with every byte outside ``[A-Za-z0-9_-]``
    written ``%XX``, so no id can name another directory, a dotfile or a temp file."""
    try:
        encoded = session_id.encode()
    except UnicodeEncodeError:  # a lone surrogate: a non-UTF-8 argument, say
        raise PersistenceError(
            f"session id {quoted_id(session_id)} cannot be a file name: it is not valid text"
        ) from None
    name = _escaped(encoded)
    if not name or len(name) > MAX_NAME:
        raise PersistenceError(
            f"session id {quoted_id(session_id)} cannot be a file name (empty, or longer than "
            f"{MAX_NAME} bytes once encoded); use a shorter id"
        )
    return name + SUFFIX


def quoted_id(session_id: str) -> str:
    """The id for a message: cut to 60 characters with its length (it may be long)."""
    if len(session_id) <= 60:
        return repr(session_id)
    return f"{session_id[:60]!r}... ({len(session_id):,} characters)"


def name_length(session_id: str) -> int:
    """How many bytes ``file_name`` gives ``session_id`` (its suffix left out)."""
    return len(_escaped(session_id.encode(errors="surrogatepass")))


def _escaped(encoded: bytes) -> str:
    return "".join(chr(b) if b in _PLAIN else f"%{b:02X}" for b in encoded)


def session_id_of(name: str) -> str:
    """The session id a file name encodes (the inverse of ``file_name``)."""
    stem = name[: -len(SUFFIX)] if name.endswith(SUFFIX) else name
    out = bytearray()
    index = 0
    while index < len(stem):
        if stem[index] == "%" and index + 3 <= len(stem):
            with suppress(ValueError):
                out.append(int(stem[index + 1 : index + 3], 16))
                index += 3
                continue
        out += stem[index].encode()
        index += 1
    return out.decode(errors="replace")


_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def open_regular(path: str | os.PathLike[str], flags: int = os.O_RDONLY) -> int:
    """``path`` opened (``flags``) without waiting: a FIFO named like a session file
    must not block a reader until some writer opens it. ``OSError`` for anything but a
    regular file (``IsADirectoryError`` for a directory, else "not a regular file (a
    FIFO)"), as reading it would raise, so callers say it as any read failure."""
    extra = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags | extra)
    except OSError as exc:  # ENXIO: a FIFO opened to write that no one reads
        if exc.errno == errno.ENXIO:
            _check_regular(os.stat(path).st_mode)
        raise
    try:
        _check_regular(os.fstat(fd).st_mode)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_regular(mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    if not stat.S_ISREG(mode):
        kind = next((said for test, said in _KINDS if test(mode)), "of an unknown kind")
        raise OSError(errno.EINVAL, f"not a regular file ({kind})")


def write_all(fd: int, data: bytes, offset: int) -> None:
    """Write all of ``data`` at ``offset`` (a regular file may take it in parts)."""
    view = memoryview(data)
    while view:
        if hasattr(os, "pwrite"):
            written = os.pwrite(fd, view, offset)
        else:  # pragma: no cover - Windows
            os.lseek(fd, offset, os.SEEK_SET)
            written = os.write(fd, view)
        view, offset = view[written:], offset + written


#: Lines are joined into one write up to this many bytes; a longer line is written from
#: its own bytes, never copied (an event holding a 50 MB prompt costs no second copy).
_JOINED = 1 << 20


def write_lines(fd: int, lines: Sequence[bytes], offset: int) -> int:
    """Write each of ``lines`` with a newline after it at ``offset``: the bytes written.
    Short lines go in one write together, as one text (a turn's events: one call)."""
    at = offset
    batch: list[bytes] = []
    size = 0
    for line in lines:
        if batch and size + len(line) >= _JOINED:
            batch.append(b"")  # the last line's newline
            write_all(fd, b"\n".join(batch), at)
            at, batch, size = at + size, [], 0
        if len(line) >= _JOINED:
            write_all(fd, line, at)
            write_all(fd, b"\n", at + len(line))
            at += len(line) + 1
        else:
            batch.append(line)
            size += len(line) + 1
    if batch:
        batch.append(b"")
        write_all(fd, b"\n".join(batch), at)
        at += size
    return at - offset


def read_at(fd: int, size: int, offset: int) -> bytes:
    """Up to ``size`` bytes from ``offset``."""
    if hasattr(os, "pread"):
        return os.pread(fd, size, offset)
    os.lseek(fd, offset, os.SEEK_SET)  # pragma: no cover - Windows
    return os.read(fd, size)  # pragma: no cover


def lock_file(fd: int) -> None:
    """Hold an exclusive advisory lock on ``fd`` until it is closed, so two processes
    never append to one session at once (the seq check then refuses the second)."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)


#: Whether advisory file locks exist here (POSIX): without them there are no claims.
LOCKS = fcntl is not None


def try_lock_file(fd: int) -> bool:
    """Take the lock of ``lock_file`` unless another open file holds it: False then.
    True where there are no such locks (nothing to check)."""
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
    return True


def leads_to(path: Path, fd: int) -> bool:
    """Whether ``path`` still leads to the open file ``fd`` (not removed, not replaced):
    what a holder of a file's lock checks after taking it, the file being opened first."""
    try:
        there = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (there.st_dev, there.st_ino) == (opened.st_dev, opened.st_ino)


def still_leads_to(path: Path, fd: int) -> bool:
    """``leads_to``, False when it cannot be told (the directory gone, or a file now):
    what a holder letting go of a lock file asks, never raising, before it removes it."""
    try:
        return leads_to(path, fd)
    except OSError:
        return False


def fsync_directory(directory: Path) -> None:
    """Make a new or removed directory entry durable."""
    if os.name == "nt":  # pragma: no cover - directories cannot be opened there
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


#: Ask with the effective ids where the OS can (so a root without its DAC capabilities
#: is told what it may do, and a set-uid process what it is about to do).
_EFFECTIVE = os.access in os.supports_effective_ids


def may(path: Path, mode: int) -> bool:
    """Whether this process may access ``path`` as ``mode`` says (``os.W_OK``...)."""
    return os.access(path, mode, effective_ids=_EFFECTIVE)


def denied() -> PermissionError:
    """The OS's error for want of permission, for a refusal ``may`` found."""
    return PermissionError(errno.EACCES, os.strerror(errno.EACCES))


def probe_directory(directory: Path) -> None:
    """Create a temp file in ``directory`` and remove it: OSError if none can be made
    (as the first save would find), where the OS's access check says one may."""
    temp = directory / f".probe.{os.getpid()}-{secrets.token_hex(4)}.tmp"
    os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    os.unlink(temp)


def publish(
    path: Path, lines: Sequence[bytes], *, fsync: bool, hold: bool = False
) -> tuple[os.stat_result, int | None]:
    """Create ``path`` holding ``lines`` (each with a newline after it: ``write_lines``),
    atomically: readers see all of it or no file.

    Writes a temp file in the same directory, fsyncs it, then links it into place
    (a link never replaces an existing file: ``SessionConflictError`` if one appeared),
    and fsyncs the directory. Where hard links are not supported, renames instead.
    ``hold``: the file is locked (``lock_file``) before it appears, and the open file
    holding the lock is returned (else None): the caller closes it to let go.
    """
    # the name's start (a file name has 255 bytes at most: the longest id's takes 246)
    temp = path.with_name(f".{path.name[:TEMP_NAME]}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
    held = fd if hold else None
    try:
        try:
            if hold:
                lock_file(fd)  # a new file no one else has open: never waits
            write_lines(fd, lines, 0)
            if fsync:
                os.fsync(fd)
            stat = os.fstat(fd)
        finally:
            if not hold:
                os.close(fd)
        try:
            os.link(temp, path)
        except FileExistsError:
            raise SessionConflictError(
                f"{path}: another writer stored this session meanwhile; nothing was written"
            ) from None
        except OSError:  # no hard links on this file system
            if path.exists():
                raise SessionConflictError(
                    f"{path}: another writer stored this session meanwhile; nothing was written"
                ) from None
            os.replace(temp, path)
    except BaseException:
        if held is not None:
            os.close(held)
        raise
    finally:
        with suppress(FileNotFoundError):
            os.unlink(temp)
    if fsync:
        try:
            fsync_directory(path.parent)
        except BaseException:
            if held is not None:
                os.close(held)
            raise
    return stat, held
