"""dsh-persistence's secret variables (``register_secrets``): with the sessions in a real
PostgreSQL server whose TCP port asks for a password, and that password in
``$DSH_PERSISTENCE_URL`` and ``$PGPASSWORD``, the real ``bash`` tool's commands run
without both variables, and the password a command prints from elsewhere is stored as
``***`` (the rest of the URL as it is). tests/cli/test_run_secrets.py reads dsh's own
environment through ``/proc/$PPID/environ`` in a real ``dsh run``."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest
from pg_server import PASSWORD

from dsh import get_logger, hookimpl, redact
from dsh.harness import Harness
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls

pytestmark = pytest.mark.plugins("persistence")

LIMIT = 10


def stored_events(server: Any, schema: str) -> str:
    """Every stored event of the store in ``schema``, as text."""
    import psycopg

    with psycopg.connect(server.url(schema), autocommit=True) as db:
        return repr(db.execute("SELECT line FROM dsh_events").fetchall())


async def test_commands_run_without_the_postgres_password(
    pg_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    schema = pg_server.schema()
    url = pg_server.tcp_url(schema)
    monkeypatch.setenv("DSH_PERSISTENCE_URL", url)
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    # a password a command finds elsewhere (dsh's own environment, a file) is hidden
    (tmp_path / "found.txt").write_text(f"url={url}\npassword={PASSWORD}\n")
    command = "env | grep -c -e '^PGPASSWORD=' -e '^DSH_PERSISTENCE_URL='; cat found.txt"
    model = ScriptedModel([tool_calls(("bash", {"command": command})), text("ok")])

    class Models:
        @hookimpl
        def register_models(self, register: Any) -> None:
            register(model)

    config = "persistence:\n  backend: postgresql\n"  # the URL: $DSH_PERSISTENCE_URL
    async with Harness(
        plugins=[("models", Models())], config_text=config, workspace=tmp_path
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "go")
    [result] = [e.data["content"] for e in events if e.type == "tool/result"]
    shown = url.replace(f":{PASSWORD}@", ":***@")
    assert result == f"0\nurl={shown}\npassword=***\n[exit code 0]"
    stored = stored_events(pg_server, schema)
    assert "password=***" in stored  # the session was stored, with the tool's result
    assert PASSWORD not in stored


@pytest.mark.parametrize("source", ["dsh.yml", "code"])
async def test_a_password_written_into_the_url_is_hidden(
    pg_server: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    source: str,
) -> None:
    """A password written into ``persistence.url`` (in dsh.yml, which a command can read,
    or in the settings a program pins) is hidden once the plugin has its settings, as
    one in ``$DSH_PERSISTENCE_URL`` is: in tool results and the stored session, in log
    records, and by ``dsh.redact``. Found so: only environment variables were."""
    from dsh_persistence import PersistencePlugin, PersistenceSettings

    schema = pg_server.schema()
    role, password = f"r{uuid.uuid4().hex[:12]}", f"yml-{uuid.uuid4().hex}"  # known to no one yet
    pg_server.execute(f"CREATE ROLE {role} LOGIN SUPERUSER PASSWORD '{password}'")
    url = (
        f"postgresql://{role}:{password}@127.0.0.1:{pg_server.port}/postgres"
        f"?options=-csearch_path%3D{schema}"
    )
    monkeypatch.delenv("DSH_PERSISTENCE_URL", raising=False)
    monkeypatch.delenv("PGPASSWORD", raising=False)
    (tmp_path / "found.txt").write_text(f"url={url}\n")
    model = ScriptedModel([tool_calls(("bash", {"command": "cat found.txt"})), text("ok")])

    class Models:
        @hookimpl
        def register_models(self, register: Any) -> None:
            register(model)

    plugins: list[tuple[str, object]] = [("models", Models())]
    if source == "dsh.yml":
        monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
        config, entry_points = f"persistence:\n  backend: postgresql\n  url: '{url}'\n", True
    else:
        pinned = PersistenceSettings(backend="postgresql", url=url)
        plugins.append(("store", PersistencePlugin(pinned)))
        config, entry_points = "", False
    async with Harness(
        plugins=plugins, load_entry_points=entry_points, config_text=config, workspace=tmp_path
    ) as harness:
        assert redact(f"said {password}.") == "said ***."
        with caplog.at_level(logging.WARNING):
            get_logger("dsh.test_secrets").warning("quoted %s", password)
        agent = await harness.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "go")
    [result] = [e.data["content"] for e in events if e.type == "tool/result"]
    assert result == f"url={url.replace(password, '***')}\n[exit code 0]"
    assert "quoted ***" in caplog.text and password not in caplog.text
    stored = stored_events(pg_server, schema)
    assert "url=postgresql://" in stored  # the session was stored, with the tool's result
    assert password not in stored


async def test_an_option_holding_a_key_dsh_holds_is_stored_hidden_in_the_header(
    settings: Any,
) -> None:
    """An agent option whose value is a secret dsh holds (``options: {note: <the key>}``)
    is stored in the session's header as ``***`` (it was stored whole), whichever backend;
    a resume rebuilds the option so."""
    from dsh_persistence import PersistencePlugin

    key = f"sk-held-{uuid.uuid4().hex}"
    plugins = [("persistence", PersistencePlugin(settings)), ("secret", Held(key))]
    model = ScriptedModel([text("ok")])
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted", "note": key})
        with anyio.fail_after(LIMIT):
            (await agent.prompt("hi")).raise_for_error()
        store = await harness.relay.session_persistence()
        assert store is not None
        loaded = await store.load(agent.session.id)
    assert loaded.meta["options"]["note"] == "***"
    assert not holding(Path(settings.directory), key)


def holding(directory: Path, secret: str) -> list[Path]:
    """The files under ``directory`` holding ``secret``."""
    return [p for p in directory.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


class Held:
    """A plugin that holds a secret (one it read from its settings)."""

    def __init__(self, secret: str) -> None:
        self.secret = secret

    @hookimpl
    def harness_started(self, harness: Any) -> None:
        harness.add_secrets([self.secret])
