"""A plugin's own hookspecs (its ``dsh_hookspecs``), checked against those a manager has
(for ``dsh.plugins.PluginManager``): a spec the manager has already, the very function
(plugins sharing one specs module, or one plugin registered again), is not added again;
another spec of a hook that has one is refused."""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Any

import pluggy

from dsh import hookspecs

__all__ = ["has_spec_already", "spec_clash"]


def has_spec_already(hook: pluggy.HookRelay, namespace: Any, name: str) -> bool:
    """Whether hook ``name`` has, as its spec, ``namespace``'s function already."""
    caller = getattr(hook, name, None)
    spec = caller.spec if isinstance(caller, pluggy.HookCaller) else None
    if spec is None:
        return False
    # the same namespace (an instance's methods are new objects at each lookup), or the
    # very function imported into another module
    return spec.namespace is namespace or spec.function is getattr(namespace, name, None)


def spec_clash(pm: pluggy.PluginManager, namespace: Any, owners: Mapping[str, str]) -> str | None:
    """Why a plugin's ``namespace`` of specs cannot be added (or None): it specifies a
    hook that has another spec, dsh-core's or another plugin's (``owners``: hook ->
    the plugin whose specs brought it)."""
    for name in dir(namespace):
        if pm.parse_hookspec_opts(namespace, name) is None or has_spec_already(
            pm.hook, namespace, name
        ):
            continue
        caller = getattr(pm.hook, name, None)
        if not isinstance(caller, pluggy.HookCaller) or caller.spec is None:
            continue
        ours = f"its dsh_hookspecs ({_describe(namespace)}) specify the hook {name!r}"
        if caller.spec.namespace is hookspecs:
            return (
                f"{ours}, which is dsh-core's own; give the plugin's hook another name "
                "(implementing a core hook takes no spec)"
            )
        owner = owners.get(name)
        by = f"plugin {owner!r}" if owner is not None else "the plugin manager"
        return (
            f"{ours}, which {by} specified already (in {_describe(caller.spec.namespace)}); "
            "a hook has one spec: give one of them another name, or have both plugins use "
            "one module as dsh_hookspecs"
        )
    return None


def _describe(namespace: Any) -> str:
    if isinstance(namespace, types.ModuleType):
        return namespace.__name__
    if isinstance(namespace, type):
        return f"{namespace.__module__}.{namespace.__qualname__}"
    return repr(namespace)
