"""Installed plugins that do not run: not registered under their name (not selected,
turned off, or entry points not loaded), with no plugin from the module their entry
point names (or a module inside it) standing in under another name. One distribution
may ship several plugins: a sibling's being loaded does not make this one run. Settings
for one in dsh.yml or an agent's options would apply to nothing (a policy plugin's
rules, silently), so the config checks ask about them."""

from __future__ import annotations

import types
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dsh.plugins import PluginManager

__all__ = ["left_out"]


def left_out(pm: PluginManager, name: str) -> bool:
    from dsh._entry_points import discover, modules

    if pm.installed is None:
        pm.installed = modules(discover())
    named = pm.installed.get(name)
    if named is None or pm.get_plugin(name) is not None:
        return False
    for _, plugin in pm.list_name_plugin():
        if plugin is not None:
            if isinstance(plugin, types.ModuleType):
                module = plugin.__name__
            else:
                module = type(plugin).__module__
            if module == named or module.startswith(named + "."):
                return False
    return True
