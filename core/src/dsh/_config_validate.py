"""Checking a parsed ``dsh.yml`` against the core's models and each plugin's settings
model: every problem located (line, column, key path) and reported, in file order."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError
from yaml.nodes import Node

from dsh._config_cross import GoodPart, SettingsAt, cross_check, without_bad_keys
from dsh._config_errors import from_validation, missing_hint, typo_instead
from dsh._config_keys import ignored_key, layered, unknown_key
from dsh._config_models import CORE_KEYS, AgentConfig, Config, CoreKeys
from dsh._config_secrets import free_misplaced, misplaced_key
from dsh._config_yaml import Loc, Problem, locate
from dsh._declared_secrets import declared_secrets
from dsh._entry_points import FIRST_PARTY
from dsh._options import CORE_OPTIONS, core_option_problem, option_typo
from dsh._plugin_settings import not_installed, owner, raised
from dsh._quoted import did_you_mean
from dsh._secrets import MIN_LENGTH, get_logger, remember, secret_values

__all__ = ["Plugins", "never", "nothing", "validate"]

log = get_logger("dsh.config")

#: Agent options an ``agents:`` entry can set itself (``queue_mode``, ``max_steps``, ...):
#: under ``options`` too, unless the entry sets them (``model``: on the entry only).
_ENTRY_KEYS = frozenset(AgentConfig.model_fields) - {"id", "options"}
#: dsh's own plugins, each from the distribution ``dsh-NAME``.


def never(name: str) -> bool:
    """No plugin is: what ``Plugins`` assumes when the loader is not told."""
    return False


def nothing() -> str:
    """No plugin is left out: what ``Plugins.model_off`` says when the loader is not told."""
    return ""


@dataclass(frozen=True)
class Plugins:
    """What the loader knows of the plugins a config may name (``load_config``'s
    arguments of the same names): ``blocked`` (turned off, ``-p no:NAME``), ``left_out``
    (installed, not loaded), ``loaded``, ``missing`` (not installed), ``registered``
    (why a plugin's model name is refused undeclared, or None), ``model_off`` (what
    follows "unknown model" when installed plugins do not run: ``_plugin_off``)."""

    blocked: Callable[[str], bool] = never
    left_out: Callable[[str], bool] = never
    loaded: Callable[[str], bool] = never
    missing: Callable[[str], bool] = never
    registered: Callable[[str], str | None] | None = None
    model_off: Callable[[], str] = nothing


def validate(
    source: str,
    root: Node | None,
    data: dict[str, Any],
    settings: Mapping[str, type[BaseModel]],
    plugins: Plugins,
    starts_agents: bool = True,
    found: Sequence[Problem] = (),
) -> Config:
    """``data`` as a Config. Settings for a plugin turned off are left unchecked, with
    a warning that they are ignored; for one installed but left out (it does not run),
    or not installed, they would apply to nothing (a policy plugin's rules, silently),
    so they are refused, saying which (a plugin of dsh's own names the distribution to
    install); for a loaded plugin that registers no settings, refused as such. A model
    name the file uses undeclared is refused with ``plugins.registered``'s reason
    (``_config_registered``). ``starts_agents=False`` (a command that starts no agent):
    settings for plugins that do not run cannot change what it does, so each is a
    warning instead. ``found``: problems found before (keys met twice), reported with
    the others."""
    problems: list[Problem] = list(found)
    unrun: list[Problem] = []  # settings for plugins that do not run
    turned_off: list[Problem] = []  # settings of plugins turned off, warned about
    # an empty `models:` or `agents:` (all entries commented out) means none
    core = {k: data[k] for k in CORE_KEYS if k in data}
    core = {k: v for k, v in core.items() if v is not None or k == "model"}
    good = GoodPart(core)  # what the later checks look at when part of the core is bad
    try:
        parsed: CoreKeys | None = CoreKeys.model_validate(core)
    except ValidationError as exc:
        problems += from_validation(root, (), exc, CoreKeys)
        parsed = None
        good = GoodPart(core, exc)
    known = parsed if parsed is not None else good.parsed
    if known is not None:  # an error below cutting a value hides the file's keys first
        remember(secret_values(Config("", models=known.models)))
    sections: dict[str, Any] = {}
    partial: list[SettingsAt] = []  # bad sections less their bad keys: names checked
    declared: set[str] = set()  # what their settings declare secret
    for name, value in data.items():
        if name in CORE_KEYS:
            continue
        model = settings.get(name)
        if model is None and plugins.blocked(name):
            if plugins.left_out(name):
                turned_off.append(locate(root, (name,), ""))
            continue
        misplaced = None if model is not None else misplaced_key(name, value)
        if misplaced is not None:  # a key pasted at the top: never kept
            problems.append(locate(root, (name,), misplaced))
            continue
        if model is None:
            if plugins.loaded(name):
                whose = "loaded"
            elif plugins.left_out(name):
                whose = "left out"
            else:
                whose = "not installed" if plugins.missing(name) else ""
            unrun.append(_unknown_section(root, name, settings, whose))
            continue
        value = {} if value is None else value
        try:
            sections[name] = model.model_validate(value)
        except ValidationError as exc:
            problems += from_validation(root, (name,), exc, model)
            if (good_rest := without_bad_keys(model, value, exc)) is not None:
                partial.append(((name,), good_rest, None))
            continue
        except Exception as exc:  # a validator raising what pydantic lets through
            problems.append(locate(root, (name,), raised(model, name, exc)))
            continue
        declared.update(declared_secrets(sections[name]))
        remember(declared)  # before anything quotes them
        ignored = ignored_key(sections[name], value, (name,))
        if ignored is not None:
            problems.append(locate(root, ignored, unknown_key(ignored, model, 1)))
    own: list[SettingsAt] = []  # plugin settings under agents[].options
    checked = parsed if parsed is not None else good.parsed
    if checked is not None:  # every problem in one run: the good part of a bad core too
        valid = {name: data[name] for name in sections}  # a bad section is reported once
        off = _Off(plugins, turned_off, unrun)
        problems += _agent_options(root, checked, valid, settings, off, own, good.at, data)
        declared.update(secret for _, options, _ in own for secret in declared_secrets(options))
        remember(declared)
        where = [((name,), s, None) for name, s in sections.items()] + partial
        registered, unserved = plugins.registered, plugins.model_off
        problems += cross_check(
            root, checked, where, good=good, registered=registered, off=unserved
        )
        problems += cross_check(
            root, checked, own, agents=False, good=good, registered=registered, off=unserved
        )
    if starts_agents:  # they would apply to nothing: refused with the rest
        problems += unrun
    if problems:  # all of them, in file order (a place may have several; none twice)
        unique = {(p.line, p.column, p.path, p.reason): p for p in problems}
        first, *rest = sorted(unique.values())
        raise first.error(source, [p.error(source) for p in rest]) from first.cause
    for problem in [] if starts_agents else sorted(unrun):
        log.warning(
            "%s (ignored here: this command starts no agent; dsh run refuses it)",
            problem.error(source).problem,
        )
    _warn_short_secrets(source, root, [((n,), s, None) for n, s in sections.items()] + own)
    for place in turned_off:
        plugin = place.path.split(".")[-1]
        log.warning(
            "%s:%d:%d: %s is ignored: plugin %r is turned off (-p no:%s)",
            *(source, place.line, place.column, place.path, plugin, plugin),
        )
    assert parsed is not None
    models = {
        k: m if m.model is not None else m.model_copy(update={"model": k})
        for k, m in parsed.models.items()
    }
    return Config(
        source, models, parsed.model, parsed.agents, sections, data, root, frozenset(declared)
    )


def _warn_short_secrets(source: str, root: Node | None, places: list[SettingsAt]) -> None:
    """Say where a ``SecretStr`` value is too short to be hidden (``MIN_LENGTH``)."""
    for path, settings, _ in places:
        if any(0 < len(s) < MIN_LENGTH for s in declared_secrets(settings)):
            place = locate(root, path, "")
            log.warning(
                "%s:%d:%d: %s holds a secret (a SecretStr field) of fewer than %d "
                "characters, which dsh does not hide in tool results, logs or session "
                "files: so short a value cannot be told from other text",
                *(source, place.line, place.column, place.path, MIN_LENGTH),
            )


class _Off:
    """The plugins a config may name that are not loaded (``Plugins.blocked``,
    ``left_out``, ``missing``); ``ignored`` collects the places of settings for plugins
    turned off, ``unrun`` the problems of settings for plugins left out."""

    def __init__(self, plugins: Plugins, ignored: list[Problem], unrun: list[Problem]) -> None:
        self.is_blocked = plugins.blocked
        self.left_out = plugins.left_out
        self.missing = plugins.missing  # not installed
        self.ignored = ignored
        self.unrun = unrun


def _agent_options(
    root: Node | None,
    parsed: CoreKeys,
    sections: Mapping[str, Any],
    settings: Mapping[str, type[BaseModel]],
    off: _Off,
    own: list[SettingsAt],
    at: Sequence[int] | None = None,
    written: Collection[str] = (),
) -> list[Problem]:
    """``agents[].options``: the core's keys by the core's rules; a key named after a
    loaded plugin by that plugin's settings model, over the plugin's section if it is
    valid (``sections``; as the plugin layers them: a field the section gives is not
    missing; appended to ``own``). A required field neither gives is refused, unless
    the file has a section for the plugin (``written``) that is bad: its problems are
    reported there;
    any other key is free for plugins, unless it is a near miss of a known key (a typo
    would otherwise be ignored without a word)."""
    problems: list[Problem] = []
    known = [*CORE_OPTIONS, *settings]
    for n, agent in enumerate(parsed.agents):
        i = n if at is None else at[n]  # its index in the file
        for key, value in agent.options.items():
            loc: Loc = ("agents", i, "options", key)
            if key == "model" or key in agent.model_fields_set & _ENTRY_KEYS:
                # the entry's own value would replace it without a word
                where = f"agents[{i}].{key}"
                reason = (
                    f"the model goes on the agent itself ({where}), not in its options"
                    if key == "model"
                    else f"{key!r} is set on the agent itself as well ({where}); set it there only"
                )
                problems.append(locate(root, loc, reason))
            elif (misplaced := misplaced_key(key, value)) is not None:  # stored with the session
                problems.append(locate(root, loc, misplaced))
            elif key in CORE_OPTIONS:
                problem = core_option_problem({key: value}, yaml=True)
                if problem is not None:
                    problems.append(locate(root, loc, problem))
            elif key in settings:
                model = settings[key]
                value = {} if value is None else value
                try:
                    checked = model.model_validate(layered(sections.get(key), value))
                except ValidationError as exc:
                    if key in written:  # a bad section: its missing fields are told there
                        found = from_validation(root, loc, exc, model, missing=False)
                    else:  # nothing else in the file gives what is left out
                        hint = missing_hint(key)
                        found = from_validation(root, loc, exc, model, hint=hint)
                    # only required fields left out: a key the model would drop is
                    # reported instead (a typo of one of them, likely)
                    unknown = typo_instead(exc, model, value, loc)
                    if unknown is not None:
                        found = [locate(root, unknown, unknown_key(unknown, model, 4))]
                    problems += found
                    rest = without_bad_keys(model, layered(sections.get(key), value), exc)
                    if rest is not None and isinstance(value, Mapping):  # its names
                        own.append((loc, rest, value))
                    continue
                except Exception as exc:  # a validator raising what pydantic lets through
                    problems.append(locate(root, loc, raised(model, key, exc)))
                    continue
                ignored = ignored_key(checked, value, loc)
                if ignored is not None:
                    problems.append(locate(root, ignored, unknown_key(ignored, model, 4)))
                elif isinstance(value, Mapping):
                    own.append((loc, checked, value))
            elif off.left_out(key):  # installed, does not run: nothing would apply it
                if off.is_blocked(key):
                    off.ignored.append(locate(root, loc, ""))
                else:
                    reason = (
                        f"plugin {key!r} is installed but not loaded, so nothing would "
                        "apply these settings: load it (DSH_LOAD_PLUGINS, -p "
                        f"{key}) or remove them"
                    )
                    off.unrun.append(locate(root, loc, reason))
            elif key in FIRST_PARTY and off.missing(key):
                # a free key otherwise: an agent's deny rules would apply to nothing
                if off.is_blocked(key):
                    off.ignored.append(locate(root, loc, ""))
                else:
                    off.unrun.append(locate(root, loc, not_installed("option", key)))
            elif not off.is_blocked(key):
                # close enough to be a typo (max_token, permision), not merely alike
                # (max_turns, prompt, queue): those stay free for plugins
                hint = option_typo(key, known)
                if hint:
                    reason = (
                        f"unknown option {key!r} (not a core option or a loaded plugin's "
                        f"name){hint}"
                    )
                    problems.append(locate(root, loc, reason))
                elif (nested := free_misplaced(key, value)) is not None:  # stored as it is
                    problems.append(locate(root, (*loc, *nested[0]), nested[1]))
    return problems


def _unknown_section(
    root: Node | None, name: str, settings: Mapping[str, type[BaseModel]], whose: str
) -> Problem:
    """A section no loaded plugin reads: for a plugin ``whose`` is "loaded" (it
    registers no settings, or registers them for another section) or "left out"
    (installed, not in this run), said as such (a typo or a missing install is not the
    problem then); one of dsh's own plugins "not installed" names the distribution to
    install."""
    if whose == "loaded":  # the key path before the reason names the section
        read = [repr(s) for s, model in settings.items() if owner(model, s) == name]
        sections = f"section{'s' if len(read) > 1 else ''} {', '.join(read)}"
        reason = (
            f"plugin {name!r} is loaded but reads its settings from {sections}, not "
            f"{name!r}; move them there"
            if read
            else f"plugin {name!r} is loaded but takes no settings (it registers none); "
            "remove the section"
        )
        return locate(root, (name,), reason)
    if whose == "left out":
        reason = (
            f"section {name!r} is for plugin {name!r}, which is installed but not loaded: "
            f"load it (DSH_LOAD_PLUGINS, -p {name}) or remove the section"
        )
        return locate(root, (name,), reason)
    if whose == "not installed" and name in FIRST_PARTY:
        return locate(root, (name,), not_installed("section", name))
    loaded = ", ".join(sorted(settings)) or "none"
    closest = did_you_mean(name, [*CORE_KEYS, *settings])
    module = _module_named(name, settings)
    if not module and closest and closest == did_you_mean(name, CORE_KEYS):  # modle: model
        reason = (
            f"unknown key{closest} (nor is it a section of a loaded plugin; loaded plugins "
            f"with settings: {loaded})"
        )
        return locate(root, (name,), reason)
    hint = module or closest
    reason = (
        f"section {name!r} is for a plugin that is not installed or not loaded "
        f"(loaded plugins with settings: {loaded}){hint}"
    )
    return locate(root, (name,), reason)


def _module_named(name: str, settings: Mapping[str, type[BaseModel]]) -> str:
    """The hint for a plugin module given in code without a name (``plugins=[dsh_vault]``):
    it is registered under the module's name, so its section is that, not ``name``."""
    for registered in settings:
        module = registered.rpartition(".")[2]
        if registered != name and module in (f"dsh_{name}", f"{name}_plugin"):
            return (
                f"; plugin {registered!r} is registered under its module's name: give it "
                f"as ({name!r}, {module}) in plugins= to read section {name!r}"
            )
    return ""
