"""`dsh sessions` beside settings for a plugin that does not run (a section for one not
installed, options for one left out): list, show and delete read the store, which such
settings cannot change, so each is a warning; resume runs a turn and refuses them as
`dsh run` does; `dsh config check` still reports them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import (
    SHELL_SECTION,
    assert_checked,
    assert_refused,
    assert_warned,
    dsh,
    settings_for_plugins_not_running,
    text_reply,
    written_config,
)

pytestmark = pytest.mark.plugins("persistence")

LEFT_OUT = "agents:\n  - id: main\n    options:\n      permissions: {allow: [read]}\n"


@pytest.fixture
def env(cli_env: dict[str, str]) -> dict[str, str]:
    return {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}


def _stored(server: Any, env: dict[str, str], cwd: Path) -> str:
    """The id of a session one `dsh run` stored."""
    model = f"openai-compatible:tiny@{server.url}"
    assert dsh("-m", model, "run", "hi", env=env, cwd=cwd).returncode == 0
    (stored,) = Path(env["DSH_PERSISTENCE_DIR"]).glob("*.jsonl")
    return stored.stem


@settings_for_plugins_not_running(LEFT_OUT, line=4)
def test_sessions_reading_the_store_warn_about_settings_for_plugins_that_do_not_run(
    model_server: Any, env: dict[str, str], tmp_path: Path, text: str, said: str
) -> None:
    server = model_server([text_reply("Hello.")])
    session = _stored(server, env, tmp_path)
    config, warning = written_config(tmp_path, text, said)

    listed = dsh("sessions", "list", "--json", env=env, cwd=tmp_path)
    assert_warned(listed, warning)
    assert [row["id"] for row in json.loads(listed.stdout)] == [session]
    assert listed.stderr.count("\n") == 1

    shown = dsh("sessions", "show", session, env=env, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "Hello." in shown.stdout and shown.stderr.startswith(warning)

    # a turn would run without what the file asks for: refused, before the model is asked
    resumed = dsh("sessions", "resume", session, "again", env=env, cwd=tmp_path)
    assert_refused(resumed, config, said)
    assert len(server.bodies()) == 1
    ran = dsh("run", "--continue", "again", env=env, cwd=tmp_path)
    assert ran.returncode == 2 and ran.stderr.startswith(f"dsh: error: {config}:{said}")

    assert_checked(env, tmp_path, config, said)

    deleted = dsh("sessions", "delete", session, env=env, cwd=tmp_path)
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stderr.startswith(warning)
    assert not list(Path(env["DSH_PERSISTENCE_DIR"]).glob("*.jsonl"))


def test_sessions_still_refuse_a_bad_section_of_their_own(
    env: dict[str, str], tmp_path: Path
) -> None:
    """The persistence section says which store to read: a bad one stays an error."""
    (tmp_path / "dsh.yml").write_text(SHELL_SECTION + "persistence:\n  backend: nosuch\n")
    done = dsh("sessions", "list", env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert "persistence.backend" in done.stderr


def test_load_config_for_a_command_that_starts_no_agent_warns_instead(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The API the sessions command uses (docs/config.md): the same file, refused when
    agents start, is loaded with a warning per setting that would apply to nothing."""
    from dsh.config import load_config
    from dsh.errors import ConfigError

    text = SHELL_SECTION + LEFT_OUT
    with pytest.raises(ConfigError, match="section 'shell' is for a plugin"):
        load_config(text=text, source="dsh.yml", left_out=lambda name: name == "permissions")
    config = load_config(
        text=text,
        source="dsh.yml",
        left_out=lambda name: name == "permissions",
        starts_agents=False,
    )
    assert config.section("shell") is None
    assert [r.getMessage().split(": ")[0:2] for r in caplog.records] == [
        ["dsh.yml:1:1", "shell"],
        ["dsh.yml:6:7", "agents[0].options.permissions"],
    ]
