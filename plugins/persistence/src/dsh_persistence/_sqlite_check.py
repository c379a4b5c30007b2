"""Whether sessions could be saved in a SQLite database, found without changing anything:
what ``SqliteBackend.prepare`` checks when a harness starts (``dsh config check`` too), so
that another program's database is left as it was until the first save.

An existing file is opened (not created), its schema version read and its write lock
taken and let go; that it may be written is asked of the OS (a read-only database
takes ``BEGIN IMMEDIATE`` as a read, without an error). For a missing one, and for the
companions the first save makes beside it (``-wal``, ``-shm``, ``-claims/``), its
directory (made before, as the JSONL backend makes its own) must be writable. What the
OS's access check does not know (``/proc``, where it lets root write; a read-only
mount) is found by making what a claim makes (``check_claims``): a file in the claims'
directory, or, while it is missing, a directory beside it (not the claims' own, which
another process may be making) with a file in it, each removed again.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from dsh_persistence._errors import PersistenceError
from dsh_persistence._files import denied, may, probe_directory
from dsh_persistence._opening import set_up

__all__ = ["check_claims", "check_database", "check_directory"]

Failed = Callable[[str, object], PersistenceError]
_COMPANIONS = ("-wal", "-shm", "-claims")


def _denied(failed: Failed, doing: str) -> PersistenceError:
    """``failed`` for want of permission (the OS's error as its cause)."""
    refused = denied()
    error = failed(doing, refused.strerror)
    error.__cause__ = refused
    return error


def check_directory(path: Path, failed: Failed) -> None:
    """What the first save creates in the existing directory of the database ``path``
    (the database if missing, its companions) can be created there."""
    directory = path.parent
    names = [path.name + suffix for suffix in ("", *_COMPANIONS)]
    needed = [name for name in names if not os.path.lexists(directory / name)]
    if needed and not may(directory, os.W_OK | os.X_OK):
        raise _denied(failed, f"create {', '.join(needed)} in the directory {directory}")


def check_claims(claims: Path, failed: Failed) -> None:
    """A claim can make its lock file in the directory ``claims`` (``<database>-claims``)
    or, while that is missing, make it: tried, and what was made removed."""
    if os.path.lexists(claims):
        try:
            probe_directory(claims)
        except OSError as exc:
            doing = f"create files in the claims directory {claims}"
            raise failed(doing, exc.strerror or exc) from exc
        return
    trial = claims.with_name(f".{claims.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        os.mkdir(trial, 0o700)
    except OSError as exc:
        raise failed(f"create the claims directory {claims}", exc.strerror or exc) from exc
    try:
        probe_directory(trial)
    except OSError as exc:
        raise failed(f"create files in the claims directory {claims}", exc.strerror) from exc
    finally:
        with suppress(OSError):
            os.rmdir(trial)


def check_database(
    path: Path, timeout: float, failed: Failed, version: Callable[[sqlite3.Connection], int]
) -> None:
    """The existing database ``path`` is a SQLite database whose ``version`` (which
    raises for a newer one) this code reads, that this process may write and whose write
    lock it can take. Nothing is written: no table, no journal mode, no version."""
    doing = "write to the session database"
    if not may(path, os.R_OK | os.W_OK):
        raise _denied(failed, doing)
    uri = Path(os.path.abspath(path)).as_uri() + "?mode=rw"  # never creates it
    try:
        db = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None)
    except sqlite3.Error as exc:
        raise failed("open the session database", exc) from exc
    with set_up(db, sqlite3.Error, failed, doing):
        version(db)  # reads the header: a file that is not SQLite is refused here
        db.execute("BEGIN IMMEDIATE")  # the write lock, as every save takes it
        db.execute("ROLLBACK")
    db.close()
