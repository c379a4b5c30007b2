"""`dsh run --continue` / `--session ID` and the same for `dsh chat`: go on with a stored
session from the command line, as `llm -c` does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import contents, dsh, piped_chat, text_reply
from go_on_support import models_yml, no_plugins, stored_file, url_model


@pytest.mark.plugins("persistence")
def test_continue_goes_on_with_the_session_updated_last_on_its_model(
    model_server: Any, persisting_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Noted."), text_reply("Blue.")])
    (tmp_path / "dsh.yml").write_text(models_yml(server))
    model = "tiny"
    first = dsh("-m", model, "run", "my colour is blue", env=persisting_env, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    stored = stored_file(persisting_env)
    assert f"dsh: new session {stored.stem}\n" in first.stderr  # what to continue

    # no -m: the session keeps the model it was created with
    done = dsh("run", "--continue", "what is my colour?", env=persisting_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Blue.\n"
    assert f"dsh: model {model} (the model session {stored.stem} was created with)" in done.stderr
    assert (
        f"dsh: continuing session {stored.stem} ('my colour is blue', 1 turn so far)" in done.stderr
    )
    assert "[turn 2 completed" in done.stderr
    assert contents(server.bodies()[1]) == ["my colour is blue", "Noted.", "what is my colour?"]
    assert stored_file(persisting_env) == stored  # no new session


@pytest.mark.plugins("persistence")
def test_session_continues_the_session_a_prefix_names_not_the_last_one(
    model_server: Any, persisting_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("One."), text_reply("Two."), text_reply("Back.")])
    model = url_model(server)
    assert (
        dsh("-m", model, "run", "first session", env=persisting_env, cwd=tmp_path).returncode == 0
    )
    older = stored_file(persisting_env)
    assert (
        dsh("-m", model, "run", "second session", env=persisting_env, cwd=tmp_path).returncode == 0
    )

    done = dsh(
        "run", "-m", model, "--session", older.stem[:-4], "again", env=persisting_env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert contents(server.bodies()[2]) == ["first session", "One.", "again"]


@pytest.mark.plugins("persistence")
def test_a_script_continues_the_session_json_names_on_every_line(
    model_server: Any, persisting_env: dict[str, str], tmp_path: Path
) -> None:
    """`dsh run --json` begins every line with the session's id, so a script can go on
    with that session (`--session ID`) without reading stderr."""
    import json

    server = model_server([text_reply("Noted."), text_reply("Blue.")])
    (tmp_path / "dsh.yml").write_text(models_yml(server))
    first = dsh(
        "-m", "tiny", "run", "--json", "my colour is blue", env=persisting_env, cwd=tmp_path
    )
    assert first.returncode == 0, first.stderr
    lines = [json.loads(line) for line in first.stdout.splitlines()]
    (session,) = {line["session"] for line in lines}
    assert next(iter(lines[0])) == "session"  # first: `jq -r .session | head -1` reads it
    stored = stored_file(persisting_env)
    assert session == stored.stem
    stored_events = [json.loads(line) for line in stored.read_text().splitlines()[1:]]
    assert [{k: v for k, v in line.items() if k != "session"} for line in lines] == stored_events

    done = dsh("run", "--session", session, "what is my colour?", env=persisting_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Blue.\n"


@pytest.mark.plugins("persistence")
def test_chat_continue_goes_on_with_the_last_session(
    model_server: Any, persisting_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Noted."), text_reply("Seven.")])
    model = url_model(server)
    assert dsh("-m", model, "run", "remember 7", env=persisting_env, cwd=tmp_path).returncode == 0
    done = dsh(
        "-m", model, "chat", "--continue", env=persisting_env, cwd=tmp_path, stdin="which number?\n"
    )
    assert done.returncode == 0, done.stderr
    assert "Seven." in done.stdout
    assert contents(server.bodies()[1]) == ["remember 7", "Noted.", "which number?"]


@pytest.mark.plugins("persistence")
@pytest.mark.parametrize(
    ("flags", "error"),
    [
        (["--continue"], "--continue: there is no stored session yet; start one without it"),
        (["--session", "nope"], "no stored session 'nope' (`dsh sessions list` shows them)"),
    ],
)
def test_nothing_to_continue_is_one_clear_line_before_any_model_call(
    model_server: Any, persisting_env: dict[str, str], tmp_path: Path, flags: list[str], error: str
) -> None:
    server = model_server([text_reply("ok")])
    done = dsh("-m", url_model(server), "run", *flags, "hi", env=persisting_env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"dsh: error: {error}\n"
    assert server.bodies() == []


@pytest.mark.plugins("persistence")
def test_continue_without_a_plugin_that_stores_sessions_says_what_left_it_out(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("ok")])
    chat = piped_chat(server, "hi\n", {**cli_env}, tmp_path, plugins="")
    assert chat.returncode == 0  # the chat itself works without persistence
    env = no_plugins(cli_env)
    done = dsh(
        "-m",
        url_model(server),
        "run",
        "--continue",
        "hi",
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert (
        "--continue: no plugin stores sessions (dsh-persistence is installed but "
        "DSH_LOAD_PLUGINS, empty, leaves it out; add persistence to it, or give -p "
        "persistence)\n" in done.stderr
    )
    assert len(server.bodies()) == 1


@pytest.mark.plugins("persistence")
@pytest.mark.parametrize(
    ("command", "switch", "said"),
    [
        (
            "run",
            {"DSH_LOAD_PLUGINS": "persistence", "select": "no:persistence"},
            "dsh-persistence is installed but disabled by -p no:persistence; leave that out "
            "to store and continue sessions",
        ),
        (
            "chat",
            {"DSH_LOAD_PLUGINS": "persistence", "select": "no:persistence"},
            "dsh-persistence is installed but disabled by -p no:persistence; leave that out "
            "to store and continue sessions",
        ),
        pytest.param(
            "run",
            {"DSH_LOAD_PLUGINS": "compaction"},
            "dsh-persistence is installed but DSH_LOAD_PLUGINS=compaction leaves it out; add "
            "persistence to it, or give -p persistence",
            marks=pytest.mark.plugins("compaction"),
        ),
        (
            "run",
            {"DSH_DISABLE_PLUGIN_AUTOLOAD": "1"},
            "dsh-persistence is installed but DSH_DISABLE_PLUGIN_AUTOLOAD loads only what -p "
            "names; give -p persistence",
        ),
    ],
    ids=["blocked-run", "blocked-chat", "load-plugins", "autoload-off"],
)
def test_continue_with_persistence_turned_off_names_the_switch_that_did_it(
    cli_env: dict[str, str], tmp_path: Path, command: str, switch: dict[str, str], said: str
) -> None:
    """The user turned the plugin off on purpose: "install dsh-persistence" would send them
    to install what they have; the message names what turned it off and how to undo it."""
    env = {k: v for k, v in cli_env.items() if k != "DSH_LOAD_PLUGINS"}
    env.update({k: v for k, v in switch.items() if k != "select"})
    select = ["-p", switch["select"]] if "select" in switch else []
    model = "openai-compatible:tiny@http://127.0.0.1:9"  # never asked
    prompt, typed = (
        (["hi"], "") if command == "run" else ([], "hi\n")
    )  # an empty chat starts nothing
    done = dsh(
        *select, "-m", model, command, "--continue", *prompt, env=env, cwd=tmp_path, stdin=typed
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"dsh: error: --continue: no plugin stores sessions ({said})\n"


def test_continue_and_session_are_one_choice(cli_env: dict[str, str], tmp_path: Path) -> None:
    done = dsh("run", "--continue", "--session", "x", "hi", env=cli_env, cwd=tmp_path)
    assert done.returncode == 2
    assert "not allowed with argument" in done.stderr


@pytest.mark.plugins("persistence")
def test_a_session_continued_elsewhere_is_told_the_workspace_its_tools_now_run_in(
    model_server: Any, persisting_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Noted."), text_reply("Here.")])
    model = url_model(server)
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    assert dsh("-m", model, "run", "hello", env=persisting_env, cwd=first).returncode == 0
    stored = stored_file(persisting_env)
    done = dsh(
        "-m",
        model,
        "run",
        "--session",
        stored.stem,
        "where are we?",
        env=persisting_env,
        cwd=second,
    )
    assert done.returncode == 0, done.stderr
    system = [m["content"] for m in server.bodies()[1]["messages"] if m["role"] == "system"]
    assert system == [
        f"You are dsh, a coding agent working in the directory {second}. "
        + (
            "Use the tools to read, search and change files and to run commands there. Be "
            "brief; say what you did."
        )
    ]


@pytest.mark.plugins("persistence")
def test_continue_takes_the_last_session_of_this_workspace_not_a_newer_one_elsewhere(
    model_server: Any, persisting_env: dict[str, str], tmp_path: Path
) -> None:
    """One store (the default directory is per user) holds every project's sessions:
    --continue goes on with this workspace's, as `dsh sessions show` shows it."""
    server = model_server([text_reply("A."), text_reply("B."), text_reply("A again.")])
    model = url_model(server)
    project_a, project_b = tmp_path / "a", tmp_path / "b"
    project_a.mkdir()
    project_b.mkdir()
    assert (
        dsh("-m", model, "run", "in project a", env=persisting_env, cwd=project_a).returncode == 0
    )
    assert (
        dsh("-m", model, "run", "in project b", env=persisting_env, cwd=project_b).returncode == 0
    )

    done = dsh("-m", model, "run", "--continue", "go on", env=persisting_env, cwd=project_a)
    assert done.returncode == 0, done.stderr
    assert "('in project a', 1 turn so far)" in done.stderr
    assert contents(server.bodies()[2]) == ["in project a", "A.", "go on"]
    shown = dsh("sessions", "show", env=persisting_env, cwd=project_b)
    assert shown.returncode == 0, shown.stderr
    assert "in project b" in shown.stdout and "in project a" not in shown.stdout
    listed = dsh("sessions", "list", "--json", env=persisting_env, cwd=tmp_path)
    assert {row["title"]: row["workspace"] for row in json.loads(listed.stdout)} == {
        "in project a": str(project_a.resolve()),
        "in project b": str(project_b.resolve()),
    }


