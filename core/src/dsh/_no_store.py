"""Why no plugin stores sessions, and what to do: for ``dsh run --continue``, ``dsh
chat``'s ``/resume`` and ``harness.agents.resume``/``load_stored`` alike. The switch that
turned ``persistence`` off is named when the user turned it off: ``-p no:persistence``
(``select=["no:persistence"]`` in Python), DSH_LOAD_PLUGINS, DSH_DISABLE_PLUGIN_AUTOLOAD,
or (in Python) ``load_entry_points=False``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from dsh.plugins import TRUE_VALUES

if TYPE_CHECKING:
    from dsh.plugins import PluginManager

__all__ = ["STORE", "no_store"]

#: The plugin of dsh-persistence, the one that stores sessions.
STORE = "persistence"


def no_store(pm: PluginManager, env: Mapping[str, str] | None = None, *, cli: bool = True) -> str:
    """Why no plugin stores sessions, and what to do: ``persistence`` blocked, installed
    but left out by DSH_LOAD_PLUGINS, DSH_DISABLE_PLUGIN_AUTOLOAD or (``cli=False``)
    ``load_entry_points=False``, or not installed (then installing it is the way, not
    ``-p persistence``). ``cli``: the switches are spelt as
    ``dsh``'s ``-p`` options; otherwise as ``Harness(select=[...])``."""
    env = os.environ if env is None else env

    def give(value: str) -> str:
        return f"-p {value}" if cli else f"select=[{value!r}]"

    if pm.is_blocked(STORE):
        return (
            f"dsh-persistence is installed but disabled by {give('no:' + STORE)}; leave "
            "that out to store and continue sessions"
        )
    if pm.is_left_out(STORE):
        if "DSH_LOAD_PLUGINS" in env:
            chosen = env["DSH_LOAD_PLUGINS"].strip()
            said = f"DSH_LOAD_PLUGINS={chosen}" if chosen else "DSH_LOAD_PLUGINS, empty,"
            return (
                f"dsh-persistence is installed but {said} leaves it out; add {STORE} to "
                f"it, or give {give(STORE)}"
            )
        if cli or env.get("DSH_DISABLE_PLUGIN_AUTOLOAD", "").lower() in TRUE_VALUES:
            # the dsh command always loads entry points: autoload is what is off
            names = "-p names" if cli else "select names"
            return (
                f"dsh-persistence is installed but DSH_DISABLE_PLUGIN_AUTOLOAD loads only "
                f"what {names}; give {give(STORE)}"
            )
        return (
            "dsh-persistence is installed but its entry point is not loaded "
            '(load_entry_points=False); pass plugins=[("persistence", dsh_persistence)] '
            "or leave load_entry_points at True"
        )
    if STORE in (pm.installed or {}):  # installed, and not left out: nothing known stops it
        return f"enable dsh-persistence with {give(STORE)}"
    return "dsh-persistence is not installed; install it to store and continue sessions"
