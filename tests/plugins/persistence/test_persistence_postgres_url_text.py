"""A PostgreSQL URL that is not text libpq can read is refused in the plugin's own words.

A percent-encoded byte that is not UTF-8 (``%FF`` in the password, ``%E2%28`` in a
query), or a byte of ``$DSH_PERSISTENCE_URL`` that is not UTF-8, escaped from psycopg's
parser as a raw ``UnicodeDecodeError``/``UnicodeEncodeError``, which the harness reported
as the plugin failing in ``harness_started`` ("disable it with -p no:persistence"). It is
now a ``PersistenceError`` as a malformed URL's: the URL without its password, where it
comes from, what is wrong. A NUL in ``persistence.url`` was cut by libpq, which then
connected to what came before it: it is refused at the key, as in ``directory``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
from pathlib import Path

import pytest
from pg_server import PASSWORD, free_port, require

from dsh.errors import ConfigError, HookError
from dsh.harness import Harness
from dsh_persistence import PersistenceError, PersistenceSettings, PostgresBackend, open_backend

pytestmark = pytest.mark.plugins("persistence")

ENV = "$DSH_PERSISTENCE_URL; persistence.url is not set"


@pytest.fixture(autouse=True)
def _psycopg() -> None:
    require()  # psycopg parses the URL


def everything_said(error: BaseException) -> str:
    said = ["".join(traceback.format_exception(error))]
    chained: BaseException | None = error
    while chained is not None:
        said.append(repr(chained))
        chained = chained.__cause__ or chained.__context__
    return "\n".join(said)


def refused(url: str, source: str) -> PersistenceError:
    backend = PostgresBackend(url, source=source)
    try:
        with pytest.raises(PersistenceError) as caught:
            backend.prepare()
    finally:
        backend.close()
    assert PASSWORD not in everything_said(caught.value)
    return caught.value


@pytest.mark.parametrize("source", ["persistence.url", ENV])
@pytest.mark.parametrize(
    ("url", "shown", "said"),
    [
        (
            f"postgresql://dsh:Sup3r%FF{PASSWORD}@127.0.0.1:{{port}}/dsh",
            "postgresql://dsh:***@127.0.0.1:{port}/dsh",
            "the password holds a percent-encoded byte sequence that is not UTF-8 text",
        ),
        (
            f"postgresql://dsh:{PASSWORD}@127.0.0.1:{{port}}/dsh?application_name=%E2%28",
            "postgresql://dsh:***@127.0.0.1:{port}/dsh?application_name=%E2%28",
            "%E2%28 is a percent-encoded byte sequence that is not UTF-8 text",
        ),
        (
            f"postgresql://dsh@127.0.0.1:{{port}}/dsh?password=Sup3r%FF{PASSWORD}",
            "postgresql://dsh@127.0.0.1:{port}/dsh?password=***",
            "the password holds a percent-encoded byte sequence that is not UTF-8 text",
        ),
        (  # a byte of the environment Python could not decode (a lone surrogate)
            f"host=127.0.0.1 port={{port}} password=Sup3r\udcff{PASSWORD}",
            "host=127.0.0.1 port={port} password=***",
            "it holds bytes that are not UTF-8 text",
        ),
    ],
    ids=["password", "query", "query-password", "undecodable"],
)
def test_a_url_that_is_not_utf8_is_refused_naming_it_without_its_password(
    url: str, shown: str, said: str, source: str
) -> None:
    port = free_port()
    error = refused(url.format(port=port), source)
    assert str(error) == (
        f"{shown.format(port=port)} ({source}): cannot connect to the session database: "
        f"{said}, which libpq needs"
    )


def test_the_claims_connection_says_it_alike() -> None:
    backend = PostgresBackend(f"postgresql://u:a%FF{PASSWORD}@127.0.0.1:{free_port()}/d")
    try:
        with pytest.raises(PersistenceError, match="not UTF-8 text") as caught:
            backend.claim("s1")
    finally:
        backend.close()
    assert PASSWORD not in everything_said(caught.value)


def test_the_harness_stops_at_start_in_the_plugins_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"postgresql://dsh:Sup3r%FF{PASSWORD}@127.0.0.1:{free_port()}/dsh"
    (tmp_path / "dsh.yml").write_text(f"persistence:\n  backend: postgresql\n  url: '{url}'\n")
    env = {**os.environ, "DSH_LOAD_PLUGINS": "persistence", "PYTHONUNBUFFERED": "1"}
    failed = subprocess.run(
        [sys.executable, "-m", "dsh.cli", "-v", "sessions", "list"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert failed.returncode == 2, failed.stderr
    assert "(persistence.url): cannot connect to the session database: the password" in (
        failed.stderr
    )
    assert "UnicodeDecodeError" not in failed.stderr
    assert PASSWORD not in failed.stdout + failed.stderr


async def test_a_harness_starting_agents_reports_it_as_the_plugins_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    url = f"postgresql://dsh:{PASSWORD}@127.0.0.1:{free_port()}/dsh?application_name=%E2%28"
    config = f"persistence:\n  backend: postgresql\n  url: '{url}'\n"
    with pytest.raises(HookError) as caught:
        async with Harness(config_text=config):
            pass
    assert isinstance(caught.value.cause, PersistenceError)
    assert "%E2%28 is a percent-encoded byte sequence" in str(caught.value.cause)


def test_a_nul_in_the_url_is_refused_at_its_key() -> None:
    """libpq reads the URL up to the NUL: ``/dsh\\0x`` connected to ``/dsh``."""
    with pytest.raises(ValueError, match="holds a NUL character") as caught:
        PersistenceSettings(backend="postgresql", url=f"postgresql://u:{PASSWORD}@h/dsh\0x")
    assert PASSWORD not in everything_said(caught.value)
    with pytest.raises(PersistenceError) as direct:  # the backend made without settings
        PostgresBackend(f"postgresql://u:{PASSWORD}@h/dsh\0x", source="persistence.url")
    assert str(direct.value) == (
        "persistence.url: holds a NUL character (\\0), at which libpq would cut it"
    )
    assert PASSWORD not in everything_said(direct.value)


async def test_a_nul_in_dsh_yml_stops_start_up_naming_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    config = f'persistence:\n  backend: postgresql\n  url: "postgresql://u:{PASSWORD}@h/d\\0x"\n'
    with pytest.raises(ConfigError) as caught:
        async with Harness(config_text=config):
            pass
    assert caught.value.path == "persistence.url"
    assert "holds a NUL character" in str(caught.value)
    assert PASSWORD not in everything_said(caught.value)


def test_open_backend_refuses_it_too() -> None:
    settings = PersistenceSettings.model_construct(backend="postgresql", url="host=h\0x")
    with pytest.raises(PersistenceError, match="holds a NUL character"):
        open_backend(settings)
