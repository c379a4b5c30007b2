"""Per-agent options for a plugin turned off (``-p no:NAME``) are said to be ignored
once, and are stored with the session all the same. A bad one, which nothing could
check while the plugin was off, refuses the session once the plugin is on again: the
refusal names the session that holds them (dsh.yml, which ``config check`` passes, does
not set them) and the way out (found by a new-user journey review: it said only
``agent 'main': option myplugin.levle: unknown key``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from cli_support import dsh, text_reply

pytestmark = pytest.mark.plugins("permissions", "persistence")

MODELS = "models:\n  tiny: {{provider: openai-compatible, model: tiny, base_url: '{url}'}}\n"
TYPO = "agents:\n  - id: main\n    options:\n      permissions: {alow: [read]}\n"
FIXED = "agents:\n  - id: main\n    options:\n      permissions: {allow: [read]}\n"
IGNORED = "is ignored: plugin 'permissions' is turned off (-p no:permissions)"


def _stored_off(server: Any, env: dict[str, str], tmp_path: Path) -> str:
    """A session created with the permissions plugin off and a typo in its per-agent
    rules, which the user then takes out of dsh.yml: its id."""
    (tmp_path / "dsh.yml").write_text(MODELS.format(url=server.url) + TYPO)
    first = dsh("-p", "no:permissions", "-m", "tiny", "run", "hi", env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stderr.count(IGNORED) == 1, first.stderr  # the config's, with file:line
    assert f"dsh.yml:6:7: agents[0].options.permissions {IGNORED}" in first.stderr
    (tmp_path / "dsh.yml").write_text(MODELS.format(url=server.url))
    found = re.search(r"new session (\S+)", first.stderr)
    assert found is not None, first.stderr
    return found.group(1)


def test_a_bad_stored_option_names_its_session_and_the_way_out(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("one"), text_reply("two"), text_reply("three")])
    session = _stored_off(server, cli_env, tmp_path)
    assert dsh("config", "check", env=cli_env, cwd=tmp_path).returncode == 0
    config = tmp_path / "dsh.yml"
    said = (
        "dsh: error: agent 'main': option permissions.alow: unknown key (expected one of: "
        "mode, allow, ask, deny, ask_timeout); did you mean 'allow'? (the 'permissions' "
        f"options stored with session {session}, not set in {config}; setting "
        "agents[0].options.permissions there replaces them)\n"
    )
    (tmp_path / "dsh.yml").write_text(MODELS.format(url=server.url) + "agents:\n  - id: main\n")
    for how in (["run", "--continue"], ["sessions", "resume", session]):
        done = dsh(*how, "again", env=cli_env, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert said in done.stderr, done.stderr

    config.write_text(MODELS.format(url=server.url) + FIXED)  # the way out the error gives
    done = dsh("run", "--continue", "again", env=cli_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "two\n"


def test_with_no_agent_in_dsh_yml_the_way_out_names_the_agent_to_add(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("one")])
    session = _stored_off(server, cli_env, tmp_path)
    done = dsh("run", "--continue", "again", env=cli_env, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert (
        f"(the 'permissions' options stored with session {session}, not set in "
        f"{tmp_path / 'dsh.yml'}; an agent 'main' under agents: there with "
        "options.permissions replaces them)\n"
    ) in done.stderr


def test_stored_options_for_a_plugin_left_out_name_the_session(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("one"), text_reply("two")])
    session = _stored_off(server, cli_env, tmp_path)
    env = {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}
    done = dsh("run", "--continue", "again", env=env, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert (
        f"dsh: error: agent 'main': option 'permissions': plugin 'permissions' is installed "
        "but not loaded, so nothing would apply these settings (the 'permissions' options "
        f"stored with session {session}: load it (DSH_LOAD_PLUGINS, -p permissions), or "
        "turn it off (-p no:permissions) to go on without them)\n"
    ) in done.stderr
    went_on = dsh("-p", "no:permissions", "run", "--continue", "again", env=env, cwd=tmp_path)
    assert went_on.returncode == 0, went_on.stderr
    assert went_on.stderr.count("turned off") == 1, went_on.stderr
    assert (
        f"dsh: session {session}: its 'permissions' options are ignored: plugin "
        "'permissions' is turned off (-p no:permissions)\n"
    ) in went_on.stderr
