"""Settings for an installed plugin that does not run: per-agent permission rules must
never be dropped without a word (found by the CI operator study: with
``DSH_LOAD_PLUGINS=persistence`` or ``-p no:permissions``, ``agents[].options.permissions``
was ignored and every command ran, while ``config check`` said ok)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_support import dsh, text_reply, tool_call_reply

pytestmark = pytest.mark.plugins("permissions", "persistence")

AGENT_RULES = "agents:\n  - id: ci\n    options:\n      permissions: {allow: [read]}\n"
SECTION = "permissions:\n  allow: [read]\n"


def test_rules_for_a_plugin_left_out_stop_dsh_before_anything_runs(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "dsh.yml").write_text(AGENT_RULES)
    server = model_server([tool_call_reply("bash", {"command": "touch ran"}), text_reply("ok")])
    env = {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}
    model = f"openai-compatible:tiny@{server.url}"
    done = dsh("-m", model, "run", "go", env=env, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert (
        f"{tmp_path / 'dsh.yml'}:4:7: agents[0].options.permissions: plugin 'permissions' is "
        "installed but not loaded, so nothing would apply these settings: load it "
        "(DSH_LOAD_PLUGINS, -p permissions) or remove them"
    ) in done.stderr
    assert server.bodies() == [] and not (tmp_path / "ran").exists()
    checked = dsh("config", "check", env=env, cwd=tmp_path)
    assert checked.returncode == 1 and "not loaded" in checked.stderr
    assert dsh("-p", "permissions", "config", "check", env=env, cwd=tmp_path).returncode == 0


@pytest.mark.parametrize(
    ("text", "place"), [(AGENT_RULES, "4:7: agents[0].options"), (SECTION, "1:1: ")]
)
def test_rules_for_a_plugin_turned_off_are_said_to_be_ignored(
    cli_env: dict[str, str], tmp_path: Path, text: str, place: str
) -> None:
    (tmp_path / "dsh.yml").write_text(text)
    done = dsh("-p", "no:permissions", "config", "check", env=cli_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    path = "agents[0].options.permissions" if "agents" in text else "permissions"
    assert (
        f"dsh: {tmp_path / 'dsh.yml'}:{place.split(': ')[0]}: {path} is ignored: "
        "plugin 'permissions' is turned off (-p no:permissions)"
    ) in done.stderr


def test_a_section_for_a_plugin_left_out_says_it_is_installed(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Not "not installed or not loaded" with the loaded plugins listed, as for a typo:
    the plugin is there, this run leaves it out."""
    (tmp_path / "dsh.yml").write_text(SECTION + "shell:\n  x: 1\n")
    env = {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}
    done = dsh("config", "check", env=env, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert (
        f"{tmp_path / 'dsh.yml'}:1:1: permissions: section 'permissions' is for plugin "
        "'permissions', which is installed but not loaded: load it (DSH_LOAD_PLUGINS, "
        "-p permissions) or remove the section"
    ) in done.stderr
    assert "section 'shell' is for a plugin that is not installed or not loaded" in done.stderr
    assert dsh("-p", "permissions", "config", "check", env=env, cwd=tmp_path).returncode == 1
    (tmp_path / "dsh.yml").write_text(SECTION)
    assert dsh("-p", "permissions", "config", "check", env=env, cwd=tmp_path).returncode == 0
