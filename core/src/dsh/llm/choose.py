"""Which model a command-line agent uses, and why (said on stderr by the CLI).

Order: ``-m`` (a configured model name, ``local``, or ``provider:model[@url]``), then
the caller's preference (``dsh run``: the first agent's ``model``; ``dsh sessions
resume``: the model the session was created with), then ``model:`` in dsh.yml, then
the first provider whose key is in the environment, then the local model.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, overload

from dsh._provider_table import BUILT_IN
from dsh._secrets import key_from_env, key_is_blank

if TYPE_CHECKING:
    from dsh.harness import Harness
    from dsh.persistence import StoredSession

__all__ = [
    "ENV_PROVIDERS",
    "Choice",
    "choose_model",
    "refuse_keyless",
    "starts_local",
    "stored_preference",
]

#: The provider and model used when its key is set and nothing else names a model.
_BY_KEY: tuple[tuple[str, str], ...] = (
    ("anthropic", "claude-sonnet-4-5"),
    ("openai", "gpt-4.1-mini"),
    ("deepseek", "deepseek-chat"),
)
#: The built-in provider whose models' names start so (``-m gpt-4.1`` meant openai's).
_FAMILIES: tuple[tuple[str, str], ...] = (
    ("claude-", "anthropic"),
    ("deepseek-", "deepseek"),
    ("gpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4-", "openai"),
)
#: How people call a built-in provider's models without naming one (``-m sonnet``).
_FAMILY_WORDS: tuple[tuple[str, str], ...] = (
    *((word, "anthropic") for word in ("claude", "sonnet", "opus", "haiku")),
    *((word, "openai") for word in ("gpt", "chatgpt")),
    ("deepseek", "deepseek"),
)
#: (environment variable, shorthand) tried in order when nothing else names a model; the
#: variables are the providers' (``dsh._provider_table``).
ENV_PROVIDERS: tuple[tuple[str, str], ...] = tuple(
    (variable, f"{provider}:{model}")
    for provider, model in _BY_KEY
    if (variable := BUILT_IN[provider].api_key_env) is not None
)


@dataclass(frozen=True, slots=True)
class Choice:
    """``name`` is registered in the harness, or is ``local`` (which the caller starts),
    or, in a harness that starts no agent, an entry of ``models:`` that could not be
    built there (``dsh models`` lists around it)."""

    name: str
    why: str


def choose_model(
    harness: Harness,
    requested: str | None,
    env: Mapping[str, str] | None = None,
    *,
    preferred: tuple[str, str] | None = None,
) -> Choice:
    """Pick the model; a shorthand is built and registered under its own name.

    ``preferred`` is ``(name, why)``, used when ``-m`` is not given. A preferred model
    this harness does not have and cannot build (``openai-compatible:qwen``, stored
    without the URL it was given with; a model dsh.yml no longer defines) raises
    DshError saying so: a continued conversation never moves to another model, or to
    another provider, without being told to. ``-m NAME`` naming no model raises
    DshError listing the defined ones (dsh.yml's, in file order, then those plugins
    registered)."""
    env = os.environ if env is None else env
    if requested:
        return Choice(_resolve(harness, requested, env, strict=True), "chosen with -m")
    if preferred is not None:
        return Choice(_preferred(harness, *preferred, env), preferred[1])
    return _fallback(harness, env)


def _preferred(harness: Harness, name: str, why: str, env: Mapping[str, str]) -> str:
    from dsh.errors import ConfigError, DshError

    try:
        found = _resolve(harness, name, env, strict=False)
    except DshError as error:  # a shorthand this config cannot build (no base_url)
        reason = error.reason if isinstance(error, ConfigError) else str(error)
        raise DshError(
            f"{why} ({name!r}) cannot be built again, as a URL given with -m is not stored: "
            f"{reason}"
        ) from None
    if found is None:
        raise DshError(
            f"{why} ({name!r}) is not defined in {harness.config.source}; choose a model with -m"
        )
    return found


def _fallback(harness: Harness, env: Mapping[str, str]) -> Choice:
    default = harness.config.default_model
    if default:
        return Choice(default, f"the default model in {harness.config.source}")
    for variable, shorthand in ENV_PROVIDERS:
        if key_from_env(variable, env) is not None:  # a blank value is no key
            return Choice(_register(harness, shorthand, env), f"{variable} is set")
    why = "no model is configured and no provider key is set"
    blank = [variable for variable, _ in ENV_PROVIDERS if key_is_blank(variable, env)]
    if blank:  # set, holding no key: not "not set"
        named = " and ".join([", ".join(blank[:-1]), blank[-1]] if blank[1:] else blank)
        why += f" ({named} {'are' if blank[1:] else 'is'} set but blank)"
    return Choice("local", why)


def stored_preference(stored: StoredSession) -> tuple[str, str] | None:
    """The model ``stored`` was created with, as ``choose_model``'s ``preferred``: a
    continued session keeps its model unless -m says otherwise."""
    options = stored.meta.get("options")
    model = options.get("model") if isinstance(options, dict) else None
    if not isinstance(model, str) or not model:
        return None
    return model, f"the model session {stored.id} was created with"


def starts_local(harness: Harness, choice: Choice) -> bool:
    """Whether the caller must start the bundled local model: ``local`` was chosen and
    no model of that name is configured or registered."""
    return choice.name == "local" and "local" not in harness.models.names()


def refuse_keyless(harness: Harness, choice: Choice) -> None:
    """Refuse, before an agent or session is made, a model given as ``provider:model``
    (by -m, or the one a continued session was created with) whose API key cannot be
    read here: a built-in provider at its own endpoint with its variable unset (or
    holding what no HTTP header can). Its first request would fail after the session
    was stored. ``openai-compatible`` needs no key; a model of dsh.yml is not refused
    so (``dsh config check`` warns of its key)."""
    from dsh.errors import DshError, ModelError
    from dsh.llm._http import HttpModel

    if choice.name not in harness.models or harness.models.origin(choice.name) != "cli":
        return
    model = harness.models.get(choice.name, agent="dsh")
    if not isinstance(model, HttpModel):
        return
    try:
        model.api_key()
    except ModelError as error:
        said = error.message.removeprefix(f"model {choice.name!r}: ")
        name = choice.name
        given = f"-m {name}" if choice.why == "chosen with -m" else f"{choice.why} ({name})"
        raise DshError(f"{given}: {said}") from None


@overload
def _resolve(
    harness: Harness, name: str, env: Mapping[str, str], *, strict: Literal[True]
) -> str: ...
@overload
def _resolve(
    harness: Harness, name: str, env: Mapping[str, str], *, strict: Literal[False]
) -> str | None: ...
def _resolve(harness: Harness, name: str, env: Mapping[str, str], *, strict: bool) -> str | None:
    if name in harness.models.names() or name == "local":
        return name
    if name in harness.config.models:  # defined, not built: a harness that starts no agent
        return name
    if ":" in name:
        return _register(harness, name, env)
    if not strict:
        return None
    from dsh._config_secrets import key_like_model, key_like_name
    from dsh._quoted import did_you_mean
    from dsh.errors import DshError

    names = list(dict.fromkeys([*harness.config.models, *sorted(harness.models.names())]))
    source = harness.config.source
    where = "no dsh.yml here" if source == "<defaults>" else f"config: {source}"
    if key_like_name(name):  # a key pasted there: not shown
        if names:
            defined, use = f"models defined: {', '.join(names)}", f"one of them ({where}), local,"
        else:
            defined, use = f"no model is defined, {where}", "local"
        raise DshError(f"-m: {key_like_model(defined)}. Use {use} or provider:model[@base_url].")
    meant = _shorthand_meant(name)
    built_in = did_you_mean(name, ["local", *BUILT_IN])  # lcoal, opnai
    if not names:
        raise DshError(
            f"-m {name!r}: unknown model, and no model is defined ({where})"
            f"{meant or built_in or '.'} Use local or provider:model[@base_url]."
            f"{'' if meant or built_in else _not_loaded(harness)}"
        )
    near = meant or did_you_mean(name, names) or built_in
    raise DshError(
        f"-m {name!r}: unknown model (models defined: {', '.join(names)}){near or '.'} "
        f"Use one of them ({where}), local, or provider:model[@base_url]."
        f"{'' if near else _not_loaded(harness)}"
    )


def _not_loaded(harness: Harness) -> str:
    """For an unknown ``-m`` with no near miss: the installed plugins not loaded, one of
    which may serve the model (``-p no:NAME``); "" when every installed plugin runs."""
    from dsh._left_out import not_loaded

    idle = not_loaded(harness.pm)
    if not idle:
        return ""
    return f" If a plugin serves it, it is not loaded (installed, not loaded: {', '.join(idle)})."


def _shorthand_meant(name: str) -> str:
    """The shorthand ``-m name`` may have meant: a built-in provider on its default model
    (``openai``), a model dsh knows of a built-in provider (``gpt-4.1-mini``), with the
    provider; else ``""``."""
    from dsh.llm.providers import known_limits

    defaults = dict(_BY_KEY)
    if name in BUILT_IN:
        if name in defaults:
            return f"; {name!r} is a provider: did you mean -m {name}:{defaults[name]}?"
        return (  # openai-compatible: no model of its own, no endpoint either
            f"; {name!r} is a provider: give the model and the server's URL, -m {name}:MODEL@URL."
        )
    provider = next((p for start, p in _FAMILIES if name.startswith(start)), None)
    if provider is not None and known_limits(name) != (None, None):
        return f"; {name!r} is a model of {provider}: did you mean -m {provider}:{name}?"
    family = next((p for word, p in _FAMILY_WORDS if name.lower().startswith(word)), None)
    if family is not None:  # claude, sonnet, gpt4o: a family, not one model's name
        return (
            f"; {family}'s models are named in full with the provider: -m {family}:MODEL "
            f"(e.g. -m {family}:{defaults[family]})."
        )
    return ""


def _register(harness: Harness, shorthand: str, env: Mapping[str, str]) -> str:
    from dsh.errors import ConfigError
    from dsh.llm.providers import build_model, parse_model_shorthand

    name, config = parse_model_shorthand(shorthand)
    if name not in harness.models.names():
        try:
            model = build_model(name, config, source="-m", env=env, entry=False)
        except ConfigError as error:  # in the words of the command line, not of dsh.yml
            url = error.path == f"models.{name}.base_url"
            provider, _, rest = name.partition(":")
            if url and "@" in rest:  # only @http:// or @https:// starts the URL
                named, _, after = rest.rpartition("@")
                reason = (
                    f"{after!r} (after the @) is not an http:// or https:// URL, so it was "
                    f"read as part of the model's name; give the scheme: "
                    f"-m {provider}:{named}@http://{after}"
                )
                raise ConfigError(f"-m {name!r}", "", reason) from None
            hint = f"; give it after an @: -m {name}@URL" if url else ""
            raise ConfigError(f"-m {name!r}", "", f"{error.reason}{hint}") from None
        harness.models.add("cli", model, name)
    return name
