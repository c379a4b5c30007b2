"""Long options are taken as written, not shortened: argparse took ``--conf`` for
``--config`` while dsh's scan of the options before the command (core/src/dsh/_cli_args.py
leading) did not, so ``dsh --conf dsh.yml models`` said ``expected one argument`` though
one was given. A shortened option is now refused, naming the option it may stand for."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import dsh

from dsh._cli_args import build_parser


@pytest.mark.parametrize(
    ("line", "meant"),
    [
        (["--conf", "dsh.yml", "models"], "--config"),
        (["--mod", "fast", "models"], "--model"),
        (["--cw", ".", "models"], "--cwd"),
        (["--verb", "models"], "--verbose"),
        (["--conf=dsh.yml", "models"], "--config"),
    ],
)
def test_a_shortened_global_option_is_refused_naming_the_whole_one(
    cli_env: dict[str, str], tmp_path: Path, line: list[str], meant: str
) -> None:
    (tmp_path / "dsh.yml").write_text("models:\n  fast: {provider: openai, model: gpt-x}\n")
    done = dsh(*line, env={**cli_env, "DSH_LOAD_PLUGINS": ""}, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    given = line[0].partition("=")[0]
    assert done.stderr == (
        f"dsh: error: unknown option {given!r} (options are not shortened: did you mean {meant}?)\n"
    )


def test_whole_and_grouped_options_still_work(cli_env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "dsh.yml").write_text("models:\n  fast: {provider: openai, model: gpt-x}\n")
    env = {**cli_env, "DSH_LOAD_PLUGINS": ""}
    for line in (["--config", "dsh.yml"], ["-vc", "dsh.yml"], ["--config=dsh.yml"], ["--cwd=."]):
        done = dsh(*line, "models", env=env, cwd=tmp_path)
        assert done.returncode == 0 and "fast" in done.stdout, (line, done.stderr)


@pytest.mark.parametrize(
    "arguments", [["run", "--sys", "be brief", "hi"], ["run", "--cont", "hi"], ["models", "--js"]]
)
def test_a_commands_options_are_not_shortened_either(arguments: list[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser({}).parse_args(arguments)


@pytest.mark.parametrize(
    ("arguments", "meant"),
    [(["run", "--conti", "hi"], "--continue"), (["models", "--js"], "--json")],
)
def test_a_shortened_command_option_names_the_whole_one(
    cli_env: dict[str, str], tmp_path: Path, arguments: list[str], meant: str
) -> None:
    # argparse said only "unrecognized arguments: --conti", from the top parser
    done = dsh(*arguments, env={**cli_env, "DSH_LOAD_PLUGINS": ""}, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr.endswith(
        f"dsh {arguments[0]}: error: unknown option {arguments[1]!r} (options are not "
        f"shortened: did you mean {meant}?)\n"
    )


def test_a_prompt_after_double_dash_is_not_taken_for_an_option() -> None:
    args = build_parser({}).parse_args(["run", "--", "--conti", "hi"])
    assert args.prompt == ["--conti", "hi"]


def test_a_shortened_help_after_the_command_names_help_once(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    # a command's parser has --help already: it was named twice ("--help or --help")
    done = dsh("run", "--he", env={**cli_env, "DSH_LOAD_PLUGINS": ""}, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr.endswith(
        "dsh run: error: unknown option '--he' (options are not shortened: did you mean --help?)\n"
    )
