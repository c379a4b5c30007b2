"""Checking a parsed ``dsh.yml`` against the core's models and each plugin's settings
model: every problem located (line, column, key path) and reported, in file order."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError
from yaml.nodes import Node

from dsh._config_errors import from_validation, missing_hint, typo_instead
from dsh._config_keys import ignored_key, layered, unknown_key
from dsh._config_models import CORE_KEYS, AgentConfig, Config, CoreKeys, misplaced_key
from dsh._config_yaml import Loc, Problem, did_you_mean, locate
from dsh._model_name import model_name_fields
from dsh._options import CORE_OPTIONS, core_option_problem, option_typo
from dsh._plugin_settings import raised
from dsh._secrets import get_logger

__all__ = ["set_model_names", "validate"]

log = get_logger("dsh.config")

#: Agent options an ``agents:`` entry can set itself (``queue_mode``, ``max_steps``, ...):
#: under ``options`` too, unless the entry sets them (``model``: on the entry only).
_ENTRY_KEYS = frozenset(AgentConfig.model_fields) - {"id", "options"}


def validate(
    source: str,
    root: Node | None,
    data: dict[str, Any],
    settings: Mapping[str, type[BaseModel]],
    blocked: Callable[[str], bool] | None = None,
    left_out: Callable[[str], bool] | None = None,
    starts_agents: bool = True,
) -> Config:
    """``data`` as a Config; ``blocked(name)`` says a plugin was turned off (``-p
    no:NAME``): its section is left unchecked instead of being an unknown section, with
    a warning that it is ignored. ``left_out(name)`` says an installed plugin does not
    run: settings for one (its section, or under an agent's options) would apply to
    nothing (a policy plugin's rules, silently), so they are refused, saying so, or
    ignored with a warning when the plugin was turned off. ``starts_agents=False`` (a
    command that reads the config and starts no agent, ``dsh sessions list``): settings
    for plugins that do not run (a section for one not installed or left out, options
    for one left out) cannot change what it does, so each is a warning instead."""
    problems: list[Problem] = []
    unrun: list[Problem] = []  # settings for plugins that do not run
    turned_off: list[Problem] = []  # settings of plugins turned off, warned about
    # an empty `models:` or `agents:` (all entries commented out) means none
    core = {k: data[k] for k in CORE_KEYS if k in data}
    core = {k: v for k, v in core.items() if v is not None or k == "model"}
    good = _GoodPart(core)  # what the later checks look at when part of the core is bad
    try:
        parsed: CoreKeys | None = CoreKeys.model_validate(core)
    except ValidationError as exc:
        problems += from_validation(root, (), exc, CoreKeys)
        parsed = None
        good = _GoodPart(core, exc)
    sections: dict[str, Any] = {}
    for name, value in data.items():
        if name in CORE_KEYS:
            continue
        model = settings.get(name)
        if model is None and blocked is not None and blocked(name):
            if left_out is not None and left_out(name):
                turned_off.append(locate(root, (name,), ""))
            continue
        misplaced = None if model is not None else misplaced_key(name)
        if misplaced is not None:  # a key pasted at the top: never kept
            problems.append(locate(root, (name,), misplaced))
            continue
        if model is None:
            installed = left_out is not None and left_out(name)
            unrun.append(_unknown_section(root, name, settings, installed))
            continue
        value = {} if value is None else value
        try:
            sections[name] = model.model_validate(value)
        except ValidationError as exc:
            problems += from_validation(root, (name,), exc, model)
            continue
        except Exception as exc:  # a validator raising what pydantic lets through
            problems.append(locate(root, (name,), raised(model, name, exc)))
            continue
        ignored = ignored_key(sections[name], value, (name,))
        if ignored is not None:
            problems.append(locate(root, ignored, unknown_key(ignored, model, 1)))
    own: list[tuple[Loc, BaseModel]] = []  # plugin settings under agents[].options
    checked = parsed if parsed is not None else good.parsed
    if checked is not None:  # every problem in one run: the good part of a bad core too
        valid = {name: data[name] for name in sections}  # a bad section is reported once
        off = _Off(blocked, left_out, turned_off, unrun)
        problems += _agent_options(root, checked, valid, settings, off, own, good.at, data)
        where = [((name,), s) for name, s in sections.items()]
        problems += _cross_check(root, checked, where, good=good)
        problems += _cross_check(root, checked, own, agents=False, good=good)
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
    return Config(source, models, parsed.model, parsed.agents, sections, data, root)


class _Off:
    """The plugins a config may name that are not loaded: ``blocked`` (turned off with
    ``-p no:NAME``) and ``left_out`` (installed, not loaded); ``ignored`` collects the
    places of settings for plugins turned off, ``unrun`` the problems of settings for
    plugins left out."""

    def __init__(
        self,
        blocked: Callable[[str], bool] | None,
        left_out: Callable[[str], bool] | None,
        ignored: list[Problem],
        unrun: list[Problem],
    ) -> None:
        self.blocked = blocked
        self.left_out = left_out or _nothing
        self.ignored = ignored
        self.unrun = unrun

    def is_blocked(self, name: str) -> bool:
        return self.blocked is not None and self.blocked(name)


def _nothing(name: str) -> bool:
    return False


class _GoodPart:
    """The part of the core keys without a problem, for the checks that follow the
    core's own: ``parsed`` from the core less every bad model entry or top-level value
    of ``error``; an agent entry with a bad key keeps its good keys (the bad ones set
    back to their defaults, an unknown one dropped: its ``model`` and ``options`` are
    still checked), one whose id or whole value is bad is left out; ``at[i]``, the
    index in the file of ``parsed``'s agent ``i``; ``broken``, the models whose entry
    is bad (a reference to one is no news); ``bad_ids``, the ids of the agent entries
    left out whose id itself is fine, by index (a later entry with the same id is
    still a duplicate)."""

    def __init__(self, core: dict[str, Any], error: ValidationError | None = None) -> None:
        self.parsed: CoreKeys | None = None
        self.at: list[int] | None = None
        self.broken: set[str] = set()
        self.bad_ids: dict[int, str] = {}
        models = core.get("models")
        # every entry of `models:` in file order, the bad ones too
        self.names = [str(k) for k in models] if isinstance(models, dict) else []
        if error is None:
            return
        bad_agents: set[int] = set()
        bad_id: set[int] = set()
        bad_keys: dict[int, set[str]] = {}  # agent index -> its keys with a problem
        for err in error.errors():
            top, *inner = err["loc"]
            if top == "models" and inner:
                self.broken.add(str(inner[0]))
            elif top == "agents" and inner and isinstance(inner[0], int):
                bad_agents.add(inner[0])
                if inner[1:2] == ["id"]:
                    bad_id.add(inner[0])
                keys = bad_keys.setdefault(inner[0], set())
                keys.add(str(inner[1]) if len(inner) > 1 else "")  # "": the whole entry
            else:  # the whole value is bad (`models: [a, b]`)
                if top == "models":
                    self.broken.add("*")
                core = {k: v for k, v in core.items() if k != top}
        if isinstance(core.get("models"), dict):
            models = {k: v for k, v in core["models"].items() if k not in self.broken}
            core = {**core, "models": models}
        if isinstance(core.get("agents"), list):
            entries = list(core["agents"])
            left_out = set(bad_id)
            for i in bad_agents - bad_id:
                kept = _without_bad_keys(entries[i], bad_keys[i])
                if kept is not None:
                    entries[i] = kept
                    continue
                left_out.add(i)
                entry = entries[i]
                if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                    self.bad_ids[i] = entry["id"]
            self.at = [i for i in range(len(entries)) if i not in left_out]
            core = {**core, "agents": [entries[i] for i in self.at]}
        try:
            self.parsed = CoreKeys.model_validate(core)
        except ValidationError:  # not expected: then only the core's problems are told
            self.parsed = None


def _without_bad_keys(entry: object, bad: set[str]) -> dict[str, Any] | None:
    """An ``agents:`` entry with a problem at each of the keys ``bad``, as one without:
    a bad key of the entry set back to its default, an unknown one dropped; ``None``
    when that leaves it bad still (its whole value is bad, or a required key)."""
    if not isinstance(entry, dict) or "" in bad:
        return None
    fields = AgentConfig.model_fields
    good = {k: v for k, v in entry.items() if k not in bad}
    for key in bad & set(fields):
        if fields[key].is_required():
            return None
        good[key] = fields[key].get_default(call_default_factory=True)
    try:
        AgentConfig.model_validate(good)
    except ValidationError:
        return None
    return good


#: ``local`` in a plugin's setting, without a ``models:`` entry of that name: the dsh
#: command starts the bundled server for the agent's model only (as options in code).
_LOCAL_FOR_A_PLUGIN = (
    "'local' (the bundled model) is started by the dsh command for an agent's model "
    "only; nothing starts it for a plugin's setting, so the first call would fail. Omit "
    "the setting to use the agent's model, or define a model named local under models:"
)


def _cross_check(
    root: Node | None,
    parsed: CoreKeys,
    sections: Sequence[tuple[Loc, BaseModel]],
    *,
    good: _GoodPart,
    agents: bool = True,
) -> list[Problem]:
    """Model names: the top-level ``model``, the agents' (unless ``agents`` is False)
    and the ``ModelName`` fields each plugin settings object of ``sections`` sets.
    ``good``: the part of the core without a problem (its ``at``, ``broken``,
    ``bad_ids``, ``names``)."""
    problems: list[Problem] = []
    at, broken, bad_ids = good.at, good.broken, good.bad_ids
    # a bad entry is still defined: named, and a near miss of its name hinted at
    names = good.names or list(parsed.models)
    defined = ", ".join(names) or "none"
    # `local` without an entry of that name: the bundled model the dsh command starts
    known = {*names, "local"}

    def check(loc: Loc, name: str | None) -> None:
        if "*" in broken:  # `models:` itself is bad: no name can be checked
            return
        if name is not None and name not in known and name not in broken:
            hint = did_you_mean(name, sorted(known))
            reason = f"unknown model {name!r} (models defined: {defined}; local is built in){hint}"
            problems.append(locate(root, loc, reason))

    if agents:
        check(("model",), parsed.model)
        entries = dict(bad_ids or {})
        for n, agent in enumerate(parsed.agents):
            i = n if at is None else at[n]
            check(("agents", i, "model"), agent.model)
            entries[i] = agent.id
        ids: dict[str, int] = {}
        for i, agent_id in sorted(entries.items()):
            if agent_id in ids:
                reason = f"duplicate agent id {agent_id!r} (first at agents[{ids[agent_id]}].id)"
                problems.append(locate(root, ("agents", i, "id"), reason))
            ids.setdefault(agent_id, i)
    for where, section in sections:  # plugin settings typed ModelName, if set
        for loc, name in set_model_names(section):
            if name == "local" and name not in names and "*" not in broken:
                problems.append(locate(root, (*where, *loc), _LOCAL_FOR_A_PLUGIN))
                continue
            check((*where, *loc), name)
    return problems


def set_model_names(section: BaseModel) -> list[tuple[Loc, str | None]]:
    """The names the ``ModelName`` fields of ``section`` are set to (a field left at
    its default is not checked: the plugin's own default is not the file's problem),
    each with its place in the section: a ``dict[str, ModelName]``'s each value, a
    list's each item."""
    found: list[tuple[Loc, str | None]] = []
    for key in model_name_fields(type(section)):
        if key in section.model_fields_set:
            value = getattr(section, key)
            if isinstance(value, Mapping):  # dict[str, ModelName]: each value
                found += [((key, inner), name) for inner, name in value.items()]
            elif isinstance(value, list | tuple | set | frozenset):
                found += [((key, index), name) for index, name in enumerate(value)]
            else:
                found.append(((key,), value))
    return found


def _agent_options(
    root: Node | None,
    parsed: CoreKeys,
    sections: Mapping[str, Any],
    settings: Mapping[str, type[BaseModel]],
    off: _Off,
    own: list[tuple[Loc, BaseModel]],
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
            elif (misplaced := misplaced_key(key)) is not None:  # stored with the session
                problems.append(locate(root, loc, misplaced))
            elif key in CORE_OPTIONS:
                problem = core_option_problem({key: value})
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
                    continue
                except Exception as exc:  # a validator raising what pydantic lets through
                    problems.append(locate(root, loc, raised(model, key, exc)))
                    continue
                ignored = ignored_key(checked, value, loc)
                if ignored is not None:
                    problems.append(locate(root, ignored, unknown_key(ignored, model, 4)))
                elif isinstance(value, Mapping):
                    own.append((loc, checked))
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
    return problems


def _unknown_section(
    root: Node | None, name: str, settings: Mapping[str, type[BaseModel]], installed: bool
) -> Problem:
    """A section no loaded plugin reads: for an ``installed`` plugin left out of this
    run, said as such (a typo or a missing install is not the problem then)."""
    if installed:
        reason = (
            f"section {name!r} is for plugin {name!r}, which is installed but not loaded: "
            f"load it (DSH_LOAD_PLUGINS, -p {name}) or remove the section"
        )
        return locate(root, (name,), reason)
    loaded = ", ".join(sorted(settings)) or "none"
    hint = did_you_mean(name, [*CORE_KEYS, *settings])
    reason = (
        f"section {name!r} is for a plugin that is not installed or not loaded "
        f"(loaded plugins with settings: {loaded}){hint}"
    )
    return locate(root, (name,), reason)
