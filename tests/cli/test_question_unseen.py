"""A question is put only where it is seen: stdin and stderr both terminals. With
stderr redirected (`dsh run ... 2>log` at a terminal) the call is denied at once, as
with no terminal, rather than waiting unseen for `permissions.ask_timeout` (review
rev-cli, finding 2)."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import dsh, text_reply, tool_call_reply

pytestmark = pytest.mark.plugins("permissions")

NOT_ASKED = "no front end that can ask a person is loaded"


def _stderr_to(log: Path, *args: str, env: dict[str, str], cwd: Path) -> pexpect.spawn:
    """``dsh ARGS 2>LOG`` in a pseudo-terminal (stdin and stdout)."""
    script = 'log=$1; shift; exec "$@" 2>"$log"'
    child = pexpect.spawn(
        "/bin/sh",
        ["-c", script, "sh", str(log), sys.executable, "-m", "dsh.cli", *args],
        env=env,
        cwd=str(cwd),
        encoding="utf-8",
        timeout=60,
    )
    child.logfile_read = io.StringIO()
    return child


@pytest.mark.parametrize("command", ["run", "chat"])
def test_a_question_stderr_would_hide_is_denied_at_once(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, command: str
) -> None:
    server = model_server(
        [tool_call_reply("bash", {"command": "echo $((6 * 7))-ran"}), text_reply("Denied.")]
    )
    # an unseen question would wait this long; the call is denied long before
    (tmp_path / "dsh.yml").write_text("permissions:\n  ask_timeout: 40\n")
    env = {**cli_env, "DSH_LOAD_PLUGINS": "permissions", "DSH_CHAT_EDITOR": "0"}
    model = f"openai-compatible:tiny@{server.url}"
    log = tmp_path / "err.log"
    words = ["run", "run it"] if command == "run" else ["chat"]
    child = _stderr_to(log, "-m", model, *words, env=env, cwd=tmp_path)
    if command == "chat":
        child.sendline("run it")
    child.expect_exact("Denied.", timeout=30)  # before ask_timeout
    if command == "chat":
        child.sendline("y")  # typed blind: a prompt, not an answer
        child.sendeof()
    child.expect(pexpect.EOF, timeout=30)
    child.close()
    assert child.exitstatus == 0, log.read_text()
    assert "allow?" not in log.read_text()
    assert log.read_text().count("needed a person's approval and was denied") == 1
    result = server.bodies()[1]["messages"][-1]["content"]
    assert NOT_ASKED in result
    assert "42-ran" not in result


WARNED = (
    "dsh: warning: 'bash' (command: echo $((6 * 7))-ran) needed a person's approval and was "
    "denied: no one can be asked here (stdin or stderr is not a terminal); only a person "
    "at a terminal can allow it (later denials like this one are not said)\n"
)


@pytest.mark.parametrize("json", [False, True])
def test_a_call_denied_as_no_one_can_be_asked_is_said_once_on_stderr(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, json: bool
) -> None:
    """It was said to the model only: the person saw the turn go on without the call."""
    server = model_server(
        [
            tool_call_reply("bash", {"command": "echo $((6 * 7))-ran"}),
            tool_call_reply("bash", {"command": "echo again"}, call_id="call-2"),
            text_reply("Denied."),
        ]
    )
    env = {**cli_env, "DSH_LOAD_PLUGINS": "permissions"}
    model = f"openai-compatible:tiny@{server.url}"
    done = dsh("-m", model, "run", *(["--json"] if json else []), "run it", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("dsh: warning:") == 1, done.stderr
    assert WARNED in done.stderr
    if not json:  # after the call's line, before its result's
        lines = done.stderr.splitlines(keepends=True)
        at = lines.index(WARNED)
        assert lines[at - 1].startswith("→ bash(") and lines[at + 1].startswith("✗ bash: ")
    for body in server.bodies()[1:]:
        assert NOT_ASKED in body["messages"][-1]["content"]


def test_a_call_denied_by_a_rule_is_no_unasked_warning(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server(
        [tool_call_reply("bash", {"command": "rm -rf build"}), text_reply("Denied.")]
    )
    (tmp_path / "dsh.yml").write_text("permissions:\n  deny: ['bash(rm *)']\n")
    env = {**cli_env, "DSH_LOAD_PLUGINS": "permissions"}
    model = f"openai-compatible:tiny@{server.url}"
    done = dsh("-m", model, "run", "clean up", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr and "deny: bash(rm *)" in done.stderr


@pytest.mark.parametrize(
    ("config", "command", "advice"),
    [
        (
            "permissions:\n  ask: ['bash(git push*)']\n",
            "git push origin main",
            "; the rule 'ask: bash(git push*)' asks: run dsh in a terminal, or remove that "
            "rule (later",
        ),
        (
            "permissions:\n  allow: ['bash(*)']\n",
            "echo $(id)",
            "; only a person at a terminal can allow it (later",
        ),
    ],
)
def test_the_unasked_warning_gives_the_way_out_that_fits(
    model_server: Any,
    cli_env: dict[str, str],
    tmp_path: Path,
    config: str,
    command: str,
    advice: str,
) -> None:
    """An allow rule does not help past an ask rule, nor for a command no rule can allow
    (review rerev-cli, finding 2)."""
    server = model_server([tool_call_reply("bash", {"command": command}), text_reply("Denied.")])
    (tmp_path / "dsh.yml").write_text(config)
    env = {**cli_env, "DSH_LOAD_PLUGINS": "permissions"}
    model = f"openai-compatible:tiny@{server.url}"
    done = dsh("-m", model, "run", "push it", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert advice in done.stderr
    assert "permissions: allow" not in done.stderr
