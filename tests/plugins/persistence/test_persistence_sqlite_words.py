"""SQLite's errors about the database file and what it keeps beside a WAL database
(``<path>-shm``, ``<path>-wal``) say which file, and why when it can be told.

A file it cannot make or grow: which one and, when the disk is full, that it is.

Before: "<path>: cannot open the session database: disk I/O error", on a full disk,
for a database that was there and sound (opening it, even to read, makes its
``-shm`` file, 32 KiB, when no other process has it open).

The child process cannot grow a file past the database's size (``RLIMIT_FSIZE``):
the same SQLITE_IOERR_SHMSIZE a full file system gives (seen on a full tmpfs, with
the same words), with no mount needed. "full": the child's ``os.statvfs`` says what a
full file system says (no block free)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_persistence import SessionInfo, SqliteBackend
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

CHILD = """
import os, resource, signal, sys
from dsh_persistence import SqliteBackend

path = sys.argv[1]
if sys.argv[2] == "full":
    real = os.statvfs
    def statvfs(where):
        found = real(where)
        return os.statvfs_result((*found[:3], 0, 0, *found[5:]))
    os.statvfs = statvfs
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails instead
resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(path), resource.RLIM_INFINITY))
backend = SqliteBackend(path, source="persistence.database")
try:
    backend.load("s")
except Exception as exc:
    print(exc)
"""


@pytest.mark.parametrize("disk", ["limited", "full"])
def test_a_shared_memory_file_that_cannot_grow_is_named(tmp_path: Path, disk: str) -> None:
    pytest.importorskip("resource")
    path = tmp_path / "db.sqlite3"
    backend = SqliteBackend(path)
    log = LogBuilder()
    log.turn("hello")
    backend.append(SessionInfo("s", 1.0), log.events, durable=True)
    backend.close()  # the last connection: -shm and -wal are removed
    assert not Path(f"{path}-shm").exists()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), disk],
        capture_output=True,
        text=True,
        check=True,
    )
    said = (
        f"{path} (persistence.database): cannot open the session database: disk I/O error: "
        f"cannot grow its shared-memory file {path}-shm"
    )
    if disk == "full":
        said += f"; the file system holding {tmp_path} is full (0 KiB free)"
    assert done.stdout.strip() == said


READ_ONLY_CHILD = """
import sys
from dsh_persistence import SqliteBackend

try:
    SqliteBackend(sys.argv[1]).headers()
except Exception as exc:
    print(exc)
"""


def stored(directory: Path) -> Path:
    path = directory / "db.sqlite3"
    backend = SqliteBackend(path)
    log = LogBuilder()
    log.turn("hello")
    backend.append(SessionInfo("s", 1.0), log.events, durable=True)
    backend.close()
    return path


def said(path: Path, error: str, why: str) -> str:
    return (
        f"{path}: cannot open the session database: {error}: SQLite cannot create "
        "db.sqlite3-wal and db.sqlite3-shm beside it, which it needs to read the database, "
        f"as {path.parent} {why}"
    )


def test_a_database_in_a_directory_this_user_cannot_write_says_why(tmp_path: Path) -> None:
    """``dsh sessions list`` of a store in another user's directory. Before: "<path>:
    cannot open the session database: attempt to write a readonly database". Root
    writes any directory: as root the child runs without that capability."""
    path = stored(tmp_path / "store")
    argv = [sys.executable, "-c", READ_ONLY_CHILD, str(path)]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("no setpriv(1) to run without root's override of permissions")
        argv = [setpriv, "--inh-caps=-all", "--bounding-set=-all", *argv]
    path.parent.chmod(0o555)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=True)
    finally:
        path.parent.chmod(0o700)
    error = "attempt to write a readonly database"
    assert done.stdout.strip() == said(path, error, "is not writable by this user")


def test_a_database_on_a_read_only_mount_says_why(tmp_path: Path) -> None:
    """``dsh sessions list`` of a store on a read-only mount (a backup). Before: "<path>:
    cannot open the session database: unable to open database file". The mount is made
    in a mount namespace of the child's own (root only)."""
    path = stored(tmp_path / "store")
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or unshare is None:
        pytest.skip("a read-only mount needs root and unshare(1)")
    mounted = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    child = [sys.executable, "-c", READ_ONLY_CHILD, str(path)]
    done = subprocess.run(
        [unshare, "-m", "sh", "-c", mounted, str(path.parent), *child],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"no read-only mount could be made here: {done.stderr.strip()}")
    error = "unable to open database file"
    assert done.stdout.strip() == said(path, error, "is on a read-only file system")
