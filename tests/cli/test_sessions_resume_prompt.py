"""``dsh sessions resume ID [PROMPT]`` reads and checks its prompt as ``dsh run
--session ID PROMPT`` does (core/src/dsh/_cli_prompt.py): an empty prompt, a word or
stdin that is not UTF-8 are refused (status 2) before any model is asked; a byte order
mark on stdin is dropped; stdin is read only when no prompt is given."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import contents, in_terminal, stored_session, text_reply
from terminal_reads import interrupt_stdin_reader, reading_stdin

# they store a session first: dsh-persistence must be installed and loaded
pytestmark = pytest.mark.plugins("persistence")


def _resume(
    server: Any, env: dict[str, str], cwd: Path, *words: str | bytes, stdin: bytes | None = None
) -> subprocess.CompletedProcess[str]:
    model = f"openai-compatible:tiny@{server.url}"
    done = subprocess.run(
        [sys.executable, "-m", "dsh.cli", "-m", model, "sessions", "resume", *words],
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        env=env,
        cwd=cwd,
        capture_output=True,
        timeout=60,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


@pytest.mark.parametrize(
    ("words", "stdin", "said"),
    [
        (
            [""],
            None,
            "dsh: error: sessions resume: the prompt is empty; give the text to send",
        ),
        (
            ["say", b"caf\xe9"],
            None,
            "dsh: error: sessions resume: the prompt's word 2 ('caf\ufffd') is not UTF-8",
        ),
        ([], b"caf\xe9\n", "dsh: error: sessions resume: stdin is not UTF-8 text"),
        (  # a prompt given: stdin is not read for it (as dsh run: only where - stands)
            [""],
            b"from stdin\n",
            "dsh: the text piped in is not sent",
        ),
    ],
    ids=["empty", "word-not-utf8", "stdin-not-utf8", "prompt-given-stdin-not-read"],
)
def test_a_prompt_dsh_run_refuses_is_refused(
    model_server: Any,
    cli_env: dict[str, str],
    tmp_path: Path,
    words: list[str | bytes],
    stdin: bytes | None,
    said: str,
) -> None:
    server = model_server([text_reply("Hello.")])
    session = stored_session(server, cli_env, tmp_path)
    done = _resume(server, cli_env, tmp_path, session, *words, stdin=stdin)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr
    assert len(server.bodies()) == 1  # the first turn's only


@pytest.mark.parametrize(
    ("words", "stdin"),
    [([""], None), (["   "], None), (["-"], b"")],
    ids=["empty", "blank", "stdin"],
)
def test_the_hint_for_an_empty_prompt_pastes_as_a_resume_of_the_session(
    model_server: Any,
    cli_env: dict[str, str],
    tmp_path: Path,
    words: list[str],
    stdin: bytes | None,
) -> None:
    """``(dsh sessions resume "list the files")`` pasted took the text for the id: the
    example names the session (and the -m given), the prompt after it."""
    server = model_server([text_reply("Hello.")])
    session = stored_session(server, cli_env, tmp_path)
    done = _resume(server, cli_env, tmp_path, session, *words, stdin=stdin)
    assert done.returncode == 2, done.stderr
    model = f"openai-compatible:tiny@{server.url}"
    example = f'dsh -m {model} sessions resume {session} "list the files"'
    assert done.stderr == (
        f"dsh: error: sessions resume: the prompt is empty; give the text to send ({example})\n"
    )
    assert len(server.bodies()) == 1  # the first turn's only


def test_a_byte_order_mark_on_stdin_is_dropped(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Hello."), text_reply("Again.")])
    session = stored_session(server, cli_env, tmp_path)
    done = _resume(server, cli_env, tmp_path, session, stdin="\ufeffand now?\r\n".encode())
    assert done.returncode == 0, done.stderr
    assert contents(server.bodies()[1])[-1] == "and now?"


def test_ctrl_c_while_the_prompt_is_typed_ends_resume_at_once(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Stdin is read outside the event loop the command runs in: Ctrl-C while the
    prompt is typed at a terminal ends it at once, as it ends ``dsh run -`` (it went on
    reading till Ctrl-D)."""
    server = model_server([text_reply("Hello.")])
    session = stored_session(server, cli_env, tmp_path)
    model = f"openai-compatible:tiny@{server.url}"
    child = in_terminal("-m", model, "sessions", "resume", session, "-", env=cli_env, cwd=tmp_path)
    child.sendline("half a prompt")
    child.expect_exact("half a prompt")
    reading_stdin(child)
    child.sendintr()
    child.expect_exact("dsh: interrupted", timeout=10)
    child.expect(pexpect.EOF, timeout=10)
    child.close()
    assert child.exitstatus == 130
    assert len(server.bodies()) == 1  # the first turn's only


@pytest.mark.skipif(sys.platform != "linux", reason="tgkill: a signal for one thread")
def test_ctrl_c_the_thread_reading_the_prompt_takes_ends_resume_at_once(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """The system may hand Ctrl-C's SIGINT to any thread of dsh: to the one reading the
    prompt, the event loop asleep in the main thread was not woken (asyncio sets no
    wakeup fd) and resume waited for Ctrl-D (the test above, on a loaded machine)."""
    server = model_server([text_reply("Hello.")])
    session = stored_session(server, cli_env, tmp_path)
    model = f"openai-compatible:tiny@{server.url}"
    child = in_terminal("-m", model, "sessions", "resume", session, "-", env=cli_env, cwd=tmp_path)
    child.sendline("half a prompt")
    child.expect_exact("half a prompt")
    reading_stdin(child)
    interrupt_stdin_reader(child)
    child.expect_exact("dsh: interrupted", timeout=10)
    child.expect(pexpect.EOF, timeout=10)
    child.close()
    assert child.exitstatus == 130
    assert len(server.bodies()) == 1  # the first turn's only
