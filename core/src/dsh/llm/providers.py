"""The built-in providers: models from ``models:`` in dsh.yml, or from the CLI shorthand.

::

    name, config = parse_model_shorthand("openai-compatible:qwen@http://127.0.0.1:8082/v1")
    model = build_model(name, config)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from pydantic import ValidationError

from dsh._provider_table import BUILT_IN
from dsh._quoted import did_you_mean, shown
from dsh._secrets import hide_parameters
from dsh._shorthand import hidden_shorthand, split_base_url
from dsh.config import Config, ModelConfig
from dsh.errors import ConfigError
from dsh.llm._http import HttpModel
from dsh.llm._origin import Origin
from dsh.llm._plugin_entries import Served, entry_problems
from dsh.llm.anthropic import AnthropicModel
from dsh.llm.openai import OpenAICompatibleModel

__all__ = [
    "PROVIDERS",
    "Provider",
    "build_configured",
    "build_each",
    "build_model",
    "known_limits",
    "parse_model_shorthand",
]


@dataclass(frozen=True, slots=True)
class Provider:
    """A built-in provider: its adapter and the defaults it fills in."""

    adapter: type[HttpModel]
    base_url: str | None = None
    api_key_env: str | None = None


#: The adapter that speaks each protocol of the providers' table.
_ADAPTERS: Final[dict[str, type[HttpModel]]] = {
    "openai": OpenAICompatibleModel,
    "anthropic": AnthropicModel,
}

#: The built-in providers, from their table (``dsh._provider_table``).
PROVIDERS: Final[dict[str, Provider]] = {
    name: Provider(_ADAPTERS[facts.protocol], facts.base_url, facts.api_key_env)
    for name, facts in BUILT_IN.items()
}

#: Keys of a ``models:`` entry that only the OpenAI-compatible adapter reads.
_CHAT_ONLY: Final = ("send_reasoning", "max_tokens_field", "include_usage")

# (model name prefix, context window, max output tokens); the longest prefix wins.
_LIMITS: Final[tuple[tuple[str, int, int], ...]] = (
    ("deepseek-chat", 128_000, 8_192),
    ("deepseek-reasoner", 128_000, 64_000),
    ("gpt-4o", 128_000, 16_384),
    ("gpt-4.1", 1_047_576, 32_768),
    ("gpt-5", 400_000, 128_000),
    ("o1", 200_000, 100_000),
    ("o3", 200_000, 100_000),
    ("o4-mini", 200_000, 100_000),
    ("claude-3-5-haiku", 200_000, 8_192),
    ("claude-3-7-sonnet", 200_000, 64_000),
    ("claude-sonnet-4", 200_000, 64_000),
    ("claude-haiku-4", 200_000, 64_000),
    ("claude-opus-4", 200_000, 32_000),
)

# what comes before the base URL (dsh._shorthand.split_base_url), and the URL itself
_PROVIDER_MODEL = re.compile(r"(?P<provider>[A-Za-z0-9_-]+):(?P<model>[^@\s].*)")
_URL = re.compile(r"https?://\S+")


def known_limits(model: str) -> tuple[int | None, int | None]:
    """(context window, max output tokens) dsh knows for a provider's model name."""
    best: tuple[str, int, int] | None = None
    for entry in _LIMITS:
        if model.startswith(entry[0]) and (best is None or len(entry[0]) > len(best[0])):
            best = entry
    return (best[1], best[2]) if best else (None, None)


def build_model(
    name: str,
    config: ModelConfig,
    *,
    source: str = "model settings",
    env: Mapping[str, str] | None = None,
    entry: bool = True,
) -> HttpModel:
    """The model ``config`` describes, registered as ``name``.

    Fills in the provider's defaults (``base_url``, ``api_key_env``) and the known
    context window and output cap of the model; values in ``config`` win. The API key
    is read from ``env`` (default ``os.environ``) at each request, never here. It is
    required when ``api_key_env`` is set, or when the provider's own endpoint is used;
    a named provider pointed at another ``base_url`` (a local server speaking its
    protocol) sends its default variable's key only if that variable is set.
    Raises ``ConfigError`` naming ``models.<name>.<key>`` (``source`` is the file).
    ``entry``: ``config`` is a ``models:`` entry's, whose settings the model's messages
    name (``models.<name>.timeout``); False for ``-m provider:model``, which has none.
    """
    provider = PROVIDERS.get(config.provider)
    if provider is None:
        known = ", ".join(PROVIDERS)
        hint = did_you_mean(config.provider, list(PROVIDERS))
        reason = f"unknown provider {shown(config.provider)} (built in: {known}){hint}"
        raise ConfigError(source, f"models.{name}.provider", reason)
    model_id = config.model or name
    context_window, max_output = known_limits(model_id)
    filled = {
        "model": model_id,
        "base_url": config.base_url or provider.base_url,
        "api_key_env": config.api_key_env or provider.api_key_env,
        "context_window": config.context_window or context_window,
        "max_output_tokens": config.max_output_tokens or max_output,
    }
    if not filled["base_url"] and not provider.adapter.default_base_url:
        reason = f"provider {config.provider!r} needs a base_url (e.g. http://127.0.0.1:8080/v1)"
        raise ConfigError(source, f"models.{name}.base_url", reason)
    if config.api_key_header is not None and not filled["api_key_env"]:
        reason = (
            f"names the header of the API key, but provider {config.provider!r} sends no "
            "key without api_key_env (the name of the variable holding it)"
        )
        raise ConfigError(source, f"models.{name}.api_key_header", reason)
    chat_only = [key for key in _CHAT_ONLY if getattr(config, key) is not None]
    if chat_only and not issubclass(provider.adapter, OpenAICompatibleModel):
        chat = ", ".join(
            n for n, p in PROVIDERS.items() if issubclass(p.adapter, OpenAICompatibleModel)
        )
        reason = f"applies only to OpenAI-compatible providers ({chat}), not {config.provider!r}"
        raise ConfigError(source, f"models.{name}.{chat_only[0]}", reason)
    optional = config.api_key_env is None and filled["base_url"] != provider.base_url
    origin = Origin(entry=entry, default_key=config.api_key_env is None)
    return provider.adapter(
        name, config.model_copy(update=filled), env=env, key_optional=optional, origin=origin
    )


