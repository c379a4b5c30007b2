"""`dsh run ... &` in an interactive shell: a run in the background of its terminal,
stdin still the terminal. The tests start a real ``bash -i`` on a pseudo-terminal (job
control on: each job its own process group, the shell's in the foreground) and type at
it as a person would. A background process group that reads its terminal is stopped
(SIGTTIN) until ``fg``: dsh must not read it there, and a permission question it cannot
put to anyone is denied (behaviour 48) rather than waited for."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import text_reply, tool_call_reply
from hangup_support import stored, turn_ends
from shell_support import PROMPT, STATUS, Shell

pytestmark = pytest.mark.plugins("persistence", "permissions")

RAN = "ran-42"
BACKGROUND_DENIAL = "denied: dsh is in the background of its terminal"


@pytest.fixture
def shell_env(cli_env: dict[str, str]) -> dict[str, str]:
    env = {**cli_env, "TERM": "xterm-256color", "PS1": PROMPT, "HISTFILE": "/dev/null"}
    env["DSH_LOAD_PLUGINS"] = "persistence,permissions"
    return env


def dsh_command(server: Any) -> str:
    model = f"openai-compatible:tiny@{server.url}"
    words = [sys.executable, "-m", "dsh.cli", "-m", model, "run", "a task"]
    return shlex.join(words)


def asking_server(model_server: Any, pause: float = 0.0) -> Any:
    """A model that calls bash (dsh-permissions asks about it by default), then ends;
    the command's output, ``RAN``, is not in its text (a denial quotes the command)."""
    return model_server(
        [
            tool_call_reply("bash", {"command": "printf 'ran-%s' 42"}, pause=pause),
            text_reply("Done."),
        ]
    )


def tool_results(events: list[dict[str, Any]]) -> list[str]:
    return [str(e["data"]["content"]) for e in events if e["type"] == "tool/result"]


@pytest.fixture
def shell(shell_env: dict[str, str], tmp_path: Path) -> Any:
    started = Shell(shell_env, tmp_path)
    yield started
    started.close()


def test_typing_at_the_shell_does_not_stop_a_run_in_the_background(
    model_server: Any, shell: Shell, shell_env: dict[str, str]
) -> None:
    """What is typed while the run goes on is the shell's: dsh does not read it (it
    would be stopped, "Stopped (tty input)", until ``fg``), and its turn ends."""
    server = model_server([text_reply("The ", "whole ", "answer.", pause=0.5)])
    shell.type(dsh_command(server) + " &")
    shell.child.expect_exact("The")
    shell.type("echo typed-at-the-shell")  # while the answer is still coming
    assert shell.status("%1") == 0
    assert "Stopped" not in shell.screen
    assert turn_ends(stored(shell_env)) == ["completed"]


def test_a_question_in_the_background_is_denied_without_waiting(
    model_server: Any, shell: Shell, shell_env: dict[str, str]
) -> None:
    """Behaviour 48: in the background no one can be asked, so the call is denied at
    once, saying why (to the person and to the model), and the turn goes on to its
    end; it does not wait for a ``fg`` that may never come."""
    server = asking_server(model_server)
    shell.type(dsh_command(server) + " &")
    shell.child.expect_exact(BACKGROUND_DENIAL)
    assert shell.status("%1") == 0
    assert "Stopped" not in shell.screen
    events = stored(shell_env)
    assert turn_ends(events) == ["completed"]
    (result,) = tool_results(events)
    assert RAN not in result
    assert "background of its terminal" in result
    assert "background of its terminal" in json.dumps(server.bodies()[1])


def test_a_question_waiting_when_the_run_is_put_in_the_background_is_denied(
    model_server: Any, shell: Shell, shell_env: dict[str, str]
) -> None:
    """Ctrl-Z at the question, then ``bg``: no one can answer any more, so the pending
    question is denied and the run ends instead of waiting."""
    server = asking_server(model_server)
    shell.child.sendline(dsh_command(server))
    shell.child.expect_exact("allow? y = once")
    shell.child.sendcontrol("z")
    shell.child.expect_exact(PROMPT)
    shell.type("bg")
    shell.child.expect_exact(BACKGROUND_DENIAL)
    assert shell.status("%1") == 0
    events = stored(shell_env)
    assert turn_ends(events) == ["completed"]
    (result,) = tool_results(events)
    assert RAN not in result


