"""A session directory or database Python cannot make a path of, or a directory no file
can be made in, is refused as dsh starts, naming the key (at its line of dsh.yml) or
the variable: they failed as ``plugin 'persistence' failed in hook harness_started:
RuntimeError: Could not determine home directory`` (``~nosuchuser``), ``ValueError:
embedded null byte``, Python's ``Input is not a valid path`` (a number), or, for a
directory such as /proc, passed ``dsh config check`` and failed the first save."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from dsh.cli import main
from dsh.errors import HookError
from dsh.harness import Harness
from dsh_persistence import PersistenceError, PersistenceSettings, default_directory, open_backend

pytestmark = pytest.mark.plugins("persistence")

NO_USER = "~nosuchuser-of-dsh"


def check(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    config = tmp_path / "dsh.yml"
    config.write_text(text)
    status = main(["-c", str(config), "config", "check"])
    return status, capsys.readouterr().err


@pytest.mark.parametrize("key", ["directory", "database"])
@pytest.mark.parametrize(
    ("value", "said"),
    [
        (f'"{NO_USER}/x"', f"no user 'nosuchuser-of-dsh' ({NO_USER})"),
        ('"a\\0b"', "holds a NUL character"),
        ("5", "Input should be a string (a path), not a number"),
        ("[a, b]", "Input should be a string (a path), not a list"),
        ("true", "Input should be a string (a path), not true (a boolean)"),
    ],
)
def test_a_path_python_cannot_use_is_refused_at_its_key_and_line(
    key: str,
    value: str,
    said: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    status, err = check(tmp_path, f"persistence:\n  backend: sqlite\n  {key}: {value}\n", capsys)
    assert status == 1
    assert "dsh.yml:3:" in err and f": persistence.{key}: {said}" in err, err
    assert "failed in hook" not in err and "Error:" not in err


def test_a_home_python_can_expand_is_taken() -> None:
    settings = PersistenceSettings(directory=Path("~/x"))
    assert settings.session_directory() == Path.home() / "x"


async def test_the_variable_naming_no_user_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    monkeypatch.setenv("DSH_PERSISTENCE_DIR", f"{NO_USER}/x")
    with pytest.raises(HookError) as caught:
        async with Harness():
            pass
    assert isinstance(caught.value.cause, PersistenceError)  # said in its own words
    assert (
        str(caught.value.cause) == f"$DSH_PERSISTENCE_DIR: no user 'nosuchuser-of-dsh' ({NO_USER})"
    )


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs a Linux /proc")
def test_a_directory_no_file_can_be_made_in_is_refused_before_any_save() -> None:
    """/proc exists and (to root) os.access says it may be written: a file made and
    removed there shows it cannot."""
    backend = open_backend(PersistenceSettings(directory=Path("/proc")))
    try:
        with pytest.raises(PersistenceError, match=r"^/proc .* not a usable session directory"):
            backend.prepare()
    finally:
        backend.close()


def test_config_check_refuses_such_a_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if not os.path.isdir("/proc/self"):
        pytest.skip("needs a Linux /proc")
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    monkeypatch.setenv("DSH_PERSISTENCE_DIR", "/proc")
    status, err = check(tmp_path, "persistence:\n  backend: jsonl\n", capsys)
    assert status == 1
    assert "/proc ($DSH_PERSISTENCE_DIR" in err and "not a usable session directory" in err


def test_no_home_directory_is_said_for_the_key_and_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pwd = pytest.importorskip("pwd")

    def no_entry(uid: int) -> Any:
        raise KeyError(uid)

    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.setattr(pwd, "getpwuid", no_entry)
    with pytest.raises(ValueError, match=r"no home directory to expand ~ with \(\$HOME is not"):
        PersistenceSettings(directory=Path("~/x"))
    with pytest.raises(PersistenceError, match=r"^the default session directory: no home dir"):
        default_directory({})
