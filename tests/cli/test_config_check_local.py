"""`dsh config check` refuses what `dsh run` would refuse when it creates its agent: a
plugin's setting naming `local` (the bundled model) that nothing starts (found by a
user journey: `compaction: {model: local}` was ok for the check, refused by the run)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import dsh

pytestmark = pytest.mark.plugins("compaction")

MODELS = (
    "models:\n  m: {provider: openai-compatible, model: tiny, base_url: 'http://127.0.0.1:9/v1'}\n"
)


@pytest.fixture
def env(cli_env: dict[str, str]) -> dict[str, str]:
    return {**cli_env, "DSH_LOAD_PLUGINS": "compaction"}


def test_a_summariser_named_local_that_nothing_starts_fails_the_check(
    env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "dsh.yml").write_text(MODELS + "model: m\ncompaction: {model: local}\n")
    checked = dsh("config", "check", env=env, cwd=tmp_path)
    ran = dsh("run", "hi", env=env, cwd=tmp_path)

    refused = "compaction.model: 'local' (the bundled model) is not registered"
    assert ran.returncode != 0 and refused in ran.stderr  # what the check must match
    assert checked.returncode == 1, checked.stderr
    assert f"dsh: agent 'main': {tmp_path / 'dsh.yml'}:4:" in checked.stderr
    assert refused in checked.stderr and "ok" not in checked.stdout


@pytest.mark.parametrize(
    "text",
    [
        "model: local\ncompaction: {model: local}\n",  # the run starts the bundled model
        MODELS + "model: m\ncompaction: {model: local}\nagents:\n"
        "  - id: a\n    options: {compaction: {model: m}}\n",  # the agent's own choice
    ],
    ids=["agent-model-local", "agent-option-overrides"],
)
def test_local_that_the_run_would_start_or_not_use_passes_the_check(
    env: dict[str, str], tmp_path: Path, text: str
) -> None:
    (tmp_path / "dsh.yml").write_text(text)
    checked = dsh("config", "check", env=env, cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.endswith(": ok\n")


def test_the_check_chooses_the_model_as_dsh_run_without_m(
    env: dict[str, str], tmp_path: Path
) -> None:
    """``dsh -m NAME config check`` checked the file with NAME's choice (docs: without
    -m): an unknown -m failed the check of a file that is right."""
    (tmp_path / "dsh.yml").write_text(MODELS + "model: m\n")
    checked = dsh("-m", "bogus", "config", "check", env=env, cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.endswith(": ok\n")
