"""A bad path in ``$DSH_CONFIG`` (missing, a directory, a file it cannot open):
``find_config`` refuses it, and the error names the variable's own value and the path it
resolved to, once each, through the real ``dsh`` and through the API. The path
``find_config`` returns is a plain ``Path``: paths derived from it (``with_name``,
``parent``, ``/``) carry nothing of the variable (a plugin loading
``ctx.find_config().with_name("dsh.local.yml")`` got a false "DSH_CONFIG names ..."
message)."""

from __future__ import annotations

import socket
import typing
from pathlib import Path

import pytest
from cli_support import dsh
from unprivileged import child_as_file_modes_say

from dsh.config import find_config, load_config
from dsh.errors import ConfigError


@pytest.mark.parametrize(
    ("command", "status", "prefix"),
    [
        (("run", "hi"), 2, "dsh: error: "),
        (("models",), 2, "dsh: error: "),
        (("config", "check"), 1, "dsh: "),
    ],
)
def test_a_missing_file_names_the_variable_and_the_path(
    tmp_path: Path, cli_env: dict[str, str], command: tuple[str, ...], status: int, prefix: str
) -> None:
    (tmp_path / "dsh.yml").write_text("")  # not a fallback
    done = dsh(*command, env={**cli_env, "DSH_CONFIG": "nope.yml"}, cwd=tmp_path)
    assert done.returncode == status, command
    line = f"{prefix}DSH_CONFIG=nope.yml: {tmp_path / 'nope.yml'} does not exist\n"
    assert done.stderr.endswith(line), done.stderr


def test_a_directory_names_the_variable_and_the_path(
    tmp_path: Path, cli_env: dict[str, str]
) -> None:
    (tmp_path / "conf").mkdir()
    done = dsh("config", "check", env={**cli_env, "DSH_CONFIG": "conf"}, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.endswith(f"dsh: DSH_CONFIG=conf: {tmp_path / 'conf'} is a directory\n")


def test_an_absolute_path_is_named_once(tmp_path: Path) -> None:
    named = str(tmp_path / "nope.yml")
    with pytest.raises(ConfigError) as caught:
        find_config(tmp_path, env={"DSH_CONFIG": named})
    assert str(caught.value) == f"DSH_CONFIG={named}: does not exist"


def test_an_unreadable_file_is_named(tmp_path: Path, cli_env: dict[str, str]) -> None:
    conf = tmp_path / "conf.yml"
    conf.write_text("")
    conf.chmod(0)
    env = {**cli_env, "DSH_CONFIG": "conf.yml"}
    # root reads any file: not a child without root's DAC capabilities
    done = dsh("config", "check", env=env, cwd=tmp_path, preexec_fn=child_as_file_modes_say())
    assert done.returncode == 1
    line = f"dsh: DSH_CONFIG=conf.yml: {conf} cannot be read: Permission denied\n"
    assert done.stderr.endswith(line), done.stderr


def test_a_file_nobody_can_open_names_the_variable(
    tmp_path: Path, cli_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a socket cannot be opened even by root with its capabilities (ENXIO)
    monkeypatch.chdir(tmp_path)  # a relative name: a socket's path has a length limit
    with socket.socket(socket.AF_UNIX) as server:
        server.bind("conf.yml")
        done = dsh("config", "check", env={**cli_env, "DSH_CONFIG": "conf.yml"}, cwd=tmp_path)
        with pytest.raises(ConfigError) as caught:
            find_config(tmp_path, env={"DSH_CONFIG": "conf.yml"})
    assert done.returncode == 1
    reason = "cannot be read: No such device or address"
    assert done.stderr.endswith(f"dsh: DSH_CONFIG=conf.yml: {tmp_path / 'conf.yml'} {reason}\n")
    assert str(caught.value) == f"DSH_CONFIG=conf.yml: {tmp_path / 'conf.yml'} {reason}"


def test_a_c_file_does_not_mention_dsh_config(tmp_path: Path, cli_env: dict[str, str]) -> None:
    env = {**cli_env, "DSH_CONFIG": "nope.yml"}
    done = dsh("-c", "other.yml", "config", "check", env=env, cwd=tmp_path)
    assert done.returncode == 1
    assert "other.yml: file not found" in done.stderr
    assert "DSH_CONFIG" not in done.stderr


def test_find_config_returns_a_plain_path(tmp_path: Path) -> None:
    (tmp_path / "conf.yml").write_text("")
    path = find_config(tmp_path, env={"DSH_CONFIG": "conf.yml"})
    assert path == tmp_path / "conf.yml"
    assert type(path) is type(Path())
    # a file a plugin derives from it is any other path: a missing one is "not found"
    assert path is not None
    local = path.with_name("dsh.local.yml")
    with pytest.raises(ConfigError) as caught:
        load_config(local)
    assert caught.value.reason == "file not found"
    for derived in (path.parent / "x.yml", path.with_suffix(".yaml")):
        with pytest.raises(ConfigError, match=r": file not found$"):
            load_config(derived)


def test_find_config_refuses_what_dsh_config_names_when_it_is_not_a_file(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError) as caught:
        find_config(tmp_path, env={"DSH_CONFIG": "nope.yml"})
    assert str(caught.value) == f"DSH_CONFIG=nope.yml: {tmp_path / 'nope.yml'} does not exist"
    (tmp_path / "conf").mkdir()
    with pytest.raises(ConfigError) as caught:
        find_config(tmp_path, env={"DSH_CONFIG": "conf"})
    assert str(caught.value) == f"DSH_CONFIG=conf: {tmp_path / 'conf'} is a directory"
    assert typing.get_type_hints(find_config)["return"] == Path | None
