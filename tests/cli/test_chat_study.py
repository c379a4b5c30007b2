"""`dsh chat` as someone at the terminal uses it all day (a user study): Ctrl-C during a
long command, at a permission question and twice during an answer; a crash (kill -9)
or a closed terminal window (SIGHUP) in the middle of a turn, then --continue; output
redirected to a file. Tests marked xfail show a problem the study found (see reason)."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import CONTROLS, in_terminal, text_reply, tool_call_reply

TIMEOUT = 30


@pytest.fixture
def chat_args(cli_env: dict[str, str], tmp_path: Path) -> Iterator[Any]:
    """``chat_args(server, *args, plugins=...)``: ``dsh chat ARGS`` (e.g. ``--continue``)
    in a pseudo-terminal, at its first prompt; closed at the end of the test."""
    children: list[pexpect.spawn] = []

    def start(server: Any, *args: str, plugins: str) -> pexpect.spawn:
        env = {**cli_env, "DSH_LOAD_PLUGINS": plugins}
        model = f"openai-compatible:tiny@{server.url}"
        child = in_terminal("-m", model, "chat", *args, env=env, cwd=tmp_path)
        children.append(child)
        child.expect_exact("> ")
        return child

    yield start
    for child in children:
        child.close(force=True)


def contents(body: Any) -> list[Any]:
    """The role and content of each message of a request after the system prompt."""
    return [(m["role"], m.get("content")) for m in body["messages"][1:]]


def wait_for(check: Any, what: str, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def background_sleep(pidfile: Path) -> str:
    """A command that leaves a child running in its group and writes that child's pid."""
    return f"sleep 30 & echo $! > {pidfile}; wait"


