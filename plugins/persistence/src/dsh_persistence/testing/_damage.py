"""What crashes and bit rot do to stored sessions, per backend, for the contract suite."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Protocol

import pytest

from dsh_persistence._files import file_name

__all__ = ["Damage", "JsonlDamage", "PostgresDamage", "SqliteDamage"]

_WHOLE = (
    "a transaction lands whole, with the session row's count of events: a crash loses "
    "no events of one that landed (fewer rows than that count are damage)"
)


class Damage(Protocol):
    """Breaks stored sessions the way the real world does. Each method may call
    ``pytest.skip`` when the backend makes that damage impossible."""

    def tear(self, session_id: str) -> None:
        """Leave the last stored event half written, as a crash mid-write does."""

    def drop(self, session_id: str, seq: int) -> None:
        """Lose the stored event ``seq`` (a hole)."""

    def make_newer(self, session_id: str) -> None:
        """Mark the session as written in a format newer than the backend reads."""

    def rewrite(self, session_id: str, seq: int, record: str) -> None:
        """Replace the stored record of event ``seq`` with ``record`` (any text, kept
        whole: a file's line keeps its line end), as bit rot or a hand edit does."""

    def lose_end(self, session_id: str, count: int) -> None:
        """Lose the last ``count`` stored events as a crash can (a file's lines written
        without an fsync); ``pytest.skip`` when a crash cannot (a transaction lands
        whole)."""


class JsonlDamage:
    """Damage for ``JsonlBackend(directory)``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, session_id: str) -> Path:
        return self.directory / file_name(session_id)

    def tear(self, session_id: str) -> None:
        path = self._path(session_id)
        data = path.read_bytes()
        last = data.rstrip(b"\n").rfind(b"\n") + 1
        path.write_bytes(data[: last + (len(data) - last) // 2])

    def drop(self, session_id: str, seq: int) -> None:
        path = self._path(session_id)
        lines = path.read_bytes().splitlines(keepends=True)
        del lines[seq + 1]  # line 1 is the header
        path.write_bytes(b"".join(lines))

    def rewrite(self, session_id: str, seq: int, record: str) -> None:
        path = self._path(session_id)
        lines = path.read_bytes().splitlines(keepends=True)
        lines[seq + 1] = record.encode() + b"\n"
        path.write_bytes(b"".join(lines))

    def lose_end(self, session_id: str, count: int) -> None:
        path = self._path(session_id)
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(b"".join(lines[:-count]))

    def make_newer(self, session_id: str) -> None:
        path = self._path(session_id)
        header, _, rest = path.read_bytes().partition(b"\n")
        newer = {**json.loads(header), "version": 99}
        path.write_bytes(json.dumps(newer).encode() + b"\n" + rest)


class SqliteDamage:
    """Damage for ``SqliteBackend(path)``: transactions make a torn event impossible."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def tear(self, session_id: str) -> None:
        pytest.skip("SQLite commits whole transactions: an event is never half written")

    def drop(self, session_id: str, seq: int) -> None:
        with closing(sqlite3.connect(self.path)) as db, db:
            db.execute("DELETE FROM events WHERE session=? AND seq=?", (session_id, seq))

    def rewrite(self, session_id: str, seq: int, record: str) -> None:
        with closing(sqlite3.connect(self.path)) as db, db:
            db.execute(
                "UPDATE events SET line=? WHERE session=? AND seq=?", (record, session_id, seq)
            )

    def lose_end(self, session_id: str, count: int) -> None:
        pytest.skip(_WHOLE)

    def make_newer(self, session_id: str) -> None:
        with closing(sqlite3.connect(self.path)) as db:
            db.execute("PRAGMA user_version=99")


class PostgresDamage:
    """Damage for ``PostgresBackend(url)``: transactions make a torn event impossible."""

    def __init__(self, url: str) -> None:
        self.url = url

    def _execute(self, sql: str, *args: object) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as db:
            db.execute(sql.encode(), args)

    def tear(self, session_id: str) -> None:
        pytest.skip("PostgreSQL commits whole transactions: an event is never half written")

    def drop(self, session_id: str, seq: int) -> None:
        self._execute("DELETE FROM dsh_events WHERE session=%s AND seq=%s", session_id, seq)

    def rewrite(self, session_id: str, seq: int, record: str) -> None:
        sql = "UPDATE dsh_events SET line=%s WHERE session=%s AND seq=%s"
        self._execute(sql, record, session_id, seq)

    def lose_end(self, session_id: str, count: int) -> None:
        pytest.skip(_WHOLE)

    def make_newer(self, session_id: str) -> None:
        self._execute("UPDATE dsh_version SET version=99")
