"""The entries of ``models:`` for the models plugins register, which dsh does not build.

Such an entry (``models: {echo: {provider: echo, context_window: 100000}}``) declares
the plugin's model for dsh.yml and may set the limits of its ``info`` (``LIMITS``): the
registry hands the model out with them on top (``ModelRegistry.set_limits``). Its
``provider`` names the plugin or its model's provider (one dsh does not build); the keys
only dsh's HTTP providers read (``base_url``, ``timeout``, ...) would reach no plugin's
model, so they are refused with the file's line, as is an entry a plugin's model would
clash with (one of a built-in provider) and one of a provider dsh does not build whose
name no plugin registers. Checked where dsh builds the entries (``dsh.llm.providers``):
at a harness's start and in ``dsh config check``, both after the plugins are asked for
their models.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from dsh._config_models import ModelConfig
from dsh._provider_table import BUILT_IN
from dsh._quoted import did_you_mean
from dsh.errors import ConfigError

__all__ = ["LIMITS", "Served", "entry_problems", "limits_of"]

#: The keys of an entry that apply to a plugin's model: its ``info``'s, overridden.
LIMITS: Final = ("context_window", "max_output_tokens", "max_wait")
#: What an entry may set besides them (``model``: only the entry's own name).
_OWN: Final = frozenset({"provider", "model", *LIMITS})

#: The models plugins registered: name -> (plugin, the model's ``info.provider``).
Served = Mapping[str, tuple[str, str]]


def entry_problems(name: str, settings: ModelConfig, served: Served) -> list[ConfigError]:
    """Why entry ``name`` of ``models:`` is refused, given the models plugins register
    (``served``); each ``ConfigError`` with its key path and no file (the caller's)."""
    found = served.get(name)
    provider = settings.provider
    if found is None:
        if provider in BUILT_IN or not served:  # dsh builds it, or says the provider is unknown
            return []
        names = sorted(served)
        if provider in {p for found in served.values() for p in found}:
            # the provider is a plugin's (or its model's): the slip is in the model's
            # name. A built-in near miss (azure-openai: 'openai') would send the key there
            near = did_you_mean(name, names)
        else:  # a misspelt provider is the likelier slip: its near miss first, as when
            # no plugin registers models ("unknown provider")
            near = did_you_mean(provider, BUILT_IN) or did_you_mean(name, names)
        reason = (
            f"provider {provider!r} is not built in (built in: {', '.join(BUILT_IN)}), "
            f"and no plugin registers a model named {name!r} (models plugins register: "
            f"{', '.join(names)}){near}"
        )
        return [ConfigError("", f"models.{name}.provider", reason)]
    plugin, own = found
    if provider in BUILT_IN:
        reason = (
            f"plugin {plugin!r} registers a model named {name!r}, and provider {provider!r} "
            f"would make dsh build another: rename this entry, or write provider: {plugin} "
            "to declare the plugin's model"
        )
        return [ConfigError("", f"models.{name}.provider", reason)]
    if provider not in (plugin, own):
        reason = (
            f"model {name!r} is registered by plugin {plugin!r}: provider {provider!r} names "
            f"neither the plugin nor its model's provider; write provider: {plugin}"
        )
        return [ConfigError("", f"models.{name}.provider", reason)]
    given = [key for key in ModelConfig.model_fields if key in settings.model_fields_set]
    unused = [key for key in given if key not in _OWN]
    if settings.model not in (None, name):
        unused.insert(0, "model")
    return [
        ConfigError(
            "",
            f"models.{name}.{key}",
            f"{key} is read by dsh's HTTP providers only, and model {name!r} is served by "
            f"plugin {plugin!r}: drop it (an entry for a plugin's model sets provider and "
            f"{', '.join(LIMITS)})",
        )
        for key in unused
    ]


def limits_of(settings: ModelConfig) -> dict[str, Any]:
    """The ``LIMITS`` entry ``settings`` sets (None: the model's own)."""
    set_ = {key: getattr(settings, key) for key in LIMITS if key in settings.model_fields_set}
    return {key: value for key, value in set_.items() if value is not None}
