"""Ctrl-C while the ``dsh`` command imports dsh itself, before dsh catches one: as at
any later step, ``dsh: interrupted`` and status 130, not Python's KeyboardInterrupt
traceback and a process ended by the signal (core/src/_dsh_command.py).

The child enters dsh as the console script installed from core/pyproject.toml does
(``from MODULE import main``) after an import hook that stops it as it imports STOP_AT;
the test then sends it SIGINT, as Ctrl-C at a terminal does (start_interrupt_support)."""

from __future__ import annotations

import signal
import sys
import tomllib
from pathlib import Path

import pytest
from start_interrupt_support import STOP_HOOK, interrupted_at

ENTRY = tomllib.loads((Path(__file__).parents[2] / "core" / "pyproject.toml").read_text())[
    "project"
]["scripts"]["dsh"]

STOPPED = STOP_HOOK + "\nfrom {module} import {function}\n\nsys.exit({function}())\n"


def _interrupted(stop_at: str, env: dict[str, str], cwd: Path, *args: str) -> tuple[int, str]:
    """The exit status and stderr of ``dsh ARGS`` sent SIGINT as it imports ``stop_at``."""
    module, _, function = ENTRY.partition(":")
    code = STOPPED.format(module=module, function=function)
    return interrupted_at(stop_at, [sys.executable, "-c", code, *args], env, cwd)


@pytest.mark.parametrize(
    "stop_at",
    # the dsh package, the command line's modules: before dsh catches a Ctrl-C; and
    # pluggy and the plugins' loader, imported after it does
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
