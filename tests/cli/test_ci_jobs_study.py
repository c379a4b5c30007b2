"""A study of dsh as CI runs it: many `dsh run` jobs at once on one machine, one shared
session store (JSONL), jobs chained with `--continue` / `--session ID`, and exit
statuses that must be trusted. A live session is claimed (the session file's flock,
held from its agent's creation or resume until the agent is disposed): these tests
drive real `dsh` processes against the loopback model server and count the requests
it receives."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ci_jobs_support import (
    finish,
    first_session,
    hold_reply,
    in_use,
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


def test_six_continue_jobs_at_once_run_one_turn_and_the_others_exit_1_before_the_model(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Noted."), hold_reply(), text_reply("Done.")])
    session_id = first_session(server, env, tmp_path)
    jobs = [
        start_job(
            "-m", model_of(server), "run", "--json", "--continue", f"job {n}", env=env, cwd=tmp_path
        )
        for n in range(6)
    ]
    try:
        # the winner holds the session (its tool waits); every other job must end alone
        wait_until(lambda: sum(job.poll() is not None for job in jobs) == 5, "5 jobs ended")
        (winner,) = [job for job in jobs if job.poll() is None]
        # the first session's turn, the winner's call (on a busy machine it may come after
        # the others ended); the losers' absence is counted at the end
        wait_until(lambda: len(server.bodies()) == 2, "the winner's model call")
        for job in jobs:
            if job is not winner:
                status, out, err = finish(job)
                assert status == 1, err
                assert out == ""  # --json: no line at all for a refused job
                assert err.endswith(in_use(session_id, env)), err
                assert "continuing session" not in err
        (tmp_path / "go").touch()
        status, out, err = finish(winner)
    finally:
        (tmp_path / "go").touch()
        for job in jobs:
            finish(job)
    assert status == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert {line["session"] for line in lines} == {session_id}
    assert len(server.bodies()) == 3  # one turn ran: two model calls
    assert (tmp_path / "ran.txt").read_text() == "ran\n"  # its tool ran once
    assert len(list(Path(env["DSH_PERSISTENCE_DIR"]).glob("*.jsonl"))) == 1  # no new session
    ends = [e for e in stored_events(env, session_id, tmp_path) if e["type"] == "turn/end"]
    assert [e["data"]["reason"] for e in ends] == ["completed", "completed"]


def test_a_held_session_refuses_session_prefix_resume_and_delete_but_show_and_list_work(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    """While a job holds the session: `--session PREFIX`, `dsh sessions resume` and
    `dsh sessions delete` are refused (status 1, nothing asked, nothing changed); `show`
    and `list` read it as usual; once the job is done, delete works."""
    server = model_server([text_reply("Noted."), hold_reply(), text_reply("Done.")])
    session_id = first_session(server, env, tmp_path)
    prefix = session_id.partition("-session-")[2][:6]
    path = Path(env["DSH_PERSISTENCE_DIR"]) / f"{session_id}.jsonl"
    model = model_of(server)
    holder = start_job("-m", model, "run", "--continue", "hold it", env=env, cwd=tmp_path)
    try:
        wait_holding(server, env, session_id, tmp_path)
        size = path.stat().st_size
        by_prefix = dsh("-m", model, "run", "--session", prefix, "other", env=env, cwd=tmp_path)
        assert by_prefix.returncode == 1, by_prefix.stderr
        assert by_prefix.stderr.endswith(in_use(session_id, env))
        resumed = dsh("-m", model, "sessions", "resume", prefix, "other", env=env, cwd=tmp_path)
        assert resumed.returncode == 1, resumed.stderr
        assert resumed.stderr.endswith(in_use(session_id, env))
        deleted = dsh("sessions", "delete", session_id, env=env, cwd=tmp_path)
        assert deleted.returncode == 1, deleted.stderr
        assert deleted.stderr == (
            f"dsh: error: {path}: cannot delete the session: another process or harness is "
            "continuing it\n"
        )
        shown = dsh("sessions", "show", prefix, env=env, cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr
        assert "you: remember blue" in shown.stdout
        listed = dsh("sessions", "list", env=env, cwd=tmp_path)
        assert listed.returncode == 0 and session_id in listed.stdout, listed.stderr
        assert len(server.bodies()) == 2  # none of them asked the model
        assert path.stat().st_size == size  # nor wrote
        (tmp_path / "go").touch()
        status, _, err = finish(holder)
    finally:
        (tmp_path / "go").touch()
        finish(holder)
    assert status == 0, err
    done = dsh("sessions", "delete", session_id, env=env, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == f"deleted {session_id}\n", done.stderr
    assert not path.exists()


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_a_holder_killed_mid_tool_frees_the_session_for_the_next_job_at_once(
    model_server: Any, env: dict[str, str], tmp_path: Path, signum: int
) -> None:
    """`timeout -s KILL` or an OOM kill of a job whose tool runs: the lock dies with the
    process (the tool's command, in its own session, is no holder of it), so the next
    `--continue` runs at once on what was saved. SIGTERM: status 143, the turn ended
    and saved, then the same."""
    server = model_server([text_reply("Noted."), hold_reply(), text_reply("Next.")])
    session_id = first_session(server, env, tmp_path)
    model = model_of(server)
    holder = start_job("-m", model, "run", "--continue", "hold it", env=env, cwd=tmp_path)
    try:
        wait_holding(server, env, session_id, tmp_path)  # its tool call is on disk and running
        holder.send_signal(signum)
        status, _, err = finish(holder)
        assert status == (-signal.SIGKILL if signum == signal.SIGKILL else 143), err
        after = dsh("-m", model, "run", "--continue", "go on", env=env, cwd=tmp_path)
    finally:
        (tmp_path / "go").touch()  # a SIGKILL leaves the tool's loop running
        finish(holder)
    assert after.returncode == 0, after.stderr
    assert after.stdout == "Next.\n"
    assert f"dsh: continuing session {session_id} ('remember blue', 2 turns so far)" in after.stderr
    events = stored_events(env, session_id, tmp_path)
    ends = [e["data"]["reason"] for e in events if e["type"] == "turn/end"]
    killed = "interrupted" if signum == signal.SIGKILL else ends[1]
    assert ends == ["completed", killed, "completed"]
    if signum == signal.SIGTERM:
        assert killed in ("aborted", "disposed")
    results = [e["data"] for e in events if e["type"] == "tool/result"]
    assert len(results) == 1 and results[0]["is_error"]  # the stopped call says so


def test_deleting_several_sessions_one_of_them_held_deletes_the_others(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    """A clean-up job deletes old sessions while a job continues one of them."""
    server = model_server([text_reply("One."), text_reply("Two."), text_reply("Three.")])
    model = model_of(server)
    ids = []
    for prompt in ("one", "two", "three"):
        done = dsh("-m", model, "run", prompt, env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        ids.append(done.stderr.split("dsh: new session ")[1].split()[0])
    server.server.replies += [hold_reply(), text_reply("Done.")]
    held = ids[1]
    holder = start_job("-m", model, "run", "--session", held, "hold it", env=env, cwd=tmp_path)
    try:
        wait_holding(server, env, held, tmp_path, asked=4)
        deleted = dsh("sessions", "delete", *ids, env=env, cwd=tmp_path)
        (tmp_path / "go").touch()
        assert finish(holder)[0] == 0
    finally:
        (tmp_path / "go").touch()
        finish(holder)
    assert deleted.returncode == 1
    assert "cannot delete the session: another process or harness is continuing it" in (
        deleted.stderr
    )
    left = {p.stem for p in Path(env["DSH_PERSISTENCE_DIR"]).glob("*.jsonl")}
    assert left == {held}, deleted.stdout  # observed: ids[2] is left, and not mentioned
    assert deleted.stdout == f"deleted {ids[0]}\ndeleted {ids[2]}\n"


CHAIN = """
set -eo pipefail
job() { "$PY" -m dsh.cli -m "$MODEL" run --json "$@" </dev/null; }
session='import json, sys; print(json.load(sys.stdin)["session"])'
id=$(job "step one" | tail -n 1 | "$PY" -c "$session")
job --session "$id" "step two" > two.jsonl
job --continue "step three" > three.jsonl
echo "$id"
"""


def test_a_shell_script_chains_jobs_by_the_session_each_json_line_begins_with(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("One."), text_reply("Two."), text_reply("Three.")])
    script = {**env, "PY": sys.executable, "MODEL": model_of(server)}
    done = subprocess.run(
        ["bash", "-c", CHAIN], env=script, cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    session_id = done.stdout.strip()
    for name in ("two.jsonl", "three.jsonl"):
        lines = (tmp_path / name).read_text().splitlines()
        assert lines and all(
            line.startswith('{"session":' + json.dumps(session_id) + ',"type":') for line in lines
        ), lines
    last = server.bodies()[2]["messages"]
    said = [m["content"] for m in last if m["role"] != "system"]
    assert said == ["step one", "One.", "step two", "Two.", "step three"]
