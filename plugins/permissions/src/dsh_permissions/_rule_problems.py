"""What is wrong with one permission rule, given the tools a harness registered: a
tool name that is a near miss of a registered one (``bsah(rm *)``: a typo that would
match nothing), one no plugin registered, or a bad path pattern; and the validator of a
rule given in code (``registered_rule``). ``_rule_names`` checks a whole config with them."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationInfo

from dsh_permissions._paths import pattern_problem
from dsh_permissions._rules import parse_rule

__all__ = ["problem_of", "registered_rule", "registered_tools"]

_TYPO = 0.75  # difflib's ratio above which an unknown tool name is taken for a typo


def registered_tools(registry: Any) -> dict[str, tuple[str, ...]]:
    """Each registered tool's name, casefolded, and its path arguments."""
    found: dict[str, tuple[str, ...]] = {}
    for spec in registry.specs():
        tool = registry.get(spec.name)
        found[spec.name.casefold()] = tuple(getattr(tool, "path_args", ()) or ())
    return dict(sorted(found.items()))


def problem_of(tools: Mapping[str, tuple[str, ...]], text: str) -> tuple[str, str | None] | None:
    """(what is wrong, what refuses it or None) of one rule, or None when it is right."""
    tool, pattern = parse_rule(text)
    tool = tool.casefold()
    if "*" in tool:
        return None
    if tool in tools:
        bad = pattern_problem(pattern) if pattern and tools[tool] else None
        return None if bad is None else (f"has a bad path pattern: {bad}", "")
    close = difflib.get_close_matches(tool, list(tools), n=1, cutoff=_TYPO)
    return (
        "names no tool",
        f"; did you mean {close[0]!r}? (it would match no call)" if close else None,
    )


def registered_rule(text: str, info: ValidationInfo) -> str:
    """A rule given in code, checked as ``check_own_rules`` checks it when pydantic's
    validation context holds the harness (dsh-core gives it to an agent's options given
    in code: the error then comes from ``agents.create``, naming the key)."""
    harness = info.context.get("harness") if isinstance(info.context, Mapping) else None
    registry = getattr(harness, "tools", None)
    if registry is not None:
        found = problem_of(registered_tools(registry), text)
        if found is not None and found[1] is not None:
            raise ValueError(f"rule {text!r} {found[0]}{found[1]}")
    return text
