"""Chat commands a third-party plugin adds (``register_chat_commands``, docs/hooks.md)
in a real `dsh chat`: in a pseudo-terminal (listed by /help, run beside a turn, stopped
by Ctrl-C, a failure shown and the chat going on), from a script (a failure is status
1), and a name clash that stops the chat at start-up, naming both plugins."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import text_reply

#: `dsh` with the plugin ``toys`` (a plain class, registered explicitly) besides those
#: DSH_LOAD_PLUGINS selects; TOYS_CLASH names a command it registers besides its own.
SCRIPT = """
import asyncio
import os
import sys

import anyio

import dsh.plugins
from dsh import DshError, hookimpl
from dsh.cli import main
from dsh.commands import ChatCommand


async def echo(context):
    return f"agent {context.agent.agent.id} heard {context.text!r}"


async def status(context):
    return context.agent.agent.status


async def refuse(context):
    raise DshError("not today")


async def broken(context):
    raise RuntimeError("the toy broke")


async def leave(context):
    sys.exit(3)


async def strayed(context):
    raise asyncio.CancelledError("not ours")


async def slow(context):
    print("  (slow: started)", file=sys.stderr, flush=True)
    await anyio.sleep(60)
    return "done"


class Toys:
    @hookimpl
    def register_chat_commands(self, register):
        register(ChatCommand("echo", "say TEXT back", echo, usage="TEXT"))
        register(ChatCommand("status", "the agent's status", status))
        register(ChatCommand("refuse", "always fails", refuse))
        register(ChatCommand("broken", "a bug", broken))
        register(ChatCommand("slow", "take a minute", slow, stopped="stopped; nothing done"))
        register(ChatCommand("leave", "exits", leave))
        register(ChatCommand("strayed", "a cancellation of no one's", strayed))
        if os.environ.get("TOYS_CLASH"):
            register(ChatCommand(os.environ["TOYS_CLASH"], "mine", echo))


