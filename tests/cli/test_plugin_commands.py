"""Plugin commands (``register_commands``) run by a real `dsh` process: a failing one is
reported in one line naming the plugin, a closed output pipe ends them quietly, and the
harness a command gets is that of `dsh run`, or of `dsh models` when it only lists."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

#: A `dsh` whose only plugin is ``toys``, with four commands.
SCRIPT = """
import sys

import dsh.plugins
from dsh import hookimpl
from dsh.cli import main
from dsh.commands import Command


def spew(context):
    for n in range(100_000):
        print(f"line {n}")


def explode(context):
    raise RuntimeError("the toy broke")


async def explode_later(context):
    raise KeyError("missing")


def explode_silently(context):
    raise EOFError


async def where(context):
    async with context.harness() as harness:
        print(harness.config.source, sorted(harness.config.models), harness.workspace)


async def listing(context):
    async with context.harness(starts_agents=False) as harness:
        print(sorted(agent.id for agent in harness.agents.list()), sorted(harness.config.models))


def status(value):
    return lambda context: value


async def late_status(context):
    return "done"


def own_config(parser):
    parser.add_argument("--config")  # dest config, as dsh's -c


def unready(parser):
    parser.add_argument("--half")
    raise ValueError("no options today")


class Toys:
    @hookimpl
    def register_commands(self, register):
        register(Command("unready", "its options fail", explode, configure=unready))
        register(Command("three", "exit 3", status(3)))
        register(Command("cfgboom", "own --config, fail", explode, configure=own_config))
        register(Command("true", "a bool", status(True)))
        register(Command("s256", "256", status(256)))
        register(Command("word", "a str", status("not an int")))
        register(Command("late-word", "a str, async", late_status))
        register(Command("listing", "a harness that starts no agent", listing))
        register(Command("spew", "print many lines", spew))
        register(Command("explode", "fail", explode))
        register(Command("explode-later", "fail, async", explode_later))
        register(Command("explode-silently", "fail, saying nothing", explode_silently))
        register(Command("where", "the harness's config and workspace", where))


