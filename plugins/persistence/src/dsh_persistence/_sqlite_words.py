"""What a SQLite error says about the database at a path, for a user: SQLite's own
words ("disk I/O error", "unable to open database file") name neither the file nor the
cause. A database that cannot be opened says why, when the file is not readable or its
directory not writable (``_cannot_open``). An I/O error says which file (the database,
its write-ahead log ``<path>-wal`` or its shared-memory index ``<path>-shm``, both made
beside it) and, when the file system holding them is (nearly) full, that it is: a WAL
database cannot be used on a full disk even to be read, when its ``-shm`` file has to be
created or grown."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

__all__ = ["error_words"]

#: Less free space than this: the disk is said to be full (a ``-shm`` file grows 32 KiB
#: at a time, the log a page at a time).
_NEARLY_FULL = 1 << 20

#: What failed, by the extended code of an I/O error about the shared-memory file.
_SHM = {
    "SQLITE_IOERR_SHMOPEN": "cannot create or open",
    "SQLITE_IOERR_SHMSIZE": "cannot grow",
    "SQLITE_IOERR_SHMMAP": "cannot map",
    "SQLITE_IOERR_SHMLOCK": "cannot lock",
}


#: An error saying that what SQLite keeps beside the database could not be created.
_CANNOT_CREATE = ("SQLITE_READONLY_DIRECTORY", "SQLITE_READONLY_CANTINIT")


def error_words(exc: sqlite3.Error, path: Path) -> str:
    """``exc``, raised using the database at ``path``, in words that say where and why."""
    said = str(exc)
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name.startswith("SQLITE_CANTOPEN") or name in _CANNOT_CREATE:
        return said + _cannot_open(path)
    if not name.startswith("SQLITE_IOERR"):
        return said
    doing = _SHM.get(name)
    if doing is not None:
        said += f": {doing} its shared-memory file {path}-shm"
    else:
        said += f" ({name}) reading or writing it or its write-ahead log {path}-wal"
    return said + _full(path.parent)


def _cannot_open(path: Path) -> str:
    """Why the database at ``path`` could not be opened, when this process can tell: it
    cannot read the file, or cannot create the files SQLite keeps beside it, which it
    needs even to read a WAL database (when they are not there: no process has it open)."""
    if not os.path.exists(path):
        return ""
    if not os.access(path, os.R_OK):
        return f": {path} is not readable by this user"
    directory = path.parent
    try:
        read_only = bool(os.statvfs(directory).f_flag & getattr(os, "ST_RDONLY", 0))
    except (OSError, AttributeError):  # gone meanwhile; no statvfs (Windows)
        read_only = False
    if read_only:
        why = "is on a read-only file system"
    elif not os.access(directory, os.W_OK | os.X_OK):
        why = "is not writable by this user"
    else:
        return ""
    return (
        f": SQLite cannot create {path.name}-wal and {path.name}-shm beside it, which it "
        f"needs to read the database, as {directory} {why}"
    )


def _full(directory: Path) -> str:
    """``; the file system holding it is full`` when it (nearly) is, else nothing."""
    try:
        found = os.statvfs(directory)
    except (OSError, AttributeError):  # gone meanwhile; no statvfs (Windows)
        return ""
    free = found.f_bavail * found.f_frsize
    if free < _NEARLY_FULL:
        return f"; the file system holding {directory} is full ({free // 1024} KiB free)"
    if found.f_files and not found.f_favail:
        return f"; the file system holding {directory} has no room for new files (inodes)"
    return ""
