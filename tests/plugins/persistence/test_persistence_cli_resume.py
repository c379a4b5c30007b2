"""``dsh sessions resume``, through ``dsh.cli.main``: the prompt, the model and the agent
options a resumed session runs with.

Every test writes a ``dsh.yml`` whose ``persistence:`` section chooses the backend and
the directory, and passes it with ``-c``: the command must honour it.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from persistence_cli_support import run, store, two_sessions
from pydantic import BaseModel

from dsh import UserMessage
from dsh.cli import main
from dsh.session import Session
from dsh.testing import ScriptedModel, check_invariants, text, tool_calls
from dsh_persistence import PersistenceSettings, open_backend
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

# -- resume -----------------------------------------------------------------------------------


@pytest.fixture
def model(scripted_cli: Callable[[ScriptedModel], ScriptedModel]) -> ScriptedModel:
    """A scripted model that ``dsh`` runs with, as if a plugin provided it."""
    return scripted_cli(ScriptedModel([text("you asked ", "about 1+2")]))


def stored_events(settings: PersistenceSettings, session_id: str) -> list[Any]:
    backend = open_backend(settings)
    try:
        loaded = backend.load(session_id)
    finally:
        backend.close()
    assert loaded is not None
    return loaded.stored.events


def test_resume_runs_one_prompt_and_continues_the_session(
    settings: PersistenceSettings,
    config: Path,
    model: ScriptedModel,
    capsys: pytest.CaptureFixture[str],
) -> None:
    log = two_sessions(settings)
    live = list(Session("live", log.events).history)

    assert run(config, "resume", "new-session", "what did I ask?", model="scripted") == 0
    captured = capsys.readouterr()
    # as `dsh run --session new-session "what did I ask?"` prints it
    assert captured.out == "you asked about 1+2\n"
    assert "dsh: continuing session new-session ('what is 1+2?', 2 turns so far)" in captured.err
    assert "[turn 3 completed" in captured.err
    assert "dsh: model scripted (chosen with -m)" in captured.err
    stored = stored_events(settings, "new-session")
    assert [e.to_dict() for e in stored[: len(log.events)]] == [e.to_dict() for e in log.events]
    assert stored[len(log.events)].data == {"turn": 3}
    assert [e.seq for e in stored] == list(range(len(stored))) and check_invariants(stored) == []
    assert list(model.requests[0].messages[:-1]) == live


def test_resume_takes_what_dsh_run_takes_after_it(
    settings: PersistenceSettings,
    config: Path,
    model: ScriptedModel,
    capsys: pytest.CaptureFixture[str],
) -> None:
    two_sessions(settings)
    argv = ["-c", str(config), "sessions", "resume", "new", "what", "did", "I", "ask?"]
    assert main([*argv, "-m", "scripted", "--json"]) == 0
    assert model.requests[0].messages[-1] == UserMessage(content="what did I ask?")
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[0]["type"] == "turn/start" and lines[-1]["type"] == "turn/end"
    # the prompt's words on both sides of an option (argparse fills `*` once)
    argv = ["-c", str(config), "sessions", "resume", "new", "and", "-m", "scripted", "then?"]
    model.extend(text("so"))
    assert main(argv) == 0
    assert model.requests[1].messages[-1] == UserMessage(content="and then?")


def test_resume_reads_the_prompt_from_stdin(
    settings: PersistenceSettings,
    config: Path,
    model: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    two_sessions(settings)
    monkeypatch.setattr("sys.stdin", io.StringIO("piped prompt\n"))

    assert run(config, "resume", "new", model="scripted") == 0
    assert model.requests[0].messages[-1] == UserMessage(content="piped prompt")
    capsys.readouterr()


def test_resume_without_a_prompt_on_a_terminal_explains(
    settings: PersistenceSettings,
    config: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    two_sessions(settings)

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Terminal())
    assert run(config, "resume", "new-session") == 2
    said = f"resume needs a prompt: dsh -c {config} sessions resume new-session 'what next?'"
    assert said in capsys.readouterr().err
    # the id given, quoted to paste (an id may hold spaces and quotes); both commands
    # with the -c this command was given (the same store)
    log = LogBuilder(start=1_700_000_000.0)
    log.turn("hello", calls=())
    store(settings, "it's new", log)  # a stored one: an id that names none is said so
    assert run(config, "resume", "it's new") == 2
    err = capsys.readouterr().err
    assert f"dsh -c {config} sessions resume 'it'\"'\"'s new' 'what next?'" in err
    assert f"dsh -c {config} chat --session 'it'\"'\"'s new'" in err


def test_resume_with_an_unknown_model_is_one_clear_line_and_changes_nothing(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = two_sessions(settings)

    assert run(config, "resume", "new-session", "hello?", model="no-such-model") == 2
    err = capsys.readouterr().err
    assert err.startswith("dsh: error: ") and "Traceback" not in err
    assert [e.to_dict() for e in stored_events(settings, "new-session")] == [
        e.to_dict() for e in log.events
    ]


def test_resume_without_m_uses_the_model_the_session_was_created_with(
    settings: PersistenceSettings,
    config: Path,
    model: ScriptedModel,
    capsys: pytest.CaptureFixture[str],
) -> None:
    log = LogBuilder(start=1_700_000_000.0)
    log.turn("what is 1+2?")
    meta = {"options": {"model": "scripted", "system_prompt": "Be brief."}}
    store(settings, "with-model", log, meta)

    assert run(config, "resume", "with-model", "and now?") == 0
    err = capsys.readouterr().err
    assert "dsh: model scripted (the model session with-model was created with)" in err
    assert model.requests[0].system == "Be brief."  # no agent in dsh.yml: the stored one


def test_resume_takes_the_agent_options_of_the_config_as_it_is_now(
    settings: PersistenceSettings,
    config: Path,
    model: ScriptedModel,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The session keeps its history and its model; what dsh.yml now says for the agent
    that created it (system prompt, limits, plugin options such as permission rules)
    replaces what was stored: a rule tightened since the session was created applies."""
    log = LogBuilder(start=1_700_000_000.0)
    log.turn("what is 1+2?")
    stored = {"model": "scripted", "system_prompt": "Be brief.", "max_steps": 50, "tone": "dry"}
    store(settings, "with-model", log, {"agent": "reviewer", "options": stored})
    config.write_text(
        config.read_text() + "agents:\n  - id: main\n    system_prompt: Not this one.\n"
        "  - id: reviewer\n    system_prompt: Be thorough.\n    max_steps: 1\n"
    )
    model.script = [tool_calls(("nothing", {})), text("never sent")]

    assert run(config, "resume", "with-model", "and now?") == 1
    assert model.requests[0].system == "Be thorough."  # the creator's, not the first agent's
    assert len(model.requests) == 1  # max_steps: 1 from dsh.yml, not the stored 50
    assert "[turn 2 error" in capsys.readouterr().err


