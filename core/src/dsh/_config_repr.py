"""What ``repr()`` and ``str()`` of the settings show: not the keys written into them.

``HttpModel``'s repr hides a key written into ``base_url``'s query and the credentials
in ``headers``; the settings it is built from (``ModelConfig``, and ``Config`` holding
them) are printed too: in an assertion's diff, a ``print(config)``, a plugin's ``%r``
log call. So their reprs show a secret-named parameter's value as ``***``
(``hide_parameters``, whatever its length) and each header's credentials as ``***``
after their scheme (``Bearer ***``: ``dsh._header_secrets``); a ``Config``'s leaves out
``raw`` (the file as written, which repeats them) and hides the values the plugins'
settings declare secret (an agent's options keep them as written).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from dsh._header_secrets import header_credentials
from dsh._secrets import HIDDEN, hide_parameters, redact

if TYPE_CHECKING:
    from dsh._config_models import Config

__all__ = ["config_repr", "hidden_settings"]

#: The fields of ``Config`` its repr shows, in their order (not ``raw``).
_SHOWN = ("source", "models", "default_model", "agents", "sections")


def hidden_settings(args: Iterable[tuple[str | None, Any]]) -> Iterator[tuple[str | None, Any]]:
    """A ``ModelConfig``'s repr arguments (pydantic's ``__repr_args__``), its
    ``base_url``'s secret parameters and its headers' credentials hidden."""
    for name, value in args:
        if name == "base_url" and isinstance(value, str):
            yield name, hide_parameters(value)
        elif name == "headers" and isinstance(value, Mapping):
            yield name, {header: _hidden_header(header, text) for header, text in value.items()}
        else:
            yield name, value


def _hidden_header(name: str, value: str) -> str:
    """``value`` with each credential in it (of any length) as ``***``."""
    for credential in sorted(header_credentials({name: value}), key=len, reverse=True):
        if credential:
            value = value.replace(credential, HIDDEN)
    return value


def config_repr(config: Config) -> str:
    """``Config(source=..., models=..., ...)`` without ``raw``, the values its plugins
    declare secret hidden."""
    fields = ", ".join(f"{name}={getattr(config, name)!r}" for name in _SHOWN)
    return redact(f"{type(config).__name__}({fields})", tuple(config.declared))
