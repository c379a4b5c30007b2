"""The ``dsh`` command's arguments: its argparse parser, with the subcommands plugins
add, and the arguments before the command (read first, to know which plugins to load)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsh.commands import name_choices
from dsh.errors import DshError, exception_words

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

    from dsh.commands import Command

__all__ = [
    "Parser",
    "UsageError",
    "build_parser",
    "config_not_found",
    "global_options",
    "leading",
    "shortened",
    "takes_next",
]


class UsageError(DshError):
    """The command line is wrong (an option on the wrong side of the command, no such
    command or directory, no prompt): said in one line, with ``-v`` too, as argparse's
    own usage errors are (a traceback of dsh reading its arguments tells nothing)."""


class Parser(argparse.ArgumentParser):
    """A parser that takes long options as written only (``--conf`` is not ``--config``):
    the scan of the options before the command (``leading``) knows whole names, and a
    plugin's option added later could make a shortening mean another. Subparsers (and
    theirs, a plugin's too) are of this class."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, *args: Any, **kwargs: Any) -> Any:
        """As argparse's; a command's parser (``dsh run --cont``) also refuses an option
        that is the start of one of its own long options, naming it, where argparse
        would only say ``unrecognized arguments``."""
        namespace, extras = super().parse_known_args(*args, **kwargs)
        if self.prog.startswith("dsh "):  # a command's: the options before it are read
            reason = shortened(extras, self)  # by `leading`/`shortened` in main
            if reason is not None:
                self.error(reason)
        return namespace, extras

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        """Help on stdout, written at once and its write error raised (argparse drops
        it: ``dsh --help >/dev/full`` said nothing, status 0, or, buffered, failed at
        exit with a traceback, status 120); ``main`` reports it as any command's output
        that cannot be written. Usage errors on stderr stay argparse's."""
        if file is None or file is not sys.stdout:
            super()._print_message(message, file)
        elif message:
            print(message, end="", file=file, flush=True)


