"""Ctrl-C while dsh starts (its plugins imported, its parser built from the commands they
register): as in a command, `dsh: interrupted` and status 130, no traceback (with -v,
the traceback, as -v shows one for a Ctrl-C in a command).

A script in place of `dsh` sends dsh itself SIGINT, as Ctrl-C at a terminal does, at
the step named by STOP_AT, then calls ``dsh.cli.main``: no timing, no race."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = """
import os
import signal
import sys
import time

# as at a terminal, whatever the test process left the child (a disposition, a mask)
FOUND = signal.getsignal(signal.SIGINT), signal.pthread_sigmask(signal.SIG_BLOCK, [])
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])

import dsh.plugins
from dsh import hookimpl
from dsh.cli import main

STOP_AT = os.environ["STOP_AT"]


def interrupt():
    os.kill(os.getpid(), signal.SIGINT)  # Python raises KeyboardInterrupt at once
    time.sleep(10)  # not reached
    sys.exit(f"SIGINT did not arrive (at start: handler, mask {FOUND})")


class Stopper:
    @hookimpl
    def register_commands(self, register):
        if STOP_AT == "commands":
            interrupt()


real = dsh.plugins.create_plugin_manager


def create(plugins=(), **kw):
    if STOP_AT == "plugins":
        interrupt()
    return real([*plugins, ("stopper", Stopper())], **kw)


dsh.plugins.create_plugin_manager = create
sys.exit(main())
"""


@pytest.mark.parametrize("stop_at", ["plugins", "commands"])
@pytest.mark.parametrize("args", [["run", "hi"], ["version"]], ids=["run", "version"])
def test_ctrl_c_while_dsh_starts_says_interrupted(
    cli_env: dict[str, str], tmp_path: Path, stop_at: str, args: list[str]
) -> None:
    script = tmp_path / "stopped_dsh.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = {**cli_env, "STOP_AT": stop_at}
    done = subprocess.run(
        [sys.executable, str(script), "-m", "openai-compatible:tiny@http://127.0.0.1:9/v1", *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 130, done.stderr
    assert done.stderr == "dsh: interrupted\n"  # a log: no ^C echoed, no blank line
    assert done.stdout == ""
    verbose = subprocess.run(
        [sys.executable, str(script), "-v", *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert verbose.returncode == -signal.SIGINT  # as Python ends on a KeyboardInterrupt
    assert verbose.stderr.startswith("Traceback"), verbose.stderr
    assert verbose.stderr.endswith("KeyboardInterrupt\n"), verbose.stderr