def started_pid(pidfile: Path) -> int:
    wait_for(lambda: pidfile.exists() and pidfile.read_text().strip(), "the command to start")
    return int(pidfile.read_text())


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie no init reaps does not count)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def stop(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


# -- Ctrl-C ----------------------------------------------------------------------------


def test_ctrl_c_during_a_long_bash_call_stops_it_and_what_it_started(
    model_server: Any, chat: Any, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pid"
    server = model_server(
        [tool_call_reply("bash", {"command": background_sleep(pidfile)}), text_reply("Back.")]
    )
    child = chat(server, plugins="")
    child.sendline("start the long job")
    child.expect_exact("→ bash(")
    pid = started_pid(pidfile)
    try:
        child.sendintr()
        child.expect_exact("[turn 1 aborted", timeout=TIMEOUT)
        child.expect_exact("> ")
        assert gone_within(pid, 10), "the command's child outlived Ctrl-C"
        child.sendline("still there?")
        child.expect_exact("Back.")
        child.expect_exact("[turn 2 completed")
        child.sendline("/quit")
        child.expect(pexpect.EOF)
    finally:
        stop(pid)
    # the model is told the call was cut off, so its history stays answerable
    (*_, (role, result), last) = contents(server.bodies()[1])
    assert role == "tool"
    assert result.startswith("interrupted: the turn was aborted while this call was being")
    assert last == ("user", "still there?")


def _ctrl_c_at_a_question(model_server: Any, chat: Any, tmp_path: Path) -> Any:
    """Ctrl-C while a permission question waits, then a new line: the server."""
    marker = tmp_path / "marker"
    server = model_server(
        [tool_call_reply("bash", {"command": f"touch {marker}"}), text_reply("Fresh start.")]
    )
    child = chat(server, plugins="permissions")
    child.sendline("make the marker")
    child.expect_exact("allow? y = once")
    child.sendintr()
    child.expect_exact("[turn 1 aborted")
    child.expect_exact("> ")
    child.sendline("y")  # a new prompt now, not a late answer to the dropped question
    child.expect_exact("Fresh start.")
    child.expect_exact("[turn 2 completed")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    assert not marker.exists()
    return server


@pytest.mark.plugins("permissions")
def test_ctrl_c_at_a_permission_question_drops_it_and_the_next_line_is_a_prompt(
    model_server: Any, chat: Any, tmp_path: Path
) -> None:
    server = _ctrl_c_at_a_question(model_server, chat, tmp_path)
    assert len(server.bodies()) == 2
    assert contents(server.bodies()[1])[-1] == ("user", "y")


@pytest.mark.plugins("permissions")
def test_a_call_cancelled_at_its_question_is_not_said_to_maybe_have_run(
    model_server: Any, chat: Any, tmp_path: Path
) -> None:
    server = _ctrl_c_at_a_question(model_server, chat, tmp_path)
    result = contents(server.bodies()[1])[2]
    assert result == ("tool", "not run: the turn was aborted before this call ran")


@pytest.mark.plugins("persistence")
def test_ctrl_c_twice_quits_and_continue_brings_back_the_cut_off_answer(
    model_server: Any, chat_args: Any
) -> None:
    server = model_server(
        [text_reply("Done one."), text_reply("partial answer", then="stall"), text_reply("Ok.")]
    )
    child = chat_args(server, plugins="persistence")
    child.sendline("first prompt")
    child.expect_exact("[turn 1 completed")
    child.expect_exact("> ")
    child.sendline("second prompt")
    child.expect_exact("partial answer")
    child.setwinsize(24, 80)  # a resized window changes nothing
    child.sendintr()
    child.expect_exact("(cancelled; Ctrl-C again to quit)")
    child.sendintr()
    child.expect(pexpect.EOF)
    assert "Traceback" not in (child.before or "")
    child.close()
    assert child.exitstatus == 0

    child = chat_args(server, "--continue", plugins="persistence")
    assert "('first prompt', 2 turns so far)" in (child.before or "")
    child.sendline("go on")
    child.expect_exact("[turn 3 completed")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    assert contents(server.bodies()[2]) == [
        ("user", "first prompt"),
        ("assistant", "Done one."),
        ("user", "second prompt"),
        ("assistant", "partial answer"),
        ("user", "go on"),
    ]


@pytest.mark.plugins("compaction")
def test_ctrl_c_during_a_slow_compact_stops_it_and_the_chat_stays(
    model_server: Any, chat: Any, tmp_path: Path
) -> None:
    (tmp_path / "dsh.yml").write_text("compaction: {tail_tokens: 1, context_window: 100000}\n")
    answer = "A long answer, " * 30
    summary = text_reply("Summary", then="stall")
    server = model_server([text_reply(answer), text_reply(answer), summary, text_reply("Ok.")])
    child = chat(server, plugins="compaction")
    for number, prompt in enumerate(["first question", "second question"], 1):
        child.sendline(prompt)
        child.expect_exact(f"[turn {number} completed")
        child.expect_exact("> ")
    child.sendline("/compact")
    wait_for(lambda: len(server.bodies()) == 3, "the summary to be asked for")
    child.sendintr()
    stopped = (
        r"/compact: stopped; the history is as it was \(Ctrl-C again to quit\)"
        rf"\r\n{CONTROLS}> "
    )
    ended = child.expect([pexpect.EOF, stopped]) == 0
    assert not ended, "Ctrl-C during /compact quit the chat"
    child.sendline("/quit")
    child.expect(pexpect.EOF)


# -- a crash, a closed window ----------------------------------------------------------


def stored_log(cli_env: dict[str, str]) -> str:
    """The text of the one stored session ("" while there is none)."""
    logs = list(Path(cli_env["DSH_PERSISTENCE_DIR"]).glob("*.jsonl"))
    assert len(logs) <= 1
    return logs[0].read_text() if logs else ""


@pytest.mark.plugins("persistence")
def test_after_kill_9_during_a_tool_call_continue_answers_the_call_and_goes_on(
    model_server: Any, chat_args: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    pidfile = tmp_path / "pid"
    server = model_server(
        [tool_call_reply("bash", {"command": background_sleep(pidfile)}), text_reply("Ok.")]
    )
    child = chat_args(server, plugins="persistence")
    child.sendline("start the long job")
    child.expect_exact("→ bash(")
    pid = started_pid(pidfile)
    try:
        # the call's checkpoint is on disk shortly after it started (checkpoint_delay)
        wait_for(lambda: '"tool/call"' in stored_log(cli_env), "the checkpoint")
        os.kill(child.pid, signal.SIGKILL)
        child.expect(pexpect.EOF)
    finally:
        stop(pid)  # nothing could stop it: the process was killed

    child = chat_args(server, "--continue", plugins="persistence")
    assert "('start the long job', 1 turn so far)" in (child.before or "")
    child.sendline("what happened?")
    child.expect_exact("Ok.")
    child.expect_exact("[turn 2 completed")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    messages = server.bodies()[1]["messages"]
    assert [m["role"] for m in messages[1:]] == ["user", "assistant", "tool", "user"]
    assert messages[2]["tool_calls"][0]["id"] == messages[3]["tool_call_id"]
    assert messages[3]["content"].startswith("outcome unknown: the session was interrupted")


@pytest.mark.plugins("persistence")
def test_closing_the_terminal_during_a_bash_call_stops_it_and_saves_the_turn(
    model_server: Any, chat: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    pidfile = tmp_path / "pid"
    server = model_server([tool_call_reply("bash", {"command": background_sleep(pidfile)})])
    child = chat(server, plugins="persistence")
    child.sendline("start the long job")
    child.expect_exact("→ bash(")
    pid = started_pid(pidfile)
    try:
        os.kill(child.pid, signal.SIGHUP)  # what the terminal sends when its window closes
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 128 + signal.SIGHUP
        assert gone_within(pid, 10), "the command's child outlived the chat"
        assert '"turn/end"' in stored_log(cli_env)
    finally:
        stop(pid)


# -- output not a terminal ---------------------------------------------------------------


def test_with_stdout_redirected_the_answer_goes_to_the_file_as_written(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """`dsh chat > answers.txt` at a terminal: the prompt and the notes stay on the
    terminal (stderr); the file gets each answer exactly, escapes included."""
    server = model_server([text_reply("A \x1b[31mred\x1b[0m word."), text_reply("Two.")])
    out = tmp_path / "answers.txt"
    model = f"openai-compatible:tiny@{server.url}"
    command = f"exec {sys.executable} -m dsh.cli -m {model} chat > {out}"
    child = pexpect.spawn(
        "bash",
        ["-c", command],
        env={**cli_env, "DSH_LOAD_PLUGINS": ""},
        cwd=str(tmp_path),
        encoding="utf-8",
        timeout=TIMEOUT,
        dimensions=(40, 200),
    )
    shown = child.logfile_read = io.StringIO()
    try:
        child.expect_exact("> ")
        child.sendline("hello")
        child.expect_exact("[turn 1 completed")
        child.expect_exact("> ")
        child.sendline("again")
        child.expect_exact("[turn 2 completed")
        child.expect_exact("> ")
        child.sendline("/quit")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
    finally:
        child.close(force=True)
    assert out.read_text() == "A \x1b[31mred\x1b[0m word.\nTwo.\n"
    assert "red" not in shown.getvalue()
