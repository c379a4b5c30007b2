"""Where dsh says how to go on with a session (a line typed to ``dsh run``, chat's
``/model NAME``, ``--continue`` with nothing here to take): a command to paste, naming
the session by its id, each word shell-quoted (an agent's id begins its session's, and
may hold spaces and quotes)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import dsh, in_terminal, piped_chat, text_reply

pytestmark = pytest.mark.plugins("persistence")

#: an agent id a shell would split and unquote: its session's id begins with it
AGENT = "it's mine"
CONFIG = 'agents:\n  - id: "it\'s mine"\n'


def config_on(server: Any) -> str:
    """The agent on the test server's model, defined in dsh.yml (a URL given with -m is
    not stored: the command pasted could not build the model again)."""
    model = f"{{provider: openai-compatible, model: tiny, base_url: '{server.url}'}}"
    return f"models:\n  tiny: {model}\n{CONFIG}    model: tiny\n"


@pytest.fixture
def env(cli_env: dict[str, str]) -> dict[str, str]:
    return {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}


def _new_session(stderr: str) -> str:
    return stderr.split("dsh: new session ", 1)[1].split("\n", 1)[0]


def _hint(said: str, before: str, after: str) -> list[str]:
    """The words of the command ``said`` names between ``before`` and ``after``."""
    return shlex.split(said.split(before, 1)[1].split(after, 1)[0])


@pytest.mark.parametrize("elsewhere", [False, True])
def test_a_line_typed_to_dsh_run_names_the_command_that_goes_on_with_its_session(
    model_server: Any, env: dict[str, str], tmp_path: Path, elsewhere: bool
) -> None:
    server = model_server([text_reply("slow", ".", ".", ".", ".", pause=0.4), text_reply("On.")])
    project = tmp_path / "my project"
    project.mkdir()
    (project / "dsh.yml").write_text(config_on(server))
    cwd, cwd_args = (tmp_path, ["--cwd", str(project)]) if elsewhere else (project, [])
    child = in_terminal(*cwd_args, "run", "go", env=env, cwd=cwd)
    child.expect_exact("slow")
    child.sendline("and also this")
    child.expect_exact("[turn 1 completed")
    child.expect(pexpect.EOF)
    said = child.logfile_read.getvalue().replace("\r\n", "\n")
    session = _new_session(said)
    assert session.startswith(f"{AGENT}-session-")
    words = _hint(said, "dsh run takes one prompt; ", " goes on with this session)")
    assert words == ["dsh", *cwd_args, "chat", "--session", session]
    # pasted (the words a shell makes of it), it goes on with that session
    done = dsh(*words[1:], env=env, cwd=cwd, stdin="next\n")
    assert done.returncode == 0, done.stderr
    assert f"dsh: continuing session {session} ('go', 1 turn so far)" in done.stderr
    assert done.stdout == "On.\n"


def test_model_with_a_name_names_the_chat_on_that_model_that_goes_on_with_this_session(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([])
    (tmp_path / "dsh.yml").write_text(CONFIG)
    done = piped_chat(server, "/model fast one\n/model \x1b[2Jx\n", env, tmp_path)
    assert done.returncode == 1, done.stderr  # the switches asked for were refused
    session = _new_session(done.stderr)
    words = _hint(done.stderr, "quit and run ", "\n")
    assert words == ["dsh", "chat", "-m", "fast one", "--session", session]
    # a control character typed is shown escaped, not sent to the terminal
    assert "\x1b" not in done.stderr
    assert "quit and run dsh chat -m '\\x1b[2Jx' --session " in done.stderr


def test_continue_with_nothing_here_quotes_the_id_it_names(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Noted.")])
    model = f"openai-compatible:tiny@{server.url}"
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / "dsh.yml").write_text(CONFIG)
    first = dsh("-m", model, "run", "hello", env=env, cwd=project)
    session = _new_session(first.stderr)
    done = dsh("-m", model, "run", "--continue", "go on", env=env, cwd=elsewhere)
    assert done.returncode == 2
    assert _hint(done.stderr, "; --session ", " continues it here)") == [session]
