"""With ``PYTHONUNBUFFERED=1`` (``python -u``) stdout's buffer is the raw file, whose
one write to a pipe may take only part of the text (64 KiB, what the pipe holds): the
rest must still be written, or the reader closing the pipe said (status 141), never
lost with status 0 (core/src/dsh/_cli_output.py)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cli_support import stored_session, text_reply

# they store a session first: dsh-persistence must be installed and loaded
pytestmark = pytest.mark.plugins("persistence")

#: an answer several times what a pipe holds
ANSWER = "".join(f"line {n} of a long answer {'x' * 60}\n" for n in range(4000))


def _show(env: dict[str, str], cwd: Path, session: str, stdout: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "dsh.cli", "sessions", "show", session],
        env=env,
        cwd=cwd,
        stdout=stdout,
        stderr=subprocess.PIPE,
    )


def test_output_to_a_pipe_read_slowly_is_all_written(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    assert cli_env["PYTHONUNBUFFERED"] == "1"
    session = stored_session(model_server([text_reply(ANSWER)]), cli_env, tmp_path)
    with (
        (tmp_path / "whole.txt").open("wb") as file,
        _show(cli_env, tmp_path, session, file) as child,
    ):
        assert child.wait(60) == 0
    whole = (tmp_path / "whole.txt").read_bytes()
    assert len(whole) > 200_000
    with _show(cli_env, tmp_path, session, subprocess.PIPE) as child:
        assert child.stdout is not None
        read = b""
        while piece := child.stdout.read1(8192):
            read += piece
            time.sleep(0.002)
        assert child.wait(60) == 0
    assert read == whole


def test_a_pipe_closed_early_is_status_141(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    session = stored_session(model_server([text_reply(ANSWER)]), cli_env, tmp_path)
    with _show(cli_env, tmp_path, session, subprocess.PIPE) as child:  # | head -c 100
        assert child.stdout is not None and child.stderr is not None
        assert len(child.stdout.read(100)) == 100
        child.stdout.close()
        assert child.wait(60) == 141, child.stderr.read()
