"""``dsh.yml``: the YAML file that names models, agents and each plugin's settings.

Loading turns the file into pydantic models. Every problem becomes one
:class:`~dsh.errors.ConfigError` naming the file, the line and column, the key path
(``agents[0].model``) and the reason; when a file has several problems the first in
the file is reported, and pydantic's ``ValidationError`` stays as ``__cause__``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from dsh._config_yaml import (
    Loc,
    Problem,
    did_you_mean,
    format_path,
    parse,
    read,
)
from dsh._options import core_option_problem
from dsh.errors import ConfigError, PluginValidationError

__all__ = [
    "CONFIG_FILE_NAMES",
    "CORE_KEYS",
    "AgentConfig",
    "Config",
    "ModelConfig",
    "find_config",
    "load_config",
]

#: Looked for, in this order, in the working directory (unless ``$DSH_CONFIG`` is set).
CONFIG_FILE_NAMES: tuple[str, ...] = ("dsh.yml", "dsh.yaml")
#: Top-level keys the core owns; every other top-level key is a plugin's section.
CORE_KEYS: tuple[str, ...] = ("model", "models", "agents")

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_API_KEY_HINT = (
    "API keys do not go in dsh.yml: put the key in an environment variable and name it "
    "with api_key_env (e.g. api_key_env: OPENAI_API_KEY)"
)


class ModelConfig(BaseModel):
    """One entry of ``models:``: which provider serves it and how to reach it."""

    model_config = ConfigDict(extra="forbid")

    provider: str = Field(min_length=1)
    #: The provider's name for the model; ``load_config`` fills in the config key.
    model: str | None = None
    base_url: str | None = None
    #: The NAME of the environment variable holding the key, never the key itself.
    api_key_env: str | None = None
    headers: dict[str, str] = {}
    timeout: float = Field(default=60.0, gt=0)
    #: Longest wait for the next chunk of a streamed response, in seconds.
    read_timeout: float | None = Field(default=None, gt=0)
    max_retries: int = Field(default=2, ge=0)
    context_window: int | None = Field(default=None, gt=0)
    max_output_tokens: int | None = Field(default=None, gt=0)

    @field_validator("base_url")
    @classmethod
    def _is_a_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018 - raises ValueError for a port that is not a number
        except ValueError as exc:
            raise ValueError(f"is not a valid URL ({exc})") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                "must be an http:// or https:// URL with a host, e.g. http://host:port/v1"
            )
        if parts.username is not None or parts.password is not None:
            raise ValueError(
                "must not hold a user name or password (user:password@): they would be "
                "shown in errors, logs and sessions; name the key with api_key_env"
            )
        return value

    @field_validator("api_key_env")
    @classmethod
    def _names_a_variable(cls, value: str | None) -> str | None:
        if value is not None and not _ENV_NAME.fullmatch(value):
            raise ValueError(
                "must be the name of an environment variable (letters, digits and _), "
                "not the key itself"
            )
        return value

    def api_key(self, env: Mapping[str, str] | None = None) -> str | None:
        """The key read from ``$api_key_env`` now (``None`` if unnamed, unset or empty).

        The key is never stored on the model, so no repr or dump can show it.
        """
        if self.api_key_env is None:
            return None
        return (os.environ if env is None else env).get(self.api_key_env) or None


class AgentConfig(BaseModel):
    """One entry of ``agents:``."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    #: A key of ``models``; ``None`` means the top-level ``model``.
    model: str | None = None
    system_prompt: str = ""
    #: Options for plugins that act per agent; the core's own keys (``max_tokens``,
    #: ``max_request_retries``, ...) are checked here too.
    options: dict[str, Any] = {}
    max_steps: int | None = Field(default=None, gt=0)
    queue_mode: Literal["batch", "one-at-a-time"] = "batch"

    @field_validator("options")
    @classmethod
    def _core_options(cls, value: dict[str, Any]) -> dict[str, Any]:
        problem = core_option_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value


class _CoreKeys(BaseModel):
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
    #: The parsed YAML mapping, as written.
    raw: dict[str, Any] = field(default_factory=dict)

    def section(self, name: str) -> Any:
        """The validated section of plugin ``name``, or ``None`` if the file has none."""
        return self.sections.get(name)

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


