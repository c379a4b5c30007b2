"""A built-in provider named with -m whose key is unset is refused before anything is
made (status 2), as the first request would fail: it was found only then, after the
session had been created and stored (a first-run review). ``openai-compatible`` needs
no key; a provider pointed at a base_url of its own sends its key only if it is set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_support import dsh, text_reply


@pytest.mark.plugins("persistence")  # that no session is stored
@pytest.mark.parametrize(
    ("command", "stdin"), [(["run", "hi"], "hi\n"), (["chat"], "hi\n"), (["chat"], "")]
)
def test_a_built_in_provider_without_its_key_is_refused_before_a_session(
    cli_env: dict[str, str], tmp_path: Path, command: list[str], stdin: str
) -> None:
    """An empty chat script is checked as its first line would be (it said 0)."""
    env = {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}
    done = dsh("-m", "deepseek:deepseek-chat", *command, env=env, cwd=tmp_path, stdin=stdin)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "dsh: error: -m deepseek:deepseek-chat: the environment variable DEEPSEEK_API_KEY "
        "is not set (it holds deepseek's API key; api_key_env in a models: entry of "
        "dsh.yml names another)"
    )
    assert "new session" not in done.stderr
    sessions = tmp_path / "sessions"
    assert not sessions.exists() or not list(sessions.iterdir())


def test_a_model_needing_no_key_still_runs_with_none_set(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("one"), text_reply("two")])
    # openai-compatible sends no key; openai at a base_url of its own, its key if set
    for shorthand, said in (("openai-compatible", "one"), ("openai", "two")):
        done = dsh("-m", f"{shorthand}:tiny@{server.url}", "run", "hi", env=cli_env, cwd=tmp_path)
        assert (done.returncode, done.stdout) == (0, f"{said}\n"), done.stderr


@pytest.mark.plugins("persistence")
def test_a_continued_sessions_provider_without_its_key_is_refused_before_its_turn(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Given with its base_url, stored without it: continued, it is the provider's own
    endpoint, whose key is unset."""
    env = {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}
    server = model_server([text_reply("one")])
    first = dsh("-m", f"deepseek:deepseek-chat@{server.url}", "run", "hi", env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    [stored] = (tmp_path / "sessions").iterdir()
    before = stored.read_bytes()
    done = dsh("run", "--continue", "again", env=env, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"dsh: error: the model session {stored.stem} was created with "
        "(deepseek:deepseek-chat): the environment variable DEEPSEEK_API_KEY is not set (it "
        "holds deepseek's API key; api_key_env in a models: entry of dsh.yml names another)"
    )
    assert stored.read_bytes() == before  # no turn was added to it


@pytest.mark.parametrize("blank", ["", "  "])
def test_a_built_in_providers_key_set_blank_is_said_to_be_blank(
    cli_env: dict[str, str], tmp_path: Path, blank: str
) -> None:
    """``OPENAI_API_KEY=' '`` holds no key, but it is set: "not set" misled."""
    env = {**cli_env, "OPENAI_API_KEY": blank}
    done = dsh("-m", "openai:gpt-4.1-mini", "run", "hi", env=env, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "dsh: error: -m openai:gpt-4.1-mini: the environment variable OPENAI_API_KEY "
        "is set but blank (it holds openai's API key; api_key_env in a models: entry of "
        "dsh.yml names another)"
    )
