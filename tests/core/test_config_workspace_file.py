"""A ``dsh.yml`` (or ``dsh.yaml``) in the workspace that is not a file dsh can read: a
directory (what ``docker run -v ./dsh.yml:...`` makes when the file is missing), or a
symbolic link to nothing (a dotfiles checkout not there). It was passed over as no file
at all ("no dsh.yml here; defaults apply"): the run went on without its models, agents
and permission rules. It is refused now, as ``$DSH_CONFIG`` naming one is."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_m_args_support import _quiet_env  # noqa: F401 (an autouse fixture)

from dsh import ConfigError
from dsh.cli import main
from dsh.config import find_config


@pytest.mark.parametrize("name", ["dsh.yml", "dsh.yaml"])
def test_a_directory_of_that_name_is_refused(tmp_path: Path, name: str) -> None:
    (tmp_path / name).mkdir()
    with pytest.raises(ConfigError) as caught:
        find_config(tmp_path, env={})
    assert str(caught.value) == f"{tmp_path / name}: is a directory"


def test_a_link_to_nothing_is_refused_naming_where_it_points(tmp_path: Path) -> None:
    (tmp_path / "dsh.yml").symlink_to("../dotfiles/dsh.yml")
    with pytest.raises(ConfigError) as caught:
        find_config(tmp_path, env={})
    assert str(caught.value) == (
        f"{tmp_path / 'dsh.yml'}: is a symbolic link to ../dotfiles/dsh.yml, which does not exist"
    )


def test_a_link_to_a_file_is_that_file(tmp_path: Path) -> None:
    (tmp_path / "real.yml").write_text("model: local\n")
    (tmp_path / "dsh.yml").symlink_to("real.yml")
    assert find_config(tmp_path, env={}) == tmp_path / "dsh.yml"


def test_dsh_config_check_says_so_with_status_1(capsys: pytest.CaptureFixture[str]) -> None:
    Path("dsh.yml").mkdir()
    assert main(["config", "check"]) == 1
    assert capsys.readouterr().err == f"dsh: {Path.cwd() / 'dsh.yml'}: is a directory\n"


def test_dsh_config_naming_a_link_to_nothing_says_it_is_one(tmp_path: Path) -> None:
    os.symlink("gone.yml", tmp_path / "conf.yml")
    with pytest.raises(ConfigError) as caught:
        find_config(tmp_path, env={"DSH_CONFIG": "conf.yml"})
    assert caught.value.reason == (
        f"{tmp_path / 'conf.yml'} is a symbolic link to gone.yml, which does not exist"
    )
