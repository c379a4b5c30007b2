"""Small file-system primitives of the JSONL backend: names, atomic publish, fsync."""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
import time
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
    "remove_leftovers",
    "remove_unheld",
    "session_id_of",
    "still_leads_to",
    "try_lock_file",
    "write_all",
]

SUFFIX = ".jsonl"
_PLAIN = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
MAX_NAME = 240
_TEMP_NAME = 200  # of a session file's name, in its temp file's


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


#: The temp files of ``publish`` and ``probe_directory``: ``.<name>.<pid>-<8 hex>.tmp``.
_TEMP = re.compile(r"\.(?P<name>[A-Za-z0-9_%.-]{1,200})\.(?P<pid>[1-9][0-9]{0,9})-[0-9a-f]{8}\.tmp")
#: The lock files of a session: ``.<session file name>.claim``, of the claim of a session
#: not stored yet (``_jsonl_locks.claim_path``), and ``.<session file name>.lock``, the
#: turn of the writers that hold no claim (``_jsonl_locks.turn_path``), each removed by
#: its holder as it lets go, and left by a kill.
#:
#: Either is removed only while held here (``remove_unheld``), and every taker locks
#: the file it opened and then checks that its name still leads to it
#: (``_claims.hold_lock_file``), as it does for a holder's own removal: a process that
#: holds it is never robbed (the lock is not ours to take), and one that opened it just
#: before it was removed (or waits for its lock: a turn is waited for) finds, once it has
#: the lock, that the name leads nowhere, and takes a new file; a claim (that one does
#: not wait) that tries the lock while held here finds the same once the file is
#: removed. Holding it here does not stop a turn being taken, only delays it. A claim
#: that tries it in the instant between this lock and the removal finds it held: the
#: age below does not prevent that (a kill's leftover is old, and a delete removes a
#: turn at once), so such a claim tries the lock again a few times, for a few
#: milliseconds, while the name still leads to the file (``_claims.BUSY_PAUSES``), and
#: meets the removal. (The claims directory of ``_claims.ClaimFiles``, SQLite's: the
#: same.)
_LOCK_FILE = re.compile(r"\.(?P<name>[A-Za-z0-9_%-]{1,240}\.jsonl)\.(?:claim|lock)")
#: A temp file whose process is gone, or a lock file no process holds, is left over once
#: it is this old (seconds): a younger temp file may be the publish of a process that
#: this host does not see (another container sharing the directory), whose pid is no
#: live process here; a younger lock file may be a claim being taken, whose lock is
#: better not held here in the meantime (its taker would have to try again).
LEFTOVER_AGE = 600.0


def remove_leftovers(directory: Path, *, of: str | None = None, age: float = LEFTOVER_AGE) -> None:
    """Remove the files a kill left in ``directory`` (of the session file ``of`` only,
    if given), not changed for ``age`` seconds: the temp files named exactly as
    ``publish`` names them whose process is not running on this host (a ``publish`` cut
    short leaves one holding the session's header and first batch: its prompt), and the
    lock files that no process holds (``remove_unheld``) of claims of sessions not
    stored yet and of the turns of appends without a claim (``_LOCK_FILE``). Best
    effort: a file that cannot be checked or removed is left."""
    prefix = None if of is None else of[:_TEMP_NAME]
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    now = time.time()
    for entry in entries:
        lock = _LOCK_FILE.fullmatch(entry.name)
        if lock is not None:
            if of is None or lock["name"] == of:
                remove_unheld(Path(entry.path), age=age)
            continue
        found = _TEMP.fullmatch(entry.name)
        if found is None or (prefix is not None and found["name"] != prefix):
            continue
        if _running(int(found["pid"])):
            continue
        with suppress(OSError):
            if entry.is_file(follow_symlinks=False) and (
                now - entry.stat(follow_symlinks=False).st_mtime >= age
            ):
                os.unlink(entry.path)


def remove_unheld(path: Path, *, age: float = 0.0) -> None:
    """Remove the lock file ``path`` (a regular file, not a link) if no process holds
    its lock and it has not changed for ``age`` seconds, holding its lock while it is
    removed: a claim or a turn taken meanwhile on the file removed finds (``leads_to``)
    that the name leads elsewhere and takes it anew (``_LOCK_FILE`` says why that is
    safe; the lock files of ``_claims.ClaimFiles``, SQLite's, are taken the same way).
    Best effort: nothing is raised."""
    if not LOCKS:  # no locks to tell a held one by (and none are made)
        return
    try:
        fd = open_regular(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:  # gone, a link, not a regular file: not ours
        return
    try:
        with suppress(OSError):
            if (
                time.time() - os.fstat(fd).st_mtime >= age  # a young one is not even locked
                and try_lock_file(fd)
                and leads_to(path, fd)  # not removed (and made anew) since it was opened
            ):
                os.unlink(path)
    finally:
        os.close(fd)


def _running(pid: int) -> bool:
    """Whether process ``pid`` may be running here (True when that cannot be told)."""
    if os.name == "nt" or pid == os.getpid():  # Windows: os.kill would end the process
        return True
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):  # another user's (EPERM), or a pid past any
        return True
    return True


def publish(
    path: Path, content: bytes, *, fsync: bool, hold: bool = False
) -> tuple[os.stat_result, int | None]:
    """Create ``path`` holding ``content``, atomically: readers see all of it or no file.

    Writes a temp file in the same directory, fsyncs it, then links it into place
    (a link never replaces an existing file: ``SessionConflictError`` if one appeared),
    and fsyncs the directory. Where hard links are not supported, renames instead.
    ``hold``: the file is locked (``lock_file``) before it appears, and the open file
    holding the lock is returned (else None): the caller closes it to let go.
    """
    # the name's start (a file name has 255 bytes at most: the longest id's takes 246)
    temp = path.with_name(f".{path.name[:_TEMP_NAME]}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
    held = fd if hold else None
    try:
        try:
            if hold:
                lock_file(fd)  # a new file no one else has open: never waits
            write_all(fd, content, 0)
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
