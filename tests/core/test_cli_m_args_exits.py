"""`dsh`'s error reporting and exit statuses (cli.py), run in-process through
``dsh.cli.main``: what the mutation review of the command line found no test for
(docs/cli.md).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_m_args_support import (
    Install,
    _quiet_env,  # noqa: F401 (an autouse fixture)
)

from dsh import hookimpl
from dsh.cli import main
from dsh.commands import Command, CommandContext
from dsh.errors import DshError


def commands(*registered: Command) -> object:
    class Commands:
        @hookimpl
        def register_commands(self, register: Any) -> None:
            for command in registered:
                register(command)

    return Commands()


# -- -v and error reporting ------------------------------------------------------------


def test_v_shows_the_traceback_of_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    # docs/cli.md: "-v shows tracebacks"; the status stays 2 (a script tells a usage
    # error from a failed turn by it, with -v or without)
    for argv, said in [
        (["-v", "-m", "nonsense:thing", "run", "hi"], "unknown provider 'nonsense'"),
        (["-v", "-p", "no-such-plugin", "plugins"], "no plugin named no-such-plugin"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("Traceback (most recent call last):")
        assert "dsh.errors" in err or "DshError" in err
        assert err.rstrip().splitlines()[-1].startswith("dsh: error: ")
        assert said in err.rstrip().splitlines()[-1]


def test_a_plugin_commands_dsh_error_is_its_message_with_status_2(
    with_plugins: Install, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuse(context: CommandContext) -> int:
        raise DshError("that cannot be done")

    with_plugins(("toys", commands(Command("refuse", "refuse", refuse))))
    assert main(["refuse"]) == 2
    assert capsys.readouterr().err == "dsh: error: that cannot be done\n"


def test_a_plugin_command_returning_nothing_exits_0(
    with_plugins: Install, capsys: pytest.CaptureFixture[str]
) -> None:
    def quiet(context: CommandContext) -> None:
        print("done")

    with_plugins(("toys", commands(Command("quiet", "quiet", quiet))))
    assert main(["quiet"]) == 0
    assert capsys.readouterr() == ("done\n", "")


def test_a_group_with_one_broken_pipe_among_other_errors_is_a_plugin_failure(
    with_plugins: Install, capsys: pytest.CaptureFixture[str]
) -> None:
    def mixed(context: CommandContext) -> int:
        raise ExceptionGroup("two", [BrokenPipeError(), ValueError("bad value")])

    with_plugins(("toys", commands(Command("mixed", "mixed", mixed))))
    assert main(["mixed"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("dsh: error: plugin 'toys' failed in command 'mixed': ExceptionGroup")


def test_ctrl_c_where_no_command_handles_it_is_status_130(
    with_plugins: Install, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(context: CommandContext) -> int:
        raise KeyboardInterrupt

    with_plugins(("toys", commands(Command("wait", "wait", interrupted))))
    assert main(["wait"]) == 130
    assert capsys.readouterr().err == "dsh: interrupted\n"  # a log: no ^C echoed, no blank line
    with pytest.raises(KeyboardInterrupt):  # -v: the traceback
        main(["-v", "wait"])


def test_what_plugins_log_is_shown_once_each_and_tracebacks_only_with_v(
    with_plugins: Install, capsys: pytest.CaptureFixture[str]
) -> None:
    def noisy(context: CommandContext) -> int:
        log = logging.getLogger("toys")
        log.warning("careful: %s", "x")
        log.warning("careful: %s", "x")
        try:
            raise ValueError("inner")
        except ValueError:
            log.exception("it broke")
        return 0

    handlers = list(logging.getLogger().handlers)
    with_plugins(("toys", commands(Command("noisy", "noisy", noisy))))
    assert main(["noisy"]) == 0
    assert capsys.readouterr().err == "dsh: careful: x\ndsh: it broke\n"
    assert logging.getLogger().handlers == handlers  # nothing left behind
    assert main(["-v", "noisy"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("dsh: careful: x\ndsh: it broke\nTraceback")
    assert "ValueError: inner" in err
    assert logging.getLogger().handlers == handlers


def test_output_closed_before_dsh_writes_ends_quietly_with_141(tmp_path: Path) -> None:
    # the output of a short listing is written at exit; a reader that went away first
    # is noticed then, quietly (not "Exception ignored ... BrokenPipeError", status 120)
    read, write = os.pipe()
    os.close(read)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "dsh.cli", "plugins"],
            stdout=write,
            stderr=subprocess.PIPE,
            env={**env, "DSH_LOAD_PLUGINS": ""},
            cwd=tmp_path,
            timeout=60,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, b"")
