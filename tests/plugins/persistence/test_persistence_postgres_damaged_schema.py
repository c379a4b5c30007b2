"""A PostgreSQL schema that holds some of dsh's data tables but not all is a damaged
store, not an empty one: reads and writes fail, naming the schema and the missing
tables, and nothing is created there. (Only ``dsh_version``, with or without its row, is
a setup left half done: nothing to lose, read as empty, see
test_persistence_reading_creates_nothing.py.) A lone ``dsh_version`` earlier in the
search path does not hide a complete store in a later schema."""

from __future__ import annotations

from typing import Any

import pytest
from test_persistence_reading_creates_nothing import saved, tables

from dsh_persistence import PersistenceError, PostgresBackend

pytestmark = pytest.mark.plugins("persistence")


@pytest.mark.parametrize(
    "dropped",
    [("dsh_workspaces",), ("dsh_events", "dsh_version"), ("dsh_sessions",)],
    ids=["dsh_workspaces", "dsh_events and dsh_version", "dsh_sessions"],
)
def test_a_schema_missing_some_data_tables_fails_clearly(
    pg_server: Any, dropped: tuple[str, ...]
) -> None:
    """Before: with ``dsh_workspaces`` dropped from a store holding a session, reads
    said there was none (``load`` None, ``delete`` False) and the next write silently
    created the table again."""
    schema = pg_server.schema()
    writer = PostgresBackend(pg_server.url(schema))
    try:
        saved(writer, "keep")
    finally:
        writer.close()
    for table in dropped:
        pg_server.execute(f'DROP TABLE "{schema}".{table}')
    left = tables(pg_server, schema)

    backend = PostgresBackend(pg_server.url(schema))
    try:
        reads: list[Any] = [
            backend.headers,
            lambda: backend.load("keep"),
            lambda: backend.tail("keep"),
            lambda: backend.delete("keep"),
            lambda: saved(backend, "new"),
            lambda: backend.claim("new"),
        ]
        for call in reads:
            with pytest.raises(PersistenceError) as caught:
                call()
            message = str(caught.value)
            assert f'schema "{schema}"' in message, message
            for table in dropped:
                assert table in message, message
            assert "missing" in message and "restore" in message, message
    finally:
        backend.close()
    assert tables(pg_server, schema) == left  # nothing created


def test_a_lone_version_table_earlier_in_the_search_path_hides_no_store(
    pg_server: Any,
) -> None:
    """A stray ``dsh_version`` in the first schema of the search path: the complete
    store in the later schema is the one read and written (before, the reads found no
    session and the first write created the tables beside the stray one)."""
    stray, store = pg_server.schema(), pg_server.schema()
    writer = PostgresBackend(pg_server.url(store))
    try:
        saved(writer, "real")
    finally:
        writer.close()
    pg_server.execute(f'CREATE TABLE "{stray}".dsh_version (version integer NOT NULL)')

    backend = PostgresBackend(pg_server.url(f"{stray},{store}"))
    try:
        assert [h.id for h in backend.headers()] == ["real"]
        saved(backend, "new")
        assert sorted(h.id for h in backend.headers()) == ["new", "real"]
    finally:
        backend.close()
    assert tables(pg_server, stray) == ["dsh_version"]
