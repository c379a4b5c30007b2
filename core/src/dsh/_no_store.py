"""Why no plugin stores sessions, and what to do: for ``dsh run --continue``, ``dsh
chat``'s ``/resume`` and ``harness.agents.resume``/``load_stored`` alike. The switch that
turned ``persistence`` off is named when the user turned it off: ``-p no:persistence``
(``select=["no:persistence"]`` in Python), DSH_LOAD_PLUGINS, DSH_DISABLE_PLUGIN_AUTOLOAD,
or (in Python) ``load_entry_points=False``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from dsh._plugin_off import why_off

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
    if pm.is_blocked(STORE) or pm.is_left_out(STORE) or STORE in (pm.installed or {}):
        # blocked, left out, or installed with nothing known stopping it: what turns it on
        purpose = " to store and continue sessions"
        return why_off(pm, STORE, "dsh-persistence", env, cli=cli, purpose=purpose)
    return "dsh-persistence is not installed; install it to store and continue sessions"
