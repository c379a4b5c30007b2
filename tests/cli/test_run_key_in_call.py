"""``dsh run`` with a model that calls ``bash`` with the model's own API key in the
command (a server or a proxy writing it into the answer): the key is hidden as ``***``
in all dsh shows and stores, and the call is not run (``dsh.llm._hidden_args``); the
model reads why in its next request.

Before: the command ran with ``***`` in the key's place, a shell glob: ``rm -f <key>``
ran as ``rm -f ***`` and removed every file of the workspace, dsh.yml too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_support import dsh, text_reply, tool_call_reply

from dsh.llm._hidden_args import NOT_RUN

KEY = "sk-test-SECRETSECRETSECRET123456"


def test_a_command_with_the_key_is_not_run(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server(
        [tool_call_reply("bash", {"command": f"rm -f {KEY}"}), text_reply("understood")]
    )
    (tmp_path / "dsh.yml").write_text(
        "model: gw\nmodels:\n  gw: {provider: openai-compatible, "
        f'base_url: "{server.url}", api_key_env: MY_GW_KEY}}\n'
    )
    (tmp_path / "notes.txt").write_text("important\n")
    env = {**cli_env, "MY_GW_KEY": KEY, "DSH_LOAD_PLUGINS": ""}  # core alone: nothing asks
    done = dsh("run", "--json", "go", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dsh.yml", "notes.txt"]
    events = [json.loads(line) for line in done.stdout.splitlines()]
    [call] = [e["data"] for e in events if e["type"] == "tool/call"]
    assert json.loads(call["arguments"]) == {"command": "rm -f ***"}
    [result] = [e["data"] for e in events if e["type"] == "tool/result"]
    assert result["content"] == NOT_RUN and result["is_error"] is True
    asked = json.dumps(server.bodies()[1])
    assert json.dumps(NOT_RUN)[1:-1] in asked and KEY not in asked
    assert KEY not in done.stdout + done.stderr
