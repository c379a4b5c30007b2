"""Ctrl-C while the ``dsh`` command imports dsh itself, before dsh catches one: as at
any later step, ``dsh: interrupted`` and status 130, not Python's KeyboardInterrupt
traceback and a process ended by the signal (core/src/_dsh_command.py).

The child enters dsh as the console script installed from core/pyproject.toml does
(``from MODULE import main``); an import hook of its own stops it as it imports STOP_AT,
says so and waits reading a pipe no one writes to; the test then sends it SIGINT, as
Ctrl-C at a terminal does: no timing, no race."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ENTRY = tomllib.loads((Path(__file__).parents[2] / "core" / "pyproject.toml").read_text())[
    "project"
]["scripts"]["dsh"]

STOPPED = """
import os
import signal
import sys

# as at a terminal, whatever the test process left the child (a disposition, a mask)
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


class Stop:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ["STOP_AT"]:
            print("importing", name, flush=True)
            os.read(0, 1)  # till the signal: the test never writes
        return None


sys.meta_path.insert(0, Stop())
from {module} import {function}

sys.exit({function}())
"""


def _interrupted(stop_at: str, env: dict[str, str], cwd: Path, *args: str) -> tuple[int, str]:
    """The exit status and stderr of ``dsh ARGS`` sent SIGINT as it imports ``stop_at``."""
    module, _, function = ENTRY.partition(":")
    code = textwrap.dedent(STOPPED).format(module=module, function=function)
    child = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        env={**env, "STOP_AT": stop_at},
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == f"importing {stop_at}\n"
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert out == ""
    return child.returncode, err


@pytest.mark.parametrize(
    "stop_at",
    # the dsh package, pluggy within it, the command line's modules: before dsh catches
    # a Ctrl-C; and the plugins' loader, imported after it does
    ["dsh", "pluggy", "dsh.cli", "dsh._cli_args", "dsh._cli_plugins"],
)
def test_ctrl_c_while_dsh_is_imported_says_interrupted(
    cli_env: dict[str, str], tmp_path: Path, stop_at: str
) -> None:
    status, err = _interrupted(stop_at, cli_env, tmp_path, "version")
    assert err == "dsh: interrupted\n"  # no traceback; a log: no blank line for a ^C
    assert status == 130  # not -2: ended by the signal


def test_with_v_a_ctrl_c_dsh_catches_shows_its_traceback(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Once dsh catches Ctrl-C, the entry point's handler is gone: with -v a Ctrl-C
    shows its traceback, as it does in a command (docs/cli.md)."""
    status, err = _interrupted("dsh._cli_plugins", cli_env, tmp_path, "-v", "version")
    assert err.startswith("Traceback"), err
    assert err.endswith("KeyboardInterrupt\n"), err
    assert status == -signal.SIGINT
