"""Ctrl-C twice while ``dsh run`` or ``dsh chat`` starts its agent (dsh.llm and pydantic
imported, the harness built: synchronous work once the command runs): ``dsh:
interrupted``, status 130, no traceback of an exception group; not a process ended by
the signal either.

A script in place of `dsh` sends dsh itself SIGINT twice, as two quick Ctrl-C at a
terminal do, as the command starts its agent session, then lets it go on: no timing,
no race."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = """
import os
import signal
import sys

# as at a terminal, whatever the test process left the child (a disposition, a mask)
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])

import dsh._cli_agent
import dsh._cli_chat
from dsh.cli import main

MODULE = dsh._cli_chat if sys.argv[-1] == "chat" else dsh._cli_agent


def twice():
    os.kill(os.getpid(), signal.SIGINT)
    os.kill(os.getpid(), signal.SIGINT)


def after_twice(step):
    def stepped(*args, **kwargs):
        twice()
        return step(*args, **kwargs)

    return stepped


if os.environ["STOP_AT"] == "agent":  # the command's synchronous start
    MODULE.agent_session = after_twice(MODULE.agent_session)
else:  # as the signal receiver opens: asyncio's own handler is still in place
    import dsh._cli_signals

    dsh._cli_signals._not_ignored = after_twice(dsh._cli_signals._not_ignored)
sys.exit(main())
"""


@pytest.mark.parametrize("stop_at", ["agent", "receiver"])
@pytest.mark.parametrize("command", [["run", "hi"], ["chat"]], ids=["run", "chat"])
def test_ctrl_c_twice_as_the_agent_starts_says_interrupted(
    cli_env: dict[str, str], tmp_path: Path, command: list[str], stop_at: str
) -> None:
    script = tmp_path / "interrupted_dsh.py"
    script.write_text(textwrap.dedent(SCRIPT))
    done = subprocess.run(
        [
            sys.executable,
            str(script),
            "-m",
            "openai-compatible:tiny@http://127.0.0.1:9/v1",
            *command,
        ],
        env={**cli_env, "STOP_AT": stop_at},
        cwd=tmp_path,
        input="hi\n" if command == ["chat"] else "",
        capture_output=True,
        text=True,
        timeout=60,
    )
    # a chat whose Ctrl-C handler is in place by the time the loop takes the signals (as
    # it is without dsh-persistence, which awaits sooner) quits as at an idle prompt: 0
    assert done.returncode in ((130, 0) if command == ["chat"] else (130,)), done.stderr
    assert "Traceback" not in done.stderr
    assert "dsh: interrupted" in done.stderr
    assert done.stdout == ""


LATE = """
import os
import signal
import sys

signal.signal(signal.SIGINT, signal.default_int_handler)
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])

import dsh.plugins
from dsh.cli import main

real = dsh.plugins.create_plugin_manager


def create(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C as dsh starts
    return real(*args, **kwargs)


dsh.plugins.create_plugin_manager = create
status = main()
os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C again, while it exits
sys.exit(f"still running after the second Ctrl-C (status {status})")
"""


def test_ctrl_c_again_while_an_interrupted_dsh_exits_ends_it_with_130(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    script = tmp_path / "interrupted_late.py"
    script.write_text(textwrap.dedent(LATE))
    done = subprocess.run(
        [sys.executable, str(script), "version"],
        env=cli_env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 130, done.stderr  # not -2: ended by the signal
    assert done.stderr == "dsh: interrupted\n"
