"""The checks of ``dsh.yml`` that look across its parts, run on what of the core keys
has no problem of its own: every model name the file sets (the top-level ``model``, the
agents', a plugin's ``ModelName`` settings) is defined, and agent ids are unique."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError
from yaml.nodes import Node

from dsh._config_keys import input_key
from dsh._config_models import AgentConfig, CoreKeys
from dsh._config_secrets import key_like_model, key_like_name
from dsh._config_yaml import Loc, Problem, locate
from dsh._model_name import model_name_fields
from dsh._quoted import did_you_mean, shown

__all__ = ["GoodPart", "SettingsAt", "cross_check", "set_model_names", "without_bad_keys"]

#: A plugin's settings at their place in the file, with the agent's options they layer
#: over the plugin's section (None: the section itself).
SettingsAt = tuple[Loc, BaseModel, Mapping[str, Any] | None]


class GoodPart:
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


#: What ``local`` is, in the hint of an unknown name: an agent's model (the dsh command
#: starts the bundled server for it), or a plugin's setting (the server runs when an
#: agent's model is local: checked when an agent is created, ``_config_local``).
_BUILT_IN = "local is built in"
_BUILT_IN_FOR_A_PLUGIN = "local runs when an agent's model is local"


def cross_check(
    root: Node | None,
    parsed: CoreKeys,
    sections: Sequence[SettingsAt],
    *,
    good: GoodPart,
    agents: bool = True,
    registered: Callable[[str], str | None] | None = None,
    off: Callable[[], str] | None = None,
) -> list[Problem]:
    """Model names: the top-level ``model``, the agents' (unless ``agents`` is False)
    and the ``ModelName`` fields each plugin settings object of ``sections`` sets (of
    those over a section, the keys its ``given`` mapping sets: see ``set_model_names``).
    ``local`` is accepted in a plugin's setting too: whether it runs is known when an
    agent is created (``_config_local``). ``good``: the part of the core without a
    problem (its ``at``, ``broken``, ``bad_ids``, ``names``). ``registered(name)``: why
    a name a plugin registers a model under, not declared, is refused (None: no plugin
    registers it). ``off()``: what follows "unknown model" with no near miss (the
    plugins installed but not loaded, one of which may serve it: ``_plugin_off``)."""
    problems: list[Problem] = []
    at, broken, bad_ids = good.at, good.broken, good.bad_ids
    # a bad entry is still defined: named, and a near miss of its name hinted at
    names = good.names or list(parsed.models)
    defined = ", ".join(names) or "none"
    # `local` without an entry of that name: the bundled model the dsh command starts
    known = {*names, "local"}

    def check(loc: Loc, name: str | None, local: str = _BUILT_IN) -> None:
        if "*" in broken:  # `models:` itself is bad: no name can be checked
            return
        if name is not None and name not in known and name not in broken:
            reason = None if registered is None else registered(name)
            if reason is None and key_like_name(name):  # a key pasted there: not shown
                reason = key_like_model(f"models defined: {defined}; {local}")
            if reason is None:
                hint = did_you_mean(name, sorted(known))
                if not hint and off is not None:
                    hint = off()
                said = shown(name)  # the file's own keys are known (``validate``)
                reason = f"unknown model {said} (models defined: {defined}; {local}){hint}"
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
    for where, section, given in sections:  # plugin settings typed ModelName, if set
        for loc, name in set_model_names(section, given):
            check((*where, *loc), name, _BUILT_IN_FOR_A_PLUGIN)
    return problems


def set_model_names(
    section: BaseModel, given: Mapping[str, Any] | None = None
) -> list[tuple[Loc, str | None]]:
    """The names the ``ModelName`` fields of ``section`` are set to (a field left at
    its default is not checked: the plugin's own default is not the file's problem),
    each with its place in the section (its key as the file writes it: an alias if the
    field has one): a ``dict[str, ModelName]``'s each value, a list's each item.
    ``given``: an agent's options that ``section`` layers over the plugin's section;
    only the fields they set (the section's own are told once, at the section, not
    again at every agent's options)."""
    found: list[tuple[Loc, str | None]] = []
    fields = type(section).model_fields
    for field in model_name_fields(type(section)):
        key = input_key(field, fields[field])  # as the file writes it (an alias)
        if given is not None and key not in given and field not in given:
            continue
        if field in section.model_fields_set:
            value = getattr(section, field)
            if isinstance(value, Mapping):  # dict[str, ModelName]: each value
                found += [((key, inner), name) for inner, name in value.items()]
            elif isinstance(value, list | tuple | set | frozenset):
                found += [((key, index), name) for index, name in enumerate(value)]
            else:
                found.append(((key,), value))
    return found


def without_bad_keys(
    model: type[BaseModel], value: Any, error: ValidationError
) -> BaseModel | None:
    """``value``, which ``model`` refused with ``error``, validated again without the
    keys the error is at: the settings the rest of it gives, for the model names it sets
    to be checked with its other problems (``compaction.model: unknown model`` told with
    a misspelt key beside it, not once that is fixed). None when the error is not at a
    key of a mapping, or the rest is refused too (a required field missing)."""
    errors = error.errors()
    if not model_name_fields(model) or not isinstance(value, Mapping):
        return None  # no name to check: its validators are not run again for nothing
    if not all(err["loc"] for err in errors):  # a rule across fields: no key at fault
        return None
    bad = {err["loc"][0] for err in errors}
    try:
        return model.model_validate({k: v for k, v in value.items() if k not in bad})
    except Exception:  # what is wrong was said; the names are checked once it loads
        return None
