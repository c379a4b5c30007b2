"""Brace alternatives in a path pattern, as bash and most glob libraries read them:
``read({.env,.envrc})`` is ``read(.env)`` and ``read(.envrc)``, ``**/*.{pem,key}``
is ``**/*.pem`` and ``**/*.key``; nested ones expand too (``{a,b{c,d}}``). A brace
without a comma at its level (``{a}``) or without its closer is itself, as in bash.
A rule's pattern matches a path when one of its alternatives does."""

from __future__ import annotations

from typing import Final

__all__ = ["MAX_ALTERNATIVES", "alternatives"]

#: more alternatives than this are refused (a pattern is matched once per alternative)
MAX_ALTERNATIVES: Final = 64


def alternatives(pattern: str) -> tuple[str, ...]:
    """The patterns ``pattern`` stands for (itself when it has no ``{a,b}``); raises
    ValueError when there are more than ``MAX_ALTERNATIVES``."""
    found = list(dict.fromkeys(_expand(pattern)))
    if len(found) > MAX_ALTERNATIVES:
        raise ValueError(
            f"its braces stand for more than {MAX_ALTERNATIVES} alternatives; write several rules"
        )
    return tuple(found)


def _expand(pattern: str) -> list[str]:
    """Every expansion of the first ``{...,...}`` group, the rest expanded in turn."""
    start = 0
    while (open_at := pattern.find("{", start)) >= 0:
        parts = _split(pattern, open_at)
        if parts is None:
            start = open_at + 1
            continue
        choices, close_at = parts
        head, tail = pattern[:open_at], pattern[close_at + 1 :]
        expanded: list[str] = []
        for choice in choices:
            expanded.extend(_expand(head + choice + tail))
            if len(expanded) > MAX_ALTERNATIVES:
                break
        return expanded
    return [pattern]


def _split(pattern: str, open_at: int) -> tuple[list[str], int] | None:
    """The comma-separated choices of the group opened at ``open_at`` and where it
    closes, or None when it is no group (no closer, or no comma at its level)."""
    depth = 0
    choices: list[str] = []
    begin = open_at + 1
    for index in range(open_at, len(pattern)):
        char = pattern[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                if not choices:
                    return None
                return [*choices, pattern[begin:index]], index
        elif char == "," and depth == 1:
            choices.append(pattern[begin:index])
            begin = index + 1
    return None
