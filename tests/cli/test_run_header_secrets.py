"""A gateway's token in a model's ``headers:`` (``Authorization: Bearer ...``) is hidden
as the model's API key is (behaviour 13: a turn ending ``error`` has the provider's
message in turn/end and the session file): a gateway's 401 quoting it, a command reading
dsh.yml, an error of the ``dsh`` command itself.

Before: header values were never secrets: the 401 put the token into turn/end and the
session file, and ``cat dsh.yml`` gave it whole to the model."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import dsh, text_reply, tool_call_reply, wire

from dsh._cli_keys import hide_keys

TOKEN = "gwtok-Zq81Lm03Xv55Pp27Rr90"
KEY = "sk-openai-AbCdEf0123456789"


def gateway(tmp_path: Path, url: str) -> None:
    (tmp_path / "dsh.yml").write_text(
        f"models:\n  gw:\n    provider: openai\n    model: m\n    base_url: {url}\n"
        f"    headers: {{Authorization: 'Bearer {TOKEN}'}}\nmodel: gw\n"
    )


def everything(done: Any, cli_env: dict[str, str]) -> str:
    stored = Path(cli_env["DSH_PERSISTENCE_DIR"]).rglob("*.jsonl")
    return done.stdout + done.stderr + "".join(path.read_text() for path in stored)


@pytest.mark.plugins("persistence")
def test_a_gateways_401_quoting_the_header_token_is_hidden_in_output_and_session(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    said = f"invalid credentials: Bearer {TOKEN}"
    server = model_server([wire.error(401, {"error": {"message": said}})])
    gateway(tmp_path, server.url)
    env = {**cli_env, "OPENAI_API_KEY": KEY, "DSH_LOAD_PLUGINS": "persistence"}
    done = dsh("run", "--json", "go", env=env, cwd=tmp_path)
    assert done.returncode != 0
    [request] = server.server.requests
    assert request.all("authorization") == [f"Bearer {TOKEN}"]  # the gateway's, not KEY
    [end] = [e for e in map(json.loads, done.stdout.splitlines()) if e["type"] == "turn/end"]
    assert "invalid credentials: Bearer ***" in end["data"]["error"]["message"]
    seen = everything(done, cli_env)
    assert list(Path(cli_env["DSH_PERSISTENCE_DIR"]).rglob("*.jsonl"))
    assert TOKEN[:13] not in seen and TOKEN[-13:] not in seen and KEY not in seen


@pytest.mark.plugins("persistence")
def test_a_command_reading_dsh_yml_shows_the_header_token_hidden(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server(
        [tool_call_reply("bash", {"command": "grep -i authorization dsh.yml"}), text_reply("ok")]
    )
    gateway(tmp_path, server.url)
    env = {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}
    done = dsh("run", "--json", "go", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [result] = [
        e["data"] for e in map(json.loads, done.stdout.splitlines()) if e["type"] == "tool/result"
    ]
    assert result["content"] == "    headers: {Authorization: 'Bearer ***'}\n[exit code 0]"
    assert TOKEN not in everything(done, cli_env)
    assert TOKEN not in json.dumps(server.bodies())


def test_an_error_of_the_dsh_command_hides_the_header_token_of_its_config(
    tmp_path: Path,
) -> None:
    gateway(tmp_path, "http://127.0.0.1:1/v1")
    args = argparse.Namespace(config=tmp_path / "dsh.yml", cwd=tmp_path)
    assert hide_keys(f"failed: Bearer {TOKEN}!", args) == "failed: Bearer ***!"
