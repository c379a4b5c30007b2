"""An option on the wrong side of the command: dsh's own after it (``dsh run -v hi``,
``dsh run hi --cwd /tmp``) and a command's own before it (``dsh --json run hi``) got
argparse's bare ``unrecognized arguments``; only ``-c`` after run/chat was explained
(found by the user-journey review of session 27). Each now says where it goes. Nothing
changes for what is no option there: a word after ``--``, prompt text, a plugin
command's own option named like one of dsh's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from cli_support import contents, dsh, text_reply

BEFORE = "is dsh's option and goes before the command"


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (["run", "-v", "hi"], f"run: -v {BEFORE} (dsh -v run ...)"),
        (["run", "hi", "-v"], f"run: -v {BEFORE} (dsh -v run ...)"),
        (["run", "--verbose", "hi"], f"run: --verbose {BEFORE} (dsh --verbose run ...)"),
        (["run", "--cwd", "/tmp", "hi"], f"run: --cwd {BEFORE} (dsh --cwd DIR run ...)"),
        (["run", "--cwd=/tmp", "hi"], f"run: --cwd {BEFORE} (dsh --cwd=/tmp run ...)"),
        # a flag takes no value, and an empty one is none: the option's name alone
        (["run", "--verbose=1", "hi"], f"run: --verbose {BEFORE} (dsh --verbose run ...)"),
        (["run", "-p=", "hi"], f"run: -p {BEFORE} (dsh -p NAME run ...)"),
        (["run", "-p", "no:x", "hi"], f"run: -p {BEFORE} (dsh -p NAME run ...)"),
        (["run", "-pno:x", "hi"], f"run: -p {BEFORE} (dsh -p NAME run ...)"),
        (
            ["run", "--config", "x.yml", "hi"],
            "run: --config is dsh's option for the config file and goes before the command "
            "(dsh --config FILE run ...)",
        ),
        (
            ["chat", "-c", "x.yml"],
            "chat: -c is dsh's option for the config file and goes before the command "
            "(dsh -c FILE chat ...); to go on with the last session, use --continue",
        ),
        (["models", "-m", "fast"], f"models: -m {BEFORE} (dsh -m MODEL models ...)"),
        (["config", "check", "-v"], f"config check: -v {BEFORE} (dsh -v config check ...)"),
        (["run", "--version"], f"run: --version {BEFORE} (dsh --version run ...)"),
        (
            ["run", "--conf", "x.yml", "hi"],
            "run: unknown option '--conf' (options are not shortened: did you mean "
            "--config?); dsh's options go before the command",
        ),
        (
            ["--json", "run", "hi"],
            "--json is an option of dsh run and goes after the command (dsh run --json ...)",
        ),
        (  # TEXT was taken for the command
            ["-s", "be brief", "run", "hi"],
            "-s is an option of dsh run and goes after the command (dsh run -s ...)",
        ),
    ],
)
def test_an_option_on_the_wrong_side_of_the_command_says_where_it_goes(
    cli_env: dict[str, str], tmp_path: Path, line: list[str], said: str
) -> None:
    done = dsh(*line, env={**cli_env, "DSH_LOAD_PLUGINS": ""}, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr == f"dsh: error: {said}\n"


@pytest.mark.plugins("persistence")
def test_an_option_of_a_nested_command_before_it_names_that_command(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    env = {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}
    done = dsh("--here", "sessions", "list", env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr == (
        "dsh: error: --here is an option of dsh sessions list and goes after the command "
        "(dsh sessions list --here ...)\n"
    )


@pytest.mark.parametrize(
    ("line", "prompt"),
    [
        (["--", "-v"], "-v"),
        (["use -v"], "use -v"),
        (["-s", "be brief", "--", "--cwd", "/tmp"], "--cwd /tmp"),
    ],
)
def test_after_double_dash_or_inside_prompt_text_it_is_the_prompt(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, line: list[str], prompt: str
) -> None:
    server = model_server([text_reply("ok")])
    model = f"openai-compatible:tiny@{server.url}"
    env = {**cli_env, "DSH_LOAD_PLUGINS": ""}
    done = dsh("-m", model, "run", *line, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert contents(server.bodies()[0]) == [prompt]


ECHO = """\
import argparse

from dsh import hookimpl


