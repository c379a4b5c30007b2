"""The models plugins register (``register_models``), as the checks of ``dsh.yml`` see
them: a model name the file uses without declaring it under ``models:`` is refused (the
file is checked before any model is registered), but when a plugin registers that name
the refusal says so, and which entry to add (``models: {scripted: {provider:
scripted}}``: a provider dsh does not build, so the plugin's model serves the entry)."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Final

import yaml

from dsh._provider_table import BUILT_IN
from dsh._register_calls import checked

if TYPE_CHECKING:
    from dsh.plugins import PluginManager

__all__ = ["RegisteredModels", "undeclared"]

_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


class RegisteredModels:
    """The names the loaded plugins register models under, each with its plugin and the
    model's provider; asked of the plugins once, when first needed (a config with no
    undeclared name never asks)."""

    def __init__(self, pm: PluginManager) -> None:
        self._pm = pm
        self._found: dict[str, tuple[str, str]] | None = None

    def _collect(self) -> dict[str, tuple[str, str]]:
        if self._found is None:
            found: dict[str, tuple[str, str]] = {}

            def collect(plugin: str, model: Any, name: str | None = None) -> None:
                info = getattr(model, "info", None)
                key = name or getattr(info, "name", None)
                if isinstance(key, str):
                    found.setdefault(key, (plugin, str(getattr(info, "provider", ""))))

            self._found = found
            self._pm.relay.register_models(checked("register_models", collect))
        return self._found

    def names(self) -> dict[str, tuple[str, str]]:
        """The names registered: name -> (plugin, its model's provider)."""
        return dict(self._collect())

    def of(self, name: str) -> str | None:
        """Why ``name``, used in dsh.yml and not declared under ``models:``, is refused
        when a plugin registers it; None when none does."""
        found = self._collect().get(name)
        return None if found is None else undeclared(name, *found)


def undeclared(name: str, plugin: str, provider: str) -> str:
    """``name`` is registered by ``plugin`` (its model's ``provider``), and not declared:
    the entry of ``models:`` to add. A provider dsh builds would make dsh build a model
    of that name as well, so the plugin's name stands in for it."""
    if not provider or provider in BUILT_IN:
        provider = plugin
    key, served = (_yaml(n) for n in (name, provider))
    return (
        f"model {name!r} is registered by plugin {plugin!r} but not declared in models: "
        f"(dsh.yml names the models it declares, and local); add models: {{{key}: "
        f"{{provider: {served}}}}}"
    )


def _yaml(text: str) -> str:
    """``text`` as YAML reads it back as that string: plain when it can be, else in
    double quotes (JSON's escapes are YAML's), such as ``"1.5"``, ``"yes"``, ``"null"``,
    ``"2024-01-01"`` and a name with ``"`` or ``:`` in it."""
    if _PLAIN.fullmatch(text) and yaml.safe_load(text) == text:
        return text
    # YAML reads \U0001F600 for a character beyond U+FFFF, not JSON's surrogate pair
    return _PAIR.sub(_whole, json.dumps(text))


_PAIR: Final = re.compile(r"\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})")


def _whole(pair: re.Match[str]) -> str:
    high, low = int(pair[1], 16), int(pair[2], 16)
    return f"\\U{0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00):08X}"
