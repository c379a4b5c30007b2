"""The installed plugins as entry points of group ``dsh`` say: which there are, from
which distribution, and the names two distributions define differently (clashes), which
are refused only where they would load, so leaving one out keeps the others working."""

from __future__ import annotations

from collections.abc import Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Final, NamedTuple

from dsh.errors import DshError

__all__ = [
    "ENTRY_POINT_GROUP",
    "FIRST_PARTY",
    "OWN_PLUGINS",
    "OwnPlugin",
    "PluginNameClash",
    "bringing",
    "clashes",
    "discover",
    "dist_name",
    "installed_plugins",
    "modules",
    "scan",
]

ENTRY_POINT_GROUP = "dsh"


class OwnPlugin(NamedTuple):
    """One of dsh's own plugins: its distribution and the commands it brings, ``dsh``'s
    (``commands``) and chat's (``chat``, without the slash); the session event types its
    history reducers fold (``folds``) and what a history derived without them lacks
    (``unfolded``), which a resume without the plugin warns of (``dsh._unapplied``)."""

    distribution: str
    commands: tuple[str, ...] = ()
    chat: tuple[str, ...] = ()
    folds: tuple[str, ...] = ()
    unfolded: str = ""


#: dsh's own plugins by name: settings for one that is not installed name what to
#: install, ``-p no:NAME`` takes their names even then, and a command of one that is not
#: there names the plugin (with dsh-core alone, ``dsh sessions list``; ``/compact``); a
#: session resumed without one whose reducers folded some of its events says so.
OWN_PLUGINS: Final[Mapping[str, OwnPlugin]] = {
    "compaction": OwnPlugin(
        "dsh-compaction",
        chat=("compact",),
        folds=("compact/summary", "compact/prune"),
        unfolded=(
            "the history is rebuilt without its compactions, so the model is sent the "
            "whole earlier conversation again, which may be far over its context window"
        ),
    ),
    "permissions": OwnPlugin("dsh-permissions"),
    "persistence": OwnPlugin("dsh-persistence", commands=("sessions",)),
}
FIRST_PARTY = frozenset(OWN_PLUGINS)


def bringing(command: str, *, chat: bool = False) -> tuple[str, str] | None:
    """The name and distribution of dsh's own plugin that brings ``dsh`` command
    ``command`` (``chat``: chat's ``/command``); None when none does."""
    for name, plugin in OWN_PLUGINS.items():
        if command in (plugin.chat if chat else plugin.commands):
            return name, plugin.distribution
    return None


def modules(found: Mapping[str, EntryPoint]) -> dict[str, str]:
    """Entry-point name -> the module it names (``pkg.mod`` of ``pkg.mod:attr``)."""
    return {name: ep.value.split(":")[0].strip() for name, ep in found.items()}


class PluginNameClash(DshError):
    """Two installed distributions define one dsh plugin name, pointing at different
    things: which is meant cannot be told, so the name is refused wherever it would load
    (the cause of that plugin's ``PluginLoadError``); left out, it stops nothing."""


def scan() -> tuple[dict[str, EntryPoint], dict[str, list[EntryPoint]]]:
    """Every installed dsh entry point by name, sorted (a name defined twice to the same
    target once), and the clashes: each name distributions define differently, with all
    its entry points, by distribution (the first is the one under the name)."""
    every: dict[str, list[EntryPoint]] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        same = every.setdefault(ep.name, [])
        if all(other.value != ep.value for other in same):
            same.append(ep)
    every = {name: sorted(eps, key=dist_name) for name, eps in sorted(every.items())}
    clashing = {name: eps for name, eps in every.items() if len(eps) > 1}
    return {name: eps[0] for name, eps in every.items()}, clashing


def discover() -> dict[str, EntryPoint]:
    return scan()[0]


def installed_plugins() -> list[tuple[str, str, str]]:
    """Every installed entry-point plugin, loaded or not: (name, distribution, version);
    a name that clashes has a row for each distribution defining it."""
    found, clashing = scan()
    return [
        (name, dist_name(ep), ep.dist.version if ep.dist is not None else "?")
        for name, first in found.items()
        for ep in clashing.get(name, [first])
    ]


def clashes() -> dict[str, list[str]]:
    """Each plugin name two installed distributions define differently -> those
    distributions (a bug report's ``dsh version -v`` marks them)."""
    return {name: [dist_name(ep) for ep in eps] for name, eps in scan()[1].items()}


def dist_name(ep: EntryPoint) -> str:
    return ep.dist.name if ep.dist is not None else "<unknown distribution>"
