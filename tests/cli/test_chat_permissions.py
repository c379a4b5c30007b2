"""`dsh chat` answers dsh-permissions' questions at the terminal (behaviour 48's front end)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import piped_chat, text_reply, tool_call_reply

pytestmark = pytest.mark.plugins("permissions")


def start_chat(server: Any, env: dict[str, str], cwd: Path) -> pexpect.spawn:
    env = {**env, "DSH_LOAD_PLUGINS": "permissions"}
    child = pexpect.spawn(
        sys.executable,
        ["-m", "dsh.cli", "-m", f"openai-compatible:tiny@{server.url}", "chat"],
        env=env,
        cwd=str(cwd),
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 200),
    )
    child.expect_exact("> ")
    return child


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("y", "approved-output"),
        ("not now, read the file instead", "not now, read the file instead"),
    ],
)
def test_a_mutating_tool_call_is_put_to_the_person(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, answer: str, expected: str
) -> None:
    server = model_server(
        [tool_call_reply("bash", {"command": "echo approved-output"}), text_reply("Done.")]
    )
    child = start_chat(server, cli_env, tmp_path)
    child.sendline("run it")
    child.expect_exact("? bash(")
    child.expect_exact("allow? y = once")
    child.sendline(answer)
    child.expect_exact("Done.")
    child.expect_exact("[turn 1 completed")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    result = server.bodies()[1]["messages"][-1]
    assert result["role"] == "tool"
    assert expected in result["content"]


def test_end_of_input_at_a_question_denies_it_and_quits(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server(
        [tool_call_reply("bash", {"command": "echo approved-output"}), text_reply("Denied.")]
    )
    child = start_chat(server, cli_env, tmp_path)
    child.sendline("run it")
    child.expect_exact("allow? y = once")
    child.sendeof()  # Ctrl-D: no one will answer
    child.expect_exact("denied: the input ended")
    child.expect_exact("[turn 1 completed")
    child.expect(pexpect.EOF, timeout=15)  # long before permissions.ask_timeout
    child.close()
    assert child.exitstatus == 0
    result = server.bodies()[1]["messages"][-1]
    assert result["role"] == "tool"
    assert "the input ended" in result["content"]
    assert "approved-output" not in result["content"]


def test_a_question_after_piped_input_ended_is_denied(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server(
        [tool_call_reply("bash", {"command": "echo approved-output"}), text_reply("Denied.")]
    )
    done = piped_chat(server, "run it\n", cli_env, tmp_path, plugins="permissions")
    assert done.returncode == 0, done.stderr
    assert "denied: the input ended" in done.stderr
    assert "approved-output" not in server.bodies()[1]["messages"][-1]["content"]


def test_a_piped_line_answers_the_question_it_follows(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """From a file, `y` waits for the question (it is not taken as a prompt or a steer
    while the turn starts)."""
    server = model_server(
        [tool_call_reply("bash", {"command": "echo approved-output"}), text_reply("Ran it.")]
    )
    done = piped_chat(server, "run it\ny\n", cli_env, tmp_path, plugins="permissions")
    assert done.returncode == 0, done.stderr
    messages = server.bodies()[1]["messages"]
    assert "approved-output" in messages[-1]["content"]
    assert [m["content"] for m in messages if m["role"] == "user"] == ["run it"]
