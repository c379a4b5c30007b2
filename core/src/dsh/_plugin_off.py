"""Why a plugin that is installed does not run, and how to turn it on: the switch that
turned it off is named (``-p no:NAME``, or ``select=["no:NAME"]`` in Python;
DSH_LOAD_PLUGINS; DSH_DISABLE_PLUGIN_AUTOLOAD; in Python ``load_entry_points=False``).
For ``dsh run --continue`` with no plugin storing sessions (``dsh._no_store``) and a
``dsh`` command of one of dsh's own plugins that is left out (``dsh sessions``), and
a ``models:`` entry whose provider dsh does not build (``provider_off``), or a model name
dsh.yml uses that no entry declares (``model_off``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING

from dsh.plugins import TRUE_VALUES

if TYPE_CHECKING:
    from dsh.plugins import PluginManager

__all__ = ["model_off", "own_command_off", "provider_off", "why_off"]


def own_command_off(
    command: str, pm: PluginManager, installed: Collection[str], failed: Collection[str]
) -> str | None:
    """Why ``dsh`` command ``command`` of one of dsh's own plugins is not there: its
    distribution is not among those ``installed``, the plugin failed to load (one of
    ``failed``), or it is installed and left out (``why_off``); None when no plugin of
    dsh's brings it, or it runs."""
    from dsh._entry_points import bringing

    needed = bringing(command)
    if needed is None or pm.has_plugin(needed[0]):
        return None
    name, distribution = needed
    if distribution not in installed:
        return f"it comes from {distribution}, which is not installed"
    why = "it failed to load (above)" if name in failed else why_off(pm, name, distribution)
    return f"it comes from plugin {name!r}; {why}"


def why_off(
    pm: PluginManager,
    name: str,
    distribution: str,
    env: Mapping[str, str] | None = None,
    *,
    cli: bool = True,
    purpose: str = "",
) -> str:
    """Why plugin ``name`` of ``distribution``, installed, does not run, and what turns
    it on: blocked, left out by DSH_LOAD_PLUGINS, DSH_DISABLE_PLUGIN_AUTOLOAD or
    (``cli=False``) ``load_entry_points=False``; none of these, ``-p NAME``. ``cli``: the
    switches are spelt as ``dsh``'s ``-p`` options; otherwise as ``Harness(select=[...])``.
    ``purpose`` (" to ...") follows the advice to leave a block out."""
    env = os.environ if env is None else env

    def give(value: str) -> str:
        return f"-p {value}" if cli else f"select=[{value!r}]"

    if pm.is_blocked(name):
        return (
            f"{distribution} is installed but disabled by {give('no:' + name)}; leave "
            f"that out{purpose}"
        )
    if pm.is_left_out(name):
        if "DSH_LOAD_PLUGINS" in env:
            chosen = env["DSH_LOAD_PLUGINS"].strip()
            said = f"DSH_LOAD_PLUGINS={chosen}" if chosen else "DSH_LOAD_PLUGINS, empty,"
            return (
                f"{distribution} is installed but {said} leaves it out; add {name} to "
                f"it, or give {give(name)}"
            )
        if cli or env.get("DSH_DISABLE_PLUGIN_AUTOLOAD", "").lower() in TRUE_VALUES:
            # the dsh command always loads entry points: autoload is what is off
            names = "-p names" if cli else "select names"
            return (
                f"{distribution} is installed but DSH_DISABLE_PLUGIN_AUTOLOAD loads only "
                f"what {names}; give {give(name)}"
            )
        return (
            f"{distribution} is installed but its entry point is not loaded "
            f'(load_entry_points=False); pass plugins=[("{name}", '
            f"{distribution.replace('-', '_')})] or leave load_entry_points at True"
        )
    return f"enable {distribution} with {give(name)}"


def provider_off(pm: PluginManager) -> Callable[[str], str]:
    """What follows "unknown provider P" of a ``models:`` entry when an installed plugin
    does not run: the plugin ``P`` names, turned off or left out, or else the plugins
    not loaded, one of which may serve the model (not for a slip of a built-in
    provider's name, whose near miss is said); "" when every installed plugin runs."""
    from dsh._left_out import not_loaded
    from dsh._provider_table import BUILT_IN
    from dsh._quoted import did_you_mean

    def off(provider: str) -> str:
        idle = not_loaded(pm)
        if provider in idle and pm.is_blocked(provider):
            return f"; plugin {provider!r} is installed but turned off (-p no:{provider})"
        if provider in idle:
            return (
                f"; plugin {provider!r} is installed but not loaded: load it "
                f"(DSH_LOAD_PLUGINS, -p {provider})"
            )
        if did_you_mean(provider, BUILT_IN):
            return ""
        return _may_serve(idle)

    return off


def model_off(pm: PluginManager) -> Callable[[], str]:
    """What follows "unknown model N" of a name dsh.yml uses (``model:``, an agent's, a
    plugin's model setting) and declares nowhere, with no near miss: the plugins
    installed but not loaded, one of which may serve it; "" when every installed
    plugin runs."""
    from dsh._left_out import not_loaded

    return lambda: _may_serve(not_loaded(pm))


def _may_serve(idle: list[str]) -> str:
    if not idle:
        return ""
    return (
        f"; if a plugin serves this model, it is not loaded (installed, not loaded: "
        f"{', '.join(idle)})"
    )
