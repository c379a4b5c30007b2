"""The arguments a hook impl takes, checked at registration against the hook's spec:
dsh passes each positionally, chosen by name, to the impl's plain parameters without a
default only (a keyword-only one without a default is refused, and so is a default
on a parameter named like one of the hook's arguments: it would never be passed)."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

__all__ = ["arguments_problem"]

_STARS: dict[inspect._ParameterKind, str] = {
    inspect.Parameter.VAR_POSITIONAL: "*",
    inspect.Parameter.VAR_KEYWORD: "**",
}


def arguments_problem(name: str, function: Any, allowed: Sequence[str] | None) -> str | None:
    """Why impl ``name`` cannot take the hook's arguments (``allowed``), or None: it
    takes ``*args`` or ``**kwargs`` (pluggy would pass nothing in them), or a keyword-only
    one without a default (impls are called positionally), or names an argument the hook
    does not have, or gives one the hook has a default (it would never be passed), or is
    a method whose ``self`` is missing (its first parameter, given the plugin object, is
    named like one of the hook's arguments).
    ``allowed`` None: a hook without a spec yet (an
    optionalhook of a plugin not loaded), whose arguments are not known."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):  # pluggy reports what it cannot read
        return None
    if any(p.kind in _STARS for p in parameters):
        names = f": {', '.join(allowed)}" if allowed else ""
        return (
            f"{name}({_written(parameters)}): dsh passes hook arguments by name (none to "
            f"*args or **kwargs); name the ones you use{names}"
        )
    if any(p.kind is p.KEYWORD_ONLY and p.default is p.empty for p in parameters):
        return (  # accepted, the impl would fail at every call: impls are called so
            f"{name}({_written(parameters)}): dsh passes hook arguments positionally "
            "(chosen by the parameters' names), none to a keyword-only parameter; drop "
            "the '*'"
        )
    if allowed is None:
        return None
    unbound = _without_self(function)
    if unbound is not None and unbound[0].name in allowed:
        written = _written(unbound)
        return (
            f"{name}({written}): a method's first parameter is given the plugin object, "
            f"so {unbound[0].name!r} would never be the hook's argument; add self first: "
            f"def {name}(self, {written})"
        )
    taken = [
        p.name
        for p in parameters
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    unknown = [arg for arg in taken if arg not in allowed]
    if unknown:
        return (
            f"{name}({', '.join(taken)}): the hook has no argument {unknown[0]!r}; "
            f"an impl takes any of {', '.join(allowed)} (by name)"
        )
    defaulted = [p.name for p in parameters if p.default is not p.empty and p.name in allowed]
    if defaulted:
        return (  # accepted, it would always be the default: a parameter with a default is
            # the impl's own, never passed (pluggy's rule)
            f"{name}({_written(parameters)}): {defaulted[0]!r} is an argument of the hook, "
            "but a parameter with a default is the impl's own and is never passed; drop "
            "the default to be given it"
        )
    return None


def _without_self(function: Any) -> list[inspect.Parameter] | None:
    """The parameters of a method bound to its plugin object, its first (the one Python
    gives the object, ``self``) included; None for what is not such a method."""
    if not inspect.ismethod(function):
        return None
    try:
        parameters = list(inspect.signature(function.__func__).parameters.values())
    except (TypeError, ValueError):
        return None
    first = parameters[0] if parameters else None
    if first is None or first.kind not in (first.POSITIONAL_ONLY, first.POSITIONAL_OR_KEYWORD):
        return None
    return parameters


def _written(parameters: Sequence[inspect.Parameter]) -> str:
    """The parameters' names as the impl writes them: ``request, *args``, ``*, request``."""
    written: list[str] = []
    for p in parameters:
        if p.kind is p.KEYWORD_ONLY and not any(w.startswith("*") for w in written):
            written.append("*")
        written.append(_STARS.get(p.kind, "") + p.name)
    return ", ".join(written)
