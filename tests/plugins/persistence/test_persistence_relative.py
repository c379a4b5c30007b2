"""A relative ``persistence.directory`` or ``database`` is taken from the workspace, as
every path in dsh.yml is: a harness and ``dsh sessions`` started from another directory
(``--cwd``, ``Harness(workspace=...)``) use the same store."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

import pytest
import yaml

from dsh.cli import main
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text
from dsh_persistence import (
    JsonlBackend,
    PersistencePlugin,
    PersistenceSettings,
    SessionBackend,
    SessionInfo,
    SqliteBackend,
    open_backend,
)
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

CONFIGS = {
    "jsonl": "persistence:\n  directory: kept/sessions\n",
    "sqlite": "persistence:\n  backend: sqlite\n  directory: kept\n  database: db/all.sqlite3\n",
}


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(workspace, the directory the process runs in): two different directories."""
    workspace, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    workspace.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("DSH_PERSISTENCE_DIR", str(tmp_path / "not-this-one"))
    return workspace, elsewhere


@pytest.mark.parametrize("backend", ["jsonl", "sqlite"])
async def test_a_harness_stores_sessions_under_its_workspace(
    backend: str, places: tuple[Path, Path]
) -> None:
    workspace, elsewhere = places
    model = ScriptedModel([text("hi")])
    plugin = PersistencePlugin()
    async with scripted_harness(
        model,
        plugins=[("persistence", plugin)],
        load_entry_points=False,
        config_text=CONFIGS[backend],
        workspace=workspace,
    ) as harness:
        agent = await harness.agents.create("a", options={"model": model.info.name})
        await run_turn(agent, "hello")
        session_id = agent.session.id
        assert plugin.settings.location()[1].is_relative_to(workspace.resolve())

    # the header's cwd is the agent's workspace, not where the process happens to run
    store: SessionBackend
    if backend == "jsonl":
        stored = workspace / "kept" / "sessions" / f"{session_id}.jsonl"
        cwd = json.loads(stored.read_text().splitlines()[0])["cwd"]
        store = JsonlBackend(workspace / "kept" / "sessions")
    else:
        with contextlib.closing(sqlite3.connect(workspace / "db" / "all.sqlite3")) as db:
            (cwd,) = db.execute("SELECT cwd FROM sessions WHERE id = ?", (session_id,)).fetchone()
        store = SqliteBackend(workspace / "db" / "all.sqlite3")
    assert cwd == str(workspace.resolve())
    # listed with it, so `dsh run --continue` takes the last session of its workspace
    try:
        assert [h.workspace for h in store.headers()] == [str(workspace.resolve())]
    finally:
        store.close()
    assert list(elsewhere.iterdir()) == []  # nothing where the process happens to run


@pytest.mark.parametrize("backend", ["jsonl", "sqlite"])
def test_dsh_sessions_with_cwd_reads_the_workspace_store(
    backend: str,
    places: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    workspace, elsewhere = places
    (workspace / "dsh.yml").write_text(CONFIGS[backend])
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    section = yaml.safe_load(CONFIGS[backend])["persistence"]
    settings = PersistenceSettings.model_validate(section).anchored(workspace.resolve())
    log = LogBuilder()
    log.turn("stored in the project", calls=())
    store = open_backend(settings)
    try:
        store.append(SessionInfo("s-1", log.events[0].time, title="x"), log.events, durable=True)
    finally:
        store.close()

    assert main(["--cwd", str(workspace), "sessions", "list", "--json"]) == 0
    assert [row["id"] for row in json.loads(capsys.readouterr().out)] == ["s-1"]
    assert list(elsewhere.iterdir()) == []


def test_anchoring_leaves_absolute_and_home_paths_alone(tmp_path: Path) -> None:
    settings = PersistenceSettings.model_validate(
        {"directory": "~/sessions", "database": str(tmp_path / "db.sqlite3")}
    )
    assert settings.anchored(tmp_path / "ws") is settings
    relative = PersistenceSettings.model_validate({"directory": "s", "database": "d/x.sqlite3"})
    anchored = relative.anchored(tmp_path / "ws")
    assert anchored.directory == tmp_path / "ws" / "s"
    assert anchored.database == tmp_path / "ws" / "d" / "x.sqlite3"
    assert anchored.session_directory() == tmp_path / "ws" / "s"
