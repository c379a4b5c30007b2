"""The parts of `dsh run` and `dsh sessions resume` that need no model server
(_cli_agent.py), with scripted models: stdin, a session that cannot be saved, step
limits, and the options a resumed session runs with. What the mutation review of the
command line found no test for (docs/cli.md).
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from cli_m_args_support import (
    Install,
    _quiet_env,  # noqa: F401 (an autouse fixture)
)
from loop_support import Models

from dsh import hookimpl
from dsh._cli_prompt import prompt_text
from dsh.cli import main
from dsh.testing import ScriptedModel, text

# -- the prompt ------------------------------------------------------------------------


def test_text_on_stdin_keeps_its_indentation(monkeypatch: pytest.MonkeyPatch) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(b"\n    indented()\n  two\n\n"))
    monkeypatch.setattr(sys, "stdin", stdin)
    assert prompt_text(["fix", "-"]) == "fix\n\n    indented()\n  two"


# -- dsh run, in-process ---------------------------------------------------------------


def test_a_session_that_could_not_be_saved_fails_the_run_with_one_line(
    with_plugins: Install, capsys: pytest.CaptureFixture[str]
) -> None:
    # docs/cli.md: status 1 if "the session could not be saved (a failed flush of the
    # persistence plugin, reported once on stderr)"
    class BrokenStore:
        @hookimpl
        def session_flush(self, session: Any) -> None:
            raise OSError("disk full")

    with_plugins(("models", Models(ScriptedModel([text("ok")]))), ("store", BrokenStore()))
    assert main(["-m", "scripted", "run", "hi"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "ok\n"
    assert "[turn 1 completed" in captured.err
    assert captured.err.count("disk full") == 1, captured.err


def test_the_run_of_a_remote_model_has_no_step_limit_of_its_own(
    with_plugins: Install, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[dict[str, Any]] = []

    class Watch:
        @hookimpl
        def agent_created(self, agent: Any) -> None:
            seen.append(dict(agent.options))

    with_plugins(("models", Models(ScriptedModel([text("ok")]))), ("watch", Watch()))
    assert main(["-m", "scripted", "run", "hi"]) == 0
    assert seen and "max_steps" not in seen[-1]
    assert seen[-1]["model"] == "scripted"


def test_agent_options_bound_the_local_models_steps() -> None:
    from dsh._cli_agent import LOCAL_MAX_STEPS, agent_options

    local = agent_options(None, "local", Path("/w"), local=True)
    assert local["max_steps"] == LOCAL_MAX_STEPS
    assert local["model"] == "local"
    assert local["system_prompt"].startswith("You are dsh, a coding agent working in ")
    assert "/w" in local["system_prompt"]
    assert "max_steps" not in agent_options(None, "m", Path("/w"), local=False)


# -- resume_options (what --continue, /resume and `dsh sessions resume` use) -----------


def fake_harness(*agents: tuple[str, dict[str, Any]], models: tuple[str, ...] = ()) -> Any:
    entries = [
        SimpleNamespace(id=name, own_options=lambda own=own: dict(own)) for name, own in agents
    ]
    config = SimpleNamespace(models={name: object() for name in models}, agents=entries)
    return SimpleNamespace(config=config, workspace=Path("/w"))


def stored(session_id: str, **meta: Any) -> Any:
    return SimpleNamespace(id=session_id, meta=meta)


def test_resume_options_layer_config_over_stored_over_defaults_on_the_given_model() -> None:
    from dsh._cli_agent import resume_options

    harness = fake_harness(("helper", {"max_steps": 3, "tone": "dry"}), ("other", {"x": 1}))
    session = stored("s1", agent="helper", options={"model": "old", "tone": "wet", "kept": 1})
    options = resume_options(harness, session, "new")
    assert options["model"] == "new"  # the model given (-m), not the stored one
    assert options["tone"] == "dry" and options["max_steps"] == 3  # the config now
    assert options["kept"] == 1  # stored, and the config does not say
    assert "x" not in options
    assert options["system_prompt"].startswith("You are dsh")


def test_resume_options_of_an_older_session_take_the_creator_from_its_id() -> None:
    from dsh._cli_agent import resume_options

    harness = fake_harness(("helper", {"tone": "dry"}))
    options = resume_options(harness, stored("helper-session-1f", options={}), "m")
    assert options["tone"] == "dry"


def test_resume_options_bound_only_the_bundled_local_models_steps() -> None:
    from dsh._cli_agent import LOCAL_MAX_STEPS, resume_options

    bundled = resume_options(fake_harness(), stored("s", options={}), "local")
    assert bundled["max_steps"] == LOCAL_MAX_STEPS
    configured = resume_options(fake_harness(models=("local",)), stored("s", options={}), "local")
    assert "max_steps" not in configured


def test_a_session_stored_without_a_model_has_no_model_to_prefer() -> None:
    from dsh.llm.choose import stored_preference

    assert stored_preference(stored("s", options={"model": ""})) is None
    assert stored_preference(stored("s", options={"model": "m"})) == (
        "m",
        "the model session s was created with",
    )