@pytest.mark.plugins("persistence")
def test_continue_where_no_session_was_started_names_the_last_one_and_how_to_take_it(
    model_server: Any, persisting_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Noted.")])
    model = url_model(server)
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    assert dsh("-m", model, "run", "hello", env=persisting_env, cwd=project).returncode == 0
    stored = stored_file(persisting_env)

    done = dsh("-m", model, "run", "--continue", "go on", env=persisting_env, cwd=elsewhere)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"dsh: error: --continue: no stored session last ran in {elsewhere.resolve()} "
        f"(the last one, {stored.stem}, is from {project.resolve()}; --session "
        f"{stored.stem} continues it here)\n"
    )
    assert len(server.bodies()) == 1  # only the first run's request
    shown = dsh("sessions", "show", env=persisting_env, cwd=elsewhere)
    assert shown.returncode != 0 and f"is from {project.resolve()}" in shown.stderr


@pytest.mark.plugins("persistence")
def test_a_system_prompt_of_the_config_is_kept_when_continued(
    model_server: Any, persisting_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Noted."), text_reply("Here.")])
    (tmp_path / "dsh.yml").write_text(
        "agents:\n  - id: main\n    system_prompt: Answer in French.\n"
    )
    model = url_model(server)
    assert dsh("-m", model, "run", "hello", env=persisting_env, cwd=tmp_path).returncode == 0
    (tmp_path / "dsh.yml").unlink()  # the stored options alone give it now
    done = dsh("-m", model, "run", "--continue", "again", env=persisting_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    system = [m["content"] for m in server.bodies()[1]["messages"] if m["role"] == "system"]
    assert system == ["Answer in French."]


@pytest.mark.plugins("persistence")
def test_s_gives_the_system_prompt_of_a_new_or_a_continued_session(
    model_server: Any, persisting_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Oui."), text_reply("Yes.")])
    (tmp_path / "dsh.yml").write_text("agents:\n  - id: main\n    system_prompt: Be kind.\n")
    model = url_model(server)
    assert (
        dsh(
            "-m", model, "run", "-s", "Answer in French.", "hi", env=persisting_env, cwd=tmp_path
        ).returncode
        == 0
    )
    done = dsh(
        "run",
        "-m",
        model,
        "--continue",
        "--system",
        "Be brief.",
        "again",
        env=persisting_env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    systems = [
        [m["content"] for m in body["messages"] if m["role"] == "system"]
        for body in server.bodies()
    ]
    assert systems == [["Answer in French."], ["Be brief."]]


def test_continue_where_persistence_is_not_installed_says_to_install_it() -> None:
    """The remaining case, in process: a manager that knows of no installed plugin."""
    from dsh._cli_continue import no_store
    from dsh.plugins import create_plugin_manager

    pm = create_plugin_manager(load_entry_points=False)
    pm.installed = {}
    assert no_store(pm, env={}) == (  # not "or enable it with -p persistence": no use
        "dsh-persistence is not installed; install it to store and continue sessions"
    )
    assert no_store(pm, env={"DSH_LOAD_PLUGINS": ""}) == no_store(pm, env={})


def test_persistence_installed_and_standing_in_under_another_name_is_not_told_to_install() -> None:
    """Installed, and its module registered under another name (so not left out), yet
    no service: enabling it is the way, not installing it."""
    import types

    from dsh._cli_continue import no_store
    from dsh.plugins import create_plugin_manager

    pm = create_plugin_manager(load_entry_points=False)
    pm.installed = {"persistence": "stand_in"}
    pm.register(types.ModuleType("stand_in"), "other")
    assert no_store(pm, env={}) == "enable dsh-persistence with -p persistence"