real = dsh.plugins.create_plugin_manager
dsh.plugins.create_plugin_manager = lambda plugins=(), **kw: real(
    [*plugins, ("toys", Toys())], **kw
)
sys.exit(main())
"""


@pytest.fixture
def toy_dsh(tmp_path: Path) -> Path:
    script = tmp_path / "toy_dsh.py"
    script.write_text(textwrap.dedent(SCRIPT))
    return script


def piped(
    toy_dsh: Path, server: Any, lines: str, env: dict[str, str], cwd: Path, plugins: str = ""
) -> subprocess.CompletedProcess[str]:
    """``dsh chat`` with the toys (and ``plugins``), its lines from a pipe."""
    model = f"openai-compatible:tiny@{server.url}"
    return subprocess.run(
        [sys.executable, str(toy_dsh), "-m", model, "chat"],
        input=lines,
        env={**env, "DSH_LOAD_PLUGINS": plugins},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("canonical", [False, True], ids=["editor", "canonical"])
def test_a_plugins_commands_are_listed_run_and_fail_and_the_chat_goes_on(
    model_server: Any, chat: Any, toy_dsh: Path, canonical: bool
) -> None:
    child = chat(model_server([]), plugins="", canonical=canonical, program=toy_dsh)
    child.sendline("/help")
    child.expect_exact("  /resume ID   continue stored session ID in place of this one")
    child.expect_exact("  /echo TEXT   say TEXT back")
    child.expect_exact("  /slow        take a minute")
    child.expect_exact("  /plugins     the plugins loaded")
    child.expect_exact("> ")
    child.sendline("/echo hello  there ")
    child.expect_exact("  /echo: agent main heard 'hello  there'")
    child.expect_exact("> ")
    child.sendline("/refuse")
    child.expect_exact("  /refuse: not today")
    child.expect_exact("> ")
    child.sendline("/broken")
    child.expect_exact("  /broken: plugin 'toys' failed: RuntimeError: the toy broke")
    child.expect_exact("> ")
    child.sendline("/nope")
    child.expect_exact(
        "unknown command /nope (try /queue TEXT, /resume ID, /echo TEXT, /status, /refuse, "
        "/broken, /slow, /leave, /strayed, /plugins,"
    )
    child.expect_exact("> ")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0  # at a terminal: the person saw the failures


def test_ctrl_c_stops_a_plugins_running_command_in_its_words_and_the_chat_stays(
    model_server: Any, chat: Any, toy_dsh: Path
) -> None:
    child = chat(model_server([]), plugins="", program=toy_dsh)
    child.sendline("/slow")
    child.expect_exact("(slow: started)")
    child.sendintr()
    ended = child.expect([pexpect.EOF, "  /slow: stopped; nothing done"]) == 0
    assert not ended, "Ctrl-C during a plugin's command quit the chat"
    child.expect_exact("> ")
    child.sendline("/echo still here")
    child.expect_exact("  /echo: agent main heard 'still here'")
    child.sendline("/quit")
    child.expect(pexpect.EOF)


def test_a_plugins_command_runs_beside_a_running_turn(
    model_server: Any, chat: Any, toy_dsh: Path
) -> None:
    server = model_server([text_reply("Thinking about it", then="stall")])
    child = chat(server, plugins="", program=toy_dsh)
    child.sendline("a long question")
    child.expect_exact("Thinking about it")
    child.sendline("/status")
    child.expect_exact("  /status: running")
    child.sendintr()  # the turn
    child.expect_exact("(cancelled")
    child.sendline("/status")
    child.expect_exact("  /status: idle")
    child.sendline("/quit")
    child.expect(pexpect.EOF)


def test_a_scripts_failed_plugin_command_makes_the_status_1_and_the_next_line_runs(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, toy_dsh: Path
) -> None:
    server = model_server([])
    done = piped(toy_dsh, server, "/refuse\n/echo after\n", cli_env, tmp_path)
    assert done.returncode == 1, done.stderr
    assert "  /refuse: not today\n  /echo: agent main heard 'after'\n" in done.stderr
    done = piped(toy_dsh, server, "/echo alone\n", cli_env, tmp_path)
    assert (done.returncode, done.stderr.count("  /echo: agent main heard 'alone'")) == (0, 1)


def test_a_plugins_command_that_exits_or_is_cancelled_by_no_one_fails_alone(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, toy_dsh: Path
) -> None:
    """``sys.exit`` in a command, or a cancellation no Ctrl-C caused, is the plugin's
    failure like any other exception: said naming it, and the chat goes on."""
    done = piped(toy_dsh, model_server([]), "/leave\n/strayed\n/echo after\n", cli_env, tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "  /leave: plugin 'toys' failed: SystemExit: 3\n" in done.stderr
    stray = "  /strayed: plugin 'toys' failed: CancelledError: not ours (a cancellation"
    assert stray in done.stderr
    assert "  /echo: agent main heard 'after'\n" in done.stderr


@pytest.mark.parametrize(
    ("name", "plugins", "both"),
    [
        ("model", "", "'dsh-core' and 'toys'"),
        # toys, passed explicitly, registers first (docs/hooks.md, Order)
        pytest.param(
            "compact",
            "compaction",
            "'toys' and 'compaction'",
            marks=pytest.mark.plugins("compaction"),
        ),
    ],
)
def test_a_name_taken_stops_the_chat_at_start_up_naming_both_plugins(
    model_server: Any,
    cli_env: dict[str, str],
    tmp_path: Path,
    toy_dsh: Path,
    name: str,
    plugins: str,
    both: str,
) -> None:
    env = {**cli_env, "TOYS_CLASH": name}
    done = piped(toy_dsh, model_server([]), "hello\n", env, tmp_path, plugins)
    # an installed plugin refused (compaction, registering second) is told with how
    # to leave it out, as when its register_* hook raises
    way_out = (
        f"  disable it with `-p no:{plugins}`, or choose plugins with "
        f"DSH_LOAD_PLUGINS=a,b, or uninstall dsh-{plugins}\n"
        if plugins
        else ""
    )
    assert (done.returncode, done.stderr) == (
        2,
        f"dsh: error: chat command '/{name}' is registered twice: by {both}\n{way_out}",
    )
