"""Rules that name no tool. A deny rule whose tool name is misspelt (``bsah(rm *)``)
matches nothing, and the call it was meant to stop runs: so when a harness starts, a
rule naming a near miss of a registered tool stops it, and a rule naming a tool no
plugin registered (one of a plugin not loaded now) is warned about."""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from typing import Any

from dsh import DshError, get_logger
from dsh_permissions._rules import parse_rule
from dsh_permissions._settings import PermissionSettings, PermissionsSection

__all__ = ["check_rule_names"]

log = get_logger("dsh_permissions")
_TYPO = 0.75  # difflib's ratio above which an unknown tool name is taken for a typo


def check_rule_names(harness: Any, own: PermissionSettings | None) -> None:
    """Check the rules of ``own`` (settings given in code), the ``permissions:`` section
    and every ``agents[].options.permissions`` of the harness's config."""
    tools = sorted({spec.name.casefold() for spec in harness.tools.specs()})
    for where, loc, settings in _rule_sets(harness, own):
        for action in ("deny", "ask", "allow"):
            for i, text in enumerate(getattr(settings, action)):
                tool = parse_rule(text)[0].casefold()
                if "*" in tool or tool in tools:
                    continue
                place = f"{where}.{action}[{i}]: rule {text!r} names no tool"
                if loc is not None:  # from dsh.yml: say where in the file, as its errors do
                    place = f"{harness.config.where(*loc, action, i)}: {place}"
                close = difflib.get_close_matches(tool, tools, n=1, cutoff=_TYPO)
                if close:
                    raise DshError(f"{place}; did you mean {close[0]!r}? (it would match no call)")
                known = f"tools: {', '.join(tools)}" if tools else "no tools are registered"
                log.warning("%s that is registered (%s)", place, known)


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
