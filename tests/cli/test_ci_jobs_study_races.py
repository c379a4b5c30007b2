"""The CI-jobs study, continued: the races the first claims let through and that are
refused now (a session its creating job is still writing; a session loaded before
another job's turn and claimed after it), a session directory where flock fails, and
the SQLite backend, which claims with lock files beside the database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ci_jobs_support import (
    finish,
    first_session,
    hold_reply,
    job_env,
    model_of,
    start_job,
    stored_events,
    text_reply,
    wait_holding,
    wait_until,
)
from cli_support import dsh

pytestmark = [
    pytest.mark.plugins("persistence"),
    pytest.mark.skipif(os.name == "nt", reason="claims are POSIX flock"),
]


@pytest.fixture
def env(cli_env: dict[str, str]) -> dict[str, str]:
    return job_env(cli_env)


def test_a_session_its_creating_job_still_runs_is_refused_to_a_chained_job(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    """A script reads the session from the first `--json` line of a running job and
    chains `--session ID` to it (or a `--continue` starts while it runs): the new job
    must be refused as for a resumed session, not run a turn on the live session."""
    server = model_server([hold_reply(), text_reply("Second."), text_reply("First, done.")])
    model = model_of(server)
    first = start_job("-m", model, "run", "--json", "first job", env=env, cwd=tmp_path)
    try:
        assert first.stdout is not None
        session_id = json.loads(first.stdout.readline())["session"]
        wait_holding(server, env, session_id, tmp_path, asked=1)  # stored by its first checkpoint
        chained = dsh("-m", model, "run", "--session", session_id, "second", env=env, cwd=tmp_path)
        (tmp_path / "go").touch()
        status, _, err = finish(first)
    finally:
        (tmp_path / "go").touch()
        finish(first)
    assert status == 0, err  # observed: 1, "session flush failed: ... SessionConflictError"
    assert chained.returncode == 1, chained.stderr  # observed: 0, its turn ran
    assert "is in use: another process or harness is continuing it" in chained.stderr
    assert len(server.bodies()) == 2  # observed: 3 (the chained job asked the model)
    ends = [
        e["data"]["reason"]
        for e in stored_events(env, session_id, tmp_path)
        if e["type"] == "turn/end"
    ]
    assert ends == ["completed"]  # observed: ["interrupted", "completed"]: job 1's lost


LATE = """
import sys, anyio
from dsh.harness import Harness

async def main():
    url, session_id = sys.argv[1], sys.argv[2]
    config = f"models: {{m: {{provider: openai-compatible, base_url: '{url}', model: tiny}}}}"
    async with Harness(config_text=config) as harness:
        # what `dsh run --continue` does: load the session (stored_to_continue), then,
        # once the model is chosen (a local model may take seconds to start), resume it
        stored = await harness.agents.load_stored(session_id)
        print("loaded", flush=True)
        sys.stdin.readline()
        try:
            agent = await harness.agents.resume_stored("main", stored, {"model": "m"})
        except Exception as exc:
            print(f"refused: {type(exc).__name__}: {exc}", flush=True)
            return
        result = await agent.prompt("late job")
        print(f"ran: {result.reason} save_error={result.save_error}", flush=True)

anyio.run(main)
"""


def test_a_job_that_loaded_the_session_before_another_jobs_turn_does_not_run_on_it(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Noted."), text_reply("On time."), text_reply("Late.")])
    session_id = first_session(server, env, tmp_path)
    late = subprocess.Popen(
        [sys.executable, "-c", LATE, server.url, session_id],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert late.stdout is not None and late.stdout.readline() == "loaded\n"
        # meanwhile another job continues the session, runs its turn and lets it go
        on_time = dsh("-m", model_of(server), "run", "--continue", "next", env=env, cwd=tmp_path)
        assert on_time.returncode == 0, on_time.stderr
        out, err = late.communicate("go\n", timeout=30)
        assert "Traceback" not in err, err
    finally:
        if late.poll() is None:
            late.kill()
            late.communicate()
    assert len(server.bodies()) == 2, out  # observed: 3, the late job asked the model
    assert out.startswith("refused: "), out  # observed: "ran: completed save_error=..."
    ends = [e for e in stored_events(env, session_id, tmp_path) if e["type"] == "turn/end"]
    assert len(ends) == 2


NO_FLOCK = """
import errno, fcntl, os