def find_config(cwd: Path, *, env: Mapping[str, str] | None = None) -> Path | None:
    """The config file for a run started in ``cwd``, or ``None`` if there is none.

    ``$DSH_CONFIG`` (relative to ``cwd``) wins and is returned even if missing, so that
    loading it names the bad path. Otherwise ``dsh.yml`` or ``dsh.yaml`` in ``cwd`` only
    (no search upwards); having both is an error rather than a silent choice.
    """
    named = (os.environ if env is None else env).get("DSH_CONFIG")
    if named:
        return cwd / named
    found = [cwd / name for name in CONFIG_FILE_NAMES if (cwd / name).is_file()]
    if len(found) > 1:
        raise ConfigError(
            str(found[0]), "", f"{found[1].name} also exists in {cwd}; keep one of the two"
        )
    return found[0] if found else None


def load_config(
    path: str | os.PathLike[str] | None = None,
    *,
    text: str | None = None,
    settings: Mapping[str, type[BaseModel]] | None = None,
    source: str | None = None,
) -> Config:
    """Load and validate a config from ``path`` or ``text`` (neither: the defaults).

    ``settings`` maps each loaded plugin's name to its settings model (from the
    ``register_settings`` hook); ``source`` overrides the name used in errors.
    """
    settings = settings or {}
    for name in CORE_KEYS:
        if name in settings:
            raise PluginValidationError(name, "its name is a core config key; rename the plugin")
    if text is None and path is None:
        return Config(source or "<defaults>")
    if source is None:
        source = os.fspath(path) if path is not None else "<string>"
    if text is None:
        assert path is not None
        text = read(path, source)
    node, data = parse(text, source)
    if data is None:
        return Config(source)
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else f"a {type(data).__name__}"
        reason = f"the file must hold a mapping of keys, not {kind}"
        raise _problem(node, (), reason).error(source)
    return _validate(source, node, data, settings)


def _validate(
    source: str, root: Node | None, data: dict[str, Any], settings: Mapping[str, type[BaseModel]]
) -> Config:
    problems: list[Problem] = []
    # an empty `models:` or `agents:` (all entries commented out) means none
    core = {k: data[k] for k in CORE_KEYS if k in data}
    core = {k: v for k, v in core.items() if v is not None or k == "model"}
    try:
        parsed: _CoreKeys | None = _CoreKeys.model_validate(core)
    except ValidationError as exc:
        parsed = None
        problems += _from_validation(root, (), exc, _CoreKeys)
    sections: dict[str, Any] = {}
    for name, value in data.items():
        if name in CORE_KEYS:
            continue
        model = settings.get(name)
        if model is None:
            problems.append(_unknown_section(root, name, settings))
            continue
        value = {} if value is None else value
        try:
            sections[name] = model.model_validate(value)
        except ValidationError as exc:
            problems += _from_validation(root, (name,), exc, model)
            continue
        ignored = _ignored_key(sections[name], value, (name,))
        if ignored is not None:
            problems.append(_problem(root, ignored, _unknown_key(ignored, model, 1)))
    if not problems and parsed is not None:
        problems += _cross_check(root, parsed)
    if problems:
        first = min(problems)
        raise first.error(source) from first.cause
    assert parsed is not None
    models = {
        k: m if m.model is not None else m.model_copy(update={"model": k})
        for k, m in parsed.models.items()
    }
    return Config(source, models, parsed.model, parsed.agents, sections, data)


def _cross_check(root: Node | None, parsed: _CoreKeys) -> list[Problem]:
    problems: list[Problem] = []
    defined = ", ".join(parsed.models) or "none"

    def unknown_model(loc: Loc, name: str) -> None:
        hint = did_you_mean(name, parsed.models)
        reason = f"unknown model {name!r} (models defined: {defined}){hint}"
        problems.append(_problem(root, loc, reason))

    if parsed.model is not None and parsed.model not in parsed.models:
        unknown_model(("model",), parsed.model)
    ids: dict[str, int] = {}
    for i, agent in enumerate(parsed.agents):
        if agent.model is not None and agent.model not in parsed.models:
            unknown_model(("agents", i, "model"), agent.model)
        if agent.id in ids:
            reason = f"duplicate agent id {agent.id!r} (first at agents[{ids[agent.id]}].id)"
            problems.append(_problem(root, ("agents", i, "id"), reason))
        ids.setdefault(agent.id, i)
    return problems