def build_configured(
    config: Config,
    served: Served | None = None,
    env: Mapping[str, str] | None = None,
    off: Callable[[str], str] | None = None,
) -> list[HttpModel]:
    """Every entry of ``models:`` built (nothing is contacted), except a name in
    ``served`` (the models plugins register: name -> (plugin, its model's provider))
    whose provider dsh does not build (``provider: scripted``: the plugin's model is
    declared, see ``dsh.llm._plugin_entries``). A problem is a ``ConfigError`` with the
    file's line; ``off(provider)`` is added to the reason of an unknown provider (the
    plugins installed but not loaded: ``dsh._plugin_off.provider_off``)."""
    built, problems = build_each(config, served, env, off)
    if problems:
        first, *rest = problems  # in file order, as models: is
        raise ConfigError(first.source, first.path, first.reason, rest)
    return built


def build_each(
    config: Config,
    served: Served | None = None,
    env: Mapping[str, str] | None = None,
    off: Callable[[str], str] | None = None,
) -> tuple[list[HttpModel], list[ConfigError]]:
    """``build_configured`` that keeps going: the entries that build, and a
    ``ConfigError`` (with the file's line) for each that does not, in file order."""
    served = served or {}
    serving = {
        *PROVIDERS,
        *(p for plugin_and_provider in served.values() for p in plugin_and_provider),
    }
    built = []
    problems = []
    for name, settings in config.models.items():
        errors = entry_problems(name, settings, served)
        if not errors:
            if name in served and settings.provider not in PROVIDERS:
                continue  # the plugin's model: nothing to build
            try:
                built.append(build_model(name, settings, source=config.source, env=env))
            except ConfigError as error:
                errors = [error]
        # served by no one (a loaded plugin's provider: the slip is in the model's name)
        unknown = name not in served and settings.provider not in serving
        for each in errors:
            where = config.where("models", name, each.path.rsplit(".", 1)[-1])
            reason = each.reason
            if off is not None and unknown and each.path.endswith(".provider"):
                reason += off(settings.provider)  # a plugin not loaded may serve it
            problems.append(ConfigError(where, each.path, reason))
    return built, problems


def parse_model_shorthand(text: str) -> tuple[str, ModelConfig]:
    """``provider:model`` or ``provider:model@base_url`` -> (name, config).

    The name is ``provider:model``. Model names may hold ``:`` and ``@``; the first ``@``
    followed by ``http://`` or ``https://`` starts the base URL (``dsh._shorthand``).
    Examples: ``deepseek:deepseek-chat``,
    ``openai-compatible:qwen@http://127.0.0.1:8082/v1``.
    """
    # never a password or a query's key (?api-key=..., in a fragment too) in an error
    # nor a key dsh knows (given as the provider, say)
    source = f"model {hidden_shorthand(text)!r}"
    head, url = split_base_url(text.strip())
    match = _PROVIDER_MODEL.fullmatch(head)
    if match is None:
        raise ConfigError(source, "", "expected provider:model or provider:model@base_url")
    provider, model = match["provider"], match["model"]
    if url is not None:  # each part hidden alone: a model part's ?key=... ends at the @
        source = f"model {hidden_shorthand(text.strip())!r}"
    if provider not in PROVIDERS:
        known = ", ".join(PROVIDERS)
        hint = did_you_mean(provider, list(PROVIDERS))
        said = f"unknown provider {shown(provider)} (built in: {known}){hint}"
        raise ConfigError(source, "", said)
    if (url is None and "://" in model) or (url is not None and not _URL.fullmatch(url)):
        # ftp://..., a URL with a space in it, or nothing after its scheme
        said = "must be an http:// or https:// URL with a host, no spaces"
        raise ConfigError(source, "base_url", said)
    if hide_parameters(model) != model:  # a URL without its scheme, or a key before @
        reason = (
            "the model's name holds a secret parameter (?key=...), which would be sent to "
            "the provider and shown wherever the name is: "
            + (
                "give the base_url after an @ with its scheme (@http:// or @https://)"
                if url is None
                else "put it in the base_url's query (after the @), or the key in the "
                "variable api_key_env names"
            )
        )
        raise ConfigError(source, "", reason)
    try:
        config = ModelConfig(provider=provider, model=model, base_url=url)
    except ValidationError as exc:  # what ModelConfig refuses (a user:password@ URL)
        error = exc.errors(include_input=False, include_url=False)[0]
        reason = str(error.get("ctx", {}).get("error", error["msg"]))
        path = ".".join(map(str, error["loc"]))
        raise ConfigError(source, path, reason) from None
    return f"{provider}:{model}", config
