"""``dsh -c /dev/stdin ...`` (``cat dsh.yml | dsh -c /dev/stdin run hi``): stdin is the
config file. A command that also reads its prompt from stdin (``run -``, ``sessions
resume`` with none given, ``chat``) would read the config's text as its prompt and run
on no config (``dsh run`` reads the prompt before the harness reads the config), so it
is refused, status 2, before the prompt is read; a command that does not is not told
that the text piped in is not sent: it was the config."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest
from cli_support import stored_session, text_reply

CONFIG = "agents:\n  - id: main\n    system_prompt: Said in the pipe.\n"


def piped(
    server: Any, env: dict[str, str], cwd: Path, *args: str, stdin: str | IO[bytes] = CONFIG
) -> subprocess.CompletedProcess[str]:
    """``dsh -m MODEL ARGS`` with ``stdin`` (the config's text, or a file) piped in."""
    model = f"openai-compatible:tiny@{server.url}"
    feed: dict[str, Any] = {"input": stdin.encode()} if isinstance(stdin, str) else {"stdin": stdin}
    done = subprocess.run(
        [sys.executable, "-m", "dsh.cli", "-m", model, *args],
        **feed,
        env=env,
        cwd=cwd,
        capture_output=True,
        timeout=60,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def refusal(command: str, config: str) -> str:
    return (
        f"dsh: error: {command}: stdin cannot be both the config file ({config}) and the "
        f"{'prompts' if command == 'chat' else 'prompt'}; name the config by its file "
        "(-c dsh.yml)"
    )


@pytest.mark.parametrize("name", ["/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"])
def test_run_dash_with_the_config_on_stdin_is_refused(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, name: str
) -> None:
    if not Path(name).exists():
        pytest.skip(f"no {name} here")
    server = model_server([text_reply("ok")])
    done = piped(server, cli_env, tmp_path, "-c", name, "run", "review", "-")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [refusal("run", f"-c {name}")]
    assert server.bodies() == []


def test_a_config_file_that_is_the_file_on_stdin_is_refused_too(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """``dsh -c dsh.yml run - < dsh.yml``: the same file (device and inode)."""
    server = model_server([text_reply("ok")])
    config = tmp_path / "dsh.yml"
    config.write_text(CONFIG)
    with config.open("rb") as stdin:
        done = piped(server, cli_env, tmp_path, "-c", "dsh.yml", "run", "-", stdin=stdin)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [refusal("run", "-c dsh.yml")]
    assert server.bodies() == []


def test_dsh_config_naming_stdin_is_refused_as_c_is(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("ok")])
    env = {**cli_env, "DSH_CONFIG": "/dev/stdin"}
    done = piped(server, env, tmp_path, "run", "-")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [refusal("run", "DSH_CONFIG=/dev/stdin")]
    assert server.bodies() == []


def test_chat_with_the_config_on_stdin_is_refused(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """chat reads its prompts from stdin: the config's lines would be sent as prompts."""
    server = model_server([text_reply("ok")])
    done = piped(server, cli_env, tmp_path, "-c", "/dev/stdin", "chat")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [refusal("chat", "-c /dev/stdin")]
    assert server.bodies() == []


@pytest.mark.plugins("persistence")
def test_sessions_resume_with_its_prompt_and_the_config_on_stdin_is_refused(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Hello."), text_reply("Again.")])
    session = stored_session(server, cli_env, tmp_path)
    done = piped(server, cli_env, tmp_path, "-c", "/dev/stdin", "sessions", "resume", session)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [refusal("sessions resume", "-c /dev/stdin")]
    assert len(server.bodies()) == 1  # the stored turn's only


def test_run_with_its_prompt_given_takes_the_config_from_stdin_without_a_warning(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """What was piped in is the config: it is not "the text piped in ... not sent"."""
    server = model_server([text_reply("ok")])
    done = piped(server, cli_env, tmp_path, "-c", "/dev/stdin", "run", "hi")
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
    assert "piped in is not sent" not in done.stderr
    (body,) = server.bodies()
    assert body["messages"][0] == {"role": "system", "content": "Said in the pipe."}
    assert body["messages"][-1]["content"] == "hi"


def test_the_null_device_as_config_and_stdin_is_no_conflict(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """``-c /dev/null ... < /dev/null``: both read empty, whichever reads first."""
    server = model_server([text_reply("ok")])
    with open("/dev/null", "rb") as stdin:
        done = piped(server, cli_env, tmp_path, "-c", "/dev/null", "run", "hi", "-", stdin=stdin)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
    assert "stdin (-) is empty" in done.stderr
