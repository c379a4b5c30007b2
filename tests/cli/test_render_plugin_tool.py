"""A plugin's tool that raises: `dsh run`'s line for its error result names the plugin
that registered the tool (a plugin's failure names the plugin); a built-in tool's line
does not change."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cli_support import dsh, text_reply, tool_call_reply
from go_on_support import url_model

EXPLODES = """\
from dsh import hookimpl


@hookimpl
def register_tools(register):
    from dsh.tools import tool

    @tool
    def explode() -> str:
        \"\"\"Blow up.\"\"\"
        raise RuntimeError("kaput")

    register(explode)
"""


def _installed(cli_env: dict[str, str], site: Path) -> dict[str, str]:
    """``cli_env`` with dsh-boomer 1.0 installed (entry point ``boomer``), loaded alone."""
    info = site / "dsh_boomer-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "dsh_boomer.py").write_text(EXPLODES)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dsh-boomer\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[dsh]\nboomer = dsh_boomer\n")
    path = os.pathsep.join([str(site), cli_env.get("PYTHONPATH", "")])
    return {**cli_env, "PYTHONPATH": path, "DSH_LOAD_PLUGINS": "boomer"}


def test_a_plugin_tools_failure_line_names_the_plugin(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server(
        [
            tool_call_reply("explode", {}),
            tool_call_reply("read", {"path": "missing.txt"}, call_id="call-2"),
            text_reply("done"),
        ]
    )
    env = _installed(cli_env, tmp_path / "site")
    done = dsh("-m", url_model(server), "run", "go", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert "✗ explode (plugin boomer): tool 'explode' failed: RuntimeError: kaput" in lines
    assert any(line.startswith("✗ read: ") for line in lines), lines  # dsh's own
