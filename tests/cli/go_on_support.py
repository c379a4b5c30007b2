"""Support for the tests of going on with a stored session from the command line
(``--continue``, ``--session ID``, the commands dsh prints to paste), imported as
``go_on_support`` (its fixture is re-exported by tests/cli/conftest.py): the model of
the test server as ``-m`` or dsh.yml give it, the session a run stored, the words of a
command said, and that a command went on with a session."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pexpect
import pytest

#: an agent id a shell would split and unquote: its session's id begins with it
AGENT = "it's mine"
CONFIG = 'agents:\n  - id: "it\'s mine"\n'


@pytest.fixture
def persisting_env(cli_env: dict[str, str]) -> dict[str, str]:
    """The environment of a `dsh` child that stores its sessions (``DSH_PERSISTENCE_DIR``
    of ``cli_env``)."""
    return {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}


def no_plugins(env: dict[str, str]) -> dict[str, str]:
    """``env`` loading no plugin but what ``-p`` names."""
    return {**env, "DSH_LOAD_PLUGINS": ""}


def url_model(server: Any) -> str:
    """The test server's model as ``-m`` gives it (a URL: not stored with a session)."""
    return f"openai-compatible:tiny@{server.url}"


def models_yml(server: Any) -> str:
    """dsh.yml's ``models:`` defining ``tiny``, the test server's model."""
    model = f"{{provider: openai-compatible, model: tiny, base_url: '{server.url}'}}"
    return f"models:\n  tiny: {model}\n"


def stored_file(env: dict[str, str]) -> Path:
    """The file of the one session stored in the store of ``env``."""
    (stored,) = Path(env["DSH_PERSISTENCE_DIR"]).glob("*.jsonl")
    return stored


def new_session(stderr: str) -> str:
    """The id of the session ``dsh: new session ID`` named."""
    return stderr.split("dsh: new session ", 1)[1].split("\n", 1)[0]


def hint(said: str, before: str, after: str) -> list[str]:
    """The words of the command ``said`` names between ``before`` and ``after``."""
    return shlex.split(said.split(before, 1)[1].split(after, 1)[0])


def pasted(line: str) -> list[str]:
    """The words a shell makes of the hint ``line``: bash's ``$'...'`` (a word holding
    a control character) decoded, the rest as ``shlex.split`` reads it."""

    def decoded(match: re.Match[str]) -> str:
        body = match.group(1).encode("latin-1", "backslashreplace").decode("unicode_escape")
        return shlex.quote(body)

    return shlex.split(re.sub(r"\$'((?:[^'\\]|\\.)*)'", decoded, line))


def assert_went_on(
    done: subprocess.CompletedProcess[str], session: str, answer: str = "On."
) -> None:
    """``done`` (a command pasted) went on with ``session``, and the model's answer to it
    was ``answer``."""
    assert done.returncode == 0, done.stderr
    assert f"dsh: continuing session {session} (" in done.stderr
    assert done.stdout == f"{answer}\n"


def line_typed_to_run(child: pexpect.spawn) -> tuple[str, list[str]]:
    """Type a line to ``dsh run`` in ``child`` while its answer streams ("slow", then
    more): the session it stored and the words of the command its hint says to paste."""
    child.expect_exact("slow")
    child.sendline("and also this")
    child.expect_exact("[turn 1 completed")
    child.expect(pexpect.EOF)
    said = child.logfile_read.getvalue().replace("\r\n", "\n")
    session = new_session(said)
    assert session.startswith(f"{AGENT}-session-")
    return session, hint(said, "dsh run takes one prompt; ", " goes on with this session)")
