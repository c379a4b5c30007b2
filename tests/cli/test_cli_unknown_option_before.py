"""An unknown option before the command is dsh's error, with dsh's usage: the command
after it is not blamed (``dsh --bogus models`` is not ``usage: dsh models``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import dsh


@pytest.mark.parametrize(
    ("args", "unknown"),
    [
        (["--bogus", "models"], "--bogus"),
        (["--bogus=3", "version"], "--bogus=3"),
        (["-Z", "run", "hi"], "-Z"),
        (["--bogus", "config", "check"], "--bogus"),
    ],
)
def test_an_unknown_option_before_the_command_is_dsh_s_error(
    cli_env: dict[str, str], tmp_path: Path, args: list[str], unknown: str
) -> None:
    done = dsh(*args, env=cli_env, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("usage: dsh [-h]"), done.stderr
    assert done.stderr.endswith(f"\ndsh: error: unrecognized arguments: {unknown}\n"), done.stderr
    assert done.stdout == ""


def test_an_unknown_option_after_the_command_is_still_the_command_s(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    done = dsh("models", "--bogus", env=cli_env, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("usage: dsh models")
    assert done.stderr.endswith("dsh models: error: unrecognized arguments: --bogus\n")
