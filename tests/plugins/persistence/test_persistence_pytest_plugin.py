"""dsh-persistence's pytest plugin: a test suite's harnesses store sessions in a
temporary directory of the pytest run, never in the user's own session directory."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dsh_persistence._pytest_plugin import ENV_DIRECTORY as PLUGIN_ENV
from dsh_persistence._settings import ENV_DIRECTORY

pytestmark = pytest.mark.plugins("persistence")

A_USERS_TEST = """
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text


async def test_a_turn():
    async with scripted_harness(ScriptedModel([text("hi")])) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "hello")
"""


def test_a_users_test_suite_stores_no_session_in_their_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "test_users.py").write_text(textwrap.dedent(A_USERS_TEST))
    env = {k: v for k, v in os.environ.items() if k not in ("DSH_PERSISTENCE_DIR", "XDG_DATA_HOME")}
    env["HOME"] = str(home)
    basetemp = tmp_path / "basetemp"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--basetemp",
            str(basetemp),
            "-o",
            "asyncio_mode=auto",
            "test_users.py",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (home / ".local").exists()
    assert len(list(basetemp.glob("dsh-sessions0/*.jsonl"))) == 1


def test_the_plugin_names_the_settings_variable() -> None:
    assert PLUGIN_ENV == ENV_DIRECTORY
    assert Path(os.environ[ENV_DIRECTORY]).name.startswith("dsh-sessions")
