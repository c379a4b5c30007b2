"""Settings: the default directory, and the ``persistence:`` section of dsh.yml."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from dsh import ConfigError
from dsh.harness import Harness
from dsh.testing import ScriptedModel, run_turn, scripted_harness
from dsh_persistence import PersistenceSettings, default_directory

pytestmark = pytest.mark.plugins("persistence")

LIMIT = 10


def test_the_default_directory_honours_the_environment(tmp_path: Path) -> None:
    home = Path.home() / ".local" / "share" / "dsh" / "sessions"
    assert default_directory({"DSH_PERSISTENCE_DIR": "/x/y"}) == Path("/x/y")
    both = {"DSH_PERSISTENCE_DIR": "/x/y", "XDG_DATA_HOME": "/data"}
    assert default_directory(both) == Path("/x/y")
    assert default_directory({"XDG_DATA_HOME": "/data"}) == Path("/data/dsh/sessions")
    assert default_directory({"XDG_DATA_HOME": "relative"}) == home  # XDG: must be absolute
    assert default_directory({"DSH_PERSISTENCE_DIR": ""}) == home
    settings = PersistenceSettings(backend="sqlite", directory=tmp_path)
    assert settings.database_path() == tmp_path / "sessions.sqlite3"


async def test_the_dsh_yml_section_chooses_the_store_of_the_entry_point_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    monkeypatch.setenv("DSH_PERSISTENCE_DIR", str(tmp_path / "default"))
    config = f"persistence:\n  backend: sqlite\n  directory: {tmp_path / 'configured'}\n"
    for text_, where in ((config, "configured"), (None, "default")):
        async with scripted_harness(ScriptedModel(["hi"]), config_text=text_) as harness:
            agent = await harness.agents.create("a", options={"model": "scripted"})
            with anyio.fail_after(LIMIT):
                await run_turn(agent, "hello")
            assert harness.config.section("persistence") is not None or text_ is None
        names = {p.name for p in (tmp_path / where).iterdir()}
        wanted = "sessions.sqlite3" if where == "configured" else f"{agent.session.id}.jsonl"
        assert wanted in names


@pytest.mark.parametrize(
    ("section", "path"),
    [
        ("persistence:\n  backend: mysql\n", "persistence.backend"),
        ("persistence:\n  fsync: sometimes\n", "persistence.fsync"),
        ("persistence:\n  directroy: /tmp\n", "persistence.directroy"),
        ("persistence:\n  checkpoint_delay: 1e308\n", "persistence.checkpoint_delay"),
        ("persistence:\n  checkpoint_delay: 3601\n", "persistence.checkpoint_delay"),
        ("persistence:\n  checkpoint_delay: -1\n", "persistence.checkpoint_delay"),
        ("persistence:\n  checkpoint_delay: .inf\n", "persistence.checkpoint_delay"),
        ("persistence:\n  checkpoint_delay: .nan\n", "persistence.checkpoint_delay"),
        ('persistence:\n  directory: ""\n', "persistence.directory"),
        ("persistence:\n  database: ''\n", "persistence.database"),
        ("persistence:\n  directory: '  '\n", "persistence.directory"),
        ("persistence:\n  backend: postgresql\n  url: ''\n", "persistence.url"),
        ("persistence:\n  backend: postgresql\n  url: ' '\n", "persistence.url"),
        # strict, as the core's options: quoted, they are text (they were taken)
        ("persistence:\n  checkpoints: 'yes'\n", "persistence.checkpoints"),
        ("persistence:\n  checkpoint_delay: '0.5'\n", "persistence.checkpoint_delay"),
    ],
)
async def test_a_bad_section_stops_start_up_naming_the_key(
    section: str, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    with pytest.raises(ConfigError) as caught:
        async with Harness(config_text=section):
            pass
    assert caught.value.path == path


def test_checkpoint_delay_accepts_zero_to_an_hour() -> None:
    assert PersistenceSettings(checkpoint_delay=0).checkpoint_delay == 0
    assert PersistenceSettings(checkpoint_delay=0.5).checkpoint_delay == 0.5
    assert PersistenceSettings.model_validate({"checkpoints": False}).checkpoints is False
    assert PersistenceSettings(checkpoint_delay=3600).checkpoint_delay == 3600


def test_messages_name_where_the_location_comes_from(tmp_path: Path) -> None:
    env = {"DSH_PERSISTENCE_DIR": "/x"}
    assert PersistenceSettings(directory=tmp_path).directory_source(env) == "persistence.directory"
    assert PersistenceSettings().directory_source(env).startswith("$DSH_PERSISTENCE_DIR")
    assert PersistenceSettings().directory_source({}).startswith("the default")
    sqlite = PersistenceSettings(backend="sqlite", database=tmp_path / "s.db")
    assert sqlite.database_source(env) == "persistence.database"


@pytest.mark.parametrize("value", ["", "   ", "\t\n"])
@pytest.mark.parametrize("key", ["directory", "database"])
def test_an_empty_path_is_refused_not_taken_for_the_workspace(key: str, value: str) -> None:
    """``directory: ""`` would be the path ``.``: the workspace itself, which nobody
    meant (an empty $DSH_PERSISTENCE_DIR counts as unset); refused saying so. Blank
    (spaces only) was taken as a directory named so in the workspace."""
    with pytest.raises(ValueError, match="is empty: leave it out for the default"):
        PersistenceSettings.model_validate({key: value})


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_url_is_refused_not_taken_for_libpqs_defaults(value: str) -> None:
    """``url: ""`` was taken: $DSH_PERSISTENCE_URL was then ignored and libpq's defaults
    (a local socket, the user's name) used instead."""
    message = r"is empty: leave it out for \$DSH_PERSISTENCE_URL or libpq's defaults"
    with pytest.raises(ValueError, match=message):
        PersistenceSettings.model_validate({"backend": "postgresql", "url": value})


@pytest.mark.parametrize(
    ("section", "warning"),
    [
        (
            "  url: postgresql://u@h/db\n",
            "persistence.url is ignored: the jsonl backend does not use it "
            "(it is for backend: postgresql)",
        ),
        (
            "  backend: jsonl\n  database: s.db\n",
            "persistence.database is ignored: the jsonl backend does not use it "
            "(it is for backend: sqlite)",
        ),
        (
            "  backend: postgresql\n  url: postgresql://u@h/db\n  directory: s\n",
            "persistence.directory is ignored: the postgresql backend does not use it "
            "(it is for backend: jsonl or sqlite)",
        ),
        (
            "  backend: sqlite\n  database: s.db\n  directory: s\n",
            "persistence.directory is ignored: persistence.database names the SQLite file",
        ),
    ],
)
async def test_a_key_the_backend_does_not_use_is_a_warning_naming_both(
    section: str, warning: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    config = "persistence:\n" + section
    async with Harness(config_text=config, starts_agents=False):
        pass
    assert warning in caplog.messages


@pytest.mark.parametrize(
    "settings",
    [
        {"directory": "s"},
        {"backend": "sqlite", "directory": "s"},
        {"backend": "sqlite", "database": "s.db"},
        {"backend": "postgresql", "url": "postgresql://u@h/db"},
    ],
)
def test_keys_the_backend_uses_are_no_warning(settings: dict[str, str]) -> None:
    assert PersistenceSettings.model_validate(settings).unused() == []


@pytest.mark.parametrize(
    "value",
    ["postgresql://dsh:${PGPASS}@db/dsh", "${DATABASE_URL}", "$DATABASE_URL", "host=${H}"],
)
def test_a_variable_in_the_url_is_refused_not_given_to_libpq(value: str) -> None:
    """dsh.yml expands no variables: ``${PGPASS}`` was libpq's password as written."""
    message = r"holds a variable \(\$NAME or \$\{NAME\}\), which is not expanded: leave url"
    with pytest.raises(ValueError, match=message):
        PersistenceSettings.model_validate({"url": value})


def test_a_dollar_in_a_password_is_kept() -> None:
    url = "postgresql://dsh:pa$word@db/dsh"
    assert PersistenceSettings.model_validate({"url": url}).url == url
