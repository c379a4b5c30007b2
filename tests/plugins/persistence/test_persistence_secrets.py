"""dsh-persistence's secret variables (``register_secrets``): with the sessions in a real
PostgreSQL server whose TCP port asks for a password, and that password in
``$DSH_PERSISTENCE_URL`` and ``$PGPASSWORD``, the real ``bash`` tool's commands run
without both variables, and the password a command prints from elsewhere is stored as
``***`` (the rest of the URL as it is). tests/cli/test_run_secrets.py reads dsh's own
environment through ``/proc/$PPID/environ`` in a real ``dsh run``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from pg_server import PASSWORD

from dsh import hookimpl
from dsh.harness import Harness
from dsh.testing import ScriptedModel, run_turn, text, tool_calls

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
