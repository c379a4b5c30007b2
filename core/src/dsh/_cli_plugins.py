"""The plugins as the ``dsh`` command loads and shows them: ``dsh plugins``, ``dsh
version [-v]``, and the start-up that keeps help and versions at hand when a plugin
fails to load (the plugins that failed are left out, the others still load)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from dsh.errors import DshError, PluginLoadError, exception_words

if TYPE_CHECKING:
    from dsh.plugins import PluginManager

__all__ = ["APPROVALS", "RENDERER", "load_plugins", "loaded", "plugins_command", "version_command"]

#: The names under which the commands register their own hook objects (the renderer,
#: the approval prompter): parts of dsh, not plugins a user loaded.
RENDERER, APPROVALS = "dsh-cli", "dsh-cli-approvals"


def load_plugins(
    known: argparse.Namespace, rest: list[str]
) -> tuple[PluginManager, dict[str, str]]:
    """The plugin manager of this run (``known``: dsh's options before the command, its
    ``-p`` values the plugins chosen), and the plugins that failed to load, by name, each
    with its error. A failure stops every command but help, ``dsh version`` and, for a
    plugin that fails to load, ``dsh plugins`` (``rest``: the words from the command on):
    for those, the plugins that failed are left out and the others load; any other error
    leaves only dsh-core. A warning says each failure, but not before ``dsh plugins``'
    listing, whose row for the plugin says it (once, its name and the reason). The
    errors, as printed here and kept, have the keys hidden (``hide_keys``; an import's
    exception may quote one), as ``dsh run`` hides them."""
    from dsh._cli_keys import hide_keys
    from dsh.plugins import create_plugin_manager

    select: Sequence[str] = known.plugins

    try:
        return create_plugin_manager(select=select), {}
    except DshError as error:
        listing = rest[:1] == ["plugins"] and isinstance(error, PluginLoadError)
        if not (listing or _about_dsh(rest)):
            raise
        listed = listing and not _about_dsh(rest)  # the listing says each failure
        each = error.paragraphs() if isinstance(error, PluginLoadError) else [str(error)]
        for paragraph in [] if listed else each:  # each prefixed: grep finds every one
            print(hide_keys(f"dsh: warning: {paragraph}", known), file=sys.stderr)
        if isinstance(error, PluginLoadError):
            failed = {
                e.name: hide_keys(exception_words(e.cause), known) for e in (error, *error.more)
            }
            try:
                pm = create_plugin_manager(select=[*select, *(f"no:{n}" for n in failed)])
            except DshError:
                pass
            else:
                if not listed:
                    print(f"dsh: (left out: {', '.join(failed)})", file=sys.stderr)
                return pm, failed
        print("dsh: (only dsh-core is loaded)", file=sys.stderr)
        return create_plugin_manager(select=select, load_entry_points=False), {}


def _about_dsh(rest: list[str]) -> bool:
    """True for help (no command, -h) and ``dsh version``: they work without plugins."""
    return not rest or rest[0] in ("version", "-h", "--help") or "--help" in rest or "-h" in rest


def loaded(pm: PluginManager) -> list[str]:
    """A line for each plugin of ``pm`` that ``dsh plugins`` would list (name,
    distribution and version): not the command's own parts, nor the event watch a
    harness registers on first use."""
    from dsh._watch import NAME
    from dsh.plugins import list_plugins

    return [
        f"{i.name} ({f'{i.distribution} {i.version}' if i.distribution else 'explicit'})"
        for i in list_plugins(pm)
        if i.name not in (RENDERER, APPROVALS, NAME)
    ]


def plugins_command(args: argparse.Namespace, pm: PluginManager, failed: dict[str, str]) -> int:
    """The loaded plugins, then each that ``failed`` to load (name -> its error), marked
    with its error in place of hooks; status 1 if one failed."""
    from dsh.plugins import PluginInfo, installed_plugins, list_plugins

    infos = list_plugins(pm)
    if failed:  # its distribution and version as installed (not loaded: no hooks)
        infos += [PluginInfo(n, d, v, ()) for n, d, v in installed_plugins() if n in failed]
    if args.json:
        rows = [
            {
                "name": i.name,
                "distribution": i.distribution,
                "version": i.version,
                "hooks": list(i.hooks),
                "error": failed.get(i.name),
            }
            for i in infos
        ]
        print(json.dumps(rows, indent=2))
        return 1 if failed else 0
    print(f"{'NAME':<20} {'DISTRIBUTION':<24} HOOKS")
    for info in infos:
        origin = f"{info.distribution} {info.version}" if info.distribution else "(explicit)"
        hooks = ", ".join(info.hooks) or "-"
        if info.name in failed:
            hooks = f"failed to load: {failed[info.name]}"
        print(f"{info.name:<20} {origin:<24} {hooks}")
    return 1 if failed else 0


def version_command(args: argparse.Namespace, pm: PluginManager, failed: dict[str, str]) -> int:
    """dsh-core's version; with -v every installed plugin's too, so a bug report shows
    them all: each not loaded is marked, one that failed to load with its error, and each
    distribution of a name another one defines too."""
    from dsh import __version__
    from dsh.plugins import clashes, installed_plugins

    print(f"dsh-core {__version__}")
    if getattr(args, "verbose_version", False):  # dsh --version has no -v
        clashing = clashes()
        for name, distribution, version in installed_plugins():
            if name in clashing:  # refused wherever it would load, so never loaded
                others = " and ".join(d for d in clashing[name] if d != distribution)
                state = f", clashing: {others} defines it too; not loaded"
            elif name in failed:
                state = f", failed to load: {failed[name]}"
            else:
                state = "" if pm.has_plugin(name) else ", not loaded"
            print(f"{distribution} {version} (plugin {name}{state})")
    return 0
