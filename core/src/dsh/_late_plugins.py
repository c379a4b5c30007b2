"""A plugin registered on a harness that has started: the hooks the harness calls once
while it starts (``register_tools``, ``register_models``, ``register_settings``, ...,
``harness_started``) never run for it, so its tools would be "unknown tool", its
models unknown, its settings unread, with nothing said. Its other hooks (observers,
interception hooks) do run from its registration on, which is why it is a warning,
not a refusal: pluggy, and pytest for a plugin registered late, take it too. Checked
when plugins change only, never on a call.

A plugin registered while the harness starts (from a start-up hook's impl) misses the
start-up hooks whose call has begun: a call walks the impls there were when it began.
It is warned of those, and only those.

Under ``-W error`` the warning raises out of ``PluginManager.register``, which then
unregisters the plugin again: a registration that raised has registered nothing.
Harnesses sharing one plugin manager warn of a registration once.
"""

from __future__ import annotations

import warnings
from typing import Final
from weakref import WeakKeyDictionary

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
    """A plugin was registered after the harness started (or while it started), and
    implements hooks the harness calls once while it starts, whose call had begun: those
    impls will never run."""


#: Per plugin manager, the plugin each name was last warned of: two harnesses sharing one
#: (each with its listener) warn of a registration once.
_WARNED: WeakKeyDictionary[pluggy.PluginManager, dict[str, object]] = WeakKeyDictionary()


class StartedPlugins:
    """A listener of the plugin manager's changes, added before the harness calls its
    first start-up hook and told as each begins: warns of each plugin registered from
    then on that implements one whose call has begun."""

    __slots__ = ("_begun", "_known", "_pm")

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self._pm: Final = pm
        self._known = self._names()
        self._begun: list[str] = []

    def begin(self, hook: str) -> None:
        """The harness calls start-up hook ``hook`` next: a plugin registered from now
        on misses it (a call walks the impls there were when it began)."""
        self._begun.append(hook)

    def _names(self) -> set[str]:
        return {name for name, plugin in self._pm.list_name_plugin() if plugin is not None}

    def __call__(self) -> None:
        names = self._names()
        new, self._known = names - self._known, names
        warned = _WARNED.setdefault(self._pm, {})
        for gone in warned.keys() - names:  # unregistered (a registration that raised)
            del warned[gone]
        for name in sorted(new):
            plugin = self._pm.get_plugin(name)
            if warned.get(name) is plugin:  # another harness's listener warned of it
                continue
            hooks = [hook for hook in START_HOOKS if hook in self._begun]
            hooks = [hook for hook in hooks if _implements(self._pm, name, hook)]
            if hooks:
                warned[name] = plugin
                warnings.warn(
                    f"plugin {name!r} was registered {self._when()}, so its "
                    f"{', '.join(hooks)} impl{'s' if len(hooks) > 1 else ''} will never run "
                    "(the harness calls those hooks once, while it starts; its other hooks "
                    "do run): register it before entering the harness",
                    LatePluginWarning,
                    stacklevel=4,  # the caller of PluginManager.register
                )

    def _when(self) -> str:
        if "harness_started" in self._begun:
            return "after the harness started"
        return f"while the harness was starting (from its {self._begun[-1]} call on)"


def _implements(pm: pluggy.PluginManager, name: str, hook: str) -> bool:
    caller = getattr(pm.hook, hook, None)
    if not isinstance(caller, pluggy.HookCaller):
        return False
    return any(impl.plugin_name == name for impl in caller.get_hookimpls())
