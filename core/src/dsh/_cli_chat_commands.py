"""``dsh chat``'s slash commands: chat's own, those plugins register through
``register_chat_commands`` (collected once, when a chat starts: a clash stops it
there), what ``/help`` and an unknown command's message list, and running a plugin's
command (Ctrl-C stops it; a failure is kept for the exit status)."""

from __future__ import annotations

import difflib
import inspect
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from dsh import _stray
from dsh._entry_points import bringing
from dsh._secrets import get_logger, redact
from dsh._visible import visible
from dsh.errors import DshError

if TYPE_CHECKING:
    from dsh.commands import ChatCommand, ChatCommandContext
    from dsh.plugins import PluginManager

__all__ = ["ChatCommands", "chat_commands", "run_command"]

#: A line is a command when its first word is one: `/name`, not a path (`/tmp/x.log:`).
COMMAND = re.compile(r"/[A-Za-z][\w-]*(\s|$)")
_NAME = re.compile(r"[A-Za-z][\w-]*")

#: Chat's own commands, each with what it does (``/help``), in two parts: the plugins'
#: commands are listed between them.
_ACTING = (
    ("/queue TEXT", "queue TEXT for the next turn"),
    ("/resume ID", "continue stored session ID in place of this one"),
)
_TELLING = (
    ("/plugins", "the plugins loaded"),
    ("/model", "the model"),
    ("/help", "these commands"),
    ("/quit", "quit once the agent is idle (/exit too)"),
)
_SEND_SLASH = ("//TEXT", "send /TEXT as a prompt")
_BUILT_IN = frozenset(("queue", "resume", "plugins", "model", "help", "quit", "exit"))

_log = get_logger("dsh.chat")


@dataclass(frozen=True, slots=True)
class ChatCommands:
    """The plugins' chat commands, by ``/name``, each with the plugin that registered it."""

    by_name: dict[str, tuple[str, ChatCommand]]
    #: The chat's plugins: for an unknown command of dsh's own plugin, what left the
    #: plugin out and what turns it on.
    pm: PluginManager | None = None

    def usages(self) -> list[tuple[str, str]]:
        """Every command's usage and what it does, as ``/help`` lists them."""
        added = [(f"/{c.name} {c.usage}".rstrip(), c.help) for _, c in self.by_name.values()]
        return [*_ACTING, *added, *_TELLING]

    def help(self) -> str:
        """What ``/help`` shows: one line per command."""
        listed = [*self.usages(), _SEND_SLASH]
        width = max(len(usage) for usage, _ in listed)
        return "\n".join(f"  {usage.ljust(width)}  {what}" for usage, what in listed)

    def unknown(self, command: str) -> str:
        """What chat says of ``command``, which is none of these."""
        needed = bringing(command.removeprefix("/"), chat=True)  # named when not loaded
        if needed is not None:
            plugin, distribution = needed
            return f"  {command} needs the {plugin} plugin ({self._off(plugin, distribution)})"
        usages = [usage for usage, _ in self.usages()]
        known = ", ".join(usages)
        meant = _close(command, [usage.split()[0] for usage in usages] + ["/exit"])
        return f"  unknown command {command}{meant} (try {known}; //TEXT sends /TEXT)"

    def _off(self, plugin: str, distribution: str) -> str:
        """Why ``plugin`` of ``distribution`` does not run here, and what turns it on
        (as ``/resume`` says it of dsh-persistence): left out, or not installed."""
        pm = self.pm
        if pm is not None and (pm.is_blocked(plugin) or pm.is_left_out(plugin)):
            from dsh._plugin_off import why_off

            return why_off(pm, plugin, distribution)
        return f"{distribution} is not installed"


def _close(command: str, names: list[str]) -> str:
    """``: did you mean /NAME?`` for the one of ``names`` ``command`` is a typo of."""
    bare = {name.removeprefix("/").lower(): name for name in names}
    typed = command.removeprefix("/").lower()
    close = difflib.get_close_matches(typed, bare, n=1, cutoff=0.7)
    return f": did you mean {bare[close[0]]}?" if close else ""


def chat_commands(pm: PluginManager) -> ChatCommands:
    """The chat commands the loaded plugins register. A name chat has, or another
    plugin registered, or that is no name (``/x``, ``two words``), is a ``DshError``
    naming the plugins."""
    from dsh.commands import ChatCommand

    found: dict[str, tuple[str, ChatCommand]] = {}

    def register(plugin: str, command: ChatCommand) -> None:
        if not isinstance(command, ChatCommand):
            raise DshError(
                f"plugin {plugin!r} registered {command!r}, which is not a dsh ChatCommand"
            )
        name = command.name
        if not (isinstance(name, str) and _NAME.fullmatch(name)):
            raise DshError(
                f"plugin {plugin!r} registered the chat command name {name!r}: a name is a "
                "letter, then letters, digits, _ or -, without the slash"
            )
        if f"/{name}" in found or name in _BUILT_IN:
            first = found[f"/{name}"][0] if f"/{name}" in found else "dsh-core"
            raise DshError(
                f"chat command '/{name}' is registered twice: by {first!r} and {plugin!r}"
            )
        found[f"/{name}"] = (plugin, command)

    pm.relay.register_chat_commands(register)
    return ChatCommands(found, pm)


async def run_command(
    plugin: str,
    command: ChatCommand,
    context: ChatCommandContext,
    scopes: list[anyio.CancelScope],
    failed: Callable[[str], None],
    stopped: Callable[[str], None],
) -> None:
    """Run a plugin's chat command and show what it returned, or its failure through
    ``failed``. Its cancel scope is in ``scopes`` meanwhile: Ctrl-C stops it, and
    ``stopped`` shows the note that says so."""
    name = f"/{command.name}"
    with anyio.CancelScope() as scope:
        scopes.append(scope)
        try:
            shown: object = command.run(context)
            if inspect.isawaitable(shown):
                shown = await shown
        except DshError as error:
            failed(f"  {name}: {_lines(str(error))}")
        except BaseException as error:  # the plugin's bug (sys.exit too): the chat goes on
            if not _stray.failed(error):  # Ctrl-C stopping it, the chat quitting
                raise
            _log.debug("plugin %r failed in chat command %s", plugin, name, exc_info=error)
            failed(f"  {name}: plugin {plugin!r} failed: {_lines(_stray.failure_words(error))}")
        else:
            if isinstance(shown, str):
                print(f"  {name}: {_lines(shown)}", file=sys.stderr)
            elif shown is not None:
                failed(
                    f"  {name}: plugin {plugin!r} returned {shown!r} "
                    f"({type(shown).__name__}), not a line to show (a str, or None)"
                )
        finally:
            scopes.remove(scope)
    if scope.cancelled_caught:  # as a turn's note says it: a Ctrl-C more quits
        stopped(f"  {name}: {command.stopped} (Ctrl-C again to quit)")


def _lines(text: str) -> str:
    """``text`` to show under a command: secrets hidden, control characters shown as
    escapes (it may hold what a model, a tool or a file wrote: an escape sequence would
    retitle the window or clear the screen), each line after the first indented as
    the first is."""
    return visible(redact(text)).replace("\n", "\n  ")
