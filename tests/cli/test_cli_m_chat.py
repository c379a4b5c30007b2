"""`dsh chat` beyond the other chat tests: what the mutation review of _cli_chat.py found
untested (docs/cli.md, "`dsh chat`"): the last line of a script, its bytes, /exit, empty
lines, permission answers in any case, questions after the input ended, a closed
output, a session that cannot be saved, and at the terminal the prompt, /model,
/plugins, unknown commands, /queue while a turn runs, Ctrl-C's notice and Ctrl-D during
a turn."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import piped_chat, text_reply, tool_call_reply

TIMEOUT = 30


def model_arg(server: Any) -> str:
    return f"openai-compatible:tiny@{server.url}"


def chat_bytes(
    server: Any, stdin: bytes, env: dict[str, str], cwd: Path, plugins: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dsh.cli", "-m", model_arg(server), "chat"],
        input=stdin,
        env={**env, "DSH_LOAD_PLUGINS": plugins},
        cwd=cwd,
        capture_output=True,
        timeout=60,
    )


def users(server: Any) -> list[list[Any]]:
    """The user messages of each request."""
    return [[m["content"] for m in b["messages"] if m["role"] == "user"] for b in server.bodies()]


# -- scripts ---------------------------------------------------------------------------


def test_a_scripts_last_line_without_a_line_end_is_a_prompt_too(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("One."), text_reply("Two.")])
    done = piped_chat(server, "first\nsecond", cli_env, tmp_path, plugins="")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "One.\nTwo.\n"
    assert users(server) == [["first"], ["first", "second"]]
    assert "> " not in done.stderr  # a script is not prompted


def test_a_script_that_is_not_utf8_is_read_with_replacement_characters(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Ok.")])
    done = chat_bytes(server, b"caf\xe9 au lait\n", cli_env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr.decode(errors="replace")
    assert users(server) == [["caf\ufffd au lait"]]
    said = "(1 byte that was not UTF-8 was replaced by \ufffd in the line sent)\n"
    assert said in done.stderr.decode()


def test_the_note_of_a_line_that_is_not_utf8_comes_when_the_line_is_taken(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Was: said when the line was read ahead, so the first line's note came before the
    chat's start-up lines and the second's inside the first turn's output."""
    server = model_server([text_reply("One."), text_reply("Two.")])
    done = chat_bytes(server, b"caf\xe9\n\xe2\x82 cut\n", cli_env, tmp_path)
    assert done.returncode == 0, done.stderr
    said = done.stderr.decode()
    first = said.index("(1 byte that was not UTF-8")
    second = said.index("(2 bytes that were not UTF-8")
    assert said.index("dsh: model") < first < said.index("[turn 1 ") < second, said


def test_exit_quits_like_quit(model_server: Any, cli_env: dict[str, str], tmp_path: Path) -> None:
    server = model_server([text_reply("One."), text_reply("Two.")])
    done = piped_chat(server, "first\n/exit\nsecond\n", cli_env, tmp_path, plugins="")
    assert done.returncode == 0, done.stderr
    assert users(server) == [["first"]]


def test_empty_lines_start_no_turn(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("One."), text_reply("Two.")])
    done = piped_chat(server, "\n   \nfirst\n\n", cli_env, tmp_path, plugins="")
    assert done.returncode == 0, done.stderr
    assert users(server) == [["first"]]


# -- permission questions --------------------------------------------------------------


def tool_results(server: Any) -> list[str]:
    return [
        m["content"] for m in server.bodies()[-1]["messages"] if m["role"] == "tool"
    ]  # the last request carries every result of the turn


@pytest.mark.plugins("permissions")
@pytest.mark.parametrize("answer", ["YES", " y ", "Y", "yes"])
def test_yes_approves_in_any_case(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, answer: str
) -> None:
    server = model_server(
        [tool_call_reply("bash", {"command": "echo approved-output"}), text_reply("Ran it.")]
    )
    done = piped_chat(server, f"run it\n{answer}\n", cli_env, tmp_path, plugins="permissions")
    assert done.returncode == 0, done.stderr
    assert "approved-output" in tool_results(server)[0]


@pytest.mark.plugins("permissions")
@pytest.mark.parametrize("answer", ["", "n", "No", "N"])
def test_no_or_an_empty_line_denies(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, answer: str
) -> None:
    server = model_server(
        [tool_call_reply("bash", {"command": "echo approved-output"}), text_reply("Ok.")]
    )
    done = piped_chat(server, f"run it\n{answer}\n", cli_env, tmp_path, plugins="permissions")
    assert done.returncode == 0, done.stderr
    (result,) = tool_results(server)
    assert "approved-output" not in result
    assert "the user said no" in result
    assert users(server)[-1] == ["run it"]  # the answer was not taken as a prompt


@pytest.mark.plugins("permissions")
@pytest.mark.parametrize("answer", ["a", "Always"])
def test_always_approves_the_same_call_again_without_asking(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, answer: str
) -> None:
    call = {"command": "echo approved-output"}
    server = model_server(
        [
            tool_call_reply("bash", call, "call-1"),
            tool_call_reply("bash", call, "call-2"),
            text_reply("Ran it twice."),
        ]
    )
    done = piped_chat(server, f"run it\n{answer}\n", cli_env, tmp_path, plugins="permissions")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("? bash(") == 1, done.stderr
    assert all("approved-output" in result for result in tool_results(server))


