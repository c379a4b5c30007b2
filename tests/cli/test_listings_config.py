"""`dsh models` and `dsh tools` beside settings for a plugin that does not run (a section
for one not installed, options for one left out): they start no agent, so such settings
cannot change what they list and each is a warning, worded as `dsh sessions list`'s;
`dsh run` and `dsh config check` still refuse them. `dsh plugins` and `dsh version`
read no dsh.yml at all, a broken one included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import dsh

SHELL = "shell:\n  x: 1\n"
LEFT_OUT = (
    "agents:\n  - id: main\n    model: local\n    options:\n      permissions: {allow: [read]}\n"
)
TAIL = "(ignored here: this command starts no agent; dsh run refuses it)\n"


@pytest.fixture
def env(cli_env: dict[str, str]) -> dict[str, str]:
    return {**cli_env, "DSH_LOAD_PLUGINS": ""}  # every installed plugin left out


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            SHELL,
            "1:1: shell: section 'shell' is for a plugin that is not installed or not loaded",
        ),
        pytest.param(
            LEFT_OUT,
            "5:7: agents[0].options.permissions: plugin 'permissions' is installed but not "
            "loaded, so nothing would apply these settings",
            marks=pytest.mark.plugins("permissions"),  # installed, and left out here
        ),
    ],
    ids=["not-installed", "left-out"],
)
def test_models_and_tools_warn_about_settings_for_plugins_that_do_not_run(
    env: dict[str, str], tmp_path: Path, text: str, said: str
) -> None:
    config = tmp_path / "dsh.yml"
    config.write_text(text)
    warning = f"dsh: {config}:{said}"

    models = dsh("models", "--json", env=env, cwd=tmp_path)
    assert models.returncode == 0, models.stderr
    assert "local" in [row["name"] for row in json.loads(models.stdout)]
    assert models.stderr.startswith(warning) and models.stderr.endswith(TAIL)
    assert models.stderr.count("\n") == 1

    tools = dsh("tools", "--json", env=env, cwd=tmp_path)
    assert tools.returncode == 0, tools.stderr
    assert "read" in [row["name"] for row in json.loads(tools.stdout)]
    assert tools.stderr.startswith(warning) and tools.stderr.endswith(TAIL)

    # an agent would run without what the file asks for: refused before any model starts
    ran = dsh("run", "hi", env=env, cwd=tmp_path)
    assert (ran.returncode, ran.stdout) == (2, "")
    assert ran.stderr.startswith(f"dsh: error: {config}:{said}")
    checked = dsh("config", "check", env=env, cwd=tmp_path)
    assert checked.returncode == 1 and f"{config}:{said}" in checked.stderr


def test_models_still_refuse_a_bad_file(env: dict[str, str], tmp_path: Path) -> None:
    """What the listings read is checked: a model entry that is wrong stays an error."""
    (tmp_path / "dsh.yml").write_text(SHELL + "model: nosuch\n")
    done = dsh("models", env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert "unknown model 'nosuch'" in done.stderr


@pytest.mark.parametrize("command", [["plugins"], ["version", "-v"]])
def test_plugins_and_version_read_no_config(
    env: dict[str, str], tmp_path: Path, command: list[str]
) -> None:
    (tmp_path / "dsh.yml").write_text(SHELL + "model: [\n")
    done = dsh(*command, env=env, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout
