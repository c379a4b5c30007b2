"""The peers' side of bench/run.py: their venv, and their scenario subprocesses.

The peers (openai-agents, LangChain, pydantic-ai) are installed into their own venv,
``bench/.peers-venv`` (git-ignored), created here with uv, so that the project's
dependencies stay clean. pyinstrument, when it installs, goes to
``bench/.peers-venv/tools`` (``uv pip install --target``), appended to sys.path only
when a dsh profile is written.

Each peer scenario (bench/peers/peer_<name>.py) runs in a subprocess of that venv and
answers commands on stdin/stdout (bench/peers/_common.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
VENV = HERE / ".peers-venv"
TOOLS = VENV / "tools"
PEERS_DIR = HERE / "peers"
REQUIREMENTS = ("openai-agents", "langchain", "langchain-core", "pydantic-ai-slim")
#: name shown -> scenario script and the import measured at start-up
PEERS: dict[str, dict[str, str]] = {
    "openai-agents": {"script": "peer_openai_agents.py", "import": "import agents"},
    "langchain create_agent": {
        "script": "peer_langchain.py",
        "import": "from langchain.agents import create_agent",
    },
    "pydantic-ai": {"script": "peer_pydantic_ai.py", "import": "import pydantic_ai"},
}


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _uv() -> str:
    local = Path(sys.executable).with_name("uv")
    found = str(local) if local.exists() else shutil.which("uv")
    if found is None:
        raise RuntimeError("uv is needed to build bench/.peers-venv (pip install uv)")
    return found


def ensure_venv(log: Any = print) -> dict[str, Any]:
    """Create the peers' venv if needed; returns what it holds (or why it failed)."""
    uv = _uv()
    if not venv_python().exists():
        log(f"creating {VENV.relative_to(HERE.parent)} (uv venv + the peers from PyPI)")
        subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(VENV)], check=True)
        # ignore bench/.peers-venv even where .gitignore is not read
        (VENV / ".gitignore").write_text("*\n", encoding="utf-8")
    install = [uv, "pip", "install", "--quiet", "--python", str(venv_python())]
    done = subprocess.run([*install, *REQUIREMENTS], capture_output=True, text=True)
    if done.returncode != 0:
        return {"ok": False, "error": done.stderr.strip()[-2000:]}
    profiler = True
    if not (TOOLS / "pyinstrument").is_dir():
        tools = [uv, "pip", "install", "--quiet", "--python", sys.executable]
        got = subprocess.run(
            [*tools, "--target", str(TOOLS), "pyinstrument"], capture_output=True, text=True
        )
        profiler = got.returncode == 0
    return {"ok": True, "python": str(venv_python()), "pyinstrument": profiler}


class PeerProcess:
    """One scenario subprocess."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.script = PEERS_DIR / PEERS[name]["script"]
        self.proc: asyncio.subprocess.Process | None = None
        self.info: dict[str, Any] = {}
        self.error: str | None = None

    async def start(self) -> bool:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DSH_", "VIRTUAL_ENV"))}
        env["PYTHONUNBUFFERED"] = "1"
        self.proc = await asyncio.create_subprocess_exec(
            str(venv_python()),
            str(self.script),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(PEERS_DIR),
            env=env,
            limit=2**20,
        )
        reply = await self._read()
        if not reply.get("ready"):
            self.error = reply.get("error", "no answer")
            await self.stop()
            return False
        self.info = reply
        return True

    async def _read(self) -> dict[str, Any]:
        assert self.proc is not None
        assert self.proc.stdout is not None
        line = await self.proc.stdout.readline()
        if not line:
            assert self.proc.stderr is not None
            err = (await self.proc.stderr.read()).decode(errors="replace")
            return {"error": f"{self.name} exited: {err.strip()[-1500:]}"}
        return dict(json.loads(line))

    async def call(self, **command: Any) -> dict[str, Any]:
        assert self.proc is not None
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(command) + "\n").encode())
        await self.proc.stdin.drain()
        return await self._read()

    async def turns(self, n: int) -> dict[str, Any]:
        """Run ``n`` turns; the reply's ``valid`` says the tool and model really ran."""
        reply = await self.call(cmd="turns", n=n)
        reply["valid"] = (
            reply.get("tool_calls") == n
            and reply.get("model_calls") == 2 * n
            and reply.get("wrong_answers") == 0
        )
        return reply

    async def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), timeout=30)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        self.proc = None
