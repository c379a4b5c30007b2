"""A mistake in the command line reads the same with ``-v`` as without: the one line
``dsh: error: ...``, status 2. With ``-v`` it came after a traceback of dsh's own
argument reading, which tells the user nothing (found by the review of session 27). A
configuration error, a plugin's failure keep their traceback under ``-v``."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import dsh


@pytest.mark.parametrize(
    "line",
    [
        ["--json", "run", "hi"],  # a command's option before it
        ["run", "--cwd", "/tmp", "hi"],  # dsh's after it
        ["--conf", "x.yml", "run", "hi"],  # a shortened option
        ["--cwd", "missing", "run", "hi"],  # no such directory
        ["run", "-", "-"],  # stdin twice
        ["nosuch"],  # no such command
    ],
)
def test_a_usage_error_reads_the_same_with_v(
    cli_env: dict[str, str], tmp_path: Path, line: list[str]
) -> None:
    env = {**cli_env, "DSH_LOAD_PLUGINS": ""}
    plain = dsh(*line, env=env, cwd=tmp_path, stdin="")
    verbose = dsh("-v", *line, env=env, cwd=tmp_path, stdin="")
    # one line, or argparse's usage before it (no such command, and no plugin installed
    # whose commands it could be)
    assert plain.stderr.splitlines()[-1].startswith("dsh: error: "), plain.stderr
    assert plain.returncode == verbose.returncode == 2
    assert verbose.stderr == plain.stderr


def test_a_configuration_error_keeps_its_traceback_under_v(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "dsh.yml").write_text("models: 3\n")
    env = {**cli_env, "DSH_LOAD_PLUGINS": ""}
    done = dsh("-v", "-m", "x:y", "run", "hi", env=env, cwd=tmp_path)
    assert done.returncode == 2
    assert "Traceback" in done.stderr
    assert "dsh.yml:1:1: models: " in done.stderr.rstrip().splitlines()[-1]
