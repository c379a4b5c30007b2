"""What ``repr()`` and ``str()`` of the settings show: not the keys written into them.

``HttpModel``'s repr hides a key written into ``base_url``'s query and the credentials
in ``headers``; the settings it is built from (``ModelConfig``, and ``Config`` holding
them) are printed too: in an assertion's diff, a ``print(config)``, a plugin's ``%r``
log call. So their reprs show a secret-named parameter's value as ``***``
(``hide_parameters``, whatever its length) and each header's credentials as ``***``
after their scheme (``Bearer ***``: ``dsh._header_secrets``); a ``Config``'s leaves out
``raw`` (the file as written, which repeats them) and hides the values the plugins'
settings declare secret. Those are written plain in an agent's options (the settings
are checked later, per plugin): an ``AgentConfig``'s repr hides every secret dsh has
read in them (``known_keys``: the declared ones of 8 characters or more, the API
keys), a ``Config``'s an option equal to a declared value of any length whole too.
The options are hidden before their repr (a secret with a backslash or a quote is
escaped there), and a value too short to hide elsewhere (``MIN_LENGTH``, an unset
``SecretStr("")``) is not searched for in the rest. A string under a secret's name
(``password``, ``token``: a plugin's field typed ``str``) is hidden whatever its
length, in the sections and the options (before their repr), by the rule the stored
session's options are hidden by (``dsh._config_secrets.named_secret``).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from pydantic import BaseModel

from dsh._config_secrets import hidden_by_name, named_hidden
from dsh._header_secrets import header_credentials
from dsh._nested import every_value, walk
from dsh._secrets import HIDDEN, hide_parameters, known_keys, longest_first, redact

if TYPE_CHECKING:
    from dsh._config_models import Config

__all__ = ["agent_settings", "config_repr", "hidden_settings"]

#: The fields of ``Config`` its repr shows, in their order (not ``raw``).
_SHOWN = ("source", "models", "default_model", "agents", "sections")
#: A value as a scheme and what follows it (``Bearer <token>``), whitespace kept.
_SCHEMED: Final = re.compile(r"(\s*\S+\s+)(\S.*?)(\s*)", re.DOTALL)


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
    """``value`` as ``***`` when it is a credential, or with what follows its scheme as
    ``***`` (``Bearer ***``), whatever the credential's length."""
    found = header_credentials({name: value})
    if value.strip() and (value in found or value.strip() in found):
        return HIDDEN
    schemed = _SCHEMED.fullmatch(value)
    if schemed is not None and schemed[2] in found:
        return schemed[1] + HIDDEN + schemed[3]
    return value


def agent_settings(args: Iterable[tuple[str | None, Any]]) -> Iterator[tuple[str | None, Any]]:
    """An ``AgentConfig``'s repr arguments, every secret dsh has read (``known_keys``)
    hidden in its ``options``."""
    secrets = known_keys()
    for name, value in args:
        yield name, hidden_options(value, (), secrets) if name == "options" else value


def hidden_options(value: Any, whole: Collection[str], within: tuple[str, ...]) -> Any:
    """``value`` (an agent's options) with each value under a secret's name as ``***``
    (``named_hidden``, as the options stored with a session), each other text equal to
    one of ``whole`` as ``***`` and the runs of ``within`` in the others hidden
    (``redact``)."""

    def text(value: str) -> str:
        return HIDDEN if value in whole else redact(value, within) if within else value

    return named_hidden(value, sections=(), text=text)[0]


def named_values(value: object) -> Iterator[str]:
    """The strings under the names of secrets in ``value`` (plugins' settings, of
    fields typed ``str``: ``token``, ``password``), at any depth."""
    for _, key, inner in walk(value, models=True):
        if hidden_by_name(key, inner):  # a list of them, a mapping: its strings
            yield from (text for text in every_value(inner) if isinstance(text, str))


def _shown_settings(settings: Any) -> Any:
    """A plugin's ``settings`` as ``Config``'s repr shows them: a copy with each value
    under a secret's name as ``***`` whatever its length (``named_hidden``, as in the
    options), in its fields, what they hold and its nested models; itself when none
    is. Those of ``MIN_LENGTH`` or more are hidden in the repr's text too."""
    if not isinstance(settings, BaseModel):
        return named_hidden(settings)[0]
    changed: dict[str, Any] = {}
    for name, value in {**vars(settings), **(settings.__pydantic_extra__ or {})}.items():
        if isinstance(value, BaseModel):
            shown = _shown_settings(value)
        else:
            inner = _models_shown(value)  # models in a list or a mapping: theirs hidden
            hidden, found = named_hidden({name: inner})
            shown = hidden[name] if found else inner
        if shown is not value:
            changed[name] = shown
    return settings.model_copy(update=changed) if changed else settings


def _models_shown(value: Any) -> Any:
    """``value`` with each model in its lists, tuples and mappings as
    ``_shown_settings`` shows it (a new container where one changed); itself when none
    did. Validated settings hold no container inside itself."""
    if isinstance(value, BaseModel):
        return _shown_settings(value)
    if isinstance(value, list | tuple):
        items = [_models_shown(item) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, Mapping):
        entries = {key: _models_shown(item) for key, item in value.items()}
        if all(entries[key] is item for key, item in value.items()):
            return value
        return entries
    return value


def config_repr(config: Config) -> str:
    """``Config(source=..., models=..., ...)`` without ``raw``, the values its plugins
    declare secret hidden: in the agents' options before their repr, and, as their
    repr writes them, anywhere (those of ``MIN_LENGTH`` or more)."""
    declared = {value for value in config.declared if value}
    declared.update(named_values(list(config.sections.values())))
    within = longest_first(declared)
    agents = [
        agent.model_copy(update={"options": hidden_options(agent.options, declared, within)})
        for agent in config.agents
    ]
    sections = {name: _shown_settings(settings) for name, settings in config.sections.items()}
    shown = {name: getattr(config, name) for name in _SHOWN} | {
        "agents": agents,
        "sections": sections,
    }
    fields = ", ".join(f"{name}={value!r}" for name, value in shown.items())
    escaped = longest_first({*within, *(repr(value)[1:-1] for value in within)})
    return redact(f"{type(config).__name__}({fields})", escaped)
