"""Where dsh says how to go on with a session (a line typed to ``dsh run``, chat's
``/model NAME``, ``--continue`` with nothing here to take): a command to paste, naming
the session by its id, each word shell-quoted (an agent's id begins its session's, and
may hold spaces and quotes)."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import dsh, in_terminal, piped_chat, text_reply

from dsh._cli_args import build_parser
from dsh._cli_continue import chat_command

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
    # as bash's $'...', whose escapes paste back to the name typed
    assert "quit and run dsh chat -m $'\\x1b[2Jx' --session " in done.stderr


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


def _pasted(line: str) -> list[str]:
    """The words a shell makes of the hint ``line``: bash's ``$'...'`` (a word holding
    a control character) decoded, the rest as ``shlex.split`` reads it."""

    def decoded(match: re.Match[str]) -> str:
        body = match.group(1).encode("latin-1", "backslashreplace").decode("unicode_escape")
        return shlex.quote(body)

    return shlex.split(re.sub(r"\$'((?:[^'\\]|\\.)*)'", decoded, line))


def test_the_store_chosen_with_p_is_named_in_the_command_that_goes_on(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Hi."), text_reply("On.")])
    (tmp_path / "dsh.yml").write_text(config_on(server))
    alone = {**env, "DSH_LOAD_PLUGINS": ""}  # -p persistence is what stores sessions
    given = ["-p", "persistence", "-p", "no:compaction"]
    done = dsh(*given, "chat", env=alone, cwd=tmp_path, stdin="hi\n/model fast\n")
    session = _new_session(done.stderr)
    words = _hint(done.stderr, "quit and run ", "\n")
    assert words == ["dsh", *given, "chat", "-m", "fast", "--session", session]
    # pasted (on the session's model: "fast" is not one), it goes on with that session
    pasted = dsh(*given, "chat", "--session", session, env=alone, cwd=tmp_path, stdin="next\n")
    assert pasted.returncode == 0, pasted.stderr
    assert f"dsh: continuing session {session} ('hi', 1 turn so far)" in pasted.stderr
    assert pasted.stdout == "On.\n"


def test_sessions_resume_with_no_prompt_names_the_chat_on_the_same_store(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Noted."), text_reply("On.")])
    project = tmp_path / "my project"
    project.mkdir()
    (project / "dsh.yml").write_text(config_on(server))
    alone = {**env, "DSH_LOAD_PLUGINS": ""}
    given = ["-p", "persistence", "--cwd", str(project)]
    first = dsh(*given, "run", "hello", env=alone, cwd=tmp_path)
    session = _new_session(first.stderr)
    child = in_terminal(*given, "sessions", "resume", session, env=alone, cwd=tmp_path)
    child.expect(pexpect.EOF)
    said = child.logfile_read.getvalue().replace("\r\n", "\n")
    words = _hint(" ".join(said.split()), "an interactive resume is ", "\n")
    assert words == ["dsh", *given, "chat", "--session", session]
    done = dsh(*words[1:], env=alone, cwd=tmp_path, stdin="next\n")
    assert done.returncode == 0, done.stderr
    assert f"dsh: continuing session {session}" in done.stderr
    assert done.stdout == "On.\n"


@pytest.mark.parametrize(
    ("workspace", "config", "session", "model"),
    [
        (None, None, "ab\u202ecd it's", None),  # a bidi control: an id may hold one
        ("a\nb", None, "s1", None),  # a line end in the workspace's name
        (None, "-x.yml", "s1", "-weird"),  # values a parser takes for options
        (None, "my conf.yml", "a=b", "\x1b[2Jx"),
    ],
)
def test_the_command_to_paste_gives_back_each_value_and_shows_no_control_character(
    tmp_path: Path, workspace: str | None, config: str | None, session: str, model: str | None
) -> None:
    where = Path.cwd().resolve() if workspace is None else tmp_path / workspace
    args = argparse.Namespace(config=None if config is None else Path(config), plugins=["x"])
    line = chat_command(where, args, session, model)
    assert line.isprintable()  # no raw control character reaches the terminal
    parsed = build_parser({}).parse_args(_pasted(line)[1:])
    got = (parsed.plugins, parsed.config, parsed.cwd, parsed.session, parsed.model)
    cwd = None if workspace is None else where
    assert got == (["x"], args.config, cwd, session, model)


def test_continue_below_a_project_names_its_command_with_the_same_plugins(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Noted."), text_reply("On.")])
    project = tmp_path / "project"
    below = project / "src"
    below.mkdir(parents=True)
    (project / "dsh.yml").write_text(config_on(server))
    alone = {**env, "DSH_LOAD_PLUGINS": ""}  # -p persistence is what stores sessions
    first = dsh("-p", "persistence", "run", "hello", env=alone, cwd=project)
    session = _new_session(first.stderr)
    done = dsh("-p", "persistence", "run", "--continue", "go on", env=alone, cwd=below)
    assert done.returncode == 2
    words = _hint(done.stderr, ": `", "` goes on with it there")
    assert words == [
        "dsh",
        "-p",
        "persistence",
        "--cwd",
        str(project.resolve()),
        "run",
        "--continue",
    ]
    pasted = dsh(*words[1:], "go on", env=alone, cwd=below)
    assert pasted.returncode == 0, pasted.stderr
    assert f"dsh: continuing session {session}" in pasted.stderr
    assert pasted.stdout == "On.\n"
