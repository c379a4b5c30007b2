"""The ``register`` callbacks of the start-up hooks, checked against how the author
calls them: ``register(Model, name=...)`` in ``register_settings`` would otherwise fail
with Python's words for dsh's internal callback (``add_settings() got an unexpected
keyword argument 'name'``); this says the hook, the call and the right one."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Final

from dsh.errors import DshError

__all__ = ["USAGE", "checked"]

#: How each start-up hook's ``register`` is called, as the docs (hooks.md) show it.
USAGE: Final = {
    "register_settings": "register(Model) or register(Model, section='NAME')",
    "register_secrets": "register('VARIABLE') or register('VARIABLE', values=function)",
    "register_history_reducers": "register('name/what', reducer)",
    "register_models": "register(model) or register(model, name='NAME')",
    "register_tools": (
        "register(tool), once per tool (a tool's options are given where it is made: "
        "@tool(mutating=...))"
    ),
}


def checked(hook: str, callback: Callable[..., None]) -> Callable[..., None]:
    """``callback`` (called ``callback(plugin, ...)``), refusing arguments it does not
    take with a DshError naming the plugin, the hook and how to call ``register``."""
    signature = inspect.signature(callback)

    def register(plugin: str, *args: Any, **kwargs: Any) -> None:
        try:
            signature.bind(plugin, *args, **kwargs)
        except TypeError as exc:  # bind's words: "got an unexpected keyword argument 'x'"
            raise DshError(
                f"plugin {plugin!r}: {hook}'s register() {exc}; call it as {USAGE[hook]}"
            ) from None
        callback(plugin, *args, **kwargs)

    return register
