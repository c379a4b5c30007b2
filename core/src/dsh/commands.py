"""What plugins add to the ``dsh`` command: subcommands (``register_commands``) and
``dsh chat`` slash commands (``register_chat_commands``)."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dsh.agent import AgentHandle
    from dsh.config import Config
    from dsh.harness import Harness
    from dsh.persistence import StoredSession
    from dsh.plugins import PluginManager

__all__ = [
    "ChatCommand",
    "ChatCommandContext",
    "Command",
    "CommandContext",
    "for_terminal",
    "json_for_terminal",
    "name_choices",
]


@dataclass(frozen=True, slots=True)
class CommandContext:
    """What a command's ``run`` receives: its parsed arguments, the loaded plugins, the
    config file given with ``-c`` (None: the one in the workspace, if any) and the
    workspace (``--cwd``, else the current directory). ``config``: that file as a
    command already loaded it (``dataclasses.replace(context, config=...)``), which the
    harness and ``run_prompt`` then take rather than read the file again: a pipe
    (``dsh -c <(...)``) can be read only once."""

    args: argparse.Namespace
    pm: PluginManager
    config_path: Path | None = None
    workspace: Path | None = None
    config: Config | None = None

    def find_config(self) -> Path | None:
        """The config file ``dsh run`` would use: ``-c``, else ``$DSH_CONFIG`` or
        ``dsh.yml`` in the workspace (``dsh.config.find_config``), else None. A plain
        path; ConfigError when ``$DSH_CONFIG`` names no file, as for ``dsh run``."""
        from dsh.config import find_config

        return self.config_path or find_config(self.workspace or Path.cwd())

    def harness(self, *, starts_agents: bool = True) -> Harness:
        """A harness over the same plugins, config and workspace as ``dsh run`` (enter it
        with ``async with``). ``starts_agents=False``: for a command that only lists or
        reads what the harness holds, as ``dsh models`` and ``dsh sessions list``: the
        config's agents are not started, none can be created or resumed, and settings
        for a plugin that does not run, or a ``models:`` entry that cannot be built, are
        warnings (see ``Harness``)."""
        from dsh.harness import Harness

        return Harness(
            pm=self.pm,
            config=self.config if self.config is not None else self.find_config(),
            workspace=self.workspace,
            starts_agents=starts_agents,
        )

    def resume_options(self, harness: Harness, stored: StoredSession, model: str) -> dict[str, Any]:
        """The options an agent continuing ``stored`` gets from the command line, on
        ``model``: those the config of ``harness`` now gives the agent that created the
        session (its system prompt, limits and plugin options, permission rules among
        them), over the options stored with the session, over ``dsh run``'s defaults.
        ``dsh sessions resume`` and chat's ``/resume`` use them."""
        from dsh._cli_agent import resume_options

        return resume_options(harness, stored, model)

    def chat_command(self, session_id: str | None) -> str:
        """The ``dsh chat --session ID`` command (None: a new chat) that goes on with a
        stored session from a shell, with the ``-p`` and ``-c`` options the command ran
        with, ``--cwd`` when ``workspace`` is not the current directory (so that it
        names the same store and workspace) and its ``-m`` (a URL given with it is not
        stored with the session; a key in it shown as ``***``), each word quoted to
        paste back as it is."""
        from dsh._cli_continue import chat_command

        return chat_command(self._here(), self._given(), session_id)

    def command_line(self, *words: str) -> str:
        """``dsh WORDS`` to paste into a shell (``"sessions", "resume", ID``), with the
        ``-p``, ``-c``, ``--cwd`` and ``-m`` options the command ran with, as
        ``chat_command`` gives them: pasted, it takes the same store, workspace and
        model (a URL's key given with ``-m`` shown as ``***``). A ``--`` among the words
        (``"sessions", "resume", "--", ID``) is shown only when a word after it begins
        with ``-`` (an id ``-x``, which the parser would take for an option); a prompt
        ``read_prompt`` adds after the line is after it too."""
        from dsh._cli_continue import command_line

        return command_line(self._here(), self._given(), *words)

    def _here(self) -> Path:
        return (self.workspace or Path.cwd()).resolve()

    def _given(self) -> argparse.Namespace:
        return argparse.Namespace(**{**vars(self.args), "config": self.config_path})

    async def read_prompt(
        self, words: list[str], command: str, *, command_line: str | None = None
    ) -> str:
        """The prompt ``words`` give, read and checked as ``dsh run`` reads its own: the
        words joined by spaces, the text piped in where a ``-`` stands (its byte order
        mark dropped, Windows line ends read as ``\\n``). An empty prompt, a word or
        stdin that is not UTF-8, ``-`` given twice, or a ``-`` when stdin is the config
        file too (``dsh -c /dev/stdin``) is a ``DshError`` (status 2) whose message
        begins with ``command`` (``"sessions resume"``); text piped in with no ``-`` to
        take it is not read, and a warning says so (unless it is the config file). ``command_line``:
        the command to paste up to the prompt's words, for the examples those give
        (``... (dsh sessions resume ID "list the files")``; build it with
        ``self.command_line(...)``); default ``dsh COMMAND``, right only when the prompt
        follows the command's name. Stdin is read outside the event loop, so that
        Ctrl-C while it is typed at a terminal ends the command at once, as it ends
        ``dsh run -`` (``dsh: interrupted``, status 130)."""
        from dsh._cli_prompt import config_on_stdin, read_prompt_in_loop

        given: object = words  # typed a list, but a str is easily passed
        if isinstance(given, str):  # its characters would be taken for the words
            raise TypeError("read_prompt: words must be a list of the prompt's words, not a str")
        config = config_on_stdin(self.config_path, self.workspace)
        return await read_prompt_in_loop(words, command, command_line, config=config)

    async def run_prompt(
        self,
        prompt: str,
        *,
        session: str | None = None,
        json: bool = False,
        command: str = "--session",
    ) -> int:
        """Run one turn as ``dsh run PROMPT`` does, on ``args.model`` (dsh's ``-m``, or
        the command's own under that dest) in ``workspace`` with ``config_path``: the
        same model choice, output and exit status. ``session``: continue that stored
        session (an id or a unique prefix), as ``dsh run --session``; ``json``: print
        the session events as JSON lines, as ``dsh run --json``; ``command``: the words
        the line after a damaged ``session``'s error begins with (``dsh: sessions
        resume: session ID is damaged: ...``), the command's own; Ctrl-C, SIGTERM and
        SIGHUP end it as they end ``dsh run`` (from the turn's start to its end)."""
        from functools import partial

        from dsh._cli_agent import run
        from dsh._cli_signals import until_terminated

        given = {**vars(self.args), "cwd": self.workspace, "config": self.config_path}
        given.update(prompt=prompt, session=session, json=json, session_command=command)
        args = argparse.Namespace(**given, continue_=False)
        turn = partial(run, config=self.config)  # read already: not again
        return await until_terminated(turn, args, self.pm)


