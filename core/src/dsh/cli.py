"""The ``dsh`` command.

argparse, not click/typer: it is in the stdlib, costs nothing to import (``dsh --help``
must start fast) and plugins extend it through ``register_commands`` without
depending on a CLI framework.
"""

from __future__ import annotations

if __name__ == "__main__":  # python -m dsh.cli: before the imports below, as dsh/__main__.py
    from _dsh_command import quiet_ctrl_c

    quiet_ctrl_c()

import argparse
import inspect
import operator
import os
import shlex
import sys
from collections.abc import Awaitable, Callable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from dsh import _pipes
from dsh._cli_args import (
    Parser,
    UsageError,
    build_parser,
    config_not_found,
    global_options,
    leading,
    shortened,
)
from dsh._cli_interrupted import exit_on_ctrl_c, interrupts_raise
from dsh._cli_logging import logging_to_stderr
from dsh._cli_misplaced import command_option_before, given_command, global_option_after
from dsh._cli_output import OutputError, tag_output_errors
from dsh._groups import first, only
from dsh.errors import ConfigError, DshError, HookError, PluginLoadError, exception_words

if TYPE_CHECKING:
    from dsh.commands import Command
    from dsh.plugins import PluginManager

__all__ = ["main"]

BUILT_IN = ("plugins", "version", "run", "chat", "config", "models", "tools")


def _commands(pm: PluginManager) -> dict[str, tuple[str, Command]]:
    """Plugin commands by name, each with the name of the plugin that registered it."""
    from dsh.commands import Command

    found: dict[str, tuple[str, Command]] = {}

    def register(plugin: str, command: Command) -> None:
        if not isinstance(command, Command):
            raise DshError(f"plugin {plugin!r} registered {command!r}, which is not a dsh Command")
        if command.name in found or command.name in BUILT_IN:
            first = found[command.name][0] if command.name in found else "dsh-core"
            raise DshError(
                f"command {command.name!r} is registered twice: by {first!r} and {plugin!r}"
            )
        found[command.name] = (plugin, command)

    pm.relay.register_commands(register)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not _standard_streams():
        return 2
    tag_output_errors()
    with _pipes.kept():  # a config read from a pipe is read once (docs/cli.md: -c)
        return _main(arguments, process=argv is None)


def _main(arguments: list[str], process: bool = False) -> int:
    # Plugins are chosen (-p) before the full parser exists: they add commands to it.
    # Only the options before the command are dsh's own (`dsh version -v` is not -v).
    early = Parser(prog="dsh", add_help=False)
    global_options(early)
    before = leading(arguments)
    known, _ = early.parse_known_args(before)
    try:
        interrupts_raise()  # caught below from here, not the entry point's (_dsh_command)
        status = _start(arguments, early, before, known)
    except (KeyboardInterrupt, BaseExceptionGroup) as error:
        # Ctrl-C as dsh starts, or outside until_terminated (in a task group: a group)
        if known.verbose or not only(error, KeyboardInterrupt):
            raise
        status = 130
        print("\n" * sys.stderr.isatty() + "dsh: interrupted", file=sys.stderr)  # after ^C
    if status == 130 and process:  # dsh's own process (not main(argv)) ends interrupted:
        exit_on_ctrl_c()  # a Ctrl-C more while it exits ends it at once, with 130
    return status


def _start(
    arguments: list[str], early: Parser, before: list[str], known: argparse.Namespace
) -> int:
    """Load the plugins, parse ``arguments`` (``before``: dsh's own options, ``known``
    as ``early`` read them) and run the command; its exit status."""
    pm: PluginManager | None = None
    try:
        unknown = shortened(before, early)
        if unknown is not None:
            raise UsageError(unknown)
        from dsh._cli_plugins import load_plugins

        # help and versions stay at hand to find out what is wrong
        pm, failed = load_plugins(known, arguments[len(before) :])
        commands = _commands(pm)
        parser = build_parser(commands)
        command_option_before(before, arguments[len(before) :], parser)
        _check_command(arguments[len(before) :], commands, pm, failed)
        # --help: printed here (Parser._print_message)
        args, extras = parser.parse_known_args(arguments)
        unready = getattr(args, "dsh_unready", None)  # its plugin's configure failed
        if unready is not None and not args.dsh_version:
            raise DshError(unready)
        if extras and isinstance(getattr(args, "prompt", None), list):
            # argparse fills a `*` prompt once: `dsh run hi -m MODEL more` left `more`
            args.prompt, extras = _prompt_words(extras, args.prompt)
        if strays := early.parse_known_args(before)[1]:  # before the command: dsh's own
            parser.error(f"unrecognized arguments: {' '.join(strays)}")
        if extras:
            global_option_after(extras, arguments[len(before) :], parser)
            given = given_command(arguments[len(before) :], parser)  # its usage, not dsh's
            given.error(f"unrecognized arguments: {' '.join(extras)}")  # as parse_args
        named = arguments[len(before)] if len(arguments) > len(before) else None
        if named in commands:  # its arguments are its own (its --cwd, dest cwd, and a
            # dest "command" of its subcommands too); dsh's are those before it
            # (docs/hooks.md: register_commands)
            args = argparse.Namespace(**vars(known), command=named, dsh_command=args)
    except DshError as error:
        return _fail(error, known, pm)
    except (BrokenPipeError, OutputError) as error:
        return _unwritten(error)
    try:
        with logging_to_stderr(args.verbose):
            status = _dispatch(args, pm, commands, failed)
        if status is None:
            parser.print_help()
            status = 0
        sys.stdout.flush()  # now, so that a closed pipe is noticed here and not at exit
    except DshError as error:
        return _fail(error, args, pm)
    except (BrokenPipeError, OutputError) as error:
        return _unwritten(error)
    return status


