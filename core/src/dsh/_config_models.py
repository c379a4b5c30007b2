"""The models of ``dsh.yml``: what each key may hold (``dsh.config`` loads the file)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from dsh._config_repr import agent_settings, config_repr, hidden_settings
from dsh._config_yaml import AtKey, locate
from dsh._ids import why_not
from dsh._model_values import (
    checked_headers,
    checked_key_header,
    checked_url,
    checked_variable,
)
from dsh._provider_table import key_header, sends_own_key
from dsh._quoted import type_names
from dsh._secrets import key_from_env

if TYPE_CHECKING:
    from yaml.nodes import Node

_Section = TypeVar("_Section", bound=BaseModel)

__all__ = [
    "API_KEY_HINT",
    "CONFIG_FILE_NAMES",
    "CORE_KEYS",
    "DEFAULT_MAX_WAIT",
    "AgentConfig",
    "Config",
    "CoreKeys",
    "ModelConfig",
]

#: Looked for, in this order, in the working directory (unless ``$DSH_CONFIG`` is set).
CONFIG_FILE_NAMES: tuple[str, ...] = ("dsh.yml", "dsh.yaml")
#: Top-level keys the core owns; every other top-level key is a plugin's section.
CORE_KEYS: tuple[str, ...] = ("model", "models", "agents")

#: The longest server-asked wait (retry-after) waited for by default, in seconds.
DEFAULT_MAX_WAIT = 60.0
API_KEY_HINT = (
    "API keys do not go in dsh.yml: put the key in an environment variable and name it "
    "with api_key_env (e.g. api_key_env: OPENAI_API_KEY)"
)


class ModelConfig(BaseModel):
    """One entry of ``models:``: which provider serves it and how to reach it. Numbers
    are strict: YAML's ``yes`` is not 1, nor ``"60"`` 60."""

    # a bad value built in code is not quoted: a key in base_url's query, in headers
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    provider: str = Field(min_length=1)
    #: The provider's name for the model; ``load_config`` fills in the config key.
    model: str | None = None
    base_url: str | None = None
    #: The NAME of the environment variable holding the key, never the key itself.
    api_key_env: str | None = None
    headers: dict[str, str] = {}
    #: The header the API key travels in; ``None``: the adapter's own (``Authorization:
    #: Bearer <key>`` for OpenAI-compatible providers, ``x-api-key`` for Anthropic).
    #: ``Authorization`` carries ``Bearer <key>``, any other name the bare key (Azure
    #: OpenAI's ``api-key``).
    api_key_header: str | None = None
    timeout: float = Field(default=60.0, gt=0, strict=True)
    #: Longest wait for the next chunk of a streamed response, in seconds.
    read_timeout: float | None = Field(default=None, gt=0, strict=True)
    max_retries: int = Field(default=2, ge=0, strict=True)
    #: The longest wait a server may ask for (``retry-after``) that is waited for before
    #: trying again, in seconds; a longer one fails the request at once.
    max_wait: float = Field(default=DEFAULT_MAX_WAIT, ge=0, strict=True)
    context_window: int | None = Field(default=None, gt=0, strict=True)
    max_output_tokens: int | None = Field(default=None, gt=0, strict=True)
    #: OpenAI-compatible providers only: send reasoning back as ``reasoning_content``
    #: (DeepSeek's thinking mode needs it); ``None``: the provider's default.
    send_reasoning: bool | None = Field(default=None, strict=True)
    #: OpenAI-compatible providers only: the request body's key for the output cap,
    #: ``max_tokens`` or ``max_completion_tokens``; ``None``: the provider's default
    #: (``max_completion_tokens`` for ``provider: openai``, else ``max_tokens``).
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] | None = None
    #: OpenAI-compatible providers only: ask for the usage chunk with
    #: ``stream_options.include_usage``; ``False`` sends no ``stream_options`` (a server
    #: that refuses the field); ``None``: asked for.
    include_usage: bool | None = Field(default=None, strict=True)

    def __repr_args__(self) -> Iterable[tuple[str | None, Any]]:  # repr(), str()
        return list(hidden_settings(super().__repr_args__()))

    @field_validator("base_url")
    @classmethod
    def _is_a_url(cls, value: str | None) -> str | None:
        return None if value is None else checked_url(value)

    @field_validator("headers")
    @classmethod
    def _are_headers(cls, value: dict[str, str]) -> dict[str, str]:
        return checked_headers(value)

    @model_validator(mode="after")
    def _key_header_not_in_headers(self) -> ModelConfig:
        """The header the key travels in is the adapter's own (api_key_header unset):
        set again in ``headers`` it would replace the key (the config's header wins)."""
        default = key_header(self.provider)  # the built-in providers' (their table)
        sends_key = self.api_key_env is not None or (
            sends_own_key(self.provider) and self.base_url is None
        )
        if self.api_key_header is not None or default is None or not sends_key:
            return self
        for name in self.headers:
            if name.lower() == default:
                raise AtKey(
                    ("headers", name),
                    f"sets {name}, the header that carries the key of api_key_env (or of "
                    f"provider {self.provider!r}'s variable): it would replace the key; drop it "
                    "from headers, or name another header for the key with api_key_header",
                )
        return self

    @field_validator("api_key_env")
    @classmethod
    def _names_a_variable(cls, value: str | None) -> str | None:
        return None if value is None else checked_variable(value)

    @field_validator("api_key_header")
    @classmethod
    def _is_a_header_name(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        return checked_key_header(value, info.data.get("headers") or {})

    def api_key(self, env: Mapping[str, str] | None = None) -> str | None:
        """The key read from ``$api_key_env`` now (``None`` if unnamed, unset or empty).

        The key is never stored on the model, so no repr or dump can show it. Whitespace
        around it is dropped (a line end from a file with CRLF line ends, say).
        """
        if self.api_key_env is None:
            return None
        return key_from_env(self.api_key_env, env)


class AgentConfig(BaseModel):
    """One entry of ``agents:``. Its repr hides the secrets dsh has read (a plugin's
    declared ones, the API keys) in ``options``, which keep them as written."""

    # a bad value built in code is not quoted (a plugin's secret in options, say)
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    id: str = Field(min_length=1)
    #: A key of ``models``; ``None`` means the top-level ``model``.
    model: str | None = None
    system_prompt: str = ""
    #: The core's other agent options (``max_tokens``, ``max_request_retries``, ...)
    #: and options for plugins that act per agent; checked by ``_config_validate``,
    #: which knows the plugins' settings models.
    options: dict[str, Any] = {}
    max_steps: int | None = Field(default=None, gt=0, strict=True)
    queue_mode: Literal["batch", "one-at-a-time"] = "batch"

    def __repr_args__(self) -> Iterable[tuple[str | None, Any]]:  # repr(), str()
        return list(agent_settings(super().__repr_args__()))

    @field_validator("id")
    @classmethod
    def _an_id(cls, value: str) -> str:
        # refused with its line here, not when the agent is created (dsh._ids)
        why = why_not(value)
        if why is not None:
            raise ValueError(f"{value!r} {why}")
        return value

    @field_validator("options", mode="before")
    @classmethod
    def _no_options(cls, value: object) -> object:
        # `options:` with every line commented out is no options, as for a plugin section
        return {} if value is None else value

    def own_options(self) -> dict[str, Any]:
        """The options this entry sets itself: ``options``, with ``system_prompt``,
        ``max_steps`` and ``queue_mode`` when it gives them (the model is left out)."""
        out: dict[str, Any] = dict(self.options)
        if self.system_prompt:
            out["system_prompt"] = self.system_prompt
        if self.max_steps is not None:
            out["max_steps"] = self.max_steps
        if "queue_mode" in self.model_fields_set:
            out["queue_mode"] = self.queue_mode
        return out

    def agent_options(self, model: str | None) -> dict[str, Any]:
        """The options an agent built from this entry gets, on ``model``: ``options``
        with the entry's own keys on top (an empty ``system_prompt`` is left out), and
        the default ``queue_mode`` when neither sets it."""
        return {"queue_mode": self.queue_mode, **self.own_options(), "model": model}


class CoreKeys(BaseModel):
    # Hiding inputs keeps a mistyped secret (``api_key: sk-...``) out of the
    # ValidationError text that a traceback of ``__cause__`` would print.
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    model: str | None = None
    models: dict[str, ModelConfig] = {}
    agents: list[AgentConfig] = []


@dataclass(frozen=True, slots=True)
class Config:
    """A loaded, validated ``dsh.yml``."""

    source: str
    models: dict[str, ModelConfig] = field(default_factory=dict)
    default_model: str | None = None
    agents: list[AgentConfig] = field(default_factory=list)
    #: Plugin name -> instance of that plugin's settings model (only sections present).
    sections: dict[str, Any] = field(default_factory=dict)
    #: The parsed YAML mapping, as written: not compared (it repeats the settings, and
    #: the keys in them; pytest's diff of two configs would print it) nor shown.
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    #: The YAML node tree, for ``where`` (None: not loaded from YAML).
    root: Node | None = field(default=None, repr=False, compare=False)
    #: The values the plugins' settings declare secret (``SecretStr``), in their sections
    #: and in agents' options.
    declared: frozenset[str] = field(default=frozenset(), repr=False, compare=False)
    #: The names loaded plugins registered settings under (``register_settings``), for
    #: ``section`` to refuse another; None: not known (a config made without them).
    registered: frozenset[str] | None = field(default=None, repr=False, compare=False)

    def __repr__(self) -> str:  # without raw, declared secrets hidden: dsh._config_repr
        return config_repr(self)

    def where(self, *loc: str | int) -> str:
        """``file:line:column`` of the key at ``loc`` (``"models", "fast", "provider"``),
        or of its deepest part the file has; just the file without a node tree."""
        if self.root is None:
            return self.source
        found = locate(self.root, loc, "")
        return f"{self.source}:{found.line}:{found.column}"

    @overload
    def section(self, name: str) -> Any: ...
    @overload
    def section(self, name: str, model: type[_Section]) -> _Section | None: ...
    def section(self, name: str, model: type[_Section] | None = None) -> Any:
        """The validated section of plugin ``name`` (None if the file has none); given
        its settings ``model``, typed so (another type is a TypeError naming both). A
        ``DshError`` for a name no loaded plugin registers settings under (a misspelt
        one, which would silently read as no section), naming those that do."""
        found = self.sections.get(name)
        if found is None and self.registered is not None and name not in self.registered:
            from dsh.errors import DshError

            names = ", ".join(sorted(self.registered)) or "none"
            raise DshError(
                f"config.section({name!r}): no loaded plugin registers settings under "
                f"{name!r} (registered: {names})"
            )
        if model is not None and found is not None and not isinstance(found, model):
            asked, made = type_names(model, type(found))
            raise TypeError(
                f"config.section({name!r}, {asked}): the section is a {made} "
                f"(the settings model registered for {name!r})"
            )
        return found

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able mapping that :func:`load_config` turns back into this config."""
        out: dict[str, Any] = {}
        if self.default_model is not None:
            out["model"] = self.default_model
        if self.models:
            out["models"] = {
                k: m.model_dump(mode="json", exclude_defaults=True) for k, m in self.models.items()
            }
        if self.agents:
            out["agents"] = [a.model_dump(mode="json", exclude_defaults=True) for a in self.agents]
        for name, section in self.sections.items():
            out[name] = section.model_dump(mode="json", by_alias=True, exclude_defaults=True)
        return out
