"""``dsh run`` with a provider key in its environment: a command the model runs reads
the environment of dsh itself (``/proc/$PPID/environ``, which no scrubbing of bash's
own environment can hide), and the key still reaches neither the output, the session
file nor the model (found by the CI operator study)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_support import dsh, text_reply, tool_call_reply

KEY = "sk-test-SECRET-0123456789"


@pytest.mark.plugins("persistence")
def test_a_key_read_from_dshs_own_environment_is_hidden_everywhere(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    command = "tr '\\0' '\\n' < /proc/$PPID/environ | grep -a OPENAI_API_KEY"
    server = model_server([tool_call_reply("bash", {"command": command}), text_reply("ok")])
    env = {**cli_env, "OPENAI_API_KEY": KEY, "DSH_LOAD_PLUGINS": "persistence"}
    done = dsh(
        "-m",
        f"openai-compatible:tiny@{server.url}",
        "run",
        "--json",
        "go",
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert '"content": "OPENAI_API_KEY=***' in done.stdout.replace('":"', '": "')
    assert KEY not in done.stdout + done.stderr
    assert KEY not in str(server.bodies())
    stored = list(Path(cli_env["DSH_PERSISTENCE_DIR"]).rglob("*.jsonl"))
    assert stored and all(KEY not in path.read_text() for path in stored)
