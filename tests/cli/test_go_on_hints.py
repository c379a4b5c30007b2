"""Where dsh says how to go on with a session (a line typed to ``dsh run``, chat's
``/model NAME``, ``--continue`` with nothing here to take): a command to paste, naming
the session by its id, each word shell-quoted (an agent's id begins its session's, and
may hold spaces and quotes)."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import dsh, in_terminal, piped_chat, text_reply
from go_on_support import (
    CONFIG,
    assert_went_on,
    hint,
    line_typed_to_run,
    models_yml,
    new_session,
    no_plugins,
    pasted,
    url_model,
)

from dsh._cli_args import build_parser
from dsh._cli_continue import _shell_word, chat_command

pytestmark = pytest.mark.plugins("persistence")


def config_on(server: Any) -> str:
    """The agent on the test server's model, defined in dsh.yml (a URL given with -m is
    not stored: the command pasted gives it again)."""
    return f"{models_yml(server)}{CONFIG}    model: tiny\n"


@pytest.mark.parametrize("elsewhere", [False, True])
def test_a_line_typed_to_dsh_run_names_the_command_that_goes_on_with_its_session(
    model_server: Any, persisting_env: dict[str, str], tmp_path: Path, elsewhere: bool
) -> None:
    server = model_server([text_reply("slow", ".", ".", ".", ".", pause=0.4), text_reply("On.")])
    project = tmp_path / "my project"
    project.mkdir()
    (project / "dsh.yml").write_text(config_on(server))
    cwd, cwd_args = (tmp_path, ["--cwd", str(project)]) if elsewhere else (project, [])
    child = in_terminal(*cwd_args, "run", "go", env=persisting_env, cwd=cwd)
    session, words = line_typed_to_run(child)
    assert words == ["dsh", *cwd_args, "chat", "--session", session]
    # pasted (the words a shell makes of it), it goes on with that session
    done = dsh(*words[1:], env=persisting_env, cwd=cwd, stdin="next\n")
    assert_went_on(done, session)
    assert f"dsh: continuing session {session} ('go', 1 turn so far)" in done.stderr


def test_model_with_a_name_names_the_chat_on_that_model_that_goes_on_with_this_session(
    model_server: Any, persisting_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([])
    (tmp_path / "dsh.yml").write_text(CONFIG)
    done = piped_chat(server, "/model fast one\n/model \x1b[2Jx\n", persisting_env, tmp_path)
    assert done.returncode == 1, done.stderr  # the switches asked for were refused
    session = new_session(done.stderr)
    words = hint(done.stderr, "quit and run ", "\n")
    assert words == ["dsh", "chat", "-m", "fast one", "--session", session]
    # a control character typed is shown escaped, not sent to the terminal
    assert "\x1b" not in done.stderr
    # as bash's $'...', whose escapes paste back to the name typed
    assert "quit and run dsh chat -m $'\\x1b[2Jx' --session " in done.stderr


def test_continue_with_nothing_here_quotes_the_id_it_names(
    model_server: Any, persisting_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Noted.")])
    model = url_model(server)
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / "dsh.yml").write_text(CONFIG)
    first = dsh("-m", model, "run", "hello", env=persisting_env, cwd=project)
    session = new_session(first.stderr)
    done = dsh("-m", model, "run", "--continue", "go on", env=persisting_env, cwd=elsewhere)
    assert done.returncode == 2
    assert hint(done.stderr, "; --session ", " continues it here)") == [session]


def test_the_store_chosen_with_p_is_named_in_the_command_that_goes_on(
    model_server: Any, persisting_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Hi."), text_reply("On.")])
    (tmp_path / "dsh.yml").write_text(config_on(server))
    alone = no_plugins(persisting_env)  # -p persistence is what stores sessions
    given = ["-p", "persistence", "-p", "no:compaction"]
    done = dsh(*given, "chat", env=alone, cwd=tmp_path, stdin="hi\n/model fast\n")
    session = new_session(done.stderr)
    words = hint(done.stderr, "quit and run ", "\n")
    assert words == ["dsh", *given, "chat", "-m", "fast", "--session", session]
    # pasted (on the session's model: "fast" is not one), it goes on with that session
    again = dsh(*given, "chat", "--session", session, env=alone, cwd=tmp_path, stdin="next\n")
    assert_went_on(again, session)
    assert f"dsh: continuing session {session} ('hi', 1 turn so far)" in again.stderr


def test_sessions_resume_with_no_prompt_names_the_chat_on_the_same_store(
    model_server: Any, persisting_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Noted."), text_reply("On."), text_reply("Again.")])
    project = tmp_path / "my project"
    project.mkdir()
    (project / "dsh.yml").write_text(config_on(server))
    alone = no_plugins(persisting_env)
    given = ["-p", "persistence", "--cwd", str(project)]
    first = dsh(*given, "run", "hello", env=alone, cwd=tmp_path)
    session = new_session(first.stderr)
    child = in_terminal(*given, "sessions", "resume", session, env=alone, cwd=tmp_path)
    child.expect(pexpect.EOF)
    said = " ".join(child.logfile_read.getvalue().split())
    # both halves take the same store and workspace: the same -p and --cwd
    resume = hint(said, "resume needs a prompt: ", " (or pipe")
    assert resume == ["dsh", *given, "sessions", "resume", session, "what next?"]
    assert_went_on(dsh(*resume[1:], env=alone, cwd=tmp_path), session)
    words = hint(said, "an interactive resume is ", "\n")
    assert words == ["dsh", *given, "chat", "--session", session]
    done = dsh(*words[1:], env=alone, cwd=tmp_path, stdin="next\n")
    assert_went_on(done, session, "Again.")


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
    parsed = build_parser({}).parse_args(pasted(line)[1:])
    got = (parsed.plugins, parsed.config, parsed.cwd, parsed.session, parsed.model)
    cwd = None if workspace is None else where
    assert got == (["x"], args.config, cwd, session, model)


def test_continue_below_a_project_names_its_command_with_the_same_plugins(
    model_server: Any, persisting_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Noted."), text_reply("On.")])
    project = tmp_path / "project"
    below = project / "src"
    below.mkdir(parents=True)
    (project / "dsh.yml").write_text(config_on(server))
    alone = no_plugins(persisting_env)  # -p persistence is what stores sessions
    first = dsh("-p", "persistence", "run", "hello", env=alone, cwd=project)
    session = new_session(first.stderr)
    done = dsh("-p", "persistence", "run", "--continue", "go on", env=alone, cwd=below)
    assert done.returncode == 2
    words = hint(done.stderr, ": `", "` goes on with it there")
    assert words == [
        "dsh",
        "-p",
        "persistence",
        "--cwd",
        str(project.resolve()),
        "run",
        "--continue",
        "go on",  # the prompt given: pasted alone, it was refused ("run: give the prompt")
    ]
    assert_went_on(dsh(*words[1:], env=alone, cwd=below), session)


def bash_reads(word: str) -> bytes:
    """The bytes bash makes of ``word`` (a word the tests built from fixed strings, in
    argv, never a generated line)."""
    return subprocess.run(
        ["bash", "-c", f"printf %s {word}"],
        env={"LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        timeout=10,
        check=True,
    ).stdout


def test_a_control_character_above_u_ffff_is_one_escape_bash_reads_back() -> None:
    """bash's ``\\u`` takes four hex digits at most: a character above U+FFFF (a tag
    character, invisible) is ``\\UNNNNNNNN`` (it was ``\\ue0001``, read as U+E000 and
    a ``1``)."""
    tag = "\U000e0001"
    value = f"a{tag}1\u202e\x1b"
    word = _shell_word(value)
    assert word == "$'a\\U000e00011\\u202e\\x1b'"
    assert pasted(word) == [value]
    assert bash_reads(word) == value.encode()


@pytest.mark.parametrize("value", ["dir-\udcff", "caf\udce9/\udc80x y", "a\udcff\x1b"])
def test_a_byte_no_utf_8_holds_is_written_as_the_byte_bash_reads_back(value: str) -> None:
    """A path or argument holding a byte that is not UTF-8 (Python keeps it as a lone
    surrogate, U+DC80 to U+DCFF: surrogateescape) is ``\\xNN`` in ``$'...'``, the byte
    itself (found by a review of the hints: the surrogate was written raw, and the hint
    pasted a literal ``\\udcff``, another path)."""
    word = _shell_word(value)
    assert word.isascii() and "\\udc" not in word
    assert bash_reads(word) == value.encode("utf-8", "surrogateescape")
