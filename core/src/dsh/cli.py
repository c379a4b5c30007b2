"""The ``dsh`` command.

argparse, not click/typer: it is in the stdlib, costs nothing to import (``dsh --help``
must start fast) and plugins extend it through ``register_commands`` without
depending on a CLI framework.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dsh.errors import DshError

if TYPE_CHECKING:
    from dsh.commands import Command
    from dsh.plugins import PluginManager

__all__ = ["main"]

BUILT_IN = ("plugins", "version", "run", "chat", "config")


def _global_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-p",
        dest="plugins",
        action="append",
        default=[],
        metavar="NAME",
        help="load plugin NAME even if autoload is off; -p no:NAME blocks it",
    )
    parser.add_argument(
        "-c", "--config", type=Path, metavar="FILE", help="config file (default: ./dsh.yml)"
    )
    parser.add_argument(
        "-m",
        "--model",
        metavar="MODEL",
        help="a model from dsh.yml, local, or provider:model[@base_url]",
    )
    parser.add_argument("--cwd", type=Path, metavar="DIR", help="the workspace (default: .)")
    parser.add_argument("-v", "--verbose", action="store_true", help="tracebacks on errors")


def _parser(commands: dict[str, Command]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dsh", description="dsh: a pluggable agent harness")
    _global_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    plugins = sub.add_parser("plugins", help="list loaded plugins")
    plugins.add_argument("--json", action="store_true", help="print JSON")
    version = sub.add_parser("version", help="print versions")
    version.add_argument("-v", dest="verbose_version", action="store_true", help="with plugins")
    run = sub.add_parser("run", help="run one prompt (one turn) and exit")
    run.add_argument("prompt", help="what to ask the agent")
    run.add_argument("--json", action="store_true", help="print session events as JSON lines")
    sub.add_parser("chat", help="talk to an agent interactively")
    config = sub.add_parser("config", help="configuration")
    config_sub = config.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    config_sub.add_parser("check", help="validate dsh.yml and every plugin section")
    for command in commands.values():
        command_parser = sub.add_parser(command.name, help=command.help)
        if command.configure is not None:
            command.configure(command_parser)
    return parser


def _commands(pm: PluginManager) -> dict[str, Command]:
    from dsh.commands import Command

    found: dict[str, Command] = {}
    origin: dict[str, str] = {}

    def register(plugin: str, command: Command) -> None:
        if not isinstance(command, Command):
            raise DshError(f"plugin {plugin!r} registered {command!r}, which is not a dsh Command")
        if command.name in found or command.name in BUILT_IN:
            first = origin.get(command.name, "dsh-core")
            raise DshError(
                f"command {command.name!r} is registered twice: by {first!r} and {plugin!r}"
            )
        found[command.name] = command
        origin[command.name] = plugin

    pm.relay.register_commands(register)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    # Plugins are chosen (-p) before the full parser exists: they add commands to it.
    early = argparse.ArgumentParser(add_help=False)
    _global_options(early)
    known, _ = early.parse_known_args(arguments)
    try:
        from dsh.plugins import create_plugin_manager

        pm = create_plugin_manager(select=known.plugins)
        commands = _commands(pm)
    except DshError as error:
        return _fail(error, known.verbose)
    parser = _parser(commands)
    args = parser.parse_args(arguments)
    try:
        if args.command == "plugins":
            return _plugins(args, pm)
        if args.command == "version":
            return _version(args, pm)
        if args.command in ("run", "chat"):
            return _agent_command(args, pm)
        if args.command == "config":
            from dsh._cli_agent import check_config

            return check_config(args, pm)
        if args.command in commands:
            return _run(commands[args.command], args, pm)
    except DshError as error:
        return _fail(error, args.verbose)
    parser.print_help()
    return 0


def _agent_command(args: argparse.Namespace, pm: PluginManager) -> int:
    import anyio

    from dsh import _cli_agent

    args.workspace = (args.cwd or Path.cwd()).resolve()
    command = _cli_agent.run if args.command == "run" else _cli_agent.chat
    return anyio.run(command, args, pm)


def _fail(error: DshError, verbose: bool) -> int:
    if verbose:
        raise error
    print(f"dsh: error: {error}", file=sys.stderr)
    return 2


def _run(command: Command, args: argparse.Namespace, pm: PluginManager) -> int:
    from dsh.commands import CommandContext

    context = CommandContext(args, pm, args.config)
    result = command.run(context)
    if inspect.isawaitable(result):
        import anyio

        pending = result

        async def wait() -> int | None:
            return await pending

        return int(anyio.run(wait) or 0)
    return int(result or 0)


def _plugins(args: argparse.Namespace, pm: PluginManager) -> int:
    from dsh.plugins import list_plugins

    infos = list_plugins(pm)
    if args.json:
        rows = [
            {
                "name": i.name,
                "distribution": i.distribution,
                "version": i.version,
                "hooks": list(i.hooks),
            }
            for i in infos
        ]
        print(json.dumps(rows, indent=2))
        return 0
    for info in infos:
        origin = f"{info.distribution} {info.version}" if info.distribution else "(explicit)"
        hooks = ", ".join(info.hooks) or "-"
        print(f"{info.name:<20} {origin:<24} {hooks}")
    return 0


def _version(args: argparse.Namespace, pm: PluginManager) -> int:
    from dsh import __version__
    from dsh.plugins import list_plugins

    print(f"dsh-core {__version__}")
    if args.verbose_version:
        for info in list_plugins(pm):
            if info.distribution and info.distribution != "dsh-core":
                print(f"{info.distribution} {info.version} (plugin {info.name})")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
