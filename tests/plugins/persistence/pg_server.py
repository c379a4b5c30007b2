"""A throwaway PostgreSQL server for the tests of the PostgreSQL backend.

``PgServer.start()`` runs initdb into a new temp directory and starts a server that
listens on a unix socket in it and on 127.0.0.1 (a free port), fsync off; as root (CI)
it runs as the ``postgres`` system user, since PostgreSQL refuses to run as root. Local
(socket) connections are trusted; TCP ones need the password ``PASSWORD``.
``schema_url()`` gives each test a fresh schema, which the URL selects through
libpq's ``options``. A server outlives a test process that was killed (no fixture
teardown, no ``atexit``): each server's directory names the process that made it
(``owner``), and ``start()`` first stops and removes those whose process is gone
(``sweep()``). ``require()`` skips when no server can be had, naming what is
missing, unless ``DSH_REQUIRE_POSTGRES=1``: then it fails (the nox sessions set it).
"""

from __future__ import annotations

import atexit
import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

PASSWORD = "pg-secret-Zq7"
PREFIX = "dsh-pg-"
REQUIRE = "DSH_REQUIRE_POSTGRES"
_names = itertools.count()


def bindir() -> Path | None:
    """Where initdb, pg_ctl and postgres are: PATH's initdb, else Debian's newest."""
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    versions = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit() else 0,
    )
    return Path(versions[-1]).parent if versions else None


def require() -> None:
    """Skip (or fail, under ``DSH_REQUIRE_POSTGRES=1``) when psycopg or the server's
    binaries are missing."""
    missing = []
    try:
        import psycopg  # noqa: F401
    except ImportError:
        missing.append("psycopg (pip install 'dsh-persistence[postgres]')")
    if bindir() is None:
        missing.append("PostgreSQL's initdb (not on PATH nor in /usr/lib/postgresql/*/bin)")
    if missing:
        why = "PostgreSQL tests need " + " and ".join(missing)
        if os.environ.get(REQUIRE) == "1":
            pytest.fail(f"{why}; {REQUIRE}=1 makes that an error", pytrace=False)
        pytest.skip(why)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's: alive
        return True
    return True


def sweep(directory: str | None = None) -> list[Path]:
    """Stop and remove the servers in ``directory`` (the temp dir) whose owner process
    is gone (a test process that was killed); the directories removed. A directory
    without its ``owner`` file yet (another process is making it) is left alone."""
    removed = []
    bins = bindir()
    for root in Path(directory or tempfile.gettempdir()).glob(f"{PREFIX}*"):
        try:
            owner = int((root / "owner").read_text())
        except (OSError, ValueError):
            continue
        if _alive(owner):
            continue
        if bins is not None and (root / "data" / "postmaster.pid").exists():
            as_root = os.geteuid() == 0
            command = [str(bins / "pg_ctl"), "-D", str(root / "data"), "-m", "immediate", "stop"]
            subprocess.run(
                [*(["runuser", "-u", "postgres", "--"] if as_root else []), *command],
                capture_output=True,
                check=False,
            )
        shutil.rmtree(root, ignore_errors=True)
        removed.append(root)
    return removed


class PgServer:
    def __init__(self) -> None:
        bins = bindir()
        assert bins is not None
        self.bins = bins
        # /tmp itself, not pytest's (0700, root's) temp dir: the server's user must
        # reach the socket, and a socket path is at most 107 bytes
        self.root = Path(tempfile.mkdtemp(prefix=PREFIX))
        (self.root / "owner").write_text(str(os.getpid()))
        self.data = self.root / "data"
        self.port = free_port()
        self.as_root = os.geteuid() == 0

    def _run(self, *argv: str) -> None:
        command = [*(["runuser", "-u", "postgres", "--"] if self.as_root else []), *argv]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}")

    def start(self) -> PgServer:
        sweep()
        atexit.register(self.stop)  # a process that exits without the fixture's teardown
        if self.as_root:
            shutil.chown(self.root, "postgres", "postgres")
        secret = self.root / "pwfile"
        secret.write_text(PASSWORD + "\n")
        if self.as_root:
            shutil.chown(secret, "postgres", "postgres")
        self._run(
            str(self.bins / "initdb"), "-D", str(self.data), "-U", "postgres", "-N",
            "-A", "trust", "--auth-host=scram-sha-256", f"--pwfile={secret}",
            "-E", "UTF8", "--locale=C",
        )  # fmt: skip
        for attempt in range(3):  # the free port may be taken by then (another worker)
            try:
                self._start()
                return self
            except RuntimeError:
                if attempt == 2:
                    raise
                self.port = free_port()
        return self

    def _start(self) -> None:
        options = (
            f"-F -p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
            "-c full_page_writes=off -c max_connections=60 -c wal_writer_delay=10000"
        )
        self._run(
            str(self.bins / "pg_ctl"), "-D", str(self.data), "-l",
            str(self.root / "log"), "-o", options, "-w", "-t", "30", "start",
        )  # fmt: skip

    def restart(self, mode: str = "fast") -> None:
        """Stop the server (``mode``: pg_ctl's; "immediate" is a crash: commits not yet
        flushed are lost) and start it again on the same port: every connection ends."""
        self._run(str(self.bins / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")
        self._start()

    def stop(self) -> None:
        if not self.root.exists():  # stopped already
            return
        try:
            if (self.data / "postmaster.pid").exists():  # else it never started
                self._run(
                    str(self.bins / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"
                )
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, schema: str = "", database: str = "postgres") -> str:
        """A URL of the unix socket (trusted: no password needed); ``schema``: the
        first of its search path."""
        options = f"&options=-csearch_path%3D{schema}" if schema else ""
        return f"postgresql://postgres@/{database}?host={self.root}&port={self.port}{options}"

    def tcp_url(self, schema: str, password: str | None = PASSWORD) -> str:
        """A URL of 127.0.0.1, where the server asks for ``PASSWORD``."""
        auth = f"postgres:{password}" if password is not None else "postgres"
        return (
            f"postgresql://{auth}@127.0.0.1:{self.port}/postgres?options=-csearch_path%3D{schema}"
        )

    def execute(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as db:
            db.execute(sql.encode())

    def schema(self) -> str:
        """The name of a new, empty schema."""
        name = f"t{os.getpid()}_{next(_names)}"
        self.execute(f"CREATE SCHEMA {name}")
        return name
