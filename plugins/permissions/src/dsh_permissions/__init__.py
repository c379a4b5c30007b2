"""dsh-permissions: decide, before a tool runs, whether it may run — and fail closed.

The plugin implements ``tools_execute`` ``tryfirst``: a denied call gets an error
result with the reason (the tool never runs), an allowed one goes on to the core
executor. Modes (``default``, ``accept-edits``, ``plan``, ``bypass``) and allow / ask /
deny rules decide; ``ask`` goes to a front end (the ``permission_ask`` hook, then the
core's ``tools_approval``); every decision is logged as a ``permission/decision``
session event.
See docs/permissions.md.

dsh imports this module on every start, ``dsh --help`` included, so it imports nothing
heavy: the checker (and pydantic with it) loads on first use, and the public names
below load when they are first looked up.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dsh import hookimpl
from dsh_permissions import hookspecs as dsh_hookspecs

if TYPE_CHECKING:
    from dsh import ToolCall, ToolResult
    from dsh_permissions._approvals import (
        DECISION_EVENT,
        PermissionAnswer,
        PermissionRequest,
    )
    from dsh_permissions._plugin import Permissions
    from dsh_permissions._settings import Mode, PermissionSettings

__all__ = [
    "DECISION_EVENT",
    "Mode",
    "PermissionAnswer",
    "PermissionRequest",
    "PermissionSettings",
    "Permissions",
    "agent_created",
    "dsh_hookspecs",
    "harness_started",
    "register_settings",
    "tools_execute",
]

_PUBLIC = {
    "DECISION_EVENT": "dsh_permissions._approvals",
    "PermissionAnswer": "dsh_permissions._approvals",
    "PermissionRequest": "dsh_permissions._approvals",
    "Permissions": "dsh_permissions._plugin",
    "Mode": "dsh_permissions._settings",
    "PermissionSettings": "dsh_permissions._settings",
}
# Not ``_plugin``: importing the submodule of that name would overwrite it.
_instance: Permissions | None = None


if not TYPE_CHECKING:  # a type checker sees the imports above: a typo is an error

    def __getattr__(name: str) -> Any:
        module = _PUBLIC.get(name)
        if module is None:
            raise AttributeError(f"module 'dsh_permissions' has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value


def _default() -> Permissions:
    """The instance behind the entry point: no settings of its own."""
    global _instance
    if _instance is None:
        from dsh_permissions._plugin import Permissions

        _instance = Permissions()
    return _instance


@hookimpl
def register_settings(register: Callable[..., None]) -> None:
    """The ``permissions:`` section of ``dsh.yml``."""
    from dsh_permissions._settings import PermissionsSection

    register(PermissionsSection)


@hookimpl
def harness_started(harness: Any) -> None:
    """Refuse rules that misspell a tool's name; warn of rules naming no tool."""
    _default().harness_started(harness)


@hookimpl
def agent_created(agent: Any) -> None:
    """Check the agent's permission settings as soon as it exists."""
    _default().agent_created(agent)


@hookimpl(tryfirst=True)
async def tools_execute(agent: Any, call: ToolCall, turn: int, step: int) -> ToolResult | None:
    """Allow the call (None) or deny it (an error result naming the reason)."""
    return await _default().tools_execute(agent, call, turn, step)
