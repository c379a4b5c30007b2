"""Helpers of the CI-jobs study (tests/cli/test_ci_jobs_study*.py): many `dsh run` jobs
at once on one machine, sharing one session store, chained with `--continue` and
`--session ID`. A job that must hold a session runs a bash tool call that waits for a
file named ``go`` in the workspace, so the test decides when it ends (no fixed sleeps,
no stalled reply that gives up by itself)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cli_support import dsh, text_reply, tool_call_reply

#: The tool call of a job that holds its session until the test creates ``go``; each
#: run of it appends a line to ``ran.txt`` (so a tool run twice shows).
WAIT_FOR_GO = "while [ ! -e go ]; do sleep 0.05; done; echo ran >> ran.txt"


def hold_reply() -> Any:
    return tool_call_reply("bash", {"command": WAIT_FOR_GO})


def job_env(cli_env: dict[str, str]) -> dict[str, str]:
    return {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}


def model_of(server: Any) -> str:
    return f"openai-compatible:tiny@{server.url}"


def start_job(*args: str, env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    """``dsh ARGS`` as a CI job: no terminal, stdin closed, output on pipes."""
    return subprocess.Popen(
        [sys.executable, "-m", "dsh.cli", *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_until(condition: Callable[[], object], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.02)


def first_session(server: Any, env: dict[str, str], cwd: Path) -> str:
    """A stored session with one finished turn (the server's next reply); its id."""
    done = dsh("-m", model_of(server), "run", "remember blue", env=env, cwd=cwd)
    assert done.returncode == 0, done.stderr
    (stored,) = Path(env["DSH_PERSISTENCE_DIR"]).glob("*.jsonl")
    return stored.stem


def in_use(session_id: str, env: dict[str, str]) -> str:
    """What a job refused because another one continues ``session_id`` says."""
    return (
        f"dsh: error: session {session_id!r} is in use: another process or harness is "
        f"continuing it (stored in {env['DSH_PERSISTENCE_DIR']}); try again when it is done\n"
    )


def stored_events(env: dict[str, str], session_id: str, cwd: Path) -> list[dict[str, Any]]:
    """The events of a stored session, as `dsh sessions show --json` in ``cwd`` prints
    them (its dsh.yml chooses the store)."""
    shown = dsh("sessions", "show", "--json", session_id, env=env, cwd=cwd)
    assert shown.returncode == 0, shown.stderr
    return [json.loads(line) for line in shown.stdout.splitlines()]


def wait_holding(
    server: Any, env: dict[str, str], session_id: str, cwd: Path, asked: int = 2
) -> None:
    """Until the holder has asked the model (``asked`` requests in all) and its waiting
    tool call is on disk (a checkpoint): it holds the session, and writes no more."""
    wait_until(lambda: len(server.bodies()) == asked, "the holder asked the model")
    wait_until(
        lambda: any(e["type"] == "tool/call" for e in stored_events(env, session_id, cwd)),
        "the holder's tool call was checkpointed",
    )


def finish(job: subprocess.Popen[str], timeout: float = 30) -> tuple[int, str, str]:
    try:
        out, err = job.communicate(timeout=timeout)
    finally:
        if job.poll() is None:
            job.kill()
            job.communicate()
    return job.returncode, out, err


__all__ = [
    "WAIT_FOR_GO",
    "finish",
    "first_session",
    "hold_reply",
    "in_use",
    "job_env",
    "model_of",
    "start_job",
    "stored_events",
    "text_reply",
    "wait_holding",
    "wait_until",
]
