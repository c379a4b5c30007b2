"""``dsh -c <(cat dsh.yml) ...``: bash's process substitution, a config file that reads
empty once read (``/dev/fd/63``, a pipe whose writer has finished). A command reads it
once and its harness takes what was read: a second read would run on the defaults."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from cli_support import text_reply

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash's <(...)")


def substituted(
    config: str, *args: str, env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """``dsh -c <(printf %s CONFIG) ARGS`` run by bash."""
    script = 'exec "$0" -m dsh.cli -c <(printf %s "$1") "${@:2}"'
    return subprocess.run(
        ["bash", "-c", script, sys.executable, config, *args],
        env={**env, "DSH_LOAD_PLUGINS": "persistence"},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.plugins("persistence")
def test_config_check_starts_the_plugins_on_the_config_it_read(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """The store dsh.yml names cannot be made: the check fails as it does for a file."""
    config = "persistence:\n  directory: /proc/no-sessions-here\n"
    done = substituted(config, "config", "check", env=cli_env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, "")
    assert "/proc/no-sessions-here (persistence.directory) is not a usable" in done.stderr


@pytest.mark.plugins("persistence")
def test_sessions_resume_runs_the_turn_with_the_config_it_read(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """The session is found in the store dsh.yml names, continued there, and the agent
    has the system prompt dsh.yml gives it."""
    server = model_server([text_reply("Hello."), text_reply("Again.")])
    store = tmp_path / "piped-store"
    config = (
        f"persistence:\n  directory: {store}\n"
        f"model: tiny\nmodels:\n  tiny: {{provider: openai-compatible, model: tiny, "
        f"base_url: '{server.url}'}}\n"
        "agents:\n  - id: main\n    system_prompt: Said in the pipe.\n"
    )
    ran = substituted(config, "run", "hi", env=cli_env, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    (stored,) = store.glob("*.jsonl")

    resumed = substituted(
        config, "sessions", "resume", stored.stem, "again", env=cli_env, cwd=tmp_path
    )
    assert (resumed.returncode, resumed.stdout) == (0, "Again.\n"), resumed.stderr
    bodies = server.bodies()
    assert [b["messages"][0]["content"] for b in bodies] == ["Said in the pipe."] * 2
    assert json.dumps(bodies[1]).count("Hello.") == 1  # the history, from that store
    assert [p.name for p in store.glob("*.jsonl")] == [stored.name]
    assert not Path(cli_env["DSH_PERSISTENCE_DIR"]).exists()


def test_an_error_with_a_named_pipe_fed_once_is_reported(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    fifo = tmp_path / "dsh.yml"
    os.mkfifo(fifo)

    def feed() -> None:
        with fifo.open("w") as pipe:  # waits for dsh to open it
            pipe.write("model: nosuch\n")

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "dsh.cli", "-c", str(fifo), "run", "hi"],
            env=cli_env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=10,
        )
    finally:  # a writer still waiting (dsh never opened the pipe) is let go
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        writer.join(5)
    assert done.returncode == 2
    assert done.stderr.startswith(f"dsh: error: {fifo}:1:1: model: unknown model 'nosuch'")
