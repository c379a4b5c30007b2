"""The PostgreSQL backend through the settings, a harness and ``dsh sessions``, and its
secrets: the password of ``persistence.url`` never reaches a message, ``location``, the
command's output or the stored sessions; it may come from libpq's ``PGPASSWORD``
instead. Against a real server (``pg_server``), whose TCP port asks for a password."""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any

import anyio
import pytest
from pg_server import PASSWORD, free_port

from dsh.testing import ScriptedModel, run_turn, scripted_harness
from dsh_persistence import (
    PersistenceError,
    PersistenceSettings,
    PostgresBackend,
    SessionInfo,
    open_backend,
)
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

LIMIT = 10


def everything_said(error: BaseException) -> str:
    """The error as `dsh -v` prints it (its traceback, with its causes and contexts), and
    every error chained to it, a context `from None` hides included (a reporter that
    walks ``__context__`` still finds it)."""
    said = ["".join(traceback.format_exception(error))]
    chained: BaseException | None = error
    for _ in range(20):
        if chained is None:
            break
        said.append(repr(chained))
        chained = chained.__cause__ or chained.__context__
    return "\n".join(said)


def rows(server: Any, schema: str) -> str:
    """Every stored row of the store in ``schema``, as text."""
    import psycopg

    with psycopg.connect(server.url(schema), autocommit=True) as db:
        found = [
            db.execute(f"SELECT * FROM {table}").fetchall()
            for table in ("dsh_sessions", "dsh_events", "dsh_workspaces")
        ]
    return repr(found)


def test_postgres_and_postgresql_choose_the_backend(pg_url: str) -> None:
    for name in ("postgresql", "postgres"):
        settings = PersistenceSettings(backend=name, url=pg_url)  # type: ignore[arg-type]
        assert settings.backend == "postgresql"
        backend = open_backend(settings)
        try:
            assert isinstance(backend, PostgresBackend)
            assert backend.location == pg_url
            assert backend.stored_in is None
            backend.prepare()  # connects and creates the tables
        finally:
            backend.close()


def test_the_url_comes_from_the_setting_else_dsh_persistence_url() -> None:
    env = {"DSH_PERSISTENCE_URL": "postgresql://env/db"}
    assert PersistenceSettings(url="host=a").postgres_url(env) == ("host=a", "persistence.url")
    assert PersistenceSettings().postgres_url(env) == (
        "postgresql://env/db",
        "$DSH_PERSISTENCE_URL; persistence.url is not set",
    )
    assert PersistenceSettings().postgres_url({})[0] == ""
    assert "url" not in repr(PersistenceSettings(url="postgresql://u:pw@h/db"))


