"""A bad file named by ``$DSH_CONFIG`` (missing, a directory, unreadable): the error
says the path came from the variable, through the real ``dsh`` and through the API."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_support import dsh

from dsh.config import find_config, load_config
from dsh.errors import ConfigError


def test_a_missing_file_says_dsh_config_names_it(tmp_path: Path, cli_env: dict[str, str]) -> None:
    (tmp_path / "dsh.yml").write_text("")  # not a fallback
    for command in (("config", "check"), ("run", "hi")):
        done = dsh(*command, env={**cli_env, "DSH_CONFIG": "nope.yml"}, cwd=tmp_path)
        assert done.returncode != 0, command
        assert f"DSH_CONFIG names {tmp_path / 'nope.yml'}, which does not exist" in done.stderr


def test_a_directory_says_dsh_config_names_it(tmp_path: Path, cli_env: dict[str, str]) -> None:
    (tmp_path / "conf").mkdir()
    done = dsh("config", "check", env={**cli_env, "DSH_CONFIG": "conf"}, cwd=tmp_path)
    assert done.returncode == 1
    assert f"DSH_CONFIG names {tmp_path / 'conf'}, which is a directory" in done.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_says_dsh_config_names_it(
    tmp_path: Path, cli_env: dict[str, str]
) -> None:
    conf = tmp_path / "conf.yml"
    conf.write_text("")
    conf.chmod(0)
    done = dsh("config", "check", env={**cli_env, "DSH_CONFIG": "conf.yml"}, cwd=tmp_path)
    assert done.returncode == 1
    assert f"DSH_CONFIG names {conf}, which cannot be read: Permission denied" in done.stderr


def test_a_c_file_does_not_mention_dsh_config(tmp_path: Path, cli_env: dict[str, str]) -> None:
    env = {**cli_env, "DSH_CONFIG": "nope.yml"}
    done = dsh("-c", "other.yml", "config", "check", env=env, cwd=tmp_path)
    assert done.returncode == 1
    assert "other.yml: file not found" in done.stderr
    assert "DSH_CONFIG" not in done.stderr


def test_the_api_names_dsh_config(tmp_path: Path) -> None:
    path = find_config(tmp_path, env={"DSH_CONFIG": "nope.yml"})
    assert path == tmp_path / "nope.yml"
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.reason == f"DSH_CONFIG names {tmp_path / 'nope.yml'}, which does not exist"
    with pytest.raises(ConfigError, match=r"nope\.yml: file not found$"):
        load_config(tmp_path / "nope.yml")  # a path of the caller's own


def test_the_api_names_dsh_config_for_an_unreadable_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As root every file reads: the refusal is made up."""
    (tmp_path / "conf.yml").write_text("")

    def refuse(self: Path, *args: object, **kwargs: object) -> str:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_text", refuse)
    path = find_config(tmp_path, env={"DSH_CONFIG": "conf.yml"})
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    expected = f"DSH_CONFIG names {tmp_path / 'conf.yml'}, which cannot be read: Permission denied"
    assert caught.value.reason == expected
