"""`dsh`'s argument handling, error reporting and exit statuses (cli.py), and the parts
of `dsh run` that need no model server (_cli_agent.py), run in-process through
``dsh.cli.main`` with scripted models: what the mutation review of the command line
found no test for (docs/cli.md)."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from dsh import hookimpl
from dsh.cli import _prompt, main
from dsh.commands import Command, CommandContext
from dsh.errors import DshError
from dsh.testing import ScriptedModel, text

Install = Callable[..., None]


@pytest.fixture
def with_plugins(monkeypatch: pytest.MonkeyPatch) -> Install:
    """``with_plugins(("name", plugin), ..., entry_points=False)``: `dsh` loads these
    plugins too (and the installed ones only if ``entry_points``)."""
    # dsh.harness binds create_plugin_manager when first imported: import it first
    import dsh.harness
    import dsh.plugins

    assert dsh.harness is not None
    real = dsh.plugins.create_plugin_manager

    def install(*plugins: tuple[str, object], entry_points: bool = False) -> None:
        def create(select: Any = (), load_entry_points: bool = True, **kwargs: Any) -> Any:
            return real(
                list(plugins),
                select=select,
                load_entry_points=entry_points and load_entry_points,
                **kwargs,
            )

        monkeypatch.setattr(dsh.plugins, "create_plugin_manager", create)

    return install


class Models:
    def __init__(self, *models: ScriptedModel) -> None:
        self.models = models

    @hookimpl
    def register_models(self, register: Any) -> None:
        for model in self.models:
            register(model)


def commands(*registered: Command) -> object:
    class Commands:
        @hookimpl
        def register_commands(self, register: Any) -> None:
            for command in registered:
                register(command)

    return Commands()


@pytest.fixture(autouse=True)
def _quiet_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.endswith("_API_KEY") or name == "DSH_CONFIG":
            monkeypatch.delenv(name)
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "")
    monkeypatch.chdir(tmp_path)


# -- options and parsing ---------------------------------------------------------------


def test_the_long_forms_of_the_global_options_take_a_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `--config FILE` / `--model MODEL` before the command, as -c / -m
    path = tmp_path / "other.yml"
    path.write_text("models: {}\n")
    assert main(["--config", str(path), "config", "check"]) == 0
    assert capsys.readouterr().out == f"{path}: ok\n"
    assert main(["--model", "nonsense:thing", "run", "hi"]) == 2
    assert "unknown provider 'nonsense'" in capsys.readouterr().err


def test_no_command_prints_the_help_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: dsh ")
    assert "COMMAND" in out


def test_config_needs_its_action(capsys: pytest.CaptureFixture[str]) -> None:
    (Path.cwd() / "dsh.yml").write_text("models: {}\n")
    with pytest.raises(SystemExit) as stopped:
        main(["config"])
    assert stopped.value.code == 2
    captured = capsys.readouterr()
    # the actions are named: `dsh config` alone must say what it takes
    assert "the following arguments are required: {check}" in captured.err
    assert captured.out == ""


def test_help_and_version_work_when_a_plugin_named_with_p_cannot_load(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from dsh import __version__

    assert main(["-p", "no-such-plugin", "version"]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"dsh-core {__version__}\n"
    assert captured.err.startswith("dsh: warning: no plugin named no-such-plugin")
    assert "(only dsh-core is loaded)" in captured.err
    assert main(["-p", "no-such-plugin"]) == 0  # no command: the help
    assert capsys.readouterr().out.startswith("usage: dsh ")
    assert main(["-p", "no-such-plugin", "plugins"]) == 2  # any other command stops


def test_version_v_marks_the_installed_plugins_that_are_not_loaded(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from dsh.plugins import installed_plugins

    if not installed_plugins():
        pytest.skip("no dsh plugin is installed")
    assert main(["version", "-v"]) == 0  # DSH_LOAD_PLUGINS="": none is loaded
    lines = capsys.readouterr().out.splitlines()[1:]
    assert lines and all(line.endswith(", not loaded)") for line in lines)


# -- -v and error reporting ------------------------------------------------------------


def test_v_shows_the_traceback_of_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    # docs/cli.md: "-v shows tracebacks"; the status stays 2 (a script tells a usage
    # error from a failed turn by it, with -v or without)
    for argv, said in [
        (["-v", "-m", "nonsense:thing", "run", "hi"], "unknown provider 'nonsense'"),
        (["-v", "-p", "no-such-plugin", "plugins"], "no plugin named no-such-plugin"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("Traceback (most recent call last):")
        assert "dsh.errors" in err or "DshError" in err
        assert err.rstrip().splitlines()[-1].startswith("dsh: error: ")
        assert said in err.rstrip().splitlines()[-1]


def test_a_plugin_commands_dsh_error_is_its_message_with_status_2(
    with_plugins: Install, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuse(context: CommandContext) -> int:
        raise DshError("that cannot be done")

    with_plugins(("toys", commands(Command("refuse", "refuse", refuse))))
    assert main(["refuse"]) == 2
    assert capsys.readouterr().err == "dsh: error: that cannot be done\n"


def test_a_plugin_command_returning_nothing_exits_0(
    with_plugins: Install, capsys: pytest.CaptureFixture[str]
) -> None:
    def quiet(context: CommandContext) -> None:
        print("done")

    with_plugins(("toys", commands(Command("quiet", "quiet", quiet))))
    assert main(["quiet"]) == 0
    assert capsys.readouterr() == ("done\n", "")


def test_a_group_with_one_broken_pipe_among_other_errors_is_a_plugin_failure(
    with_plugins: Install, capsys: pytest.CaptureFixture[str]
) -> None:
    def mixed(context: CommandContext) -> int:
        raise ExceptionGroup("two", [BrokenPipeError(), ValueError("bad value")])

    with_plugins(("toys", commands(Command("mixed", "mixed", mixed))))
    assert main(["mixed"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("dsh: error: plugin 'toys' failed in command 'mixed': ExceptionGroup")


def test_ctrl_c_where_no_command_handles_it_is_status_130(
    with_plugins: Install, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(context: CommandContext) -> int:
        raise KeyboardInterrupt

    with_plugins(("toys", commands(Command("wait", "wait", interrupted))))
    assert main(["wait"]) == 130
    assert capsys.readouterr().err == "\ndsh: interrupted\n"
    with pytest.raises(KeyboardInterrupt):  # -v: the traceback
        main(["-v", "wait"])


def test_what_plugins_log_is_shown_once_each_and_tracebacks_only_with_v(
    with_plugins: Install, capsys: pytest.CaptureFixture[str]
) -> None:
    def noisy(context: CommandContext) -> int:
        log = logging.getLogger("toys")
        log.warning("careful: %s", "x")
        log.warning("careful: %s", "x")
        try:
            raise ValueError("inner")
        except ValueError:
            log.exception("it broke")
        return 0

    handlers = list(logging.getLogger().handlers)
    with_plugins(("toys", commands(Command("noisy", "noisy", noisy))))
    assert main(["noisy"]) == 0
    assert capsys.readouterr().err == "dsh: careful: x\ndsh: it broke\n"
    assert logging.getLogger().handlers == handlers  # nothing left behind
    assert main(["-v", "noisy"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("dsh: careful: x\ndsh: it broke\nTraceback")
    assert "ValueError: inner" in err
    assert logging.getLogger().handlers == handlers


def test_output_closed_before_dsh_writes_ends_quietly_with_141(tmp_path: Path) -> None:
    # the output of a short listing is written at exit; a reader that went away first
    # is noticed then, quietly (not "Exception ignored ... BrokenPipeError", status 120)
    read, write = os.pipe()
    os.close(read)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "dsh.cli", "plugins"],
            stdout=write,
            stderr=subprocess.PIPE,
            env={**env, "DSH_LOAD_PLUGINS": ""},
            cwd=tmp_path,
            timeout=60,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, b"")


# -- the prompt ------------------------------------------------------------------------


def test_text_on_stdin_keeps_its_indentation(monkeypatch: pytest.MonkeyPatch) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(b"\n    indented()\n  two\n\n"))
    monkeypatch.setattr(sys, "stdin", stdin)
    assert _prompt(["fix", "-"]) == "fix\n\n    indented()\n  two"


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


# -- dsh config check ------------------------------------------------------------------


def test_config_check_without_a_config_says_the_defaults_apply(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["config", "check"]) == 0
    assert capsys.readouterr() == ("", "dsh: no dsh.yml here; defaults apply\n")


def test_config_check_reports_two_config_files_as_a_problem_with_status_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    (Path.cwd() / "dsh.yml").write_text("models: {}\n")
    (Path.cwd() / "dsh.yaml").write_text("models: {}\n")
    assert main(["config", "check"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("dsh: ") and "keep one of the two" in err


def test_config_check_reports_a_missing_file_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-c", str(tmp_path / "missing.yml"), "config", "check"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("dsh: ") and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.plugins("persistence")
def test_config_check_skips_the_section_of_a_plugin_blocked_with_p_no(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("DSH_LOAD_PLUGINS")
    path = tmp_path / "dsh.yml"
    path.write_text("persistence:\n  directory: sessions\n")
    assert main(["-p", "no:persistence", "-c", str(path), "config", "check"]) == 0
    assert capsys.readouterr().out == f"{path}: ok\n"


@pytest.mark.parametrize(
    "leading", [["-vc", "{path}"], ["-vc{path}"], ["-v", "-c{path}"], ["--config={path}"]]
)
def test_combined_short_options_before_the_command_are_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], leading: list[str]
) -> None:
    path = tmp_path / "other.yml"
    path.write_text("models: {}\n")
    argv = [part.format(path=path) for part in leading]
    assert main([*argv, "config", "check"]) == 0
    assert capsys.readouterr().out == f"{path}: ok\n"


@pytest.mark.parametrize("argv", [["-m", "", "run", "hi"], ["run", "-m", " ", "hi"]])
def test_an_empty_model_name_is_refused(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``-m "$MODEL"`` with the variable unset must not fall back to the default model
    (found by the CI operator study: it was silently ignored)."""
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    assert "argument -m/--model: the model name is empty" in capsys.readouterr().err