def _prompt_words(extras: list[str], prompt: list[str]) -> tuple[list[str], list[str]]:
    """``prompt`` with ``extras`` after it when they are all words (after ``--`` too),
    and what is left over: ``extras`` as they are otherwise, for the error naming them
    (a new list: ``prompt`` may be the parser's default)."""
    ending = extras.index("--") if "--" in extras else len(extras)
    if any(word.startswith("-") and word != "-" for word in extras[:ending]):
        return prompt, extras
    return [*prompt, *(word for at, word in enumerate(extras) if at != ending)], []


def _unwritten(error: OSError) -> int:
    """The output could not be written: a closed pipe (``dsh ... | head``, the reader
    went away) stops quietly, status 141; a full disk, an I/O error is said in one line
    (as dsh run says it, _render), status 1. What is left unwritten is dropped, so that
    nothing fails again at exit."""
    from dsh._render import CLOSED_STATUS, discard

    discard(sys.stdout)
    if isinstance(error, BrokenPipeError):
        return CLOSED_STATUS
    print(f"dsh: error: cannot write the output: {error}", file=sys.stderr)
    return 1


def _standard_streams() -> bool:
    """A stream closed before dsh started (``<&-``, ``>&-``) is None in Python: a closed
    stdin is no input, a closed stderr drops messages; a closed stdout leaves nowhere for
    the answer, so dsh stops at once (False) rather than run a turn no one can read."""
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the life of the process
    if sys.stdin is None:
        sys.stdin = open(os.devnull)  # noqa: SIM115
    if sys.stdout is None:
        print("dsh: error: standard output is closed: nowhere to write", file=sys.stderr)
        return False
    return True


def _check_command(
    rest: list[str],
    commands: dict[str, tuple[str, Command]],
    pm: PluginManager,
    failed: dict[str, str],
) -> None:
    """What argparse would only call an invalid choice, said with the way out: a command
    that is not there because its plugin is not installed, or not loaded (one of dsh's
    own: which, and what turns it on; ``failed``: the plugins that failed to load)."""
    if not rest or rest[0].startswith("-") or rest[0] in (*BUILT_IN, *commands):
        return
    from dsh._plugin_off import own_command_off
    from dsh.plugins import installed_plugins

    installed = installed_plugins()
    off = own_command_off(rest[0], pm, {d for _, d, _ in installed}, failed)
    if off is not None:
        raise UsageError(f"no command {rest[0]!r}: {off}")
    idle = list(dict.fromkeys(name for name, _, _ in installed if not pm.has_plugin(name)))
    if idle:
        raise UsageError(
            f"no command {rest[0]!r}: the commands of plugins that are not loaded are "
            f"missing (not loaded: {', '.join(idle)})"
        )


def _dispatch(
    args: argparse.Namespace,
    pm: PluginManager,
    commands: dict[str, tuple[str, Command]],
    failed: dict[str, str],
) -> int | None:
    """Run the command; None when none was given (``failed``: the plugins that failed to
    load, for ``dsh version -v``)."""
    from dsh._cli_plugins import plugins_command, version_command

    if args.dsh_version:  # dsh --version: as dsh version, whatever follows
        return version_command(args, pm, failed)
    _check_cwd(args.cwd)
    if args.command == "plugins":
        return plugins_command(args, pm, failed)
    if args.command == "version":
        return version_command(args, pm, failed)
    if args.command in ("run", "chat"):
        return _agent_command(args, pm)
    if args.command in ("models", "tools"):
        import anyio

        from dsh._cli_list import models, tools

        status: int = anyio.run(models if args.command == "models" else tools, args, pm)
        return status
    if args.command == "config":
        from dsh._cli_agent import check_config

        return check_config(args, pm)
    if args.command in commands:
        plugin, command = commands[args.command]
        return _run(plugin, command, args, pm)
    return None


def _check_cwd(cwd: Path | None) -> None:
    """``--cwd DIR`` must name a directory: dsh.yml is looked for and tools run there."""
    try:
        if cwd is None or cwd.is_dir():
            return
        what = "is not a directory" if cwd.exists() else "does not exist"
    except OSError as exc:  # a name too long: is_dir raises for it
        what = f"cannot be read ({exc.strerror or exc})"
    raise UsageError(f"--cwd {str(cwd)!r}: {what}; give the directory to work in")


