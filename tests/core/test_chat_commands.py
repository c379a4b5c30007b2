"""The chat commands plugins register (``register_chat_commands``, docs/hooks.md): the
names refused when a chat starts, what ``/help`` and an unknown command's message list,
and how a command's result, failure or stop is shown (``_cli_chat_commands``)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import anyio
import pytest

from dsh import DshError, HookError, hookimpl
from dsh._cli_chat_commands import ChatCommands, chat_commands, run_command
from dsh.commands import ChatCommand, ChatCommandContext, Command
from dsh.plugins import create_plugin_manager


async def said(context: ChatCommandContext) -> str:
    return f"heard {context.text!r}"


class Adds:
    """A plugin that registers the chat commands it is given."""

    def __init__(self, *commands: object) -> None:
        self.commands = commands

    @hookimpl
    def register_chat_commands(self, register: Any) -> None:
        for command in self.commands:
            register(command)


def collected(*plugins: tuple[str, object]) -> ChatCommands:
    return chat_commands(create_plugin_manager(list(plugins), load_entry_points=False))


def refused(*plugins: tuple[str, object]) -> str:
    with pytest.raises(DshError) as caught:
        collected(*plugins)
    assert not isinstance(caught.value, HookError)  # the core's words, naming the plugins
    return str(caught.value)


@pytest.mark.parametrize("name", ["model", "help", "queue", "resume", "plugins", "quit", "exit"])
def test_a_name_chat_has_is_refused_naming_the_plugin(name: str) -> None:
    message = refused(("toys", Adds(ChatCommand(name, "mine", said))))
    assert message == f"chat command '/{name}' is registered twice: by 'dsh-core' and 'toys'"


def test_a_name_two_plugins_register_is_refused_naming_both() -> None:
    first, second = ChatCommand("size", "one", said), ChatCommand("size", "two", said)
    # the plugin passed later registers first (docs/hooks.md, Order)
    message = refused(("alpha", Adds(first)), ("beta", Adds(second)))
    assert message == "chat command '/size' is registered twice: by 'beta' and 'alpha'"


def test_one_plugin_registering_a_name_twice_is_refused() -> None:
    twice = Adds(ChatCommand("size", "one", said), ChatCommand("size", "two", said))
    message = refused(("toys", twice))
    assert message == "chat command '/size' is registered twice: by 'toys' and 'toys'"


@pytest.mark.parametrize("name", ["/size", "two words", "", "9lives", "size!", 3])
def test_what_is_no_name_is_refused(name: Any) -> None:
    message = refused(("toys", Adds(ChatCommand(name, "bad", said))))
    assert message == (
        f"plugin 'toys' registered the chat command name {name!r}: a name is a letter, "
        "then letters, digits, _ or -, without the slash"
    )


def test_what_is_no_chat_command_is_refused() -> None:
    subcommand = Command("size", "a dsh subcommand", lambda context: 0)
    message = refused(("toys", Adds(subcommand)))
    assert message.startswith("plugin 'toys' registered Command(name='size'")
    assert message.endswith(", which is not a dsh ChatCommand")


def test_help_and_the_unknown_message_list_the_plugins_commands_after_the_acting_ones() -> None:
    commands = collected(
        ("toys", Adds(ChatCommand("size", "the history's length", said, usage="[N]")))
    )
    assert commands.help().splitlines() == [
        "  /queue TEXT  queue TEXT for the next turn",
        "  /resume ID   continue stored session ID in place of this one",
        "  /size [N]    the history's length",
        "  /plugins     the plugins loaded",
        "  /model       the model",
        "  /help        these commands",
        "  /quit        quit once the agent is idle (/exit too)",
        "  //TEXT       send /TEXT as a prompt",
    ]
    assert commands.unknown("/nope") == (
        "  unknown command /nope (try /queue TEXT, /resume ID, /size [N], /plugins, /model, "
        "/help, /quit; //TEXT sends /TEXT)"
    )


def test_an_unknown_command_close_to_one_says_which_it_may_have_meant() -> None:
    commands = collected(("toys", Adds(ChatCommand("size", "the history's length", said))))
    assert commands.unknown("/hepl").startswith(
        "  unknown command /hepl: did you mean /help? (try /queue TEXT, "
    )
    assert commands.unknown("/sise").startswith("  unknown command /sise: did you mean /size?")
    assert commands.unknown("/Quit").startswith("  unknown command /Quit: did you mean /quit?")
    assert "did you mean" not in commands.unknown("/nope")


def test_compact_without_its_plugin_names_the_plugin_and_no_plugin_adds_commands() -> None:
    commands = collected()
    assert commands.by_name == {}
    # then what left it out, or that it is not installed (tests/cli/test_chat_sessions.py)
    assert commands.unknown("/compact").startswith(
        "  /compact needs the compaction plugin (dsh-compaction "
    )
    assert "/compact" not in commands.unknown("/nope")


# -- running one -----------------------------------------------------------------------


async def shown_by(run: Any, stopped: str = "stopped") -> tuple[list[str], list[str]]:
    """What running a command of plugin 'toys' whose ``run`` is ``run`` kept as failures
    and as stop notes (what it printed is in capsys)."""
    command = ChatCommand("toy", "a toy", run, stopped=stopped)
    context: Any = SimpleNamespace(agent=None, text="some words", harness=None)
    failures: list[str] = []
    stops: list[str] = []
    scopes: list[anyio.CancelScope] = []
    await run_command("toys", command, context, scopes, failures.append, stops.append)
    assert scopes == []  # no longer running
    return failures, stops


async def test_the_line_a_command_returns_is_shown_under_its_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert await shown_by(said) == ([], [])
    assert capsys.readouterr().err == "  /toy: heard 'some words'\n"


async def test_a_plain_function_returning_lines_or_none_is_shown_too(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert await shown_by(lambda context: "one\ntwo") == ([], [])
    assert await shown_by(lambda context: None) == ([], [])
    assert capsys.readouterr().err == "  /toy: one\n  two\n"


async def test_a_dsh_error_is_the_commands_failure() -> None:
    async def refuse(context: ChatCommandContext) -> str:
        raise DshError("not while a turn runs")

    assert await shown_by(refuse) == (["  /toy: not while a turn runs"], [])


async def test_another_exception_is_the_plugins_failure_naming_it() -> None:
    async def broken(context: ChatCommandContext) -> str:
        raise KeyError("missing")

    failures, _ = await shown_by(broken)
    assert failures == ["  /toy: plugin 'toys' failed: KeyError: 'missing'"]


async def test_a_result_that_is_no_line_is_the_plugins_failure() -> None:
    failures, _ = await shown_by(lambda context: 3)
    assert failures == [
        "  /toy: plugin 'toys' returned 3 (int), not a line to show (a str, or None)"
    ]


@pytest.mark.parametrize(
    ("words", "note"),
    [
        ({}, "  /toy: stopped (Ctrl-C again to quit)"),
        (
            {"stopped": "stopped; nothing changed"},
            "  /toy: stopped; nothing changed (Ctrl-C again to quit)",
        ),
    ],
)
async def test_a_command_cancelled_says_it_was_stopped_in_its_words(
    capsys: pytest.CaptureFixture[str], words: dict[str, str], note: str
) -> None:
    async def slow(context: ChatCommandContext) -> str:
        await anyio.sleep(60)
        return "done"

    command = ChatCommand("toy", "a toy", slow, **words)
    context: Any = SimpleNamespace(agent=None, text="", harness=None)
    running: list[anyio.CancelScope] = []
    failures: list[str] = []
    stops: list[str] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(run_command, "toys", command, context, running, failures.append, stops.append)
        await anyio.wait_all_tasks_blocked()
        running[-1].cancel()  # what chat's Ctrl-C does
    assert (failures, stops, running) == ([], [note], [])
    assert capsys.readouterr().err == ""  # no "done"


TITLE = "\x1b]0;PWNED\x07\x1b[2J\u202eevil"


async def test_escape_sequences_a_command_shows_are_shown_as_escapes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A command showing the model's last answer or a setting wrote its escape sequences
    raw (retitling the window, clearing the screen), where chat shows the answer escaped."""

    async def broken(context: ChatCommandContext) -> str:
        raise ValueError(TITLE)

    async def refuse(context: ChatCommandContext) -> str:
        raise DshError(TITLE)

    assert await shown_by(lambda context: f"last: {TITLE}\nnext") == ([], [])
    escaped = "\\x1b]0;PWNED\\x07\\x1b[2J\\u202eevil"
    assert capsys.readouterr().err == f"  /toy: last: {escaped}\n  next\n"
    assert await shown_by(refuse) == ([f"  /toy: {escaped}"], [])
    failures, _ = await shown_by(broken)
    assert failures == [f"  /toy: plugin 'toys' failed: ValueError: {escaped}"]
