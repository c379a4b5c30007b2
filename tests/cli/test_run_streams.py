"""``dsh run`` where its standard streams are unusual, as in CI and cron (found by the CI
operator study): a closed stdin or stdout, a stdout that cannot be written, an empty
``-``, ``-v`` on a usage error, and escape sequences a model or a tool writes."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pexpect
from cli_support import dsh, in_terminal, text_reply, tool_call_reply
from go_on_support import no_plugins, url_model


def shell(line: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``dsh`` started by a shell line (for redirections such as ``<&-``)."""
    command = f"{shlex.quote(sys.executable)} -m dsh.cli {line}"
    return subprocess.run(
        ["bash", "-c", command], env=env, cwd=cwd, capture_output=True, text=True, timeout=60
    )


def test_a_closed_stdin_is_no_input(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("hello")])
    model = shlex.quote(url_model(server))
    done = shell(f"-m {model} run hi <&-", no_plugins(cli_env), tmp_path)
    assert (done.returncode, done.stdout) == (0, "hello\n"), done.stderr
    empty = shell(f"-m {model} run review - <&-", no_plugins(cli_env), tmp_path)
    assert "stdin (-) is empty" in empty.stderr


def test_a_closed_stdout_stops_dsh_before_the_model_is_asked(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("hello")])
    model = shlex.quote(url_model(server))
    done = shell(f"-m {model} run hi >&-", no_plugins(cli_env), tmp_path)
    assert done.returncode == 2
    assert done.stderr == "dsh: error: standard output is closed: nowhere to write\n"
    assert server.bodies() == []


def test_an_answer_that_cannot_be_written_is_status_1(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("hello")])
    model = shlex.quote(url_model(server))
    done = shell(f"-m {model} run hi >/dev/full", no_plugins(cli_env), tmp_path)
    assert done.returncode == 1, done.stderr
    assert "dsh: error: cannot write the output: [Errno 28] No space left on device" in done.stderr


def test_an_empty_dash_sends_the_words_and_says_so(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("nothing to review")])
    model = url_model(server)
    done = dsh(
        "-m", model, "run", "review", "this", "-", env=no_plugins(cli_env), cwd=tmp_path, stdin=""
    )
    assert done.returncode == 0, done.stderr
    assert "dsh: warning: stdin (-) is empty: only the prompt's words are sent" in done.stderr
    assert server.bodies()[0]["messages"][-1] == {"role": "user", "content": "review this"}


def test_verbose_keeps_a_usage_errors_status(cli_env: dict[str, str], tmp_path: Path) -> None:
    done = dsh("-v", "-m", "nosuch:model", "run", "hi", env=cli_env, cwd=tmp_path)
    assert done.returncode == 2
    assert "Traceback" in done.stderr  # -v shows where it came from
    assert done.stderr.rstrip().splitlines()[-1].startswith("dsh: error: ")


def test_escape_sequences_are_shown_not_obeyed_in_a_terminal(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server(
        [
            tool_call_reply("read", {"path": "\x1b[2Kmissing.txt"}),
            text_reply("done\x1b]0;owned\x07", "\x1b[2J"),
        ]
    )
    model = url_model(server)
    child = in_terminal("-m", model, "run", "go", env=no_plugins(cli_env), cwd=tmp_path)
    child.expect(pexpect.EOF)
    shown = child.before
    assert "\x1b[2K" not in shown and "\x1b]0;" not in shown and "\x1b[2J" not in shown
    assert "✗ read: " in shown and "\\x1b[2Kmissing.txt" in shown
    assert "done\\x1b]0;owned\\x07\\x1b[2J" in shown
    piped = model_server([text_reply("raw\x1b[1m")])
    kept = dsh(
        "-m",
        url_model(piped),
        "run",
        "go",
        env=no_plugins(cli_env),
        cwd=tmp_path,
    )
    assert kept.stdout == "raw\x1b[1m\n"  # a pipe gets the text as the model wrote it