def _agent_command(args: argparse.Namespace, pm: PluginManager) -> int:
    import anyio

    from dsh._cli_prompt import config_on_stdin, read_prompt, stdin_taken, utf8_text

    if args.system is not None:  # sent as the prompt's words are: UTF-8 or refused
        args.system = utf8_text(args.system, f"{args.command}: -s")
    # -c /dev/stdin: read before the harness reads the config, stdin would be the
    # prompt (chat's lines) and the config would be empty
    config = config_on_stdin(args.config, args.cwd)
    command: Callable[[argparse.Namespace, PluginManager], Awaitable[int]]
    if args.command == "run":
        if not args.prompt:
            typed = sys.stdin.isatty() or config is not None
            piped = "" if typed else "; to send what is piped in, give -: ... | dsh run -"
            raise UsageError(f'run: give the prompt (dsh run "list the files"){piped}')
        args.prompt_piped = "-" in args.prompt  # for the commands to paste (_cli_continue)
        args.prompt = read_prompt(args.prompt, config=config)
        from dsh._cli_agent import run as command
    else:
        if config is not None:  # chat reads its prompts from stdin
            raise UsageError(stdin_taken("chat", config))
        from dsh._cli_chat import chat as command
    from dsh._cli_signals import until_terminated

    return anyio.run(until_terminated, command, args, pm)


def _fail(error: DshError, args: argparse.Namespace, pm: PluginManager | None = None) -> int:
    """The error as one line on stderr (after its traceback, with -v, but for a
    UsageError), model API keys in them shown as ``***``; its exit status (2 unless the
    error's type says otherwise). An installed plugin failing at start-up (``pm``'s
    ``register_*`` hooks, ``harness_started``) is said with how to leave it out."""
    message = error.for_user() if isinstance(error, HookError) else str(error)
    if isinstance(error, PluginLoadError):  # each plugin that failed prefixed, for grep
        message = "\ndsh: error: ".join(error.paragraphs())
    if pm is not None:  # a start-up hook's failure, or dsh's refusal of what it registered
        from dsh._left_out import leave_out_hint

        message += leave_out_hint(error, pm)
    if isinstance(error, ConfigError) and error.more and getattr(args, "command", "") != "config":
        where = f" -c {shlex.quote(str(args.config))}" if getattr(args, "config", None) else ""
        message += f"; `dsh{where} config check` lists them all"
    message += config_not_found(error, args)
    _report(error, f"dsh: error: {message}", args)
    return error.exit_status


def _report(error: BaseException, line: str | None, args: argparse.Namespace) -> None:
    """``error``'s traceback (with -v, but for a usage error) and ``line`` on stderr,
    keys hidden (a plugin's message may quote one)."""
    text = ""
    if args.verbose and not isinstance(error, UsageError):
        import traceback

        text = "".join(traceback.format_exception(error))
    if line is not None:
        text += line + "\n"
    _write(text, args)


def _write(text: str, args: argparse.Namespace) -> None:
    """``text`` on stderr, keys hidden (a plugin's message may quote one)."""
    from dsh._cli_keys import hide_keys, said

    text = said(text, args)
    own = getattr(args, "dsh_command", None)  # a plugin command's arguments: its -m, say
    if own is not None:  # its own -m; the config and workspace are dsh's (its --config
        # may name a file of its own, a FIFO even, not dsh.yml)
        model = argparse.Namespace(**{**vars(args), "model": getattr(own, "model", None)})
        text = hide_keys(text, model)
    sys.stderr.write(text)
    sys.stderr.flush()


def _run(plugin: str, command: Command, args: argparse.Namespace, pm: PluginManager) -> int:
    """Run plugin ``plugin``'s command. A DshError is the plugin's message to the user;
    any other exception is a bug of the plugin, reported in one line naming it (its
    traceback instead under -v), status 1."""
    from dsh.commands import CommandContext

    workspace = (args.cwd or Path.cwd()).resolve()
    context = CommandContext(args.dsh_command, pm, args.config, workspace)
    try:
        result = command.run(context)
        if inspect.isawaitable(result):
            import anyio

            from dsh._cli_signals_wake import signals_wake_the_loop

            pending = result

            async def wait() -> int | None:
                with signals_wake_the_loop():  # a Ctrl-C a thread of its own takes too
                    return await pending

            result = anyio.run(wait)
    except DshError:
        raise
    except Exception as error:
        if only(error, BrokenPipeError):
            raise BrokenPipeError from error
        if only(error, OutputError):  # printing failed: not the plugin's failure
            raise first(error) from None
        line = (
            f"dsh: error: plugin {plugin!r} failed in command {command.name!r}: "
            f"{exception_words(error)} (run with -v for the traceback)"
        )
        _report(error, None if args.verbose else line, args)
        return 1
    if result is None:
        return 0
    if not isinstance(result, bool):  # True is no status: exit 1 would read as failure
        with suppress(TypeError):
            status = operator.index(result)
            if 0 <= status <= 255:  # the system keeps the low byte: 256 would exit 0
                return status
    import reprlib

    line = (
        f"dsh: error: plugin {plugin!r}: command {command.name!r} returned "
        f"{reprlib.repr(result)} ({type(result).__name__}), not an exit status "
        "(an int from 0 to 255, or None for 0)\n"
    )
    _write(line, args)
    return 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
