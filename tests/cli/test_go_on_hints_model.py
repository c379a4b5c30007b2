"""The model in a command dsh prints to paste (how to go on with a session): a model
given with ``-m`` is given again, as a URL given so is not stored with the session
(``dsh.llm.choose``: resuming could not build it again), unless the session records
that very model (``-m tiny`` of dsh.yml, a ``provider:model``), which it keeps. What may
be a key in it (``user:password@``, ``?api-key=...``, a port that is not a number) is
``***``: a command shown is never a key's copy.

Before: no hint carried ``-m``; the pasted command failed to build the session's model
(or, with dsh.yml's ``model:``, went on on another one)."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import dsh, in_terminal, text_reply
from go_on_support import (
    CONFIG,
    assert_went_on,
    hint,
    line_typed_to_run,
    new_session,
    url_model,
)

from dsh._cli_continue import chat_command, command_line

pytestmark = pytest.mark.plugins("persistence")

KEY = "SUPERSECRET-Qz7Lm2Xc91"
GATEWAY = "openai-compatible:x@https://gw.example"


@pytest.mark.parametrize(
    ("given", "recorded", "shown"),
    [
        (f"{GATEWAY}/v1", "openai-compatible:x", f"{GATEWAY}/v1"),
        ("tiny", "tiny", None),  # dsh.yml's: the session records it, and keeps it
        ("anthropic:claude-sonnet-4-5", "anthropic:claude-sonnet-4-5", None),
        (None, "tiny", None),
        (
            f"openai-compatible:x@https://me:{KEY}@gw.example/v1",
            "x",
            f"{GATEWAY.replace('//', '//***@')}/v1",
        ),
        (f"{GATEWAY}/v1?api-key={KEY}&v=2", "x", f"{GATEWAY}/v1?api-key=***&v=2"),
        (f"{GATEWAY}:{KEY}/v1", "x", f"{GATEWAY}:***/v1"),
    ],
    ids=["url", "configured", "provider-model", "none", "userinfo", "query", "port"],
)
def test_the_chat_command_gives_the_m_the_session_does_not_record_its_keys_hidden(
    given: str | None, recorded: str, shown: str | None
) -> None:
    args = argparse.Namespace(config=None, plugins=[], model=given)
    line = chat_command(Path.cwd().resolve(), args, "s1", recorded=recorded)
    assert KEY[:6] not in line
    m = ["-m", shown] if shown is not None else []
    assert shlex.split(line) == ["dsh", "chat", *m, "--session", "s1"]


def test_sessions_resume_is_given_the_m_of_the_command_before_its_name() -> None:
    """``dsh sessions resume`` takes -m as a global option, and its session is not
    loaded to say which model it records: the -m given is given again."""
    args = argparse.Namespace(config=None, plugins=["persistence"], model="tiny")
    line = command_line(Path.cwd().resolve(), args, "sessions", "resume", "s1", "what next?")
    words = ["dsh", "-p", "persistence", "-m", "tiny", "sessions", "resume", "s1", "what next?"]
    assert shlex.split(line) == words


def test_a_line_typed_to_dsh_run_on_a_url_names_the_chat_on_that_url(
    model_server: Any, persisting_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("slow", ".", ".", ".", ".", pause=0.4), text_reply("On.")])
    (tmp_path / "dsh.yml").write_text(CONFIG)
    model = url_model(server)
    child = in_terminal("-m", model, "run", "go", env=persisting_env, cwd=tmp_path)
    session, words = line_typed_to_run(child)
    assert words == ["dsh", "chat", "-m", model, "--session", session]
    pasted = dsh(*words[1:], env=persisting_env, cwd=tmp_path, stdin="next\n")
    assert_went_on(pasted, session)


def test_sessions_resume_with_no_prompt_names_both_commands_on_the_url_given(
    model_server: Any, persisting_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Noted."), text_reply("On."), text_reply("Again.")])
    model = url_model(server)
    first = dsh("-m", model, "run", "hello", env=persisting_env, cwd=tmp_path)
    session = new_session(first.stderr)
    child = in_terminal(
        "-m", model, "sessions", "resume", session, env=persisting_env, cwd=tmp_path
    )
    child.expect(pexpect.EOF)
    said = " ".join(child.logfile_read.getvalue().split())
    resume = hint(said, "resume needs a prompt: ", " (or pipe")
    assert resume == ["dsh", "-m", model, "sessions", "resume", session, "what next?"]
    chat = hint(said, "an interactive resume is ", "\n")
    assert chat == ["dsh", "chat", "-m", model, "--session", session]
    done = dsh(*resume[1:], env=persisting_env, cwd=tmp_path)
    assert_went_on(done, session)
    pasted = dsh(*chat[1:], env=persisting_env, cwd=tmp_path, stdin="next\n")
    assert_went_on(pasted, session, "Again.")
