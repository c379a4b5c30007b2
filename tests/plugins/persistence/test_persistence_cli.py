"""``dsh sessions list | show | resume | delete``, through ``dsh.cli.main``.

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

from dsh import UserMessage
from dsh.cli import main
from dsh.session import Session
from dsh.testing import ScriptedModel, check_invariants, text, tool_calls
from dsh_persistence import PersistenceSettings, SessionInfo, open_backend
from dsh_persistence.testing import JsonlDamage, LogBuilder

pytestmark = pytest.mark.plugins("persistence")


def store(
    settings: PersistenceSettings,
    session_id: str,
    log: LogBuilder,
    meta: dict[str, Any] | None = None,
) -> None:
    backend = open_backend(settings)
    try:
        info = SessionInfo(session_id, log.events[0].time, meta=meta or {}, title="x")
        backend.append(info, log.events, durable=True)
    finally:
        backend.close()


def two_sessions(settings: PersistenceSettings) -> LogBuilder:
    old = LogBuilder(start=1_600_000_000.0)
    old.turn("an old question", calls=())
    store(settings, "old-session", old)
    new = LogBuilder(start=1_700_000_000.0)
    new.turn("what is 1+2?")
    new.turn("thanks", calls=())
    store(settings, "new-session", new)
    return new


def run(config: Path, *args: str, model: str | None = None) -> int:
    chosen = ["-m", model] if model else []
    return main(["-c", str(config), *chosen, "sessions", *args])


def test_list_shows_sessions_newest_first(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    two_sessions(settings)

    assert run(config, "list") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ID", "UPDATED", "TURNS", "WORKSPACE", "TITLE"]
    assert [line.split()[0] for line in lines[1:]] == ["new-session", "old-session"]
    assert run(config, "list", "--json", "-n", "1") == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["id"] == "new-session" and row["turns"] == 2


def test_list_with_no_sessions_says_where_it_looked(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(config, "list") == 0
    captured = capsys.readouterr()
    where = (
        settings.database_path() if settings.backend == "sqlite" else settings.session_directory()
    )
    assert (captured.out, captured.err) == ("", f"no stored sessions in {where}\n")


def test_show_prints_a_readable_transcript(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    two_sessions(settings)

    assert run(config, "show", "new") == 0  # a unique prefix is enough
    out = capsys.readouterr().out
    for expected in (
        "session new-session",
        "--- turn 1 ---",
        "you: what is 1+2?",
        "assistant: let me see",
        '  -> add {"a": 1, "b": 2}',
        "  <- 3",
        "--- turn 1 ended: completed, 20 in / 4 out ---",
    ):
        assert expected in out


def test_show_without_an_id_shows_the_session_updated_last(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(config, "show") == 2
    assert capsys.readouterr().err == "dsh: error: there is no stored session yet\n"
    two_sessions(settings)
    assert run(config, "show") == 0
    assert capsys.readouterr().out.startswith("session new-session, created ")


def test_show_json_prints_the_stored_events(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = two_sessions(settings)

    assert run(config, "show", "new-session", "--json") == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows == [event.to_dict() for event in log.events]


def test_show_says_when_the_last_turn_was_closed_on_load(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = LogBuilder()
    log.turn("go on")
    cut = LogBuilder()
    cut.events = log.events[:7]  # the tool call is logged, its result is not
    store(settings, "cut", cut)

    assert run(config, "show", "cut") == 0
    out = capsys.readouterr().out
    assert "ended: interrupted" in out and "outcome unknown" in out
    assert "closing events were added on load" in out


def test_delete_removes_sessions_and_reports_unknown_ones(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    two_sessions(settings)

    assert run(config, "delete", "old-session", "nope", "new-") == 1
    captured = capsys.readouterr()
    assert captured.out == "deleted old-session\n"
    assert captured.err == (
        "dsh: error: no stored session 'nope'\n"
        "dsh: error: no stored session 'new-' (delete takes whole ids: new-session?)\n"
    )
    assert run(config, "list", "--json") == 0
    assert [row["id"] for row in json.loads(capsys.readouterr().out)] == ["new-session"]


@pytest.mark.parametrize(
    ("wanted", "message"),
    [("zzz", "no stored session 'zzz'"), ("", "'' matches 2 sessions: new-session, old-session")],
)
def test_unknown_or_ambiguous_ids_are_one_clear_line(
    settings: PersistenceSettings,
    config: Path,
    capsys: pytest.CaptureFixture[str],
    wanted: str,
    message: str,
) -> None:
    two_sessions(settings)

    assert run(config, "show", wanted) == 2
    err = capsys.readouterr().err
    assert err.startswith("dsh: error: ") and message in err and "Traceback" not in err


def test_an_ambiguous_prefix_says_how_many_it_did_not_list(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for index in range(7):
        log = LogBuilder(start=1_700_000_000.0 + index)
        log.turn("hi", calls=())
        store(settings, f"s-{index}", log)

    assert run(config, "show", "s-") == 2
    assert "'s-' matches 7 sessions: s-0, s-1, s-2, s-3, s-4 and 2 more" in capsys.readouterr().err


@pytest.mark.parametrize("limit", ["0", "-1", "two"])
def test_list_refuses_a_limit_below_one(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str], limit: str
) -> None:
    two_sessions(settings)
    with pytest.raises(SystemExit) as info:
        run(config, "list", "-n", limit)
    assert info.value.code == 2
    assert f"argument -n/--limit: {limit!r} is not a whole number of 1 or more" in (
        capsys.readouterr().err
    )


def test_a_newer_session_file_is_refused_saying_so(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if settings.backend != "jsonl":
        pytest.skip("per-session format versions are a JSONL header field")
    two_sessions(settings)
    JsonlDamage(settings.session_directory()).make_newer("new-session")

    assert run(config, "show", "new-session") == 2
    assert "newer than this dsh-persistence reads" in capsys.readouterr().err


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
    assert "resume needs a prompt" in capsys.readouterr().err


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

    assert run(config, "resume", "on-local", "and now?") == 2
    assert said[0].startswith(
        "dsh: starting the local model (the model session on-local was created with)"
    )
    assert "the local model could not start: no compiler here" in capsys.readouterr().err
