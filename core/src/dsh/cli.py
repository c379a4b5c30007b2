"""The ``dsh`` command.

argparse, not click/typer: it is in the stdlib, costs nothing to import (``dsh --help``
must start fast) and plugins extend it through ``register_commands`` without
depending on a CLI framework.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from dsh.errors import DshError

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dsh", description="dsh: a pluggable agent harness")
    parser.add_argument(
        "-p",
        dest="plugins",
        action="append",
        default=[],
        metavar="NAME",
        help="load plugin NAME even if autoload is off; -p no:NAME blocks it",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    plugins = sub.add_parser("plugins", help="list loaded plugins")
    plugins.add_argument("--json", action="store_true", help="print JSON")
    version = sub.add_parser("version", help="print versions")
    version.add_argument("-v", dest="verbose_version", action="store_true", help="with plugins")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "plugins":
            return _plugins(args)
        if args.command == "version":
            return _version(args)
    except DshError as error:
        if args.verbose:
            raise
        print(f"dsh: error: {error}", file=sys.stderr)
        return 2
    parser.print_help()
    return 0


def _plugins(args: argparse.Namespace) -> int:
    from dsh.plugins import create_plugin_manager, list_plugins

    infos = list_plugins(create_plugin_manager(select=args.plugins))
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
        print(f"{info.name:<16} {origin:<24} {hooks}")
    return 0


def _version(args: argparse.Namespace) -> int:
    from dsh import __version__

    print(f"dsh-core {__version__}")
    if args.verbose_version:
        from dsh.plugins import create_plugin_manager, list_plugins

        for info in list_plugins(create_plugin_manager(select=args.plugins)):
            if info.distribution and info.distribution != "dsh-core":
                print(f"{info.distribution} {info.version} (plugin {info.name})")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
