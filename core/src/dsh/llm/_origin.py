"""Where an HTTP model's settings and API key come from, as its messages name them.

A model of a ``models:`` entry of dsh.yml names its settings ``models.NAME.KEY`` (the
timeout that ran out, the ``max_wait`` a server's wait was over, the variable of the
key); a model given as ``-m provider:model`` has no entry, so its messages give the
values alone. The key's variable is said as the entry's ``api_key_env`` when the entry
names it, and as the provider's own otherwise, whatever the variable is called (an
entry may name ``OPENAI_API_KEY`` itself, as docs/config.md's example does).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypeAlias
from urllib.parse import urlsplit

from dsh._config_models import ModelConfig
from dsh._model_values import may_be_a_key
from dsh.llm._retry_after import MAX_RETRY_AFTER

__all__ = [
    "Origin",
    "Timeouts",
    "capped",
    "key_from",
    "key_place",
    "key_unset",
    "over_max_wait",
    "seconds",
    "server_of",
    "setting",
    "timeouts",
]

#: (seconds, its setting or None) of the timeout and of the read timeout (the wait for
#: the next bytes of an answer).
Timeouts: TypeAlias = tuple[tuple[float, str | None], tuple[float, str | None]]


@dataclass(frozen=True, slots=True)
class Origin:
    """``entry``: the settings are those of a ``models:`` entry (or written as one, in
    code), named ``models.NAME.KEY``; False for ``-m provider:model`` (and the local
    model), whose settings no file holds. ``default_key``: ``api_key_env`` is the
    provider's own variable, filled in by ``build_model`` because no entry named one."""

    entry: bool = True
    default_key: bool = False


def setting(name: str, key: str, origin: Origin) -> str | None:
    """``models.NAME.KEY``, the setting's place in dsh.yml; None without an entry."""
    return f"models.{name}.{key}" if origin.entry else None


def seconds(value: float) -> str:
    """``value`` as a message gives a number of seconds: ``3 s``, ``0.5 s``."""
    return f"{value:g} s"


def key_place(name: str, config: ModelConfig, origin: Origin) -> str:
    """The key's variable in a message: a provider's own by its name; one an entry
    names with its setting's place, and its name unless it may be a key pasted into
    that field (``may_be_a_key``)."""
    variable = config.api_key_env or ""
    if origin.default_key:
        return f"the environment variable {variable}"
    where = f"models.{name}.api_key_env"
    if may_be_a_key(variable):
        return f"the environment variable named by {where}"
    return f"the environment variable {variable} ({where})"


def key_unset(name: str, config: ModelConfig, origin: Origin, *, blank: bool = False) -> str:
    """Why the key cannot be read when its variable is unset, or (``blank``) set but
    empty or whitespace only (no model's name)."""
    state = "is set but blank" if blank else "is not set"
    if origin.default_key:  # no entry names it: say whose key it is and how to name another
        return (
            f"the environment variable {config.api_key_env} {state} (it holds "
            f"{config.provider}'s API key; api_key_env in a models: entry of dsh.yml "
            "names another)"
        )
    return f"{key_place(name, config, origin)} {state} (it holds the API key)"


def server_of(base_url: str) -> str:
    """The server of ``base_url`` as a message names it: scheme, host and port only (no
    user name or password, path or query, where a key may be written)."""
    parts = urlsplit(base_url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"


def key_from(name: str, config: ModelConfig, origin: Origin) -> str:
    """Where the key sent came from, for a server's refusal of it: the variable's name,
    never the key (nor a name that may be a key pasted into ``api_key_env``)."""
    variable = config.api_key_env or ""
    if not origin.default_key and may_be_a_key(variable):
        return f"the key from the environment variable named by models.{name}.api_key_env"
    return f"the key from {variable}"


def over_max_wait(
    name: str,
    wait: float | None,
    max_wait: float,
    origin: Origin | None,
    asked: float | None = None,
) -> str:
    """Why the server's ``wait`` is not waited for; ``origin`` None: ``max_wait`` was
    given in code, not by a setting. ``asked``: the wait the server asked for, when
    ``wait`` is it capped (``capped``)."""
    where = None if origin is None else setting(name, "max_wait", origin)
    said = f"the server asks to wait {seconds(wait or 0.0)}{capped(wait, asked)}"
    said += f", more than max_wait {seconds(max_wait)}"
    return f"{said}: {where}" if where else said


def capped(wait: float | None, asked: float | None) -> str:
    """What a message says after a server's ``wait`` that is the cap on it
    (``MAX_RETRY_AFTER``, a day), ``asked`` the wait as the server wrote it (None: not
    known, a wait in an error's body): `` (capped: it asked for 99999 s)``; "" for a
    wait below the cap."""
    if wait is None or wait < MAX_RETRY_AFTER:
        return ""
    if asked is None or asked <= wait:
        return " (the most dsh takes; it may have asked for more)"
    said = f"{asked:.0f} s" if math.isfinite(asked) and asked < 1e15 else "an endless wait"
    return f" (capped, the most dsh takes: it asked for {said})"


def timeouts(name: str, config: ModelConfig, origin: Origin) -> Timeouts:
    """The timeouts of ``config``, each with the setting that gives it (``timeout``,
    and ``read_timeout`` for the wait for the next bytes, when set)."""
    total = (config.timeout, setting(name, "timeout", origin))
    if config.read_timeout is None:
        return total, total
    return total, (config.read_timeout, setting(name, "read_timeout", origin))