async def test_a_harness_stores_and_resumes_through_dsh_yml(
    pg_server: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    schema = pg_server.schema()
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    config = f"persistence:\n  backend: postgresql\n  url: '{pg_server.tcp_url(schema)}'\n"
    async with scripted_harness(ScriptedModel(["one"]), config_text=config) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "first")
        session_id, logged = agent.session.id, len(agent.session.events)
    model = ScriptedModel(["two"])
    async with scripted_harness(model, config_text=config) as harness:
        resumed = await harness.agents.resume("a", session_id, options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            events = await run_turn(resumed, "second")
    assert events[0].seq == logged
    history = model.requests[0].messages  # the stored turn, then the new prompt
    assert [history[0].content, history[-1].content] == ["first", "second"]
    assert len(history) == 3
    stored = rows(pg_server, schema)
    assert "second" in stored
    assert PASSWORD not in stored
    assert PASSWORD not in caplog.text


def dsh(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DSH_LOAD_PLUGINS": "persistence", "PYTHONUNBUFFERED": "1"}
    env.pop("PGPASSWORD", None)
    return subprocess.run(
        [sys.executable, "-m", "dsh.cli", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_dsh_sessions_list_shows_the_store_without_its_password(
    pg_server: Any, tmp_path: Path
) -> None:
    url = pg_server.tcp_url(pg_server.schema())
    (tmp_path / "dsh.yml").write_text(f"persistence:\n  backend: postgres\n  url: '{url}'\n")
    empty = dsh("sessions", "list", cwd=tmp_path)
    assert empty.returncode == 0, empty.stderr
    shown = url.replace(f":{PASSWORD}@", ":***@")
    assert empty.stderr == f"no stored sessions in {shown}\n"

    log = LogBuilder()
    log.turn("a stored question", calls=())
    backend = PostgresBackend(url)
    backend.append(SessionInfo("pg-1", 1.0, title="a stored question"), log.events, durable=True)
    backend.close()
    listed = dsh("-v", "sessions", "list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "pg-1" in listed.stdout
    assert "a stored question" in listed.stdout
    assert PASSWORD not in listed.stdout + listed.stderr


def test_a_refused_connection_names_the_setting_and_hides_the_password(tmp_path: Path) -> None:
    url = f"postgresql://me:{PASSWORD}@127.0.0.1:{free_port()}/db"
    backend = open_backend(PersistenceSettings(backend="postgresql", url=url))
    try:
        with pytest.raises(PersistenceError) as caught:
            backend.prepare()
    finally:
        backend.close()
    message = str(caught.value)
    assert message.startswith(f"postgresql://me:***@127.0.0.1:{url.rsplit(':', 1)[1]} ")
    assert "(persistence.url): cannot connect to the session database" in message
    assert "Connection refused" in message
    assert PASSWORD not in everything_said(caught.value)

    (tmp_path / "dsh.yml").write_text(f"persistence:\n  backend: postgresql\n  url: {url}\n")
    failed = dsh("-v", "sessions", "list", cwd=tmp_path)  # -v: with the traceback
    assert failed.returncode == 2
    assert "persistence.url" in failed.stderr
    assert "postgresql://me:***@127.0.0.1" in failed.stderr
    assert PASSWORD not in failed.stdout + failed.stderr


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("postgresql://me:{pw}%zz@127.0.0.1/db", "invalid percent-encoded token"),
        ("host=127.0.0.1 password='{pw} oops", "unterminated quoted string"),
    ],
    ids=["echoed-by-libpq", "conninfo"],
)
def test_a_malformed_url_is_reported_without_its_password(url: str, reason: str) -> None:
    """libpq quotes a malformed URL's bad part back, here the password itself."""
    backend = PostgresBackend(url.format(pw=PASSWORD), source="persistence.url")
    with pytest.raises(PersistenceError, match=reason) as caught:
        backend.prepare()
    backend.close()
    assert "***" in str(caught.value)
    assert PASSWORD not in everything_said(caught.value)


def test_a_missing_database_is_named(pg_server: Any) -> None:
    url = pg_server.tcp_url(pg_server.schema()).replace("/postgres?", "/no_such_db?")
    backend = PostgresBackend(url, source="persistence.url")
    with pytest.raises(PersistenceError, match='database "no_such_db" does not exist') as c:
        backend.prepare()
    backend.close()
    assert "(persistence.url): cannot connect" in str(c.value)
    assert PASSWORD not in everything_said(c.value)


def test_the_password_may_come_from_pgpassword(
    pg_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = pg_server.tcp_url(pg_server.schema(), password=None)
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", os.devnull)
    without = PostgresBackend(url, source="persistence.url")
    with pytest.raises(PersistenceError, match="password"):
        without.prepare()
    without.close()
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    backend = PostgresBackend(url)
    try:
        backend.prepare()
        assert backend.location == url
    finally:
        backend.close()


def test_without_psycopg_the_error_names_the_setting_and_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if not installed
    with pytest.raises(PersistenceError) as caught:
        open_backend(PersistenceSettings(backend="postgresql"))
    message = str(caught.value)
    assert "persistence.backend is postgresql" in message
    assert "pip install 'dsh-persistence[postgres]'" in message


def test_psycopg_is_imported_only_when_the_backend_is_chosen(tmp_path: Path) -> None:
    code = (
        "import sys, dsh_persistence as p\n"
        "p.open_backend(p.PersistenceSettings(directory=sys.argv[1])).headers()\n"
        "assert 'psycopg' not in sys.modules, 'imported'\n"
        "p.open_backend(p.PersistenceSettings(backend='postgresql'))\n"
        "assert 'psycopg' in sys.modules\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


def lsn(server: Any, query: str) -> int:
    import psycopg

    with psycopg.connect(server.url(), autocommit=True) as db:
        row = db.execute(f"SELECT {query} - '0/0'::pg_lsn").fetchone()  # type: ignore[arg-type]
    assert row is not None
    return int(row[0])


def test_sync_flushes_the_wal_past_non_durable_appends(pg_server: Any) -> None:
    """Non-durable appends commit without waiting for the WAL (``synchronous_commit``
    off); ``sync`` makes them durable. The test server's WAL writer wakes every 10 s."""
    backend = PostgresBackend(pg_server.url(pg_server.schema()))
    try:
        log = LogBuilder()
        log.turn("one")
        backend.append(SessionInfo("s", 1.0), log.events[:3], durable=True)
        for seq in range(3, len(log.events)):
            backend.append(SessionInfo("s", 1.0), log.events[seq : seq + 1], durable=False)
            written = lsn(pg_server, "pg_current_wal_insert_lsn()")
            if lsn(pg_server, "pg_current_wal_flush_lsn()") < written:
                break
        else:
            pytest.fail("every non-durable append was flushed at once")
        backend.sync("s")
        assert lsn(pg_server, "pg_current_wal_flush_lsn()") >= written
    finally:
        backend.close()


def test_a_missing_server_skips_unless_dsh_require_postgres(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The nox sessions of dsh-persistence set ``DSH_REQUIRE_POSTGRES=1``: there the
    PostgreSQL tests fail when no server can be started, rather than pass as skips."""
    import pg_server

    monkeypatch.setattr(pg_server, "bindir", lambda: None)
    monkeypatch.delenv("DSH_REQUIRE_POSTGRES", raising=False)
    with pytest.raises(pytest.skip.Exception, match="PostgreSQL's initdb"):
        pg_server.require()
    monkeypatch.setenv("DSH_REQUIRE_POSTGRES", "1")
    with pytest.raises((pytest.fail.Exception, pytest.skip.Exception)) as caught:
        pg_server.require()
    assert caught.type is pytest.fail.Exception
    assert "DSH_REQUIRE_POSTGRES=1 makes that an error" in str(caught.value)


def test_text_postgresql_cannot_hold_is_stored_exactly_or_shown(pg_url: str) -> None:
    """PostgreSQL text holds neither NUL nor lone surrogates: events (JSON, escaped) and
    the meta keep both exactly; the title and directory, for display, show them as
    U+FFFD (stored as given, a NUL in a prompt would make every flush fail)."""
    log = LogBuilder()
    log.turn("nul \x00 and \udcff here", calls=())
    log.add("note/odd", {"text": "a\x00b\ud800c"})
    info = SessionInfo("s", 1.0, {"k": "\udcff\x00"}, "/w/caf\udce9\x00", "t\x00itle")
    backend = PostgresBackend(pg_url)
    try:
        backend.append(info, log.events, durable=True)
        loaded = backend.load("s")
        assert loaded is not None
        assert [e.to_dict() for e in loaded.stored.events] == [e.to_dict() for e in log.events]
        assert loaded.stored.meta == {"k": "\udcff\x00"}
        (header,) = backend.headers()
        assert (header.title, header.workspace) == ("t\ufffditle", "/w/caf\ufffd\ufffd")
    finally:
        backend.close()


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://me:p%40ss@h:5/db", "postgresql://me:***@h:5/db"),
        ("postgres://me:a@b@h/db", "postgres://me:***@h/db"),  # an @ left unencoded
        (
            "postgresql://me@h/db?sslmode=require&password=pw",
            "postgresql://me@h/db?sslmode=require&password=***",
        ),
        ("postgresql://me@h/db", "postgresql://me@h/db"),
        ("host=h password=pw user=me", "host=h password=*** user=me"),
        ("host=h password = 'p w\\'x' user=me", "host=h password = *** user=me"),
        ("host=h user=me", "host=h user=me"),
        # libpq reads the userinfo up to the first @, whatever ? or # it holds
        ("postgresql://me:p#ss@h/db", "postgresql://me:***@h/db"),
        ("postgresql://me:p?ss@h/db", "postgresql://me:***@h/db"),
        ("postgresql://me@h/db?password=p#ss", "postgresql://me@h/db?password=***"),
        # the client key's password, and a dbname that is a connection string itself
        ("host=h sslpassword=kp user=me", "host=h sslpassword=*** user=me"),
        ("postgresql://me@h/db?sslpassword=kp", "postgresql://me@h/db?sslpassword=***"),
        ("dbname=postgresql://me:pw@h/db", "dbname=postgresql://me:***@h/db"),
        ("host=h password=a\\ b user=me", "host=h password=*** user=me"),  # escaped space
        # a scheme libpq does not read (SQLAlchemy's): still a URL holding a password
        ("postgresql+psycopg://me:pw@h/db", "postgresql+psycopg://me:***@h/db"),
        ("POSTGRES://me:pw@h/db?password=q", "POSTGRES://me:***@h/db?password=***"),
    ],
)
def test_every_place_libpq_takes_a_password_from_is_hidden(url: str, shown: str) -> None:
    from dsh_persistence._postgres_url import hide_password, scrub

    assert hide_password(url) == shown
    # (a message quoting the whole string: hidden where the password stands in it)
    assert scrub(f"no: {url}", url) == f"no: {shown}"


@pytest.mark.parametrize("scheme", ["postgresql+psycopg", "postgres+asyncpg", "POSTGRESQL"])
def test_a_url_scheme_libpq_does_not_read_is_refused_without_its_password(
    scheme: str, tmp_path: Path
) -> None:
    """libpq reads ``postgresql://`` and ``postgres://`` only: another scheme (a
    SQLAlchemy URL) is refused when the store is opened, naming the setting, and the
    password is never shown (it was: such a URL was not known for one)."""
    url = f"{scheme}://me:{PASSWORD}@127.0.0.1:{free_port()}/db"
    wanted = f"persistence.url: scheme {scheme!r} is not one libpq reads; use postgresql://"
    with pytest.raises(PersistenceError) as caught:
        open_backend(PersistenceSettings(backend="postgresql", url=url))
    assert str(caught.value) == wanted
    assert PASSWORD not in everything_said(caught.value)

    (tmp_path / "dsh.yml").write_text(f"persistence:\n  backend: postgresql\n  url: {url}\n")
    failed = dsh("-v", "sessions", "list", cwd=tmp_path)
    assert failed.returncode == 2 and wanted in failed.stderr
    assert PASSWORD not in failed.stdout + failed.stderr


def test_libpqs_defaults_are_named_once_when_they_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DSH_PERSISTENCE_URL", raising=False)
    monkeypatch.setenv("PGHOST", "127.0.0.1")
    monkeypatch.setenv("PGPORT", str(free_port()))
    backend = open_backend(PersistenceSettings(backend="postgresql"))
    try:
        with pytest.raises(PersistenceError) as caught:
            backend.prepare()
    finally:
        backend.close()
    message = str(caught.value)
    assert message.startswith(
        "postgresql (libpq's defaults) (persistence.url and $DSH_PERSISTENCE_URL are not "
        "set): cannot connect"
    )
    assert message.count("libpq's defaults") == 1
