"""SQLite cannot make or grow the files it keeps beside a WAL database (``<path>-shm``,
``<path>-wal``): the error says which file and, when the disk is full, that it is.

Before: "<path>: cannot open the session database: disk I/O error", on a full disk,
for a database that was there and sound (opening it, even to read, makes its
``-shm`` file, 32 KiB, when no other process has it open).

The child process cannot grow a file past the database's size (``RLIMIT_FSIZE``):
the same SQLITE_IOERR_SHMSIZE a full file system gives (seen on a full tmpfs, with
the same words), with no mount needed. "full": the child's ``os.statvfs`` says what a
full file system says (no block free)."""

from __future__ import annotations

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
