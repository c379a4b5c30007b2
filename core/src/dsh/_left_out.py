"""Installed plugins that do not run: not registered under their name (not selected,
turned off, or entry points not loaded), with no plugin of their package standing in
under another name. Settings for one in dsh.yml or an agent's options would apply to
nothing (a policy plugin's rules, silently), so the config checks ask about them."""

from __future__ import annotations

import types
from typing import TYPE_CHECKING

from dsh.errors import DshError

if TYPE_CHECKING:
    from dsh.plugins import PluginManager

__all__ = ["left_out"]


def left_out(pm: PluginManager, name: str) -> bool:
    from dsh.plugins import discover, packages

    if pm.installed is None:
        try:
            pm.installed = packages(discover())
        except DshError:  # two distributions claim a name: not this check's to say
            pm.installed = {}
    package = pm.installed.get(name)
    if package is None or pm.get_plugin(name) is not None:
        return False
    for _, plugin in pm.list_name_plugin():
        if plugin is not None:
            if isinstance(plugin, types.ModuleType):
                module = plugin.__name__
            else:
                module = type(plugin).__module__
            if module.split(".")[0] == package:
                return False
    return True
