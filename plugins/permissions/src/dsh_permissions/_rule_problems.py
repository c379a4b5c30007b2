"""What is wrong with one permission rule, given the tools a harness registered: a
tool name that is a near miss of a registered one (``bsah(rm *)``: a typo that would
match nothing), one no plugin registered, a bad path pattern, or a command pattern that
matches no command (``bash(cd / && rm *)``, Claude Code's ``Bash(rm:*)``, a
backslash, ``bash(rm \\*)``:
``_pattern_forms``); and
the validator of a rule given in code (``registered_rule``). ``_rule_names`` checks a
whole config with them."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, NamedTuple

from pydantic import ValidationInfo

from dsh_permissions._paths import pattern_problem
from dsh_permissions._pattern_forms import (
    backslash_problem,
    prefix_problem,
    text_pattern_problem,
)
from dsh_permissions._rules import parse_rule

__all__ = ["Declared", "problem_of", "registered_rule", "registered_tools"]

_TYPO = 0.75  # difflib's ratio above which an unknown tool name is taken for a typo


class Declared(NamedTuple):
    """A registered tool's path arguments and command arguments."""

    paths: tuple[str, ...]
    commands: tuple[str, ...] = ()


def registered_tools(registry: Any) -> dict[str, Declared]:
    """Each registered tool's name, casefolded, and what arguments it declares."""
    found: dict[str, Declared] = {}
    for spec in registry.specs():
        tool = registry.get(spec.name)
        found[spec.name.casefold()] = Declared(
            tuple(getattr(tool, "path_args", ()) or ()),
            tuple(getattr(tool, "command_args", ()) or ()),
        )
    return dict(sorted(found.items()))


def problem_of(
    tools: Mapping[str, Declared], text: str, action: str = "deny"
) -> tuple[str, str | None] | None:
    """(what is wrong, what refuses it or None: only warned) of one rule of ``action``,
    or None when it is right. A command pattern that matches no command is refused in
    a deny or ask rule and warned about in an allow rule (which then only asks)."""
    tool, pattern = parse_rule(text)
    tool = tool.casefold()
    if "*" in tool:
        return None
    if tool in tools:
        declared = tools[tool]
        if pattern and declared.paths and (bad := pattern_problem(pattern)) is not None:
            return f"has a bad path pattern: {bad}", ""
        if pattern and declared.commands:
            form = (
                text_pattern_problem(tool, pattern)
                or prefix_problem(tool, pattern)
                or backslash_problem(tool, pattern)
            )
            if form is not None:
                return (form[0] + form[1], None) if action == "allow" else form
        return None
    close = difflib.get_close_matches(tool, list(tools), n=1, cutoff=_TYPO)
    if close:
        return "names no tool", f"; did you mean {close[0]!r}? (it would match no call)"
    known = f"tools: {', '.join(tools)}" if tools else "no tools are registered"
    return f"names no tool that is registered ({known})", None


def registered_rule(text: str, info: ValidationInfo) -> str:
    """A rule given in code, checked as ``check_own_rules`` checks it when pydantic's
    validation context holds the harness (dsh-core gives it to an agent's options given
    in code: the error then comes from ``agents.create``, naming the key)."""
    harness = info.context.get("harness") if isinstance(info.context, Mapping) else None
    registry = getattr(harness, "tools", None)
    if registry is not None:
        action = getattr(info, "field_name", None) or "deny"  # the list: allow warns
        found = problem_of(registered_tools(registry), text, action)
        if found is not None and found[1] is not None:
            raise ValueError(f"rule {text!r} {found[0]}{found[1]}")
    return text
