"""Installed plugins that do not run: not registered under their name (not selected,
turned off, or entry points not loaded), with no plugin from the module their entry
point names (or a module inside it) standing in under another name; and plugins that
are not installed at all (``missing``). One distribution
may ship several plugins: a sibling's being loaded does not make this one run. Settings
for one in dsh.yml or an agent's options would apply to nothing (a policy plugin's
rules, silently), so the config checks ask about them. A start-up hook failing in an
installed plugin is told with how to leave that plugin out (``leave_out_hint``)."""

from __future__ import annotations

import types
from typing import TYPE_CHECKING

from dsh.errors import DshError, leave_out

if TYPE_CHECKING:
    from dsh.plugins import PluginManager

__all__ = ["leave_out_hint", "left_out", "mark_refused", "missing", "not_loaded"]


def left_out(pm: PluginManager, name: str) -> bool:
    named = _installed(pm).get(name)
    if named is None or pm.get_plugin(name) is not None:
        return False
    return not _stands_in(pm, named)


def not_loaded(pm: PluginManager) -> list[str]:
    """The installed plugins that do not run (``left_out``), by name."""
    return sorted(name for name in _installed(pm) if left_out(pm, name))


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


#: The attribute the dispatcher marks a refusal of what a register_* hook registered
#: with: (plugin, hook). The refusal is raised as it is (its words name the plugin).
_REFUSED = "_dsh_refused_registration"


def mark_refused(error: DshError, plugin: str, hook: str) -> None:
    """Mark ``error``, dsh's refusal of what ``plugin`` registered in ``hook`` (not a
    Tool, a name registered twice), for ``leave_out_hint``."""
    setattr(error, _REFUSED, (plugin, hook))


def leave_out_hint(error: DshError, pm: PluginManager) -> str:
    """For a start-up hook's failure of a plugin from an installed distribution: a line
    saying how to run without it (as for a plugin that fails to import); else "". Not
    for a ``DshError`` of the plugin's: its words say what to do (an unusable session
    directory of dsh-persistence's, say); but for dsh's refusal of what a ``register_*``
    hook registered (``mark_refused``): the plugin is at fault, and the user may only
    have installed it."""
    from dsh.errors import HookError
    from dsh.hookspecs import CALL_STYLES

    refused = getattr(error, _REFUSED, None)
    if refused is not None:
        plugin, hook = refused
    elif isinstance(error, HookError) and not isinstance(error.cause, DshError):
        plugin, hook = error.plugin, error.hook
    else:
        return ""
    distribution, _ = pm.distributions.get(plugin, ("dsh-core", ""))
    if distribution == "dsh-core" or CALL_STYLES.get(hook) not in ("register", "setup"):
        return ""
    return "\n" + leave_out(plugin, distribution)
