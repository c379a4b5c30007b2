"""`dsh chat` answers dsh-permissions' questions at the terminal (behaviour 48's front end)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import dsh, in_terminal, piped_chat, text_reply, tool_call_reply

pytestmark = pytest.mark.plugins("permissions")


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("y", "approved-output"),
        ("not now, read the file instead", "not now, read the file instead"),
    ],
)
def test_a_mutating_tool_call_is_put_to_the_person(
    model_server: Any,
    cli_env: dict[str, str],
    tmp_path: Path,
    chat: Any,
    answer: str,
    expected: str,
) -> None:
    server = model_server(
        [tool_call_reply("bash", {"command": "echo approved-output"}), text_reply("Done.")]
    )
    child = chat(server, plugins="permissions")
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
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, chat: Any
) -> None:
    server = model_server(
        [tool_call_reply("bash", {"command": "echo approved-output"}), text_reply("Denied.")]
    )
    child = chat(server, plugins="permissions")
    child.sendline("run it")
    child.expect_exact("allow? y = once")
    child.sendeof()  # Ctrl-D: no one will answer
    child.expect_exact("denied: the input ended")
    child.expect_exact("[turn 1 completed")
    child.expect(pexpect.EOF, timeout=60)  # long before permissions.ask_timeout (300 s)
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


@pytest.mark.parametrize(("answer", "expected"), [("y", "approved-output"), ("n", "said no")])
def test_dsh_run_in_a_terminal_puts_the_question_to_the_person(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, answer: str, expected: str
) -> None:
    server = model_server(
        [tool_call_reply("bash", {"command": "echo approved-output"}), text_reply("Done.")]
    )
    model = f"openai-compatible:tiny@{server.url}"
    env = {**cli_env, "DSH_LOAD_PLUGINS": "permissions"}
    child = in_terminal("-m", model, "run", "run it", env=env, cwd=tmp_path)
    child.expect_exact("? bash(")
    # what "always" would allow is said before it is chosen
    child.expect_exact("allow? y = once, a = always (for this session: command echo")
    child.sendline(answer)
    child.expect_exact("Done.")
    child.expect_exact("[turn 1 completed")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert expected in server.bodies()[1]["messages"][-1]["content"]


def test_dsh_run_with_no_terminal_denies_without_asking(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server(
        [tool_call_reply("bash", {"command": "echo approved-output"}), text_reply("Ok.")]
    )
    env = {**cli_env, "DSH_LOAD_PLUGINS": "permissions"}
    done = dsh(
        "-m",
        f"openai-compatible:tiny@{server.url}",
        "run",
        "run it",
        env=env,
        cwd=tmp_path,
        stdin="y\n",
    )
    assert done.returncode == 0, done.stderr
    assert "allow?" not in done.stderr
    result = server.bodies()[1]["messages"][-1]["content"]
    assert "no front end that can ask a person is loaded" in result


def test_a_question_an_ask_rule_puts_offers_no_always(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """An ask rule asks every time: "a = always" was offered, taken, and nothing was
    remembered, unsaid."""
    (tmp_path / "dsh.yml").write_text("permissions:\n  ask: ['bash(echo *)']\n")
    server = model_server(
        [tool_call_reply("bash", {"command": "echo approved-output"}), text_reply("Done.")]
    )
    model = f"openai-compatible:tiny@{server.url}"
    env = {**cli_env, "DSH_LOAD_PLUGINS": "permissions"}
    child = in_terminal("-m", model, "run", "run it", env=env, cwd=tmp_path)
    child.expect_exact("? bash(")
    child.expect_exact("allow? y = once, n = no (or type a reason for the model); asked again")
    child.sendline("y")
    child.expect_exact("[turn 1 completed")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "a = always" not in child.logfile_read.getvalue()


def test_always_typed_where_it_is_not_offered_says_it_allowed_once_only(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """`a` at a question that offers none ran the call as `y` does, unsaid: one who
    typed it thought the next such call would run without asking (journey review)."""
    (tmp_path / "dsh.yml").write_text("permissions:\n  ask: ['bash(echo *)']\n")
    server = model_server(
        [tool_call_reply("bash", {"command": "echo approved-output"}), text_reply("Done.")]
    )
    model = f"openai-compatible:tiny@{server.url}"
    env = {**cli_env, "DSH_LOAD_PLUGINS": "permissions"}
    child = in_terminal("-m", model, "run", "run it", env=env, cwd=tmp_path)
    child.expect_exact("asked again each time")
    child.sendline("a")
    child.expect_exact(
        "  allowed once only: this call is asked about each time (an ask rule covers it, "
        "or it cannot be checked)"
    )
    child.expect_exact("[turn 1 completed")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "approved-output" in server.bodies()[1]["messages"][-1]["content"]