def _unknown_section(
    root: Node | None, name: str, settings: Mapping[str, type[BaseModel]]
) -> Problem:
    loaded = ", ".join(sorted(settings)) or "none"
    hint = did_you_mean(name, [*CORE_KEYS, *settings])
    reason = (
        f"section {name!r} is for a plugin that is not installed or not loaded "
        f"(loaded plugins with settings: {loaded}){hint}"
    )
    return _problem(root, (name,), reason)


def _from_validation(
    root: Node | None, prefix: Loc, exc: ValidationError, model: type[BaseModel]
) -> list[Problem]:
    problems = []
    # The ValidationError becomes the cause (shown by ``dsh -v``) only when it hides
    # the input: a plugin's section may hold a secret its model does not mark.
    cause = exc if model.model_config.get("hide_input_in_errors") else None
    for err in exc.errors(include_input=False, include_url=False):
        loc: Loc = (*prefix, *err["loc"])
        reason = err["msg"]
        if err["type"] == "value_error":  # a validator's own words, without "Value error, "
            reason = str(err.get("ctx", {}).get("error", reason))
        elif err["type"] == "extra_forbidden":
            reason = _unknown_key(loc, model, len(prefix))
        problems.append(_problem(root, loc, reason, cause, missing=err["type"] == "missing"))
    return problems


def _unknown_key(loc: Loc, model: type[BaseModel], depth: int) -> str:
    """Why ``loc`` is refused, with the accepted keys when the enclosing model is known."""
    if loc[-1] == "api_key":
        return _API_KEY_HINT
    inner = loc[depth:-1]
    if model is _CoreKeys and len(inner) == 2:
        model = ModelConfig if inner[0] == "models" else AgentConfig
    elif inner:
        return "unknown key"
    expected = [info.alias or name for name, info in model.model_fields.items()]
    hint = did_you_mean(str(loc[-1]), expected)
    return f"unknown key (expected one of: {', '.join(expected)}){hint}"


def _problem(
    root: Node | None,
    loc: Loc,
    reason: str,
    cause: BaseException | None = None,
    *,
    missing: bool = False,
) -> Problem:
    """Follow ``loc`` down the node tree to the deepest key or item that exists.

    Parts of a pydantic ``loc`` that match nothing in the file (union members,
    validator names) are left out of the path; a missing field is kept as the last part.
    """
    node, line, column = root, 0, 0
    if root is not None:
        line, column = root.start_mark.line + 1, root.start_mark.column + 1
    parts: list[str | int] = []
    for i, part in enumerate(loc):
        found: Node | None = None
        at: Node | None = None
        if isinstance(node, MappingNode):
            # after construction merged keys come first, so the last match wins
            for key, value in reversed(node.value):
                if isinstance(key, ScalarNode) and key.value == part:
                    found, at = value, key
                    break
        elif isinstance(node, SequenceNode) and isinstance(part, int) and part < len(node.value):
            found = at = node.value[part]
        if found is None or at is None:
            if missing and i == len(loc) - 1:
                parts.append(part)
            continue
        parts.append(part)
        node = found
        line, column = at.start_mark.line + 1, at.start_mark.column + 1
    return Problem(line, column, format_path(parts), reason, cause)


def _ignored_key(value: Any, raw: Any, loc: Loc) -> Loc | None:
    """A key pydantic dropped silently: plugin models that leave ``extra`` unset get
    the core's rule (unknown keys fail); an explicit ``extra="ignore"`` is respected."""
    if isinstance(value, BaseModel) and isinstance(raw, Mapping):
        fields = type(value).model_fields
        by_key = {info.alias or name: name for name, info in fields.items()}
        odd_alias = any(not isinstance(i.validation_alias, str | None) for i in fields.values())
        if value.model_config.get("extra") is None and not odd_alias:
            accepted = {*by_key, *fields}
            accepted |= {
                i.validation_alias for i in fields.values() if isinstance(i.validation_alias, str)
            }
            for key in raw:
                if key not in accepted:
                    return (*loc, key)
        for key, name in by_key.items():
            if key in raw and (found := _ignored_key(getattr(value, name), raw[key], (*loc, key))):
                return found
    elif isinstance(value, list | tuple) and isinstance(raw, list):
        for i, (item, raw_item) in enumerate(zip(value, raw, strict=False)):
            if found := _ignored_key(item, raw_item, (*loc, i)):
                return found
    elif isinstance(value, dict) and isinstance(raw, Mapping):
        for key, item in value.items():
            if key in raw and (found := _ignored_key(item, raw[key], (*loc, key))):
                return found
    return None
