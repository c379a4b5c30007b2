"""A call of a hook by name (``relay.call_first_result(hook, **kwargs)`` and the other
call styles of a plugin's own hooks), checked before any impl runs: a misspelt hook would
call nothing, and a missing argument fail the first impl taking it, blamed on its
plugin."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pluggy

__all__ = ["CallArguments", "check_call", "hook_arguments", "specified_hooks"]

#: A hook's arguments: those a call must pass, and every one it may pass, in order.
CallArguments = tuple[frozenset[str], tuple[str, ...]]


def specified_hooks(hooks: pluggy.HookRelay) -> list[str]:
    """The hooks with a spec: the core's, and those loaded plugins added."""
    callers = vars(hooks).values()
    return [c.name for c in callers if isinstance(c, pluggy.HookCaller) and c.has_spec()]


def hook_arguments(hooks: pluggy.HookRelay, hook: str) -> CallArguments:
    """The arguments of ``hook`` (a spec once added never changes: cache them); a
    ``ValueError`` for a hook no loaded plugin specifies (``HookRelay.implemented`` is
    False for it, whatever impls of it are loaded)."""
    caller = getattr(hooks, hook, None)
    spec = caller.spec if isinstance(caller, pluggy.HookCaller) else None
    if spec is None:
        from dsh._quoted import did_you_mean

        typo = did_you_mean(hook, specified_hooks(hooks))
        why = (
            "impls of it are loaded, but not the plugin that specifies it; call it only "
            f"when relay.implemented({hook!r}) says so"
            if (isinstance(caller, pluggy.HookCaller) and caller.get_hookimpls())
            else "no loaded plugin specifies it"
        )
        raise ValueError(f"unknown hook {hook!r}: {why}{typo}")
    return frozenset(spec.argnames), (*spec.argnames, *spec.kwargnames)


def check_call(hook: str, arguments: CallArguments, kwargs: Mapping[str, Any]) -> None:
    """A ``TypeError`` for a call of ``hook`` missing one of its arguments or passing
    one it has not (the caller's mistake, not an impl's)."""
    required, allowed = arguments
    missing = [name for name in allowed if name in required and name not in kwargs]
    extra = [name for name in kwargs if name not in allowed]
    if missing or extra:
        what = f"missing argument {missing[0]!r}" if missing else f"no argument {extra[0]!r}"
        raise TypeError(f"call of hook {hook!r}: {what}; it takes {', '.join(allowed)} (by name)")
