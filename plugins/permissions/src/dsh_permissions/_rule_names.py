"""Rules that would match nothing, or not what they say. A deny rule whose tool name
is misspelt (``bsah(rm *)``) matches nothing, and the call it was meant to stop runs:
so when a harness starts, a rule naming a near miss of a registered tool stops it, and
a rule naming a tool no plugin registered (one of a plugin not loaded now) is warned
about. A path pattern that would be read other than meant (``$HOME/**``, ``src/**x``,
an unclosed ``[``) stops it too. An agent's own options (given in code) are checked
when its policy is made (``check_own_rules``), and so is an allow rule whose path
pattern reaches its directory through a symlink (``linked_allows``: it matches
nothing)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from dsh import DshError, get_logger
from dsh_permissions._path_braces import alternatives
from dsh_permissions._paths import PathPattern, pattern_problem
from dsh_permissions._rule_problems import Declared, problem_of, registered_tools
from dsh_permissions._rules import parse_rule
from dsh_permissions._settings import PermissionSettings, PermissionsSection

__all__ = ["check_own_rules", "check_rule_names", "linked_allows"]

log = get_logger("dsh_permissions")


def check_rule_names(harness: Any, own: PermissionSettings | None) -> None:
    """Check the rules of ``own`` (settings given in code), the ``permissions:`` section
    and every ``agents[].options.permissions`` of the harness's config."""
    tools = registered_tools(harness.tools)
    for where, loc, settings in _rule_sets(harness, own):
        for action, i, text, problem, close in _problems(tools, settings):
            place = f"{where}.{action}[{i}]: rule {text!r} {problem}"
            if loc is not None:  # from dsh.yml: say where in the file, as its errors do
                place = f"{harness.config.where(*loc, action, i)}: {place}"
            if close is not None:
                raise DshError(f"{place}{close}")
            log.warning("warning: %s", place)


def check_own_rules(tools: Any, agent_id: str, key: str, settings: PermissionSettings) -> None:
    """The rules of an agent's ``options[key]`` (``tools``: its registry): a DshError
    for the first that names a near miss of a tool or holds a bad path pattern, as
    ``check_rule_names`` refuses one in ``dsh.yml``; a tool no one registered is let be
    (warned about when the harness started, for the config's agents)."""
    for action, i, text, problem, close in _problems(registered_tools(tools), settings):
        if close is not None:
            raise DshError(
                f"agent {agent_id!r}: option {key}.{action}[{i}]: rule {text!r} {problem}{close}"
            )


def linked_allows(registry: Any, settings: PermissionSettings, root: str) -> Iterator[str]:
    """Each allow rule of a tool with path arguments whose pattern's literal directory
    is a symlink now, said in words: it matches nothing (an allow rule must match the
    pattern as written and as resolved), so the person is told the real directory."""
    if not callable(getattr(registry, "specs", None)):
        return
    tools = registered_tools(registry)
    for text in settings.allow:
        tool, pattern = parse_rule(text)
        declared = tools.get(tool.casefold())
        if pattern is None or declared is None or not declared.paths or pattern_problem(pattern):
            continue
        for one in alternatives(pattern):
            literal = PathPattern.compile(one, root).literal
            real = os.path.realpath(literal)
            if real == literal:
                continue
            yield (
                f"rule 'allow: {text}' names {literal}, which leads to {real} through a "
                "symlink: an allow rule matches nothing through one (a link the agent "
                "made could widen it); name the real directory"
            )
            break


def _problems(
    tools: Mapping[str, Declared], settings: PermissionSettings
) -> Iterator[tuple[str, int, str, str, str | None]]:
    """(action, index, rule, what is wrong, what refuses it or None: only warned) of
    each rule of ``settings`` naming no registered tool or holding a bad path pattern."""
    for action in ("deny", "ask", "allow"):
        for i, text in enumerate(getattr(settings, action)):
            found = problem_of(tools, text, action)
            if found is not None:
                yield action, i, text, *found


def _rule_sets(
    harness: Any, own: PermissionSettings | None
) -> Iterator[tuple[str, tuple[str | int, ...] | None, Any]]:
    """(key path, its location in dsh.yml or None, settings) of each set of rules."""
    if own is not None:
        yield "Permissions(settings)", None, own
    config = harness.config
    filed = getattr(config, "root", None) is not None
    for name, model in harness.settings.items():
        if model is not PermissionsSection:
            continue
        section = config.section(name)
        if section is not None:
            yield name, (name,) if filed else None, section
        for i, agent in enumerate(config.agents):
            raw = agent.options.get(name)
            if isinstance(raw, Mapping):
                loc = ("agents", i, "options", name) if filed else None
                yield f"agents[{i}].options.{name}", loc, PermissionSettings.model_validate(raw)
