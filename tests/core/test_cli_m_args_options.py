"""`dsh`'s global options, help and version (cli.py), run in-process through
``dsh.cli.main``: what the mutation review of the command line found no test for
(docs/cli.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_m_args_support import _quiet_env  # noqa: F401 (an autouse fixture)

from dsh.cli import main

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
    assert captured.err.startswith("dsh: warning: -p no-such-plugin: no plugin named no-such")
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