@pytest.mark.plugins("persistence", "permissions")
def test_a_permission_rule_tightened_in_dsh_yml_applies_to_a_resumed_session(
    settings: PersistenceSettings,
    config: Path,
    model: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The session was created when dsh.yml allowed `bash(echo *)`; it denies it now."""
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence,permissions")
    log = LogBuilder(start=1_700_000_000.0)
    log.turn("what is 1+2?")
    allowed = {"model": "scripted", "permissions": {"allow": ["bash(echo *)"]}}
    store(settings, "main-session-1", log, {"agent": "main", "options": allowed})
    config.write_text(
        config.read_text() + "agents:\n  - id: main\n    options:\n"
        "      permissions: {deny: ['bash(echo *)']}\n"
    )
    model.script = [tool_calls(("bash", {"command": "echo ran"})), text("done")]

    assert run(config, "resume", "main-session-1", "go") == 0
    result = model.requests[1].messages[-1]
    assert "Permission denied" in result.content and "ran\n" not in result.content
    capsys.readouterr()


def test_a_resumed_session_keeps_the_stored_options_the_config_does_not_set(
    settings: PersistenceSettings,
    config: Path,
    model: ScriptedModel,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Options given in code (an agent the config does not list) stay; an older session
    without the creator in its meta is matched by its id's `<agent>-session-` prefix."""
    log = LogBuilder(start=1_700_000_000.0)
    log.turn("what is 1+2?")
    stored = {"model": "scripted", "system_prompt": "From code.", "max_steps": 1}
    store(settings, "main-session-1", log, {"options": stored})
    store(settings, "helper-session-2", log, {"options": stored})
    config.write_text(config.read_text() + "agents:\n  - id: main\n    system_prompt: Now.\n")
    model.script = ["one", "two"]

    assert run(config, "resume", "helper-session-2", "and now?") == 0
    assert run(config, "resume", "main-session-1", "and now?") == 0
    assert [r.system for r in model.requests] == ["From code.", "Now."]
    capsys.readouterr()


@pytest.mark.parametrize(
    ("stored_model", "error", "remedy"),
    [
        (
            # `-m openai-compatible:qwen@http://...` registers `openai-compatible:qwen`: the
            # URL is not in the stored name, so the model cannot be built again from it
            "openai-compatible:qwen",
            "the model session from-url was created with ('openai-compatible:qwen') cannot "
            "be built again, as a URL given with -m is not stored: provider "
            "'openai-compatible' needs a base_url",
            "; give it after an @: -m openai-compatible:qwen@URL",
        ),
        (
            "gone",
            "the model session from-url was created with ('gone') is not defined in",
            "; choose a model with -m",
        ),
    ],
)
def test_resume_refuses_a_stored_model_this_config_cannot_build_before_any_call(
    settings: PersistenceSettings,
    config: Path,
    model: ScriptedModel,
    capsys: pytest.CaptureFixture[str],
    stored_model: str,
    error: str,
    remedy: str,
) -> None:
    # a default model and a provider key are there: the conversation must not move to
    # them (another provider may be another company) without -m saying so
    config.write_text(
        config.read_text() + "models:\n  scripted: {provider: scripted}\nmodel: scripted\n"
    )
    log = LogBuilder(start=1_700_000_000.0)
    log.turn("what is 1+2?")
    store(settings, "from-url", log, {"options": {"model": stored_model}})

    assert run(config, "resume", "from-url", "and now?") == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dsh: error: {error}")
    assert err.endswith(f"{remedy}\n") and err.count("\n") == 1
    assert model.requests == []
    assert run(config, "resume", "from-url", "and now?", model="scripted") == 0


def test_resume_says_it_starts_the_local_model_and_why_before_starting_it(
    settings: PersistenceSettings,
    config: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the session was made on the local model: starting it again may mean minutes of
    # building; the user is told first
    from dsh.llm import llama
    from dsh.llm._llama_build import ServerError

    said: list[str] = []

    def start(**_: object) -> None:
        said.append(capsys.readouterr().err)
        raise ServerError("no compiler here")

    monkeypatch.setattr(llama, "start", start)
    for variable in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "DEEPSEEK_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    log = LogBuilder(start=1_700_000_000.0)
    log.turn("what is 1+2?")
    store(settings, "on-local", log, {"options": {"model": "local"}})

    assert run(config, "resume", "on-local", "and now?") == 1  # not a usage error
    assert said[0].startswith(
        "dsh: starting the local model (the model session on-local was created with)"
    )
    assert "the local model could not start: no compiler here" in capsys.readouterr().err


class _Level(BaseModel):
    level: int = 1


@pytest.mark.parametrize(
    ("section", "said"),
    [
        (None, "plugin 'quiet' is loaded but takes no settings"),
        ("tuning", "plugin 'quiet' is loaded but reads its settings from section 'tuning'"),
    ],
    ids=["none", "another section"],
)
def test_resume_refuses_a_section_for_a_loaded_plugin_that_takes_no_settings(
    settings: PersistenceSettings,
    config: Path,
    model: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    section: str | None,
    said: str,
) -> None:
    # as dsh run and dsh config check say it (resume reads the file itself, before its
    # harness: it said "not installed or not loaded" of a plugin that runs, and "takes no
    # settings" of one that registers them for another section)
    import dsh.harness  # binds create_plugin_manager before the patch
    import dsh.plugins
    from dsh import hookimpl

    class Quiet:
        @hookimpl
        def register_settings(self, register: Callable[..., None]) -> None:
            if section is not None:
                register(_Level, section=section)

    real = dsh.plugins.create_plugin_manager

    def with_quiet(plugins: Any = (), **kwargs: Any) -> Any:
        return real([("quiet", Quiet()), *plugins], **kwargs)

    monkeypatch.setattr(dsh.plugins, "create_plugin_manager", with_quiet)
    two_sessions(settings)
    config.write_text(config.read_text() + "quiet:\n  loud: true\n")
    assert run(config, "resume", "new-session", "hello?", model="scripted") == 2
    err = capsys.readouterr().err
    assert said in err, err
    assert model.requests == []


def test_resume_says_a_model_a_plugin_registers_is_not_declared(
    settings: PersistenceSettings,
    config: Path,
    model: ScriptedModel,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # as dsh run says it (resume reads the file itself, before its harness: it said
    # "unknown model" of a name the plugin 'models' registers)
    two_sessions(settings)
    config.write_text(config.read_text() + "model: scripted\n")
    assert run(config, "resume", "new-session", "hello?") == 2
    err = capsys.readouterr().err
    assert "model 'scripted' is registered by plugin 'models' but not declared" in err, err
    assert "add models: {scripted: {provider: scripted}}" in err
    assert model.requests == []
