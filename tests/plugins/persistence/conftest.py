"""Persistence tests: not collected at all when dsh-persistence is not installed.

``settings`` runs a test once per backend with files, each in its own temp directory;
``any_store`` once per backend, PostgreSQL too (a fresh schema of ``pg_server``).
``config`` is a dsh.yml choosing that backend and directory, for the ``dsh
sessions`` tests (which pass it with ``-c``: the command must honour it);
``scripted_cli(model)`` makes every ``dsh`` command run in the test see ``model`` as if
an installed plugin registered it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

if find_spec("dsh_persistence") is None:
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture(params=["jsonl", "sqlite"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    from dsh_persistence import PersistenceSettings

    return PersistenceSettings(backend=request.param, directory=tmp_path / "sessions")


@pytest.fixture(params=["jsonl", "sqlite", "postgresql"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    from dsh_persistence import PersistenceSettings

    if request.param == "postgresql":
        url = request.getfixturevalue("pg_url")
        return PersistenceSettings(backend="postgresql", url=url)
    return PersistenceSettings(backend=request.param, directory=tmp_path / "sessions")


@pytest.fixture
def scripted_cli(monkeypatch: pytest.MonkeyPatch) -> Callable[[Any], Any]:
    # dsh.harness binds create_plugin_manager by name when it is first imported: import
    # it before the patch, or it would keep the patched function for every later test
    import dsh.harness
    import dsh.plugins
    from dsh import hookimpl

    def install(model: Any) -> Any:
        class Models:
            @hookimpl
            def register_models(self, register: Any) -> None:
                register(model)

        real = dsh.plugins.create_plugin_manager

        def with_model(plugins: Any = (), **kwargs: Any) -> Any:
            return real([("models", Models()), *plugins], **kwargs)

        monkeypatch.setattr(dsh.plugins, "create_plugin_manager", with_model)
        return model

    return install


@pytest.fixture
def config(settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    monkeypatch.setenv("DSH_PERSISTENCE_DIR", str(tmp_path / "not-this-one"))
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "dsh.yml"
    path.write_text(
        f"persistence:\n  backend: {settings.backend}\n"
        f"  directory: {settings.session_directory()}\n"
    )
    return path


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """A PostgreSQL server for this test process (one per xdist worker): pg_server.py."""
    from pg_server import PgServer, require

    require()
    server = PgServer().start()
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_server: Any) -> str:
    """The URL of a fresh schema of ``pg_server`` (trusted: no password)."""
    return str(pg_server.url(pg_server.schema()))


@pytest.fixture
def open_backend(pg_url: str) -> Iterator[Callable[[], Any]]:
    """Opens ``PostgresBackend``s on ``pg_url`` (a worker each); all closed after the test."""
    from dsh_persistence import PostgresBackend

    opened: list[PostgresBackend] = []

    def opener() -> PostgresBackend:
        opened.append(PostgresBackend(pg_url))
        return opened[-1]

    yield opener
    for backend in opened:
        backend.close()
