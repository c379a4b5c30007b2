"""The environment variables plugins declare secret with ``register_secrets``.

Each is left out of the environment of the ``bash`` tool's commands, and the secret in
its value (all of it, or what the plugin's ``values`` function finds in it: a URL's
password, say) is hidden like a model API key: from every tool result before it is
logged or sent to the model, and from log records (``dsh._secrets``). The values are
read once, when the harness starts, from its ``env`` and the process's environment.
Secrets that no variable holds (a password a plugin reads from its settings) are added
with ``add_values`` (``Harness.add_secrets``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import final

from dsh._secrets import MIN_LENGTH, redact, remember
from dsh.errors import DshError

__all__ = ["SecretParts", "SecretVariables"]

#: What a plugin may pass as ``values``: the secrets in a variable's value.
SecretParts = Callable[[str], Iterable[str]]


@final
class SecretVariables:
    """The secret variables the plugins of one harness registered, and their values in
    the harness's ``env`` and the process's environment."""

    __slots__ = ("_envs", "_names", "_values")

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._envs: tuple[Mapping[str, str], ...] = (
            (os.environ,) if env is None else (os.environ, env)
        )
        self._names: set[str] = set()
        self._values: set[str] = set()

    def add(self, plugin: str, variable: object, values: SecretParts | None = None) -> None:
        """``register(variable, values=None)`` of ``register_secrets``: hide ``$variable``
        from commands and its value (or what ``values(value)`` returns) everywhere."""
        if not isinstance(variable, str) or not variable or "=" in variable or "\0" in variable:
            raise DshError(
                f"plugin {plugin!r} registers a secret variable {_shown(variable)}: expected "
                "the name of an environment variable (a non-empty str without '=' or NUL)"
            )
        if values is not None and not callable(values):
            raise DshError(
                f"plugin {plugin!r} registers the secret variable {variable!r} with values="
                f"{type(values).__name__}: expected a function from the variable's value "
                "to the secrets in it, or None (the whole value is secret)"
            )
        self._names.add(variable)
        found: set[str] = set()
        for env in self._envs:
            value = env.get(variable, "")
            if value.strip():
                found.update(_secrets_in(plugin, variable, value, values))
        found = {secret for secret in found if len(secret) >= MIN_LENGTH}
        remember(found)  # log records hide them from now on
        self._values.update(found)

    def add_values(self, values: Iterable[str]) -> None:
        """Hide ``values`` too (those of 8 characters or more): secrets that no variable
        holds (``Harness.add_secrets``)."""
        if isinstance(values, str):  # one secret, not a list of them: its characters
            raise DshError("add_secrets takes an iterable of str, not a str: [secret]")
        found = list(values)
        wrong = [type(value).__name__ for value in found if not isinstance(value, str)]
        if wrong:
            raise DshError(
                f"add_secrets: each secret must be a str, not {', '.join(sorted(set(wrong)))}"
            )
        kept = {value for value in found if len(value) >= MIN_LENGTH}
        remember(kept)  # log records and dsh.redact hide them from now on
        self._values.update(kept)

    def names(self) -> frozenset[str]:
        """The variables left out of commands' environment."""
        return frozenset(self._names)

    def values(self) -> set[str]:
        """The secrets found in their values (8 characters or more, as for keys)."""
        return set(self._values)


def _secrets_in(plugin: str, variable: str, value: str, values: SecretParts | None) -> set[str]:
    """The secrets in ``value``: all of it (and without the whitespace around it, as a
    key is read) when ``values`` is None, else what ``values(value)`` returns. A failing
    ``values`` stops start-up naming the plugin, its message cleared of the value."""
    if values is None:
        return {value, value.strip()}
    try:
        returned = values(value)
        if isinstance(returned, str):  # one secret, not a list of them: its characters
            raise TypeError("returned a str, not an iterable of str")
        found = list(returned)
    except Exception as exc:
        detail = redact(f"{type(exc).__name__}: {exc}", (value,))
        raise DshError(
            f"plugin {plugin!r}: finding the secrets in ${variable} failed: {detail}"
        ) from None  # not chained: its traceback may quote the value
    wrong = [type(secret).__name__ for secret in found if not isinstance(secret, str)]
    if wrong:
        raise DshError(
            f"plugin {plugin!r}: the secrets found in ${variable} must be str, "
            f"not {', '.join(sorted(set(wrong)))}"
        )
    return {secret for secret in found if secret}


def _shown(variable: object) -> str:
    """A wrong variable name for a message: a str quoted up to an ``=`` (what follows
    may be the secret itself, ``NAME=value``), anything else by its type only."""
    if not isinstance(variable, str):
        return f"of type {type(variable).__name__}"
    name, equals, _ = variable.partition("=")
    return repr(name + ("=..." if equals else ""))
