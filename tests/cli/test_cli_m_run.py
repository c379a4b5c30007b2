"""`dsh run` beyond test_run*.py: what the mutation review of _cli_agent.py found
untested (docs/cli.md, "`dsh run`" and "Going on with a stored session"): Ctrl-C's
status, a closed output while the model stalls, which agent and which session, and the
model a continued session runs on."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_support import read_one_line_and_close, signalled_while_asked, text_reply

DSH = [sys.executable, "-m", "dsh.cli"]


def dsh(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*DSH, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60
    )


def model_arg(server: Any) -> str:
    return f"openai-compatible:tiny@{server.url}"


def models_yml(*named: tuple[str, Any]) -> str:
    entries = "".join(
        f"  {name}:\n    provider: openai-compatible\n    model: tiny\n    base_url: {server.url}\n"
        for name, server in named
    )
    return f"models:\n{entries}"


def users(body: dict[str, Any]) -> list[Any]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


def headers(env: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The stored sessions' header lines, by session id."""
    found = {}
    for path in Path(env["DSH_PERSISTENCE_DIR"]).glob("*.jsonl"):
        header = json.loads(path.read_text().splitlines()[0])
        found[path.stem] = header
    return found


@pytest.fixture
def env(cli_env: dict[str, str]) -> dict[str, str]:
    return {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}


def test_ctrl_c_cancels_the_turn_and_exits_130(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("part of an answer", then="stall")])
    env = {**cli_env, "DSH_LOAD_PLUGINS": ""}
    args = ("-m", model_arg(server), "run", "take your time")
    status, err = signalled_while_asked(server, signal.SIGINT, *args, env=env, cwd=tmp_path)
    assert status == 130, err
    assert "[turn 1 aborted" in err
    assert "Traceback" not in err


@pytest.mark.plugins("persistence")
def test_a_closed_output_cancels_a_turn_the_model_would_never_end(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    # `dsh run --json ... | head -1` while the model stalls: the turn is cancelled at
    # once (aborted), not left to wait for the model's read timeout (an error)
    server = model_server([text_reply("first words", then="stall")])
    args = ("-m", model_arg(server), "run", "--json", "hi")
    status, _, err = read_one_line_and_close(*args, env=env, cwd=tmp_path)
    assert status == 141, err
    assert "Traceback" not in err
    (stored,) = Path(env["DSH_PERSISTENCE_DIR"]).glob("*.jsonl")
    events = [json.loads(line) for line in stored.read_text().splitlines()[1:]]
    assert events[-1]["type"] == "turn/end"
    assert events[-1]["data"]["reason"] == "aborted", events[-1]


def test_the_first_of_several_agents_is_the_one_run_talks_to(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    first, second = model_server([text_reply("from first")]), model_server([])
    (tmp_path / "dsh.yml").write_text(
        models_yml(("one", first), ("two", second))
        + "agents:\n"
        + "  - id: lead\n    model: one\n    system_prompt: I lead.\n"
        + "  - id: aide\n    model: two\n    system_prompt: I help.\n"
    )
    done = dsh("run", "hi", env={**cli_env, "DSH_LOAD_PLUGINS": ""}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "from first\n"
    assert "dsh: model one (the model of agent 'lead' in " in done.stderr
    assert first.bodies()[0]["messages"][0] == {"role": "system", "content": "I lead."}
    assert second.bodies() == []


@pytest.mark.plugins("persistence")
def test_without_agents_the_session_is_main_s_in_the_resolved_workspace(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("ok")])
    (tmp_path / "work").mkdir()
    done = dsh("--cwd", "work", "-m", model_arg(server), "run", "hi", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    ((session_id, header),) = headers(env).items()
    assert session_id.startswith("main-session-")
    assert header["meta"]["agent"] == "main"
    assert "max_steps" not in header["meta"]["options"]  # a remote model: no local bound
    system = server.bodies()[0]["messages"][0]["content"]
    assert f"the directory {tmp_path / 'work'}." in system


@pytest.mark.plugins("persistence")
def test_continue_takes_the_session_updated_last_not_the_one_created_last(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply(f"Answer {n}.") for n in range(5)])
    model = model_arg(server)
    assert dsh("-m", model, "run", "older", env=env, cwd=tmp_path).returncode == 0
    (older,) = headers(env)
    assert dsh("-m", model, "run", "newer", env=env, cwd=tmp_path).returncode == 0
    (newer,) = set(headers(env)) - {older}

    done = dsh("-m", model, "run", "--continue", "go on", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"dsh: continuing session {newer} ('newer', 1 turn so far)" in done.stderr
    assert users(server.bodies()[2]) == ["newer", "go on"]

    older_again = dsh("-m", model, "run", "--session", older, "again", env=env, cwd=tmp_path)
    assert older_again.returncode == 0, older_again.stderr
    done = dsh("-m", model, "run", "--continue", "and on", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"dsh: continuing session {older} ('older', 2 turns so far)" in done.stderr
    assert users(server.bodies()[4]) == ["older", "again", "and on"]


@pytest.mark.plugins("persistence")
def test_m_moves_a_continued_session_to_another_model(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    before, after = model_server([text_reply("Noted.")]), model_server([text_reply("Moved.")])
    (tmp_path / "dsh.yml").write_text(models_yml(("before", before), ("after", after)))
    assert dsh("-m", "before", "run", "remember 7", env=env, cwd=tmp_path).returncode == 0
    done = dsh("-m", "after", "run", "--continue", "which number?", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Moved.\n"
    assert "dsh: model after (chosen with -m)" in done.stderr
    assert users(after.bodies()[0]) == ["remember 7", "which number?"]
    assert len(before.bodies()) == 1
    stored = [h["meta"]["options"]["model"] for h in headers(env).values()]
    assert stored == ["before"]  # the session keeps the model it was created with


@pytest.mark.plugins("persistence")
def test_a_continued_session_keeps_its_model_over_the_first_agents(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    agents, chosen = model_server([]), model_server([text_reply("Noted."), text_reply("Seven.")])
    (tmp_path / "dsh.yml").write_text(
        models_yml(("usual", agents), ("special", chosen))
        + "agents:\n  - id: main\n    model: usual\n"
    )
    assert dsh("-m", "special", "run", "remember 7", env=env, cwd=tmp_path).returncode == 0
    done = dsh("run", "--continue", "which number?", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Seven.\n"
    assert "dsh: model special (the model session " in done.stderr
    assert agents.bodies() == []


@pytest.mark.plugins("persistence")
def test_session_without_a_plugin_that_stores_sessions_names_the_flag(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([])
    env = {**cli_env, "DSH_LOAD_PLUGINS": ""}
    done = dsh("-m", model_arg(server), "run", "--session", "abc", "hi", env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(
        "dsh: error: --session abc: no plugin stores sessions (dsh-persistence is installed "
        "but DSH_LOAD_PLUGINS, empty, leaves it out"
    )
    assert server.bodies() == []