@hookimpl
def register_commands(register):
    from dsh.commands import Command

    def configure(parser):
        parser.add_argument("-v", dest="loud", action="store_true")
        parser.add_argument("--cwd", dest=DEST)
        parser.add_argument("--ask")
        parser.add_argument("-m", "--model", default=argparse.SUPPRESS)  # as docs/hooks.md

    def run(context):
        if context.args.ask == "fail":  # quoting its -m
            raise RuntimeError(f"refused {context.args.model}")
        if context.args.ask:
            return context.run_prompt(context.args.ask)
        args = context.args
        print(f"v={args.loud} cwd={getattr(args, DEST)} in={context.workspace.name}")

    register(Command("echo", "echo its options", run, configure=configure))
"""


def _echo_env(cli_env: dict[str, str], tmp_path: Path, dest: str) -> dict[str, str]:
    """A real distribution dsh-echo whose command ``echo`` has a ``-v`` and a ``--cwd``
    of its own (``--cwd`` stored under ``dest``)."""
    site = tmp_path / "site"
    info = site / "dsh_echo-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "dsh_echo.py").write_text(f"DEST = {dest!r}\n" + ECHO)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dsh-echo\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[dsh]\necho = dsh_echo\n")
    path = os.pathsep.join([str(site), cli_env.get("PYTHONPATH", "")])
    return {**cli_env, "PYTHONPATH": path, "DSH_LOAD_PLUGINS": "echo"}


def test_a_plugin_commands_own_options_named_like_dshs_are_its_own(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    env = _echo_env(cli_env, tmp_path, "where")
    done = dsh("echo", "-v", "--cwd", "there", env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, f"v=True cwd=there in={tmp_path.name}\n")
    done = dsh("echo", "-p", "x", env=env, cwd=tmp_path)  # not its own: dsh's
    assert done.stderr == f"dsh: error: echo: -p {BEFORE} (dsh -p NAME echo ...)\n"


def test_a_plugin_option_under_the_dest_of_a_dsh_option_stays_the_plugins(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    # its --cwd (dest cwd) replaced dsh's in the one namespace: dsh took 'there' for its
    # workspace (AttributeError), and without it, dsh's --cwd was the command's default
    env = _echo_env(cli_env, tmp_path, "cwd")
    (tmp_path / "work").mkdir()
    done = dsh("echo", "--cwd", "there", env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, f"v=False cwd=there in={tmp_path.name}\n")
    done = dsh("--cwd", "work", "echo", env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "v=False cwd=None in=work\n"), done.stderr


def test_a_plugin_commands_turn_runs_in_dshs_workspace_whatever_its_options(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("ok")])
    env = _echo_env(cli_env, tmp_path, "cwd")
    model = f"openai-compatible:tiny@{server.url}"
    done = dsh("-m", model, "echo", "--cwd", "there", "--ask", "hi", env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
    assert contents(server.bodies()[0]) == ["hi"]


def test_a_key_in_a_plugin_commands_own_m_is_hidden_in_its_failure(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    key = "sk-echo-0123456789abcdef0123"
    model = f"openai-compatible:x@https://gw.example/v1?api-key={key}"
    env = _echo_env(cli_env, tmp_path, "cwd")
    done = dsh("echo", "-m", model, "--ask", "fail", env=env, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "refused openai-compatible:x@https://gw.example/v1?api-key=***" in done.stderr
    assert key[:8] not in done.stderr


NESTED = """\
from dsh import hookimpl


@hookimpl
def register_commands(register):
    from dsh.commands import Command

    def configure(parser):
        parser.add_argument("--top", action="store_true")
        subs = parser.add_subparsers(dest="pc_command", required=True)
        subs.add_parser("sub").add_argument("--loud", action="store_true")
        subs.add_parser("own").add_argument("-v", dest="own_v", action="store_true")

    def run(context):
        print(f"verbose={context.args.verbose} own_v={getattr(context.args, 'own_v', None)}")

    register(Command("pc", "a command with commands", run, configure=configure))
