"""A blank ``$DSH_PERSISTENCE_DIR`` or ``$DSH_PERSISTENCE_URL`` is refused, naming it.

Blank ``directory:`` and ``url:`` in dsh.yml were refused (test_persistence_settings.py),
but blank variables got through: ``DSH_PERSISTENCE_DIR="  " dsh run hi`` made a
directory named with two spaces in the workspace, and ``DSH_PERSISTENCE_URL="   "``
became libpq's defaults, its error naming an empty location. An empty variable still
counts as unset. ``PersistenceSettings(directory=Path(" "))`` in code is refused as the
key is.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import ValidationError

from dsh.cli import main
from dsh.testing import ScriptedModel, text
from dsh_persistence import PersistenceError, PersistenceSettings, default_directory

pytestmark = pytest.mark.plugins("persistence")


@pytest.mark.parametrize("value", [" ", "  ", "\t\n"])
def test_a_blank_directory_variable_is_refused_naming_it(value: str) -> None:
    with pytest.raises(PersistenceError, match=r"^\$DSH_PERSISTENCE_DIR is blank: unset it"):
        default_directory({"DSH_PERSISTENCE_DIR": value})
    with pytest.raises(PersistenceError, match=r"^\$DSH_PERSISTENCE_DIR is blank"):
        PersistenceSettings().session_directory({"DSH_PERSISTENCE_DIR": value})


@pytest.mark.parametrize("value", [" ", "   ", "\t"])
def test_a_blank_url_variable_is_refused_naming_it(value: str) -> None:
    settings = PersistenceSettings(backend="postgresql")
    with pytest.raises(PersistenceError, match=r"^\$DSH_PERSISTENCE_URL is blank: unset it"):
        settings.postgres_url({"DSH_PERSISTENCE_URL": value})


def test_empty_variables_still_count_as_unset() -> None:
    settings = PersistenceSettings(backend="postgresql")
    assert settings.postgres_url({"DSH_PERSISTENCE_URL": ""})[0] == ""
    assert default_directory({"DSH_PERSISTENCE_DIR": "", "XDG_DATA_HOME": "/d"}) == Path(
        "/d/dsh/sessions"
    )


@pytest.mark.parametrize("key", ["directory", "database"])
def test_a_blank_path_given_in_code_is_refused(key: str) -> None:
    with pytest.raises(ValidationError, match="is empty: leave it out for the default"):
        PersistenceSettings.model_validate({key: Path("  ")})


def test_dsh_run_with_a_blank_directory_variable_makes_no_directory(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    scripted_cli: Callable[[ScriptedModel], ScriptedModel],
) -> None:
    """The reviewer's repro: ``cd ws; DSH_PERSISTENCE_DIR="  " dsh -m scripted run hi``
    went on (rc 0) and left a directory ``"  "`` in the workspace."""
    scripted_cli(ScriptedModel([text("done")]))
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    monkeypatch.setenv("DSH_PERSISTENCE_DIR", "  ")
    monkeypatch.chdir(tmp_path)
    assert main(["-m", "scripted", "run", "hi"]) != 0
    assert "$DSH_PERSISTENCE_DIR is blank" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
