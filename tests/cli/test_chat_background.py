"""`dsh chat &` in an interactive shell (a real ``bash -i`` on a pseudo-terminal, job
control on), as test_run_background.py does for `dsh run`. With the line editor, chat
takes the terminal over (raw mode), which a job in the background may not do: the
kernel stops it (SIGTTOU, "Stopped (tty output)"), as it stops vim or less started
with ``&``; stopped, it uses no CPU and asks no model, and ``fg`` gives it the terminal
and the chat goes on. Without the editor it does not read the terminal in the
background (_cli_terminal.lines_typed) and reads once brought to the foreground."""

from __future__ import annotations

import re
import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import text_reply
from shell_support import PROMPT, STATUS, Shell

STATE = re.compile(r"STATE=(\S+)")


@pytest.fixture(params=[True, False], ids=["editor", "canonical"])
def editor(request: Any) -> bool:
    """Whether the chat uses the line editor (else the canonical reader)."""
    if request.param and not _has_editor():
        pytest.skip("the line editor is not installed (the chat extra)")
    return bool(request.param)


@pytest.fixture
def shell(editor: bool, cli_env: dict[str, str], tmp_path: Path) -> Iterator[Shell]:
    env = {k: v for k, v in cli_env.items() if k != "DSH_CHAT_EDITOR"}
    env.update({"TERM": "xterm-256color", "PS1": PROMPT, "HISTFILE": "/dev/null"})
    env["DSH_LOAD_PLUGINS"] = ""
    if not editor:
        env["DSH_CHAT_EDITOR"] = "0"
    started = Shell(env, tmp_path)
    started.child.timeout = 20
    yield started
    started.close()


def _has_editor() -> bool:
    import importlib.util

    return importlib.util.find_spec("prompt_toolkit") is not None


def _chat(server: Any) -> str:
    model = f"openai-compatible:tiny@{server.url}"
    return shlex.join([sys.executable, "-m", "dsh.cli", "-m", model, "chat"])


def _state(shell: Shell) -> str:
    """The process state of job %1 as ps shows it (T: stopped; S: sleeping, or R when
    it is awake, as it is now and then to look whether it is in the foreground)."""
    shell.child.sendline('echo "STATE""=$(ps -o stat= -p $(jobs -p %1))"')  # not the echo
    shell.child.expect(STATE)
    state = shell.child.match.group(1)
    shell.child.expect_exact(PROMPT)
    return str(state)


def _stops(shell: Shell) -> bool:
    """Whether job %1 is stopped within 20 seconds (however slow the machine is)."""
    deadline = time.monotonic() + 20
    while not _state(shell).startswith("T"):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_chat_started_in_the_background_waits_for_fg_then_chats(
    model_server: Any, shell: Shell, editor: bool
) -> None:
    server = model_server([text_reply("Hello there.")])
    shell.type(_chat(server) + " &")
    shell.child.expect_exact("dsh: model openai-compatible:tiny")
    if editor:
        shell.child.expect_exact("Stopped")  # `jobs -l` says: Stopped (tty output)
        assert _state(shell).startswith("T")  # stopped: no CPU spent, nothing read
    else:  # runs on, looking now and then whether it is in the foreground
        shell.type("sleep 1")  # time to stop, were it to
        assert not _state(shell).startswith("T")  # S, or R while it looks
        assert "Stopped" not in shell.screen
    shell.type("echo typed-at-the-shell")  # the shell's, not the chat's
    assert server.bodies() == []
    shell.child.sendline("fg")
    shell.child.expect_exact("chat\r\n")  # bash names the job it brings back
    if not editor:
        shell.child.sendline("")  # an empty line: the prompt again, to know it reads
    shell.child.expect_exact("> ")
    shell.child.send("hi\r")
    shell.child.expect_exact("Hello there.")
    shell.child.expect_exact("[turn 1 completed")
    shell.child.sendcontrol("d")
    shell.child.expect_exact(PROMPT)
    shell.child.sendline("echo STATUS=$?")
    shell.child.expect(STATUS)
    assert shell.child.match.group(1) == "0"
    assert [b["messages"][-1]["content"] for b in server.bodies()] == ["hi"]
    assert "typed-at-the-shell" not in str(server.bodies())
    assert "Traceback" not in shell.screen


def test_ctrl_z_then_bg_stops_the_chat_again_and_fg_goes_on(
    model_server: Any, shell: Shell, editor: bool
) -> None:
    """Ctrl-Z at the prompt stops the chat (the editor hands the terminal back first);
    ``bg`` cannot run it on (it stops again at the terminal, with the editor, or waits
    there without), and ``fg`` goes on with the same chat."""
    server = model_server([text_reply("One."), text_reply("Two.")])
    shell.child.sendline(_chat(server))
    shell.child.expect_exact("> ")
    shell.child.send("first\r")
    shell.child.expect_exact("[turn 1 completed")
    shell.child.expect_exact("> ")
    shell.child.sendcontrol("z")
    shell.child.expect_exact("Stopped")
    shell.child.expect_exact(PROMPT)
    shell.type("bg")
    if editor:
        assert _stops(shell)
    else:
        shell.type("sleep 1")  # time to stop, were it to
        assert not _state(shell).startswith("T")  # S, or R while it looks
    shell.child.sendline("fg")
    shell.child.expect_exact("chat\r\n")
    if not editor:
        shell.child.sendline("")
    shell.child.expect_exact("> ")
    shell.child.send("second\r")
    shell.child.expect_exact("Two.")
    shell.child.expect_exact("[turn 2 completed")
    shell.child.sendcontrol("d")
    shell.child.expect_exact(PROMPT)
    assert len(server.bodies()) == 2
    assert server.bodies()[1]["messages"][-1]["content"] == "second"
    with pytest.raises(pexpect.TIMEOUT):  # nothing left running or stopped
        shell.child.expect_exact("Stopped", timeout=0.5)
    assert "Traceback" not in shell.screen
