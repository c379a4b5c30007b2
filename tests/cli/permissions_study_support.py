"""Helpers of the permissions user study (test_permissions_study*.py): `dsh run --json`
with no terminal on the scripted model server, and what it logged and told the model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_support import dsh, text_reply, tool_call_reply

DENY_RM = "permissions:\n  allow: [bash]\n  deny: ['bash(rm *)']\n"


def run(
    server: Any, env: dict[str, str], cwd: Path, *extra: str
) -> tuple[list[dict[str, Any]], str]:
    """`dsh [extra] run go --json` with no terminal: its session events and stderr."""
    model = f"openai-compatible:tiny@{server.url}"
    done = dsh(*extra, "-m", model, "run", "go", "--json", env=env, cwd=cwd, stdin="")
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()], done.stderr


def decisions(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["data"] for e in events if e["type"] == "permission/decision"]


def seen_by_model(server: Any, request: int = 1) -> str:
    """The tool result the model read in request ``request``."""
    message = server.bodies()[request]["messages"][-1]
    assert message["role"] == "tool"
    return str(message["content"])


def one_call(model_server: Any, name: str, arguments: dict[str, Any]) -> Any:
    return model_server([tool_call_reply(name, arguments), text_reply("ok")])
