"""Ctrl-\\ (SIGQUIT) at a terminal, in `dsh run` and in `dsh chat` without the line
editor (whose raw terminal reads Ctrl-\\ as a key, no signal): it ends dsh as SIGTERM
does, by its way out, not by Python's default action (a core dump, with nothing saved
and the running command's processes left behind). A bash tool call runs when it comes:
its process group (a session of its own, which the terminal's signal does not reach)
is ended, the turn is saved as stopped, and the status is 131 (128 + SIGQUIT) as for
a process the signal ended; SIGTERM beside it, the same way out with 143. Started with
SIGQUIT ignored (``trap '' QUIT``; a script's background job), dsh keeps it ignored.
What dsh says (``dsh: quit``, ``dsh: terminated``) ends an answer's unfinished line, and
the turn's line follows it with no blank line between."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import text_reply, tool_call_reply
from hangup_support import dsh_in_terminal, stored, turn_ends

pytestmark = pytest.mark.plugins("persistence")

#: The tool's command: its pid (that of ``sleep``, exec'd) in ``tool.pid``.
SLEEPER = "echo $$ > tool.pid; exec sleep 300"


@pytest.fixture
def quit_env(cli_env: dict[str, str]) -> dict[str, str]:
    """dsh-persistence, without the line editor, the output buffered as without a test."""
    env = {k: v for k, v in cli_env.items() if k != "PYTHONUNBUFFERED"}
    env["TERM"] = "xterm-256color"
    env["DSH_CHAT_EDITOR"] = "0"
    env["DSH_LOAD_PLUGINS"] = "persistence"
    return env


def running(pid: int) -> bool:
    """Whether ``pid`` is the tool's ``sleep`` and has not ended (a zombie has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"sleep" in command and stat[stat.rfind(")") + 2] not in "ZX"


def started_tool(tmp_path: Path) -> int:
    """The pid of the tool's ``sleep`` once it runs; fails after 30 seconds."""
    deadline = time.monotonic() + 30
    while True:
        written = (tmp_path / "tool.pid").read_text() if (tmp_path / "tool.pid").exists() else ""
        if written.strip() and running(int(written)):
            return int(written)
        assert time.monotonic() < deadline, "the tool's command never ran"
        time.sleep(0.02)


def started(server: Any, command: str, env: dict[str, str], cwd: Path) -> pexpect.spawn:
    """``dsh run go``, or ``dsh chat`` sent ``go``, in a pseudo-terminal."""
    model = f"openai-compatible:tiny@{server.url}"
    prompt = ["go"] if command == "run" else []
    child = dsh_in_terminal("-m", model, command, *prompt, env=env, cwd=cwd)
    if command == "chat":
        child.expect_exact("> ")
        child.sendline("go")
    return child


def signalled(child: pexpect.spawn, signum: int) -> None:
    """Send ``signum``: SIGQUIT as Ctrl-\\ (the terminal sends it to dsh's process
    group), the others as ``kill``; return once dsh has ended."""
    if signum == signal.SIGQUIT:
        child.sendcontrol("\\")
    else:
        child.kill(signum)
    child.expect(pexpect.EOF, timeout=60)


def ended(pid: int, timeout: float = 15) -> bool:
    deadline = time.monotonic() + timeout
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not running(pid)


@pytest.mark.parametrize("command", ["run", "chat"])
@pytest.mark.parametrize(
    ("signum", "status", "said"),
    [(signal.SIGQUIT, 131, "dsh: quit"), (signal.SIGTERM, 143, "dsh: terminated")],
    ids=["SIGQUIT", "SIGTERM"],
)
def test_a_quit_or_terminate_signal_mid_tool_ends_the_tool_and_saves_the_turn(
    model_server: Any,
    quit_env: dict[str, str],
    tmp_path: Path,
    command: str,
    signum: int,
    status: int,
    said: str,
) -> None:
    server = model_server([tool_call_reply("bash", {"command": SLEEPER}), text_reply("After.")])
    child = started(server, command, quit_env, tmp_path)
    pid = 0
    try:
        pid = started_tool(tmp_path)
        signalled(child, signum)
        child.close()
        assert child.signalstatus is None, "dsh was killed by the signal"
        assert child.exitstatus == status
        assert ended(pid), "the tool's command was left running"
    finally:
        child.close(force=True)
        if pid and running(pid):  # left behind: not by the next test too
            os.kill(pid, signal.SIGKILL)
    out = child.logfile_read.getvalue()
    assert said in out
    assert "Traceback" not in out
    events = stored(quit_env)
    assert turn_ends(events) in (["aborted"], ["disposed"])  # whichever stops it first
    (result,) = [e["data"] for e in events if e["type"] == "tool/result"]
    assert result["is_error"], result  # the stopped call says so


def test_with_sigquit_ignored_a_run_goes_on_to_its_end(
    model_server: Any, quit_env: dict[str, str], tmp_path: Path
) -> None:
    """`trap '' QUIT; dsh run ...`, as a script's background job starts: Ctrl-\\ at the
    terminal is not for it, and the turn goes on to its end (status 0)."""
    server = model_server([text_reply("The ", "whole ", "answer.", pause=0.5)])
    model = f"openai-compatible:tiny@{server.url}"
    child = dsh_in_terminal(
        "-m", model, "run", "go", env=quit_env, cwd=tmp_path, ignore_sigquit=True
    )
    try:
        child.expect_exact("The")
        child.sendcontrol("\\")
        child.expect(pexpect.EOF, timeout=60)
        child.close()
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, child.logfile_read.getvalue()
    assert "dsh: quit" not in child.logfile_read.getvalue()
    assert turn_ends(stored(quit_env)) == ["completed"]


@pytest.mark.parametrize("command", ["run", "chat"])
@pytest.mark.parametrize(
    ("signum", "said"),
    [(signal.SIGQUIT, "dsh: quit"), (signal.SIGTERM, "dsh: terminated")],
    ids=["SIGQUIT", "SIGTERM"],
)
def test_a_signal_mid_answer_ends_its_line_once(
    model_server: Any,
    quit_env: dict[str, str],
    tmp_path: Path,
    command: str,
    signum: int,
    said: str,
) -> None:
    """What dsh says ends the answer's unfinished line; the turn's line follows it
    directly, with no blank line between."""
    server = model_server([text_reply("partial answer ", "more", then="stall")])
    child = started(server, command, quit_env, tmp_path)
    try:
        child.expect_exact("more")
        signalled(child, signum)
    finally:
        child.close(force=True)
    out = child.logfile_read.getvalue()
    # the terminal echoes Ctrl-\ as ^\ after the answer
    assert re.search(rf"more(\^\\)?\r\n{said}\r\n\[turn 1 (aborted|disposed) ", out), out
