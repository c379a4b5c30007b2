"""`dsh sessions resume ID PROMPT` is `dsh run --session ID PROMPT` (docs/persistence.md):
Ctrl-C and SIGTERM end its turn the same way. It runs the turn through
``CommandContext.run_prompt``, a plugin command's way to dsh run's turn, which ran
outside the signal receiver dsh run has (``dsh._cli_signals.until_terminated``): Ctrl-C
became asyncio's KeyboardInterrupt and the turn was stored ``disposed``, not
``aborted`` (found by the review of this session's signal change)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cli_support import dsh, text_reply

pytestmark = pytest.mark.plugins("persistence")


@pytest.mark.parametrize(
    ("signum", "status", "reason"),
    # SIGTERM cancels the command: the turn ends aborted or disposed, whichever
    # reaches it first (as in dsh run)
    [(signal.SIGINT, 130, {"aborted"}), (signal.SIGTERM, 143, {"aborted", "disposed"})],
    ids=["int", "term"],
)
def test_a_signal_ends_a_resumed_turn_as_it_ends_dsh_run(
    model_server: Any,
    cli_env: dict[str, str],
    tmp_path: Path,
    signum: int,
    status: int,
    reason: set[str],
) -> None:
    server = model_server([text_reply("first answer"), text_reply("part of", then="stall")])
    model = f"openai-compatible:tiny@{server.url}"
    env = {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}
    assert dsh("-m", model, "run", "hi", env=env, cwd=tmp_path).returncode == 0
    (stored,) = Path(env["DSH_PERSISTENCE_DIR"]).glob("*.jsonl")
    command = [sys.executable, "-m", "dsh.cli", "-m", model, "sessions", "resume", stored.stem]
    shown = tmp_path / "stdout"
    with shown.open("w") as stdout:
        process = subprocess.Popen(
            [*command, "more"],
            env=env,
            cwd=tmp_path,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
        )
    try:
        deadline = time.monotonic() + 30
        while "part of" not in shown.read_text() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert "part of" in shown.read_text(), "the resumed turn's chunk was never shown"
        assert len(server.bodies()) == 2
        process.send_signal(signum)
        _, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == status, err
    assert "Traceback" not in err
    ends = [
        event["data"]["reason"]
        for event in map(json.loads, stored.read_text().splitlines())
        if event.get("type") == "turn/end"
    ]
    assert ends[0] == "completed" and len(ends) == 2 and ends[1] in reason, err
