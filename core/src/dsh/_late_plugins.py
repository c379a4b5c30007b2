"""A plugin registered on a harness that has started: the hooks the harness calls once
while it starts (``register_tools``, ``register_models``, ``register_settings``, ...,
``harness_started``) never run for it, so its tools would be "unknown tool", its
models unknown, its settings unread, with nothing said. Its other hooks (observers,
interception hooks) do run from its registration on, which is why it is a warning,
not a refusal: pluggy, and pytest for a plugin registered late, take it too. Checked
when plugins change only, never on a call.
"""

from __future__ import annotations

import warnings
from typing import Final

import pluggy

__all__ = ["START_HOOKS", "LatePluginWarning", "StartedPlugins"]

#: The hooks a harness calls once, while it starts (``Harness.__aenter__``).
START_HOOKS: Final = (
    "register_settings",
    "register_secrets",
    "register_history_reducers",
    "register_models",
    "register_tools",
    "harness_started",
)


class LatePluginWarning(UserWarning):
    """A plugin was registered after the harness started, and implements hooks the
    harness calls only while it starts: those impls will never run."""


class StartedPlugins:
    """A listener of the plugin manager's changes, added when the harness has run its
    start-up hooks: warns of each plugin registered from then on that implements one."""

    __slots__ = ("_known", "_pm")

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self._pm: Final = pm
        self._known = self._names()

    def _names(self) -> set[str]:
        return {name for name, plugin in self._pm.list_name_plugin() if plugin is not None}

    def __call__(self) -> None:
        names = self._names()
        new, self._known = names - self._known, names
        for name in sorted(new):
            hooks = [hook for hook in START_HOOKS if _implements(self._pm, name, hook)]
            if hooks:
                warnings.warn(
                    f"plugin {name!r} was registered after the harness started, so its "
                    f"{', '.join(hooks)} impl{'s' if len(hooks) > 1 else ''} will never run "
                    "(the harness calls those hooks once, while it starts; its other hooks "
                    "do run): register it before entering the harness",
                    LatePluginWarning,
                    stacklevel=4,  # the caller of PluginManager.register
                )


def _implements(pm: pluggy.PluginManager, name: str, hook: str) -> bool:
    caller = getattr(pm.hook, hook, None)
    if not isinstance(caller, pluggy.HookCaller):
        return False
    return any(impl.plugin_name == name for impl in caller.get_hookimpls())