@pytest.mark.plugins("permissions")
def test_after_an_answer_the_next_line_of_a_script_is_a_prompt(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server(
        [
            tool_call_reply("bash", {"command": "echo approved-output"}),
            text_reply("Ran it."),
            text_reply("Second."),
        ]
    )
    done = piped_chat(server, "run it\ny\nsecond\n", cli_env, tmp_path, plugins="permissions")
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("Second.\n")
    assert users(server)[-1] == ["run it", "second"]


@pytest.mark.plugins("permissions")
def test_every_question_after_the_input_ended_is_denied(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    # the first question is pending when the script ends, the second comes later: both
    # are denied at once (a short ask_timeout keeps a failure from taking 5 minutes)
    (tmp_path / "dsh.yml").write_text("permissions:\n  ask_timeout: 20\n")
    server = model_server(
        [
            tool_call_reply("bash", {"command": "echo first-output"}, "call-1"),
            tool_call_reply("bash", {"command": "echo second-output"}, "call-2"),
            text_reply("Both denied."),
        ]
    )
    done = piped_chat(server, "run it\n", cli_env, tmp_path, plugins="permissions")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("denied: the input ended") == 2, done.stderr
    results = tool_results(server)
    assert len(results) == 2
    assert all("the input ended" in result for result in results), results


# -- the output, the session -----------------------------------------------------------


def test_a_closed_output_ends_the_chat_with_141_and_no_more_turns(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("One."), text_reply("Two."), text_reply("Three.")])
    read, write = os.pipe()
    os.close(read)  # no one reads the answers
    try:
        done = subprocess.run(
            [sys.executable, "-m", "dsh.cli", "-m", model_arg(server), "chat"],
            input=b"first\nsecond\nthird\n",
            stdout=write,
            stderr=subprocess.PIPE,
            env={**cli_env, "DSH_LOAD_PLUGINS": ""},
            cwd=tmp_path,
            timeout=60,
        )
    finally:
        os.close(write)
    assert done.returncode == 141, done.stderr
    assert b"Traceback" not in done.stderr
    assert users(server) == [["first"]]


#: `dsh` with a plugin whose session flush fails, beside the installed ones.
BROKEN_STORE = """
import sys

import dsh.harness
import dsh.plugins
from dsh import hookimpl
from dsh.cli import main


class BrokenStore:
    @hookimpl
    def session_flush(self, session):
        raise OSError("disk full")


real = dsh.plugins.create_plugin_manager
dsh.plugins.create_plugin_manager = lambda plugins=(), **kw: real(
    [("broken-store", BrokenStore()), *plugins], **kw
)
sys.exit(main())
"""


def test_a_chat_whose_session_could_not_be_saved_exits_1(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    script = tmp_path / "broken_dsh.py"
    script.write_text(textwrap.dedent(BROKEN_STORE))
    server = model_server([text_reply("One.")])
    done = subprocess.run(
        [sys.executable, str(script), "-m", model_arg(server), "chat"],
        input="first\n",
        env={**cli_env, "DSH_LOAD_PLUGINS": ""},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout == "One.\n"
    assert "disk full" in done.stderr


# -- at the terminal -------------------------------------------------------------------


def test_the_prompt_shows_without_unbuffered_output(
    model_server: Any, chat: Any, cli_env: dict[str, str]
) -> None:
    # a real terminal: stderr is line-buffered, and "> " ends no line
    env = {k: v for k, v in cli_env.items() if k != "PYTHONUNBUFFERED"}
    child = chat(model_server([text_reply("Hi.")]), env, plugins="")
    child.sendline("hello")
    child.expect_exact("[turn 1 completed")
    child.expect_exact("> ")
    child.sendline("/quit")
    child.expect(pexpect.EOF)


def test_model_plugins_and_unknown_commands_answer_and_prompt_again(
    model_server: Any, chat: Any
) -> None:
    server = model_server([])
    child = chat(server, plugins="")
    child.sendline("/model")
    child.expect_exact("  openai-compatible:tiny")
    child.expect_exact("> ")
    child.sendline("/plugins")
    child.expect_exact("  dsh.builtins (dsh-core ")
    child.expect_exact("> ")
    child.sendline("/nope")
    # no /compact: a plugin's command is offered only while the plugin is loaded
    child.expect_exact("unknown command /nope (try /queue TEXT, /resume ID, /plugins,")
    child.expect_exact("> ")
    child.sendline("/resume")
    child.expect_exact("/resume needs a session id")
    child.expect_exact("> ")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert server.bodies() == []


def test_queue_while_a_turn_runs_is_the_next_turn(model_server: Any, chat: Any) -> None:
    slow = text_reply("thinking", ".", ".", ".", ".", " done.", pause=0.4)
    server = model_server([slow, text_reply("Later.")])
    child = chat(server, plugins="")
    child.sendline("start")
    child.expect_exact("thinking")
    child.sendline("/queue and then this")
    child.expect_exact("[turn 1 completed")
    child.expect_exact("Later.")
    child.expect_exact("[turn 2 completed")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    assert users(server) == [["start"], ["start", "and then this"]]


def test_ctrl_c_during_a_turn_says_how_to_quit(model_server: Any, chat: Any) -> None:
    server = model_server([text_reply("working", then="stall")])
    child = chat(server, plugins="")
    child.sendline("long task")
    child.expect_exact("working")
    child.sendintr()
    child.expect_exact("(cancelled; Ctrl-C again to quit)")
    child.expect_exact("[turn 1 aborted")
    child.sendline("/quit")
    child.expect(pexpect.EOF)


def test_ctrl_d_during_a_turn_quits_once_the_turn_is_done(model_server: Any, chat: Any) -> None:
    slow = text_reply("thinking", ".", ".", ".", " done.", pause=0.4)
    server = model_server([slow])
    child = chat(server, plugins="")
    child.sendline("start")
    child.expect_exact("thinking")
    child.sendeof()
    child.expect_exact(" done.")
    child.expect_exact("[turn 1 completed")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
