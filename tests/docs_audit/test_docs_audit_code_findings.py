"""Where the docs were right and the code was not (found by the docs audit, fixed in the
code since): each was a strict xfail until its fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import dsh

from dsh.config import load_config
from dsh.errors import ConfigError


def test_an_agent_entry_with_two_problems_has_both_found() -> None:
    """config.md: "If the file has several problems, all are found ... `dsh config
    check` prints each on its own line"."""
    text = (
        "models:\n  sonnet: {provider: anthropic}\n"
        "agents:\n  - id: a\n    model: sonet\n    queue_mode: one-at-a-tim\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_config(text=text)
    paths = sorted(problem.path for problem in caught.value.problems)
    assert paths == ["agents[0].model", "agents[0].queue_mode"]


@pytest.mark.plugins("persistence")
def test_sessions_resume_without_an_id_does_not_call_the_prompt_required(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """persistence.md: the prompt of `dsh sessions resume ID` may come on stdin (`echo
    "and the tests?" | dsh sessions resume main-session-3f`); `--help` says "default:
    stdin". Without an id, the usage error should say the id is missing, not the prompt."""
    done = dsh("sessions", "resume", env=cli_env, cwd=tmp_path)
    assert done.returncode == 2
    assert "the following arguments are required: id\n" in done.stderr
