"""Installed plugins that do not run: not registered under their name (not selected,
turned off, or entry points not loaded), with no plugin from the module their entry
point names (or a module inside it) standing in under another name; and plugins that
are not installed at all (``missing``). One distribution
may ship several plugins: a sibling's being loaded does not make this one run. Settings
for one in dsh.yml or an agent's options would apply to nothing (a policy plugin's
rules, silently), so the config checks ask about them."""

from __future__ import annotations

import types
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dsh.plugins import PluginManager

__all__ = ["left_out", "missing"]


def left_out(pm: PluginManager, name: str) -> bool:
    named = _installed(pm).get(name)
    if named is None or pm.get_plugin(name) is not None:
        return False
    return not _stands_in(pm, named)


def missing(pm: PluginManager, name: str) -> bool:
    """Whether plugin ``name`` is not installed: no entry point of that name, nothing
    registered under it, and no plugin of the package ``dsh_NAME`` (dsh's own plugins'
    module) standing in under another name."""
    if name in _installed(pm) or pm.get_plugin(name) is not None:
        return False
    return not _stands_in(pm, f"dsh_{name}")


def _installed(pm: PluginManager) -> dict[str, str]:
    """The installed entry points' names -> their modules (found once per manager)."""
    if pm.installed is None:
        from dsh._entry_points import discover, modules

        pm.installed = modules(discover())
    return pm.installed


def _stands_in(pm: PluginManager, package: str) -> bool:
    """Whether a registered plugin comes from module ``package`` or a module in it."""
    for _, plugin in pm.list_name_plugin():
        if plugin is None:
            continue
        if isinstance(plugin, types.ModuleType):
            modules = [plugin.__name__]
        else:  # a subclass of the package's plugin class stands in too
            modules = [kind.__module__ for kind in type(plugin).__mro__]
        if any(module == package or module.startswith(package + ".") for module in modules):
            return True
    return False