@dataclass(frozen=True, slots=True)
class Command:
    """``dsh NAME ...``. ``configure`` adds arguments to the command's parser; ``run``
    (plain or ``async def``) does the work and returns the exit status (None = 0).
    For nested commands (``dsh sessions list``), add subparsers in ``configure``.

    Import heavy modules inside ``run``: every ``dsh`` invocation builds every
    command's parser.
    """

    name: str
    help: str
    run: Callable[[CommandContext], int | Awaitable[int | None] | None]
    configure: Callable[[argparse.ArgumentParser], None] | None = None


@dataclass(frozen=True, slots=True)
class ChatCommandContext:
    """What a chat command's ``run`` receives: the chat's agent (its ``AgentHandle``,
    idle or running a turn), ``text``, what was typed after the command's name
    (stripped; "" when nothing), and the chat's harness."""

    agent: AgentHandle
    text: str
    harness: Harness


@dataclass(frozen=True, slots=True)
class ChatCommand:
    """``/NAME`` in ``dsh chat``. ``name`` is given without the slash; ``help`` is its
    line in ``/help``, after ``/NAME USAGE``. ``run`` (``async def``, or plain) gets a
    ``ChatCommandContext`` and returns a line to show (``/NAME: LINE``) or None;
    ``DshError`` shows its message as the command's failure. At a terminal it runs
    beside a turn, and Ctrl-C stops it: chat then shows ``/NAME: STOPPED``.
    """

    name: str
    help: str
    run: Callable[[ChatCommandContext], Awaitable[str | None] | str | None]
    usage: str = ""
    stopped: str = "stopped"


def name_choices(subparsers: argparse.Action) -> None:
    """Name the subcommands added so far to ``subparsers`` (from ``add_subparsers``) in
    the usage line and in argparse's "the following arguments are required: {a,b}",
    which otherwise says the ``dest`` ("required: action"). Call it after the last
    ``add_parser``, as ``dsh config``, ``dsh sessions`` and ``python -m dsh.llm.llama`` do."""
    # typed as the public Action (argparse's _SubParsersAction is private, and not
    # subscriptable at run time: typing.get_type_hints failed on the hint)
    subparsers.metavar = "{" + ",".join(subparsers.choices or ()) + "}"


def for_terminal(text: str) -> str:
    """``text`` with its control characters shown as ``\\xNN`` and the bidi controls
    that reorder text (U+202A to U+202E, U+2066 to U+2069) as ``\\u202e``, as ``dsh run``
    shows a model's answer at a terminal: for a command that writes what a model or a
    tool wrote (escape sequences in it would clear the screen or retitle the window, an
    override would show it reversed). Other text, right-to-left letters too, is as it
    was."""
    from dsh._visible import visible

    return visible(text)


def json_for_terminal(text: str) -> str:
    """JSON ``text`` (a command's ``--json`` output) with the characters
    ``for_terminal`` escapes, and the tag characters, written as JSON escapes
    (``\\u202e``): still valid JSON, read back to the same values, and nothing in it
    reordered or hidden at a terminal. Characters JSON's own encoders leave raw
    otherwise (``json.dumps(..., ensure_ascii=False)``)."""
    from dsh._visible import json_visible

    return json_visible(text)
