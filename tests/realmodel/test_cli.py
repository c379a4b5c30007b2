"""`dsh run` end to end against the real local server, and `-m local` starting its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from realmodel_support import Peer

from dsh.invariants import check_invariants

CONFIG = "agents:\n  - id: main\n    max_steps: 2\n    options: {max_tokens: 48}\n"


def dsh(*args: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["DSH_PERSISTENCE_DIR"] = str(cwd / "sessions")
    return subprocess.run(
        [sys.executable, "-m", "dsh.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_dsh_run_streams_a_turn_from_the_real_server(peer: Peer, tmp_path: Path) -> None:
    (tmp_path / "dsh.yml").write_text(CONFIG)
    (tmp_path / "hello.py").write_text("print('hello')\n")
    model = f"openai-compatible:qwen@{peer.base_url}"
    done = dsh("-m", model, "run", "--json", "Say hello.", cwd=tmp_path, timeout=300)
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events, done.stderr
    assert check_invariants(events) == []
    end = events[-1]
    assert end["type"] == "turn/end"
    assert any(e["type"] == "step/start" for e in events)
    # What the small model answers varies (text, a tool call, an invented tool that
    # llama-server fails on mid-stream): the wire outcome must be one dsh understands.
    reason = end["data"]["reason"]
    if reason == "error":
        assert end["data"]["error"]["code"] not in ("INTERNAL", "UNKNOWN"), end["data"]
    else:
        assert reason in ("completed", "max-tokens")
        assert any(e["type"] == "assistant/chunk" for e in events)
    assert done.returncode == (1 if reason == "error" else 0)
    assert "Traceback" not in done.stderr


def _servers() -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
                state = (entry / "stat").read_text().split(")")[-1].split()[0]
            except OSError:
                continue
            if b"llama-server" in cmdline and state != "Z":
                found.add(int(entry.name))
    return found


def test_dash_m_local_starts_the_server_and_stops_it_on_exit(peer: Peer, tmp_path: Path) -> None:
    (tmp_path / "dsh.yml").write_text(CONFIG.replace("max_steps: 2", "max_steps: 1"))
    before = _servers()
    done = dsh("-m", "local", "run", "Say hi.", cwd=tmp_path, timeout=600)
    assert "dsh: model local (chosen with -m)" in done.stderr, done.stderr
    assert "[turn 1 " in done.stderr
    assert _servers() <= before  # the command's own server is gone
