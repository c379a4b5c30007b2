"""`dsh run`: one turn against a real (loopback) OpenAI-compatible server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from cli_support import text_reply

DSH = [sys.executable, "-m", "dsh.cli"]


def dsh(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*DSH, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60
    )


def model_arg(server: Any) -> str:
    return f"openai-compatible:tiny@{server.url}"


def test_run_streams_the_answer_and_reports_the_turn(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Hello", ", ", "world.")])
    done = dsh("-m", model_arg(server), "run", "say hello", env=cli_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello, world.\n"
    assert "dsh: model openai-compatible:tiny (chosen with -m)" in done.stderr
    assert "[turn 1 completed · 12 in / 3 out tokens]" in done.stderr
    body = server.bodies()[0]
    assert body["messages"][-1] == {"role": "user", "content": "say hello"}
    assert str(tmp_path) in body["messages"][0]["content"]  # the workspace is in the prompt


def test_run_json_prints_every_session_event(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("ok")])
    done = dsh("-m", model_arg(server), "run", "--json", "hi", env=cli_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["seq"] for e in events] == list(range(len(events)))
    core = [
        e["type"]
        for e in events
        if "/" in e["type"] and not e["type"].startswith(("permission/", "compact/"))
    ]
    assert core[0] == "turn/start" and core[-1] == "turn/end"
    assert events[-1]["data"]["reason"] == "completed"


def test_a_failing_turn_exits_1_with_one_line_and_no_traceback(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    from cli_support import wire

    unreachable = f"openai-compatible:tiny@{wire.closed_port()}"
    done = dsh("-m", unreachable, "run", "hi", env=cli_env, cwd=tmp_path)
    assert done.returncode == 1
    assert "TRANSPORT" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_bad_model_argument_is_one_clear_line(cli_env: dict[str, str], tmp_path: Path) -> None:
    done = dsh("-m", "nonsense:thing", "run", "hi", env=cli_env, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("dsh: error: ")
    assert "unknown provider 'nonsense'" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_first_agent_in_dsh_yml_gives_the_prompt_and_options(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "dsh.yml").write_text(
        "agents:\n  - id: helper\n    system_prompt: You are terse.\n    options: {tone: dry}\n"
    )
    server = model_server([text_reply("ok")])
    done = dsh("-m", model_arg(server), "run", "hi", env=cli_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert server.bodies()[0]["messages"][0] == {"role": "system", "content": "You are terse."}