real = dsh.plugins.create_plugin_manager
dsh.plugins.create_plugin_manager = lambda **kw: real(
    [("toys", Toys())], load_entry_points=False
)
sys.exit(main())
"""


@pytest.fixture
def toy_dsh(tmp_path: Path) -> list[str]:
    script = tmp_path / "toy_dsh.py"
    script.write_text(textwrap.dedent(SCRIPT))
    return [sys.executable, str(script)]


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("explode", "RuntimeError: the toy broke"),
        ("explode-later", "KeyError: 'missing'"),
        ("explode-silently", "EOFError"),  # no message: the type alone, no dangling colon
    ],
)
def test_a_failing_plugin_command_is_one_line_naming_the_plugin(
    toy_dsh: list[str], tmp_path: Path, command: str, message: str
) -> None:
    done = subprocess.run(
        [*toy_dsh, command], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert done.stderr == (
        f"dsh: error: plugin 'toys' failed in command {command!r}: {message} "
        "(run with -v for the traceback)\n"
    )


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("word", "'not an int' (str)"),
        ("late-word", "'done' (str)"),
        ("true", "True (bool)"),
        ("s256", "256 (int)"),  # the system keeps the low byte: it exited 0
    ],
)
@pytest.mark.parametrize("verbose", [[], ["-v"]])
def test_a_plugin_command_returning_no_exit_status_says_so(
    toy_dsh: list[str], tmp_path: Path, command: str, shown: str, verbose: list[str]
) -> None:
    done = subprocess.run(
        [*toy_dsh, *verbose, command], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"dsh: error: plugin 'toys': command {command!r} returned {shown}, "
        "not an exit status (an int from 0 to 255, or None for 0)\n"
    )


def test_a_plugin_commands_int_is_its_exit_status(toy_dsh: list[str], tmp_path: Path) -> None:
    done = subprocess.run([*toy_dsh, "three"], cwd=tmp_path, capture_output=True, timeout=60)
    assert (done.returncode, done.stderr) == (3, b"")


def test_with_v_a_failing_plugin_command_shows_the_traceback(
    toy_dsh: list[str], tmp_path: Path
) -> None:
    done = subprocess.run(
        [*toy_dsh, "-v", "explode"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert "Traceback" in done.stderr
    assert done.stderr.rstrip().endswith("RuntimeError: the toy broke")


def test_a_closed_pipe_ends_a_plugin_command_quietly(toy_dsh: list[str], tmp_path: Path) -> None:
    with subprocess.Popen(
        [*toy_dsh, "spew"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        assert child.stdout is not None and child.stderr is not None
        assert child.stdout.readline() == "line 0\n"
        child.stdout.close()  # as `| head -1` does
        assert child.wait(timeout=60) == 141
        assert child.stderr.read() == ""


def test_a_commands_harness_has_the_config_and_workspace_of_dsh_run(
    toy_dsh: list[str], tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "dsh.yml").write_text("models:\n  fast: {provider: openai, model: gpt-x}\n")
    other = tmp_path / "other.yml"
    other.write_text("models:\n  slow: {provider: openai, model: gpt-y}\n")

    def where(*flags: str, cwd: Path = tmp_path) -> str:
        done = subprocess.run(
            [*toy_dsh, *flags, "where"], cwd=cwd, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    assert where(cwd=work) == f"{work / 'dsh.yml'} ['fast'] {work}"
    assert where("--cwd", str(work)) == f"{work / 'dsh.yml'} ['fast'] {work}"
    assert where("-c", str(other), "--cwd", str(work)) == f"{other} ['slow'] {work}"
    assert where() == f"<defaults> [] {tmp_path}"


def test_a_command_that_only_lists_gets_a_harness_that_starts_no_agent(
    toy_dsh: list[str], tmp_path: Path
) -> None:
    """``context.harness(starts_agents=False)``, as `dsh models` has it: the config's
    agents are not started and settings for a plugin that does not run are a warning;
    ``context.harness()`` refuses them, as `dsh run` does."""
    (tmp_path / "dsh.yml").write_text(
        "models:\n  fast: {provider: openai, model: gpt-x}\n"
        "agents:\n  - id: helper\n    model: fast\n"
        "shell:\n  x: 1\n"
    )
    said = "shell: section 'shell' is for a plugin that is not installed or not loaded"

    def toy(command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*toy_dsh, command], cwd=tmp_path, capture_output=True, text=True, timeout=60
        )

    listed = toy("listing")
    assert (listed.returncode, listed.stdout) == (0, "[] ['fast']\n"), listed.stderr
    assert said in listed.stderr and "starts no agent" in listed.stderr
    refused = toy("where")
    assert (refused.returncode, refused.stdout) == (2, "")
    assert said in refused.stderr and refused.stderr.startswith("dsh: error: ")


def test_a_command_whose_options_fail_to_set_up_leaves_the_others_working(
    toy_dsh: list[str], tmp_path: Path
) -> None:
    # every command failed with that plugin's error, dsh --help and --version too
    for line in (["--version"], ["--help"], ["listing"]):
        done = subprocess.run(
            [*toy_dsh, *line], cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
        assert (done.returncode, done.stderr) == (0, ""), (line, done.stderr)
    for line in (["unready"], ["unready", "--half", "x"], ["unready", "--help"]):
        done = subprocess.run(
            [*toy_dsh, *line], cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
        assert (done.returncode, done.stdout) == (2, ""), (line, done.stdout)
        assert done.stderr == (
            "dsh: error: plugin 'toys' failed to set up command 'unready': "
            "ValueError: no options today\n"
        )


def test_a_failing_command_with_a_config_option_of_its_own_is_reported_without_reading_it(
    toy_dsh: list[str], tmp_path: Path
) -> None:
    """Was: the report's key hiding read the command's --config as dsh.yml, and waited
    forever on a FIFO there."""
    fifo = tmp_path / "own.fifo"
    os.mkfifo(fifo)
    done = subprocess.run(
        [*toy_dsh, "cfgboom", "--config", str(fifo)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 1
    assert "failed in command 'cfgboom': RuntimeError: the toy broke" in done.stderr
