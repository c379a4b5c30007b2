"""The suite's own guard against hangs: pytest-timeout under the project's pytest config.

A loop that never goes idle or a harness exit that never returns must fail its test
(with the stack of where it waited) instead of stalling a CI run until its deadline.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

HANGS = """\
import anyio


async def test_waits_forever():
    await anyio.Event().wait()


def test_fine():
    pass
"""


def test_the_config_sets_a_per_test_timeout() -> None:
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert 0 < float(ini["timeout"]) <= 600


def test_a_hanging_async_test_fails_and_the_run_goes_on(tmp_path: Path) -> None:
    """Run under the project's real ini (asyncio auto mode, warnings as errors), with
    the timeout lowered to 1 s: the hang fails, the next test still runs and passes."""
    (tmp_path / "test_hangs.py").write_text(HANGS)
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-c",
        str(ROOT / "pyproject.toml"),
        "--rootdir",
        str(tmp_path),
        "-o",
        "timeout=1",
        str(tmp_path / "test_hangs.py"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "1 failed, 1 passed" in out, out
    assert "Timeout (>1.0s)" in out, textwrap.shorten(out, 2000)
