"""``dsh.yml``: the YAML file that names models, agents and each plugin's settings.

Loading turns the file into pydantic models. Every problem becomes one
:class:`~dsh.errors.ConfigError` naming the file, the line and column, the key path
(``agents[0].model``) and the reason; when a file has several problems the error names
the first in the file and holds the others (``ConfigError.problems``), and pydantic's
``ValidationError`` stays as ``__cause__`` when its model hides the input. The models
are in ``_config_models``, the checks in ``_config_validate`` (those across the file in
``_config_cross``), the YAML reading in ``_config_yaml``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from dsh._agent_settings import agent_settings
from dsh._config_errors import yaml_kind
from dsh._config_models import CONFIG_FILE_NAMES, CORE_KEYS, AgentConfig, Config, ModelConfig
from dsh._config_validate import Plugins, never, nothing, validate
from dsh._config_yaml import NOT_FOUND, Problem, locate, parse, read
from dsh._model_name import ModelName
from dsh._plugin_settings import not_a_model, owner, record_owner
from dsh.errors import ConfigError, DshError, PluginValidationError

if TYPE_CHECKING:
    from dsh.plugins import PluginManager

__all__ = [
    "CONFIG_FILE_NAMES",
    "CORE_KEYS",
    "AgentConfig",
    "Config",
    "ModelConfig",
    "ModelName",
    "add_settings",
    "agent_settings",
    "find_config",
    "load_config",
    "models_off",
    "registered_models",
]


def find_config(cwd: Path, *, env: Mapping[str, str] | None = None) -> Path | None:
    """The config file for a run started in ``cwd``, or ``None`` if there is none.

    ``$DSH_CONFIG`` (relative to ``cwd``) wins; when it names no file it can read
    (nothing there, a directory, a file it may not open) this raises ConfigError naming
    the variable's value and the path it resolved to, rather than fall back to another
    file. Otherwise ``dsh.yml`` or
    ``dsh.yaml`` in ``cwd`` only (no search upwards); having both is an error rather than
    a silent choice, and so is one it cannot read (a directory, a link to nothing), not
    passed over as no file.
    """
    named = (os.environ if env is None else env).get("DSH_CONFIG")
    if named:
        path = cwd / named
        problem = _unreadable(path)
        if problem is not None:
            shown = "" if str(path) == named else f"{path} "
            raise ConfigError(f"DSH_CONFIG={named}", "", f"{shown}{problem}")
        return path
    found = [cwd / name for name in CONFIG_FILE_NAMES if os.path.lexists(cwd / name)]
    if len(found) > 1:
        raise ConfigError(
            str(found[0]), "", f"{found[1].name} also exists in {cwd}; keep one of the two"
        )
    if not found:
        return None
    problem = None if found[0].is_file() else _unreadable(found[0])  # a file: read later
    if problem is not None:
        raise ConfigError(str(found[0]), "", problem)
    return found[0]


def _unreadable(path: Path) -> str | None:
    """Why ``path`` cannot be read as a config file, or None. Opened and closed at
    once, without blocking (a named pipe with no writer yet opens; ``<(...)`` is read)."""
    try:
        if path.is_dir():  # raises for a name too long, as the open below would
            return "is a directory"
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    except FileNotFoundError:
        if path.is_symlink():
            return f"is a symbolic link to {os.readlink(path)}, which does not exist"
        return "does not exist"
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    return None


def add_settings(
    settings: dict[str, type[BaseModel]], plugin: str, model: object, section: object = None
) -> None:
    """The ``register`` callback of ``register_settings`` (stamped with ``plugin``):
    ``model`` is a pydantic model class, ``section`` (default: the plugin's name) a
    section of dsh.yml no other plugin has."""
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise DshError(not_a_model(plugin, model))
    if section is not None and not (isinstance(section, str) and section):
        raise DshError(f"plugin {plugin!r} registered settings for section {section!r}, not a name")
    name = section or plugin
    if section is not None and name in CORE_KEYS:
        raise PluginValidationError(
            plugin,
            f"its settings section {name!r} (register({model.__name__}, section={name!r})) is "
            "a core key of dsh.yml; pass another section= or leave it out (the plugin's name)",
        )
    if name in settings:
        first = owner(settings[name], name)
        raise DshError(
            f"plugin {plugin!r} registers settings for section {name!r} twice (register() "
            "called twice in its register_settings); register one model"
            if first == plugin
            else f"plugins {first!r} and {plugin!r} both register settings for section "
            f"{name!r}; give one of them another section="
        )
    settings[name] = model
    record_owner(model, name, plugin)


def registered_models(pm: PluginManager) -> Callable[[str], str | None]:
    """``load_config``'s ``registered`` for the plugins of ``pm``, as ``dsh run`` passes
    it: a model name the file uses without declaring it, which a plugin registers, is
    refused saying so and which entry of ``models:`` to add. The plugins are asked
    (``register_models``) only when the file uses such a name."""
    from dsh._config_registered import RegisteredModels

    return RegisteredModels(pm).of


def models_off(pm: PluginManager) -> Callable[[], str]:
    """``load_config``'s ``model_off`` for the plugins of ``pm``, as ``dsh run`` passes
    it: an unknown model name with no near miss names the plugins installed but not
    loaded, one of which may serve it."""
    from dsh._plugin_off import model_off

    return model_off(pm)


def load_config(
    path: str | os.PathLike[str] | None = None,
    *,
    text: str | None = None,
    settings: Mapping[str, type[BaseModel]] | None = None,
    source: str | None = None,
    blocked: Callable[[str], bool] | None = None,
    left_out: Callable[[str], bool] | None = None,
    starts_agents: bool = True,
    loaded: Callable[[str], bool] | None = None,
    registered: Callable[[str], str | None] | None = None,
    missing: Callable[[str], bool] | None = None,
    model_off: Callable[[], str] | None = None,
) -> Config:
    """Load and validate a config from ``path`` or ``text`` (neither: the defaults).

    ``settings`` maps each loaded plugin's name to its settings model (from the
    ``register_settings`` hook); ``source`` overrides the name used in errors;
    ``blocked(name)`` is true for a plugin turned off (``-p no:NAME``), whose section
    is then left unchecked rather than refused as unknown (a warning says it is
    ignored); ``left_out(name)`` says an installed plugin does not run (settings for
    one, a section or under an agent's options, are refused as such: nothing would
    apply them). ``starts_agents=False`` is for a command that reads the config but
    starts no agent (``dsh sessions list``): settings for a plugin that does not run
    (not installed, or left out) cannot change what it does, so they are warnings.
    ``loaded(name)`` is true for a plugin that runs: a section for one that registers
    no settings is refused saying so. ``registered(name)``: why a model name the file
    uses without declaring it under ``models:`` is refused when a plugin registers a
    model of that name (``registered_models(pm)``), or None. ``missing(name)`` says a
    plugin is not installed: a section or an agent's options for one of dsh's own
    (compaction, permissions, persistence) name the distribution to install. Given
    ``settings``, the config's ``section(name)`` refuses a name none of them has.
    ``model_off()``: what follows "unknown model" of a name the file uses and declares
    nowhere, with no near miss: the plugins installed but not loaded, one of which may
    serve it (``models_off(pm)``), or "".
    """
    plugins = Plugins(
        blocked or never,
        left_out or never,
        loaded or never,
        missing or never,
        registered,
        model_off or nothing,
    )
    config = _load(path, text, settings or {}, source, plugins, starts_agents)
    if settings is None:  # which plugins register settings is not known
        return config
    return replace(config, registered=frozenset(settings))


def _load(
    path: str | os.PathLike[str] | None,
    text: str | None,
    settings: Mapping[str, type[BaseModel]],
    source: str | None,
    plugins: Plugins,
    starts_agents: bool,
) -> Config:
    for name in CORE_KEYS:
        if name in settings:
            raise PluginValidationError(name, "its name is a core config key; rename the plugin")
    if text is None and path is None:
        return Config(source or "<defaults>")
    if source is None:
        source = os.fspath(path) if path is not None else "<string>"
    if text is None:
        assert path is not None
        try:
            text = read(path, source)
        except ConfigError as exc:
            if exc.reason.startswith(NOT_FOUND) and _reads_as_yaml(path):
                raise ConfigError("<YAML text given as a path>", "", _YAML_NOT_PATH) from None
            raise
    duplicates: list[Problem] = []  # reported with the rest
    node, data = parse(text, source, duplicates)
    if data is None:
        return Config(source)
    if not isinstance(data, dict):
        reason = f"the file must hold a mapping of keys, not {yaml_kind(data)}"
        raise locate(node, (), reason).error(source, [p.error(source) for p in duplicates])
    return validate(source, node, data, settings, plugins, starts_agents, found=duplicates)


#: Why a path that is no file but reads as YAML is refused: not quoted (it may hold a
#: header's token), with where YAML text goes.
_YAML_NOT_PATH = (
    f"{NOT_FOUND}: the path of a config file was given YAML text (a line break, or "
    "'key: value'); give YAML text as Harness(config_text=...) or load_config(text=...)"
)


def _reads_as_yaml(path: str | os.PathLike[str]) -> bool:
    """Whether ``path``, a string, is more likely YAML text than a file's name."""
    return isinstance(path, str) and re.search(r"\n|^\s*[{\[]|:\s", path) is not None
