"""``PersistenceSettings`` as docs/persistence.md ("Configuration") describes it: the
defaults, the limits of ``checkpoint_delay``, the default directory, ``~`` expansion,
and which settings share one store."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from dsh_persistence import PersistenceSettings
from dsh_persistence._settings import default_directory

pytestmark = pytest.mark.plugins("persistence")

HOME_DEFAULT = Path.home() / ".local" / "share" / "dsh" / "sessions"


def test_the_documented_defaults() -> None:
    settings = PersistenceSettings()
    assert settings.backend == "jsonl"
    assert settings.fsync == "flush"
    assert settings.checkpoints is True
    assert settings.checkpoint_delay == 0.05
    assert settings.database is None


@pytest.mark.parametrize("delay", [-0.001, 3600.001, float("inf"), float("nan")])
def test_checkpoint_delay_outside_zero_to_an_hour_is_refused(delay: float) -> None:
    with pytest.raises(ValidationError, match="checkpoint_delay"):
        PersistenceSettings(checkpoint_delay=delay)


def test_an_unknown_key_is_refused() -> None:
    """A misspelt key (``fsyncs``) is an error, not silently ignored."""
    with pytest.raises(ValidationError, match="fsyncs"):
        PersistenceSettings.model_validate({"fsyncs": "never"})


def test_the_environment_directory_expands_the_home_directory() -> None:
    assert default_directory({"DSH_PERSISTENCE_DIR": "~/s"}) == Path.home() / "s"


@pytest.mark.skipif(os.name == "nt", reason="LOCALAPPDATA is the Windows default")
def test_localappdata_is_not_used_outside_windows() -> None:
    assert default_directory({"LOCALAPPDATA": "/c/Users/me/AppData/Local"}) == HOME_DEFAULT


def test_a_database_under_the_home_directory_is_expanded_not_anchored(tmp_path: Path) -> None:
    settings = PersistenceSettings.model_validate(
        {"backend": "sqlite", "database": "~/dsh/db.sqlite3"}
    )
    assert settings.anchored(tmp_path) is settings
    assert settings.database_path() == Path.home() / "dsh" / "db.sqlite3"


def test_the_database_source_without_a_database_setting_is_the_directorys() -> None:
    settings = PersistenceSettings(backend="sqlite", directory=Path("/srv/sessions"))
    assert settings.database_source({}) == "persistence.directory"
    assert PersistenceSettings(backend="sqlite").database_source({}).startswith("the default")


def test_settings_that_differ_in_fsync_at_all_do_not_share_a_store(tmp_path: Path) -> None:
    """A store opened with ``fsync: never`` never fsyncs; a harness configured with
    ``flush`` must not write through it, so the two are different locations."""
    durable = PersistenceSettings(directory=tmp_path)
    never = PersistenceSettings(directory=tmp_path, fsync="never")
    always = PersistenceSettings(directory=tmp_path, fsync="always")
    assert durable.location() != never.location()
    assert durable.location() == always.location()


def test_a_relative_directory_is_made_absolute_from_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Settings not anchored to a workspace take a relative path from the directory of
    the process, once: the store does not move if the process changes directory."""
    monkeypatch.chdir(tmp_path)
    settings = PersistenceSettings(directory=Path("rel"))
    assert settings.session_directory() == tmp_path / "rel"
    assert PersistenceSettings().session_directory({"DSH_PERSISTENCE_DIR": "env"}) == (
        tmp_path / "env"
    )
    assert PersistenceSettings(backend="sqlite", database=Path("d.sqlite3")).database_path() == (
        tmp_path / "d.sqlite3"
    )
