"""What ``dsh --help`` and the commands' help say, against what the commands do and
docs/cli.md says (a new user reads the help first)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dsh.cli import main

CLI_MD = " ".join((Path(__file__).parents[2] / "docs" / "cli.md").read_text().split())


def help_of(capsys: pytest.CaptureFixture[str], *command: str) -> str:
    with pytest.raises(SystemExit) as done:
        main([*command, "--help"])
    assert done.value.code == 0
    return " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("command", ["run", "chat"])
def test_continue_is_said_to_take_the_last_session_of_this_workspace(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """``--continue`` takes the last session of the workspace (``last_in``), not the
    store's last; ``--session`` takes one from anywhere."""
    text = help_of(capsys, command)
    assert "--continue continue the stored session of this workspace updated last" in text
    assert "(or a unique prefix of one), from any workspace" in text


def documented_statuses(begun: str, ended: str) -> list[str]:
    """The exit statuses docs/cli.md's paragraph from ``begun`` to ``ended`` lists, in
    its order (``1 if ...``, ``2 for ...``, ``131 if quit ...``)."""
    paragraph = CLI_MD[CLI_MD.index(begun) :]
    return re.findall(r"\b(\d{1,3}) (?:if|for)\b", paragraph[: paragraph.index(ended)])


def help_statuses(capsys: pytest.CaptureFixture[str], command: str) -> list[str]:
    text = help_of(capsys, command)
    return re.findall(r"(\d+) [a-z]", text[text.index("exit status: 0;") :])


def test_run_help_gives_the_exit_statuses_docs_cli_md_gives(
    capsys: pytest.CaptureFixture[str],
) -> None:
    documented = documented_statuses("Exit status: 0;", "Started with SIGHUP ignored")
    assert documented == ["1", "2", "130", "141", "143", "129", "131"]
    assert sorted(help_statuses(capsys, "run")) == sorted(documented)


def test_chat_help_gives_the_exit_statuses_docs_cli_md_gives(
    capsys: pytest.CaptureFixture[str],
) -> None:
    documented = documented_statuses("The exit status is 0;", "With SIGHUP ignored,")
    assert documented == ["1", "2", "141", "129", "143", "131"]
    assert sorted(help_statuses(capsys, "chat")) == sorted(documented)


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("run", "the output could not be written"),
        ("run", "131 quit (Ctrl-\\, SIGQUIT)"),
        ("chat", "131 quit (SIGQUIT, Ctrl-\\ without the line editor)"),
    ],
)
def test_run_and_chat_help_say_what_each_status_is_for(
    capsys: pytest.CaptureFixture[str], command: str, said: str
) -> None:
    assert said in help_of(capsys, command)


def test_global_options_say_what_they_do(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of(capsys)
    assert "-p NAME load plugin NAME even if autoload is off or DSH_LOAD_PLUGINS leaves" in text
    assert "--cwd DIR the workspace, where dsh.yml is looked for and tools work" in text
    assert "version print dsh-core's version" in text
    assert "config check the configuration (dsh.yml)" in text


def test_version_v_is_said_to_list_every_installed_plugin(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert "-v also every installed plugin's, loaded or not" in help_of(capsys, "version")


def test_a_global_option_without_its_value_names_dsh_in_the_usage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # caught by the early parser (before plugins load), not by the full one: `python -m
    # dsh.cli -m` said `usage: cli.py`
    with pytest.raises(SystemExit) as stopped:
        main(["-m"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: dsh ") and "expected one argument" in err