"""


def _nested_env(cli_env: dict[str, str], tmp_path: Path, source: str = NESTED) -> dict[str, str]:
    """A real distribution dsh-pc whose command ``pc`` has commands of its own: ``sub``
    (``--loud``) and ``own`` (a ``-v`` of its own); ``pc`` takes ``--top``."""
    site = tmp_path / "site"
    info = site / "dsh_pc-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "dsh_pc.py").write_text(source)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dsh-pc\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[dsh]\npc = dsh_pc\n")
    path = os.pathsep.join([str(site), cli_env.get("PYTHONPATH", "")])
    return {**cli_env, "PYTHONPATH": path, "DSH_LOAD_PLUGINS": "pc"}


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (["pc", "sub", "-v"], f"pc sub: -v {BEFORE} (dsh -v pc sub ...)"),
        (["pc", "sub", "--cwd=/tmp"], f"pc sub: --cwd {BEFORE} (dsh --cwd=/tmp pc sub ...)"),
        (  # sub's own option before sub, pc's after it
            ["pc", "--loud", "sub"],
            "pc sub: --loud is an option of dsh pc sub and goes right after it "
            "(dsh pc sub --loud ...)",
        ),
        (
            ["pc", "sub", "--top"],
            "pc sub: --top is an option of dsh pc and goes right after it (dsh pc --top sub ...)",
        ),
        (  # own's -v before own: it may be meant for either
            ["pc", "-v", "own"],
            "pc own: -v is an option of dsh pc own and goes right after it (dsh pc own -v "
            "...); dsh's -v goes before the command (dsh -v pc own ...)",
        ),
    ],
)
def test_an_option_on_the_wrong_side_of_a_plugins_nested_command_says_where_it_goes(
    cli_env: dict[str, str], tmp_path: Path, line: list[str], said: str
) -> None:
    done = dsh(*line, env=_nested_env(cli_env, tmp_path), cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr == f"dsh: error: {said}\n"


def test_a_nested_commands_own_option_named_like_dshs_is_its_own(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    env = _nested_env(cli_env, tmp_path)
    done = dsh("pc", "own", "-v", env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "verbose=False own_v=True\n"), done.stderr
    done = dsh("-v", "pc", "own", env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "verbose=True own_v=False\n"), done.stderr


@pytest.mark.parametrize(
    "line", [["--json", "run", "--help"], ["--json", "-h", "run"], ["--json", "run", "x", "-h"]]
)
def test_help_is_printed_whatever_option_is_on_the_wrong_side(
    cli_env: dict[str, str], tmp_path: Path, line: list[str]
) -> None:
    # help and versions stay at hand to find out what is wrong
    done = dsh(*line, env={**cli_env, "DSH_LOAD_PLUGINS": ""}, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout.startswith("usage: dsh")


def test_prompt_words_after_a_commands_option_are_the_prompt(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    # argparse fills a `*` positional once: `dsh run hi -m MODEL more` refused `more`
    server = model_server([text_reply("ok")])
    model = f"openai-compatible:tiny@{server.url}"
    env = {**cli_env, "DSH_LOAD_PLUGINS": ""}
    done = dsh("run", "explain", "-m", model, "this", "please", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [body] = server.bodies()
    assert [m["content"] for m in body["messages"] if m["role"] == "user"] == [
        "explain this please"
    ]


@pytest.mark.parametrize(
    ("line", "left", "usage"),
    [
        (["run", "hi", "-m", "x:y", "more", "--bogus"], "more --bogus", "dsh run"),
        (["models", "more"], "more", "dsh models"),  # a command without a prompt
        (["config", "check", "--x"], "--x", "dsh config check"),  # a nested command
        (["--version", "--bogus"], "--bogus", "dsh"),  # no command
    ],
)
def test_words_beside_an_unknown_option_are_still_refused(
    cli_env: dict[str, str], tmp_path: Path, line: list[str], left: str, usage: str
) -> None:
    """With the usage of the command given (it was dsh's own, whatever the command)."""
    done = dsh(*line, env={**cli_env, "DSH_LOAD_PLUGINS": ""}, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(f"usage: {usage} [-h]"), done.stderr
    assert done.stderr.endswith(f"{usage}: error: unrecognized arguments: {left}\n"), done.stderr


def test_a_nested_command_stored_under_the_dest_command_runs(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Was: dsh's own dest "command" was overwritten by the plugin's subcommand ("sub"),
    so no command was found and dsh printed its help, status 0."""
    source = NESTED.replace('dest="pc_command"', 'dest="command"').replace(
        'print(f"verbose=', 'print(f"command={context.args.command} verbose='
    )
    done = dsh("pc", "sub", env=_nested_env(cli_env, tmp_path, source), cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "command=sub verbose=False own_v=None\n"), (
        done.stderr
    )
