"""Output that cannot be written (a full disk: ``>/dev/full``) ends every command as it
ends ``dsh run`` (tests/cli/test_run_streams.py): ``dsh: error: cannot write the output:
...``, status 1, no traceback; for a plugin's command too, which is not the plugin's
failure (core/src/dsh/cli.py main, _run)."""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_support import text_reply

from dsh.cli import main

FULL = "dsh: error: cannot write the output: [Errno 28] No space left on device\n"

PRINTING_PLUGIN = """
from dsh import hookimpl
from dsh.commands import Command


@hookimpl
def register_commands(register):
    register(Command("hello", "print a line", lambda context: print("hello")))
"""


def to_full_disk(line: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    command = f"{shlex.quote(sys.executable)} -m dsh.cli {line} >/dev/full"
    return subprocess.run(
        ["bash", "-c", command], env=env, cwd=cwd, capture_output=True, text=True, timeout=60
    )


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize(
    "line", ["models", "tools", "plugins", "version", "config check", "plugins --json"]
)
def test_a_listing_that_cannot_be_written_is_status_1(
    cli_env: dict[str, str], tmp_path: Path, line: str
) -> None:
    (tmp_path / "dsh.yml").write_text("models:\n  fast: {provider: openai, model: gpt-x}\n")
    env = {**cli_env, "DSH_LOAD_PLUGINS": "", "OPENAI_API_KEY": "k"}  # config check warns else
    done = to_full_disk(line, env, tmp_path)
    assert (done.returncode, done.stderr) == (1, FULL)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("verbose", ["", "-v "], ids=["plain", "verbose"])
def test_a_plugin_commands_output_that_cannot_be_written_is_not_its_failure(
    cli_env: dict[str, str], tmp_path: Path, verbose: str
) -> None:
    site = tmp_path / "site"
    info = site / "dsh_hello-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "dsh_hello.py").write_text(PRINTING_PLUGIN)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dsh-hello\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[dsh]\nhello = dsh_hello\n")
    path = os.pathsep.join([str(site), cli_env.get("PYTHONPATH", "")])
    env = {**cli_env, "PYTHONPATH": path, "DSH_LOAD_PLUGINS": "hello"}
    done = to_full_disk(f"{verbose}hello", env, tmp_path)
    assert (done.returncode, done.stderr) == (1, FULL)


def test_main_leaves_a_redirected_stdout_open(tmp_path: Path) -> None:
    # the output layer is put only on the process's own stdout: a file a program
    # redirected stdout to was closed when main() freed its layer (the review of 39ba046)
    path = tmp_path / "out.txt"
    with path.open("w", encoding="utf-8") as file, contextlib.redirect_stdout(file):
        assert main(["version"]) == 0
        assert not file.closed
        print("more")
    assert path.read_text(encoding="utf-8").endswith("more\n")


def test_main_leaves_the_process_stdout_usable_when_it_is_put_back() -> None:
    code = (
        "import gc, sys\n"
        "from dsh.cli import main\n"
        "saved = sys.stdout\n"
        "main(['version'])\n"
        "sys.stdout = saved\n"
        "gc.collect()\n"
        "print('still open')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("still open\n")


#: help that argparse prints (--help, a command's --help, no command at all)
HELP_LINES = ["--help", "-h", "run --help", "plugins --help", "config --help", ""]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("line", HELP_LINES)
@pytest.mark.parametrize("unbuffered", ["1", ""], ids=["unbuffered", "buffered"])
def test_help_that_cannot_be_written_is_status_1(
    cli_env: dict[str, str], tmp_path: Path, line: str, unbuffered: str
) -> None:
    # argparse dropped the write error: `dsh --help >/dev/full` said nothing, status 0
    # (or, buffered, a traceback at exit and status 120)
    env = {**cli_env, "DSH_LOAD_PLUGINS": "", "PYTHONUNBUFFERED": unbuffered}
    done = to_full_disk(line, env, tmp_path)
    assert (done.returncode, done.stderr) == (1, FULL)


@pytest.mark.parametrize("line", HELP_LINES)
@pytest.mark.parametrize("unbuffered", ["1", ""], ids=["unbuffered", "buffered"])
def test_help_to_a_closed_pipe_stops_quietly_with_141(
    cli_env: dict[str, str], tmp_path: Path, line: str, unbuffered: str
) -> None:
    # as a command's output to a closed pipe (`dsh --help | head -0`): no one reads it
    read, write = os.pipe()
    os.close(read)
    env = {**cli_env, "DSH_LOAD_PLUGINS": "", "PYTHONUNBUFFERED": unbuffered}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "dsh.cli", *line.split()],
            stdout=write,
            stderr=subprocess.PIPE,
            env=env,
            cwd=tmp_path,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("stderr", ["full", "closed pipe"])
@pytest.mark.parametrize("config", ["unset key", "none"])
def test_config_checks_note_that_cannot_be_written_leaves_status_0(
    cli_env: dict[str, str], tmp_path: Path, stderr: str, config: str
) -> None:
    # the warning of an unset key variable, and the note that no dsh.yml is there (a bare
    # print until session 28), were printed: status 1 (full) or 141 (closed)
    path = tmp_path / "dsh.yml"
    if config == "unset key":
        path.write_text("models:\n  x: {provider: openai, api_key_env: MY_UNSET_KEY}\n")
    env = {**cli_env, "DSH_LOAD_PLUGINS": ""}
    env.pop("MY_UNSET_KEY", None)
    read, write = os.pipe()
    os.close(read)
    try:
        with open("/dev/full", "w") as full:
            done = subprocess.run(
                [sys.executable, "-m", "dsh.cli", "config", "check"],
                stdout=subprocess.PIPE,
                stderr=full if stderr == "full" else write,
                env=env,
                cwd=tmp_path,
                text=True,
                timeout=60,
            )
    finally:
        os.close(write)
    said = f"{path}: ok\n" if config == "unset key" else ""
    assert (done.returncode, done.stdout) == (0, said)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("unbuffered", ["1", None], ids=["unbuffered", "buffered"])
def test_dsh_run_says_once_that_its_output_cannot_be_written(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, unbuffered: str | None
) -> None:
    """The renderer said it, and main's last flush failed again and said it again."""
    server = model_server([text_reply("Hello there.")])
    env = {k: v for k, v in cli_env.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered is not None:
        env["PYTHONUNBUFFERED"] = unbuffered
    done = to_full_disk(f"-m openai-compatible:tiny@{server.url} run hi", env, tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("cannot write the output") == 1, done.stderr
    assert FULL in done.stderr