def global_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-p",
        dest="plugins",
        action="append",
        default=[],
        type=_plugin_name,
        metavar="NAME",
        help="load plugin NAME even if autoload is off or DSH_LOAD_PLUGINS leaves it out; "
        "-p no:NAME blocks it (repeat for several)",
    )
    parser.add_argument(
        "-c",
        "--config",
        type=_config_file,
        metavar="FILE",
        help="config file, relative to the current directory (default: $DSH_CONFIG, else "
        "dsh.yml in the workspace)",
    )
    parser.add_argument(
        "-m",
        "--model",
        type=_model,
        metavar="MODEL",
        help="a model from dsh.yml, local, or provider:model[@base_url]",
    )
    parser.add_argument(
        "--cwd",
        type=_workspace,
        metavar="DIR",
        help="the workspace, where dsh.yml is looked for and tools work (default: the "
        "current directory)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="tracebacks on errors")
    parser.add_argument(  # its own dest: a plugin command's --version is the plugin's
        "--version",
        dest="dsh_version",
        action="store_true",
        help="print dsh-core's version and exit (as dsh version)",
    )


def _config_file(value: str) -> Path:
    """``-c`` must name a file: an empty name (``-c "$CONFIG"`` with the variable unset)
    would be ``.``, the directory."""
    if not value.strip():
        raise argparse.ArgumentTypeError("the config file name is empty")
    return Path(value)


def _plugin_name(value: str) -> str:
    """``-p`` must name a plugin (``-p no:`` too): an empty one was looked for."""
    if not value.removeprefix("no:").strip():
        raise argparse.ArgumentTypeError("the plugin name is empty")
    return value


def _workspace(value: str) -> Path:
    """``--cwd`` must name a directory: an empty name (``--cwd "$DIR"`` with the
    variable unset) would be ``.``, silently the current directory."""
    if not value.strip():
        raise argparse.ArgumentTypeError("the directory name is empty")
    return Path(value)


def _model(value: str) -> str:
    """``-m`` must name a model: an empty one (``-m "$MODEL"`` with the variable unset)
    would silently fall back to the default model."""
    if not value.strip():
        raise argparse.ArgumentTypeError("the model name is empty")
    return value


def build_parser(commands: dict[str, tuple[str, Command]]) -> argparse.ArgumentParser:
    parser = Parser(prog="dsh", description="dsh: a pluggable agent harness")
    global_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    plugins = sub.add_parser("plugins", help="list loaded plugins")
    plugins.add_argument("--json", action="store_true", help="print a JSON list")
    version = sub.add_parser("version", help="print dsh-core's version")
    version.add_argument(
        "-v",
        dest="verbose_version",
        action="store_true",
        help="also every installed plugin's, loaded or not (for a bug report)",
    )
    run = sub.add_parser(
        "run",
        help="run one prompt (one turn) and exit",
        description="Send one prompt to an agent and print its answer on stdout (tool calls "
        "and the turn's end on stderr).",
        epilog="exit status: 0; 1 the turn ended in error, the session could not be saved "
        "or is in use, the local model could not start or the output could not be written; "
        "2 a usage or dsh.yml error; 130 interrupted; 141 output closed; 143 terminated; "
        "129 terminal closed; 131 quit (Ctrl-\\, SIGQUIT) (docs/cli.md)",
    )
    run.add_argument(
        "prompt",
        nargs="*",
        help="what to ask the agent (words joined by spaces); - is the text on stdin, set "
        "off by a blank line: git diff | dsh run review this diff -",
    )
    run.add_argument("--json", action="store_true", help="print session events as JSON lines")
    chat = sub.add_parser(
        "chat",
        help="talk to an agent interactively",
        description="Talk to an agent. While it works, a line steers the running turn.",
        epilog="in the chat: /help lists the commands (/queue TEXT, /compact, /resume ID, "
        "/plugins, /model, /quit); //TEXT sends /TEXT; Ctrl-C cancels a turn, twice quits; input "
        "that is not a terminal is read line by line as a script. exit status: 0; 1 the "
        "session could not be saved or the output written, or (input not a terminal) a "
        "turn ended in error or a command failed; 2 a usage or dsh.yml error; 141 output "
        "closed; 143 terminated; 129 terminal closed; 131 quit (SIGQUIT, Ctrl-\\ without "
        "the line editor) (docs/cli.md)",
    )
    for talking in (run, chat):  # also after the command, where llm users put it
        talking.add_argument(
            "-m",
            "--model",
            type=_model,
            metavar="MODEL",
            default=argparse.SUPPRESS,
            help="as dsh -m",
        )
        talking.add_argument(
            "-s", "--system", metavar="TEXT", help="the system prompt, in place of dsh.yml's"
        )
        going_on = talking.add_mutually_exclusive_group()
        going_on.add_argument(
            "--continue",
            dest="continue_",
            action="store_true",
            help="continue the stored session of this workspace updated last (needs a "
            "plugin that stores sessions: dsh-persistence)",
        )
        going_on.add_argument(
            "--session",
            metavar="ID",
            help="continue stored session ID (or a unique prefix of one), from any workspace",
        )
    config = sub.add_parser("config", help="check the configuration (dsh.yml)")
    config_sub = config.add_subparsers(dest="config_command", required=True)
    config_sub.add_parser(
        "check",
        help="validate dsh.yml and every plugin section (status 1 and a line per problem, if any)",
    )
    name_choices(config_sub)  # "the following arguments are required: {check}"
    models = sub.add_parser("models", help="list the models, and the one dsh run uses")
    models.add_argument("--json", action="store_true", help="print a JSON list")
    tools = sub.add_parser("tools", help="list the tools an agent is offered")
    tools.add_argument("--json", action="store_true", help="print a JSON list")
    for plugin, command in commands.values():
        command_parser = sub.add_parser(command.name, help=command.help)
        if command.configure is not None:
            try:
                command.configure(command_parser)
            except Exception as error:  # that command says so; the others still work
                unready = Parser(prog=f"dsh {command.name}", add_help=False)
                unready.add_argument("dsh_rest", nargs=argparse.REMAINDER)
                unready.set_defaults(
                    dsh_unready=f"plugin {plugin!r} failed to set up command "
                    f"{command.name!r}: {exception_words(error)}"
                )
                sub.choices[command.name] = unready
    return parser


_VALUED = frozenset(("-p", "-c", "--config", "-m", "--model", "--cwd"))


def shortened(before: list[str], parser: argparse.ArgumentParser) -> str | None:
    """Why an option before the command is refused, when it is the start of a long one
    of ``parser`` (``--conf``, which argparse would have taken for ``--config``); an
    option that is nothing of the kind is left to argparse."""
    known = [name for name in parser._option_string_actions if name.startswith("--")]
    if "--help" not in known:  # the parser of the options before the command has none
        known.append("--help")
    for option in before:
        if option == "--":  # what follows is not an option
            break
        name = option.partition("=")[0]
        meant = [whole for whole in known if whole.startswith(name)]
        if name.startswith("--") and name not in known and name != "--" and meant:
            return (
                f"unknown option {name!r} (options are not shortened: did you mean "
                f"{' or '.join(meant)}?)"
            )
    return None


def leading(arguments: list[str]) -> list[str]:
    """The arguments before the command (the first word that is not an option or the
    value of one)."""
    at = 0
    while at < len(arguments) and arguments[at].startswith("-") and arguments[at] != "-":
        at += 2 if takes_next(arguments[at]) else 1
    return arguments[:at]


def takes_next(option: str) -> bool:
    """Whether the value of ``option`` is the next argument: ``-c`` and ``--config``,
    and short flags run together as argparse reads them (``-vc FILE``, not ``-vcFILE``)."""
    if option.startswith("--") or option in _VALUED:
        return option in _VALUED
    for index, letter in enumerate(option[1:], start=1):
        if f"-{letter}" in _VALUED:
            return index == len(option) - 1  # -vcFILE holds its value
    return False


def config_not_found(error: DshError, args: argparse.Namespace) -> str:
    """What to add to ``error`` when it is the ``-c`` file not found with ``--cwd``
    given: a relative -c is from the current directory, not from --cwd."""
    from dsh._config_yaml import NOT_FOUND
    from dsh.errors import ConfigError

    config, cwd = getattr(args, "config", None), getattr(args, "cwd", None)
    if not (isinstance(error, ConfigError) and error.reason.startswith(NOT_FOUND)):
        return ""
    if config is None or cwd is None or Path(config).is_absolute():
        return ""
    return "; -c is relative to the current directory, not to --cwd"
