"""`dsh run` with a dsh.yml: the first agent's settings, and a configured model named
`local` (which must not start the bundled llama-server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import dsh, text_reply


@pytest.fixture
def no_llama(cli_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """``cli_env`` where starting the bundled llama-server fails at once (its cache
    directory cannot be made), so a test that wrongly starts it fails fast, offline."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    return {**cli_env, "DSH_LLAMA_CACHE": str(blocker / "llama"), "PIP_NO_INDEX": "1"}


def models_yml(url: str, *names: str) -> str:
    entries = "".join(
        f"  {name}:\n    provider: openai-compatible\n    model: tiny\n    base_url: {url}\n"
        for name in names
    )
    return f"models:\n{entries}"


def stored_options(env: dict[str, str]) -> dict[str, Any]:
    (stored,) = Path(env["DSH_PERSISTENCE_DIR"]).glob("*.jsonl")
    header = json.loads(stored.read_text().splitlines()[0])
    options: dict[str, Any] = header["meta"]["options"]
    return options


@pytest.mark.plugins("persistence")
def test_the_first_agent_gives_the_model_and_every_option(
    model_server: Any, no_llama: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("ok")])
    (tmp_path / "dsh.yml").write_text(
        models_yml(server.url, "m")
        + "agents:\n  - id: helper\n    model: m\n    queue_mode: one-at-a-time\n"
        + "    max_steps: 3\n    options: {tone: dry}\n"
    )
    env = {**no_llama, "DSH_LOAD_PLUGINS": "persistence"}
    done = dsh("run", "hi", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "starting the local model" not in done.stderr
    assert "dsh: model m (the model of agent 'helper' in " in done.stderr
    assert len(server.bodies()) == 1
    options = stored_options(env)
    assert options["model"] == "m"
    assert options["queue_mode"] == "one-at-a-time"
    assert options["max_steps"] == 3
    assert options["tone"] == "dry"


def test_dash_m_overrides_the_first_agents_model(
    model_server: Any, no_llama: dict[str, str], tmp_path: Path
) -> None:
    unused, server = model_server([]), model_server([text_reply("ok")])
    (tmp_path / "dsh.yml").write_text(
        models_yml(unused.url, "m")
        + models_yml(server.url, "n").removeprefix("models:\n")
        + "agents:\n  - id: helper\n    model: m\n"
    )
    done = dsh("-m", "n", "run", "hi", env=no_llama, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "dsh: model n (chosen with -m)" in done.stderr
    assert unused.bodies() == [] and len(server.bodies()) == 1


@pytest.mark.parametrize("how", ["model: local", "-m local"])
def test_a_configured_model_named_local_is_used_as_configured(
    model_server: Any, no_llama: dict[str, str], tmp_path: Path, how: str
) -> None:
    server = model_server([text_reply("from the configured local")])
    default = "model: local\n" if how == "model: local" else ""
    (tmp_path / "dsh.yml").write_text(default + models_yml(server.url, "local"))
    flags = ["-m", "local"] if how == "-m local" else []
    done = dsh(*flags, "run", "hi", env=no_llama, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "starting the local model" not in done.stderr
    assert done.stdout == "from the configured local\n"


@pytest.mark.plugins("persistence")
def test_a_session_that_cannot_be_saved_fails_the_run_before_the_model_is_called(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("ok")])
    (tmp_path / "blocker").write_text("")
    (tmp_path / "dsh.yml").write_text(f"persistence:\n  directory: {tmp_path}/blocker/sessions\n")
    env = {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}
    done = dsh("-m", f"openai-compatible:tiny@{server.url}", "run", "hi", env=env, cwd=tmp_path)
    assert (done.stdout, done.returncode) == ("", 2)
    assert server.bodies() == []  # nothing was answered that could not be saved
    assert done.stderr.count("\n") == 1, done.stderr
    # the plugin's message, not how the core called it (that is for -v)
    assert done.stderr.startswith(f"dsh: error: {tmp_path}/blocker/sessions (persistence.")
    assert done.stderr.endswith(": Not a directory (plugin 'persistence')\n")
    assert "Traceback" not in done.stderr
