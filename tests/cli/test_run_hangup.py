"""`dsh run` when its terminal goes away mid-run (its window closed, the ssh connection
dropped), and at a permission question: Ctrl-C, Ctrl-D, the terminal closing. The tests
close the pseudo-terminal's master side as a terminal emulator does: dsh's reads of it
end, its writes to it fail (EIO) and, as the session leader, it is sent SIGHUP. The run
must end by its ordinary way out (a traceback is an unhandled exception: status 1; a
failed flush at exit: 120), and what was done must be in the stored session.

With ``stderr`` a file, what dsh wrote on its way out can be read after the terminal
has gone; with it on the terminal (as usual), the exit status and the session say."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import text_reply, tool_call_reply
from hangup_support import (
    dsh_in_terminal,
    hang_up,
    stored,
    terminal_of_its_own,
    turn_ends,
    wait_for_text,
)
from terminal_reads import typed_and_read

pytestmark = pytest.mark.plugins("persistence")

HUP = 128 + signal.SIGHUP


@pytest.fixture
def run_env(cli_env: dict[str, str]) -> dict[str, str]:
    """dsh-persistence (and dsh-permissions where a test asks), the output buffered as
    without a test (no PYTHONUNBUFFERED: what waits in a buffer is flushed at exit)."""
    env = {k: v for k, v in cli_env.items() if k != "PYTHONUNBUFFERED"}
    env["TERM"] = "xterm-256color"
    env["DSH_LOAD_PLUGINS"] = "persistence"
    return env


def run_in_terminal(
    server: Any,
    env: dict[str, str],
    cwd: Path,
    *,
    ignore_sighup: bool = False,
    stderr: Path | None = None,
) -> pexpect.spawn:
    model = f"openai-compatible:tiny@{server.url}"
    return dsh_in_terminal(
        "-m",
        model,
        "run",
        "a long task",
        env=env,
        cwd=cwd,
        ignore_sighup=ignore_sighup,
        stderr=stderr,
    )


def prompts(events: list[dict[str, Any]]) -> list[str]:
    return [e["data"]["content"] for e in events if e["type"] == "user/message"]


@pytest.mark.parametrize("where", ["terminal", "file"])
def test_the_terminal_closing_during_a_run_stops_it_and_saves_it(
    model_server: Any, run_env: dict[str, str], tmp_path: Path, where: str
) -> None:
    """SIGHUP stops the turn as Ctrl-C would and dsh exits 129; no traceback, no
    complaint about output it can no longer write."""
    server = model_server([text_reply("work", then="stall")])
    err = tmp_path / "stderr.txt" if where == "file" else None
    child = run_in_terminal(server, run_env, tmp_path, stderr=err)
    try:
        child.expect_exact("work")
        assert hang_up(child) == HUP
    finally:
        child.close(force=True)
    events = stored(run_env)
    assert turn_ends(events) in (["aborted"], ["disposed"])  # whichever stops it first
    assert prompts(events) == ["a long task"]
    if err is not None:
        said = err.read_text()
        assert "dsh: terminated" in said
        assert "Traceback" not in said
        assert "cannot write the output" not in said


@pytest.mark.parametrize("where", ["terminal", "file"])
def test_with_sighup_ignored_a_run_goes_on_to_its_end_and_is_saved(
    model_server: Any, run_env: dict[str, str], tmp_path: Path, where: str
) -> None:
    """`trap '' HUP; dsh run ...`: the run outlives its terminal, as asked; the rest of
    the answer is written nowhere, and the turn completes (status 0)."""
    server = model_server([text_reply("The ", "whole ", "answer.", pause=0.5)])
    err = tmp_path / "stderr.txt" if where == "file" else None
    child = run_in_terminal(server, run_env, tmp_path, ignore_sighup=True, stderr=err)
    try:
        child.expect_exact("The")
        assert hang_up(child) == 0
    finally:
        child.close(force=True)
    events = stored(run_env)
    assert turn_ends(events) == ["completed"]
    (answer,) = [e["data"]["message"] for e in events if e["type"] == "assistant/message"]
    assert answer["content"] == [{"type": "text", "text": "The whole answer."}]
    if err is not None:
        said = err.read_text()
        assert "Traceback" not in said
        assert "cannot write the output" not in said
        assert "[turn 1 completed" in said


@pytest.fixture
def asking_env(run_env: dict[str, str]) -> dict[str, str]:
    return {**run_env, "DSH_LOAD_PLUGINS": "persistence,permissions"}


def asking_server(model_server: Any) -> Any:
    """A model that calls bash (which dsh-permissions asks about by default), then
    answers."""
    return model_server(
        [tool_call_reply("bash", {"command": "echo approved-output"}), text_reply("Done.")]
    )


def tool_results(events: list[dict[str, Any]]) -> list[str]:
    return [str(e["data"]["content"]) for e in events if e["type"] == "tool/result"]


@pytest.mark.plugins("persistence", "permissions")
def test_the_terminal_closing_at_a_question_stops_the_run_without_running_the_call(
    model_server: Any, asking_env: dict[str, str], tmp_path: Path
) -> None:
    server = asking_server(model_server)
    child = run_in_terminal(server, asking_env, tmp_path)
    try:
        child.expect_exact("allow? y = once")
        assert hang_up(child) == HUP
    finally:
        child.close(force=True)
    events = stored(asking_env)
    assert turn_ends(events) in (["aborted"], ["disposed"])
    assert not any("approved-output" in result for result in tool_results(events))
    assert len(server.bodies()) == 1


@pytest.mark.plugins("persistence", "permissions")
@pytest.mark.parametrize("typed", ["", "y"])
def test_with_sighup_ignored_the_terminal_closing_at_a_question_denies_it(
    model_server: Any, asking_env: dict[str, str], tmp_path: Path, typed: str
) -> None:
    """No one is left to answer: the question is denied (fail closed) and the turn goes
    on to its end without the call. A "y" typed without Enter (handed over by a Ctrl-D)
    is no answer: it was taken for one, as a pipe's last line is, once the closed
    terminal was no terminal to isatty()."""
    server = asking_server(model_server)
    err = tmp_path / "stderr.txt"
    # stderr a terminal of its own, which outlives this one: dsh asks only when
    # stderr is a terminal
    with terminal_of_its_own(err) as stderr:
        child = run_in_terminal(server, asking_env, tmp_path, ignore_sighup=True, stderr=stderr)
        try:
            wait_for_text(err, "allow? y = once")
            if typed:
                # Ctrl-D hands "y" to dsh's read, with no line end; read before the
                # hangup (which drops unread input)
                typed_and_read(child, typed, "\x04")
            assert hang_up(child) == 0
        finally:
            child.close(force=True)
    said = err.read_text()
    assert "denied: the input ended" in said
    assert "Traceback" not in said
    events = stored(asking_env)
    assert turn_ends(events) == ["completed"]
    (result,) = tool_results(events)
    assert "the input ended" in result
    assert "approved-output" not in server.bodies()[1]["messages"][-1]["content"]


@pytest.mark.plugins("persistence", "permissions")
def test_ctrl_c_at_a_question_stops_the_run_without_running_the_call(
    model_server: Any, asking_env: dict[str, str], tmp_path: Path
) -> None:
    server = asking_server(model_server)
    child = run_in_terminal(server, asking_env, tmp_path)
    try:
        child.expect_exact("allow? y = once")
        child.sendintr()
        child.expect_exact("[turn 1 aborted")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 130
    said = child.logfile_read.getvalue()
    assert "Traceback" not in said
    # the terminal's echo of Ctrl-C ends its line, as a Ctrl-C while the answer streams
    # does: what dsh says next is not written after it ("^C✗ bash: not run: ...")
    assert "^C\r\n" in said, said[-400:]
    events = stored(asking_env)
    assert turn_ends(events) == ["aborted"]
    assert not any("approved-output" in result for result in tool_results(events))
    assert len(server.bodies()) == 1


@pytest.mark.plugins("persistence", "permissions")
def test_ctrl_d_at_a_question_denies_it(
    model_server: Any, asking_env: dict[str, str], tmp_path: Path
) -> None:
    server = asking_server(model_server)
    child = run_in_terminal(server, asking_env, tmp_path)
    try:
        child.expect_exact("allow? y = once")
        child.sendeof()
        child.expect_exact("denied: the input ended")
        child.expect_exact("Done.")
        child.expect_exact("[turn 1 completed")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    assert "the input ended" in server.bodies()[1]["messages"][-1]["content"]
    assert "approved-output" not in server.bodies()[1]["messages"][-1]["content"]


def test_ctrl_c_while_the_answer_streams_ends_its_line_once(
    model_server: Any, run_env: dict[str, str], tmp_path: Path
) -> None:
    """The answer's line, with the ^C the terminal echoed on it, is ended once: no blank
    line before the turn's end (the question's ^C ends its own, above)."""
    server = model_server([text_reply("work", then="stall")])
    child = run_in_terminal(server, run_env, tmp_path)
    try:
        child.expect_exact("work")
        child.sendintr()
        child.expect_exact("[turn 1 aborted")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 130
    assert "work^C\r\n[turn 1 aborted" in child.logfile_read.getvalue()
