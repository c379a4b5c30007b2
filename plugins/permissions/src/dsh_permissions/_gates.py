"""One permission gate per harness: the entry point's plugin and a ``Permissions``
object registered beside it would each check, and ask about, every tool call."""

from __future__ import annotations

from typing import Any

__all__ = ["second_gate"]


def second_gate(pm: Any, gate_class: type) -> str | None:
    """Why ``pm`` holds more than one permission gate (the ``dsh_permissions`` module of
    the entry point, or an instance of ``gate_class``), or None."""
    import dsh_permissions

    # by name, not pluggy's get_plugins(): that is a set, which refuses a plugin object
    # that cannot be hashed (a dataclass instance), blaming this plugin for it
    list_name_plugin = getattr(pm, "list_name_plugin", None)
    if list_name_plugin is None:
        return None
    names = sorted(
        str(name)
        for name, plugin in list_name_plugin()
        if plugin is dsh_permissions or isinstance(plugin, gate_class)
    )
    if len(names) < 2:
        return None
    listed = ", ".join(repr(name) for name in names)
    return (
        f"dsh-permissions: {len(names)} permission gates are registered ({listed}); each "
        "would check, and ask about, every tool call: register one (a Permissions object "
        "instead of the entry point: select=['no:permissions'], or -p no:permissions)"
    )