def flock(fd, operation):  # a directory on NFS without lockd, or a FUSE file system
    raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

fcntl.flock = flock
"""


def test_continue_where_flock_fails_is_one_error_line_not_a_traceback(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Noted."), text_reply("Next.")])
    first_session(server, env, tmp_path)  # a new file is published whole: no lock needed
    hooks = tmp_path / "no_flock"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(NO_FLOCK)
    broken = {**env, "PYTHONPATH": os.pathsep.join([str(hooks), env.get("PYTHONPATH", "")])}
    done = dsh("-m", model_of(server), "run", "--continue", "next", env=broken, cwd=tmp_path)
    assert "Traceback" not in done.stderr, done.stderr
    last = done.stderr.splitlines()[-1]
    assert done.returncode == 2, done.stderr  # the store cannot be used as configured
    assert last.startswith("dsh: error: "), done.stderr
    assert last.endswith(".jsonl: cannot lock the session file: No locks available"), last
    assert len(server.bodies()) == 1  # refused before the model was asked


# -- SQLite: no claim; both jobs run and the later save is refused -----------------------


def sqlite_race(server: Any, env: dict[str, str], cwd: Path) -> tuple[Any, Any, str]:
    """Job A continues the session and holds it (its tool waits); job B continues it
    meanwhile and finishes; then A finishes. Both finished jobs, and the session id."""
    (cwd / "dsh.yml").write_text("persistence: {backend: sqlite}\n")
    model = model_of(server)
    assert dsh("-m", model, "run", "remember blue", env=env, cwd=cwd).returncode == 0
    listed = dsh("sessions", "list", env=env, cwd=cwd)
    session_id = listed.stdout.splitlines()[1].split()[0]
    a = start_job("-m", model, "run", "--continue", "job A", env=env, cwd=cwd)
    try:
        wait_until(lambda: len(server.bodies()) == 2, "job A asked the model")
        wait_until(
            lambda: "job A" in dsh("sessions", "show", session_id, env=env, cwd=cwd).stdout,
            "job A's turn was checkpointed",
        )
        b = dsh("-m", model, "run", "--continue", "job B", env=env, cwd=cwd)
        (cwd / "go").touch()
        finished_a = finish(a)
    finally:
        (cwd / "go").touch()
        finish(a)
    return finished_a, b, session_id


def test_sqlite_a_second_job_on_a_held_session_exits_1_before_the_model(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    """SQLite claims too (docs/persistence.md): while job A holds the session (its tool
    waits), job B's --continue exits 1 with the in-use message and never asks the model;
    A's turn is saved whole."""
    server = model_server([text_reply("Noted."), hold_reply(), text_reply("A done.")])
    (status_a, out_a, err_a), b, session_id = sqlite_race(server, env, tmp_path)
    assert b.returncode == 1, b.stderr
    in_use = f"session {session_id!r} is in use: another process or harness is continuing it"
    assert in_use in b.stderr
    assert b.stdout == ""
    assert status_a == 0, err_a
    assert out_a == "A done.\n"
    assert len(server.bodies()) == 3  # B never asked
    events = stored_events(env, session_id, tmp_path)
    ends = [e["data"]["reason"] for e in events if e["type"] == "turn/end"]
    assert ends == ["completed", "completed"]
    prompts = [e["data"]["content"] for e in events if e["type"] == "user/message"]
    assert prompts == ["remember blue", "job A"]
