"""`dsh models` and `dsh tools` beside settings for a plugin that does not run (a section
for one not installed, options for one left out): they start no agent, so such settings
cannot change what they list and each is a warning, worded as `dsh sessions list`'s;
`dsh run` and `dsh config check` still refuse them. `dsh plugins` and `dsh version`
read no dsh.yml at all, a broken one included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import (
    SHELL_SECTION,
    assert_checked,
    assert_refused,
    assert_warned,
    dsh,
    settings_for_plugins_not_running,
    written_config,
)

LEFT_OUT = (
    "agents:\n  - id: main\n    model: local\n    options:\n      permissions: {allow: [read]}\n"
)


@pytest.fixture
def env(cli_env: dict[str, str]) -> dict[str, str]:
    return {**cli_env, "DSH_LOAD_PLUGINS": ""}  # every installed plugin left out


@settings_for_plugins_not_running(LEFT_OUT, line=5)
def test_models_and_tools_warn_about_settings_for_plugins_that_do_not_run(
    env: dict[str, str], tmp_path: Path, text: str, said: str
) -> None:
    config, warning = written_config(tmp_path, text, said)

    models = dsh("models", "--json", env=env, cwd=tmp_path)
    assert_warned(models, warning)
    assert "local" in [row["name"] for row in json.loads(models.stdout)]
    assert models.stderr.count("\n") == 1

    tools = dsh("tools", "--json", env=env, cwd=tmp_path)
    assert_warned(tools, warning)
    assert "read" in [row["name"] for row in json.loads(tools.stdout)]

    # an agent would run without what the file asks for: refused before any model starts
    assert_refused(dsh("run", "hi", env=env, cwd=tmp_path), config, said)
    assert_checked(env, tmp_path, config, said)


def test_models_still_refuse_a_bad_file(env: dict[str, str], tmp_path: Path) -> None:
    """What the listings read is checked: a model entry that is wrong stays an error."""
    (tmp_path / "dsh.yml").write_text(SHELL_SECTION + "model: nosuch\n")
    done = dsh("models", env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert "unknown model 'nosuch'" in done.stderr


@pytest.mark.parametrize(
    ("config", "args", "why"),
    [
        ("agents: [{id: main, model: box}]\n", [], "the model of agent 'main' in"),
        ("model: box\n", [], "the default model in"),
        ("", ["-m", "box"], "chosen with -m"),
    ],
)
def test_models_go_on_when_the_model_run_uses_cannot_be_built(
    env: dict[str, str], tmp_path: Path, config: str, args: list[str], why: str
) -> None:
    """cli.md, `dsh models`: "an entry of `models:` that cannot be built (an unknown
    provider, as when the plugin that serves it is left out ...) is left out of the list,
    with that warning" and "the listing goes on", the one entry dsh run would use
    included (it stopped: "('box') is not defined in dsh.yml", defined as it was)."""
    (tmp_path / "dsh.yml").write_text("models: {box: {provider: nope}}\n" + config)
    done = dsh(*args, "models", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "unknown provider 'nope'" in done.stderr and "ignored here" in done.stderr
    assert [line.split()[0] for line in done.stdout.splitlines()[:-1]] == ["NAME", "local"]
    assert done.stdout.splitlines()[-1] == (
        f"dsh run and dsh chat use box: {why}"
        + (f" {tmp_path / 'dsh.yml'}" if why.endswith(" in") else "")
        + ", which cannot be built here (see its warning): dsh run refuses the file"
    )
    assert dsh(*args, "run", "hi", env=env, cwd=tmp_path).returncode == 2


def test_a_mistyped_m_names_a_models_entry_that_cannot_be_built_too(
    env: dict[str, str], tmp_path: Path
) -> None:
    """As dsh.yml's own unknown model names: an entry that cannot be built here is
    still defined, listed in file order and hinted at."""
    (tmp_path / "dsh.yml").write_text("models: {zeta: {provider: nope}, fast: {provider: nope}}\n")
    done = dsh("-m", "fsat", "models", env=env, cwd=tmp_path)
    assert done.returncode == 2
    assert "(models defined: zeta, fast); did you mean 'fast'?" in done.stderr


@pytest.mark.parametrize("command", [["plugins"], ["version", "-v"]])
def test_plugins_and_version_read_no_config(
    env: dict[str, str], tmp_path: Path, command: list[str]
) -> None:
    (tmp_path / "dsh.yml").write_text(SHELL_SECTION + "model: [\n")
    done = dsh(*command, env=env, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout


@pytest.mark.plugins("persistence")
def test_listings_work_beside_a_session_directory_that_cannot_be_made(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """A harness that starts no agent stores nothing: `dsh models` and `dsh tools` list
    whatever the session directory (found so: they failed, "not a usable session
    directory", as `dsh run` rightly does before its turn); `dsh sessions list` says the
    store cannot be listed."""
    (tmp_path / "file").write_text("")
    unusable = tmp_path / "file" / "sessions"
    env = {**cli_env, "DSH_LOAD_PLUGINS": "persistence", "DSH_PERSISTENCE_DIR": str(unusable)}
    for command in ("models", "tools"):
        done = dsh(command, "--json", env=env, cwd=tmp_path)
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
        assert json.loads(done.stdout)
    said = f"{unusable} ($DSH_PERSISTENCE_DIR; persistence.directory is not set) is not a usable"
    listed = dsh("sessions", "list", env=env, cwd=tmp_path)
    assert (listed.returncode, listed.stdout) == (2, "")
    assert listed.stderr.startswith(f"dsh: error: {said} session directory: cannot list it")
    ran = dsh("run", "hi", env=env, cwd=tmp_path)
    assert (ran.returncode, ran.stdout) == (2, "")
    assert ran.stderr.startswith(f"dsh: error: {said} session directory: cannot create it")