def test_brought_to_the_foreground_a_run_asks_and_reads_the_answer(
    model_server: Any, shell: Shell, shell_env: dict[str, str]
) -> None:
    """Started with ``&`` and brought back with ``fg`` before its question, the run
    reads the terminal again: the question is asked and answered."""
    server = asking_server(model_server, pause=0.5)
    shell.type(dsh_command(server) + " &")
    shell.child.sendline("fg")
    shell.child.expect_exact("allow? y = once")
    shell.child.sendline("y")
    shell.child.expect_exact(PROMPT)  # the run ended: the shell is back
    shell.child.sendline("echo STATUS=$?")
    shell.child.expect(STATUS)
    assert shell.child.match.group(1) == "0"
    (result,) = tool_results(stored(shell_env))
    assert RAN in result


@pytest.mark.parametrize("job", ["{dsh} < /dev/null", "echo hi | {dsh}", "{dsh} <<< hi"])
def test_a_run_in_the_background_without_the_terminal_as_stdin_ends(
    model_server: Any, shell: Shell, shell_env: dict[str, str], job: str
) -> None:
    """``dsh run ... < /dev/null &``, ``echo hi | dsh run ... &``: nothing to ask
    through, the question is denied without asking, and the run ends while the shell is
    used."""
    server = asking_server(model_server)
    shell.type(job.format(dsh=dsh_command(server)) + " &")
    shell.type("echo typed-at-the-shell")
    assert shell.status("%1") == 0
    assert "Stopped" not in shell.screen
    (result,) = tool_results(stored(shell_env))
    assert RAN not in result
    assert "no front end that can ask a person" in result


def test_with_tostop_a_run_in_the_background_stops_at_its_output_until_fg(
    model_server: Any, shell: Shell, shell_env: dict[str, str]
) -> None:
    """``stty tostop`` asks the terminal to stop a background job that writes to it
    (SIGTTOU): dsh is stopped like any program, as asked, and ``fg`` lets it finish."""
    server = model_server([text_reply("The answer.")])
    shell.type("stty tostop")
    shell.type(dsh_command(server) + " &")
    shell.child.expect_exact("Stopped")
    shell.child.sendline("fg")
    shell.child.expect_exact("The answer.")
    shell.child.expect_exact(PROMPT)
    shell.child.sendline("echo STATUS=$?")
    shell.child.expect(STATUS)
    assert shell.child.match.group(1) == "0"
    assert turn_ends(stored(shell_env)) == ["completed"]


READ_IN_THE_BACKGROUND = """
import os, signal, sys
from dsh._cli_terminal import _read, in_background
sys.stdin.readline()  # typed input is waiting on the terminal from here on
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)  # a process group of its own: in the background of the terminal
    print("background:", in_background(0), flush=True)
    print("read:", _read(0, True), flush=True)
    os._exit(0)
_, status = os.waitpid(pid, os.WUNTRACED)
if os.WIFSTOPPED(status):
    print("stopped by", signal.Signals(os.WSTOPSIG(status)).name, flush=True)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
print("foreground:", not in_background(0), flush=True)
"""


def test_a_read_begun_in_the_background_fails_instead_of_stopping_dsh(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Sent to the background between looking and reading (Ctrl-Z, ``bg``), dsh's read
    of the terminal fails (SIGTTIN blocked for it: EIO) and is taken as "in the
    background", instead of stopping dsh until ``fg``."""
    child = pexpect.spawn(
        sys.executable,
        ["-c", READ_IN_THE_BACKGROUND],
        env=cli_env,
        cwd=str(tmp_path),
        encoding="utf-8",
        timeout=30,
    )
    try:
        child.sendline("start")
        child.sendline("typed while in the background")
        child.expect_exact("foreground: True")
        said = child.before
    finally:
        child.close(force=True)
    assert "background: True" in said
    assert "read: None" in said
    assert "stopped" not in said
