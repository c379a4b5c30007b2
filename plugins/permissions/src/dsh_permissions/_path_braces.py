"""Brace alternatives in a path pattern, as bash and most glob libraries read them:
``read({.env,.envrc})`` is ``read(.env)`` and ``read(.envrc)``, ``**/*.{pem,key}``
is ``**/*.pem`` and ``**/*.key``; nested ones expand too (``{a,b{c,d}}``), and so do
bash's sequences (``key{1..3}.pem``, ``{a..c}``, ``{01..10..3}``). A brace without a
comma or a sequence at its level (``{a}``) or without its closer is itself, as in bash.
A rule's pattern matches a path when one of its alternatives does.

Refused (ValueError, so a rule stops dsh at start): more than ``MAX_ALTERNATIVES``
distinct alternatives, more than ``MAX_BRACES`` ``{`` (each is a level of expansion),
and an empty alternative that leaves a relative pattern empty or absolute
(``{,.env}``, ``{,src}/.env`` is ``/.env``: not the workspace's ``.env``). Alternatives
written absolute in full are kept (``{/etc/shadow,/etc/passwd}``, ``{.env,/etc/passwd}``).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MAX_ALTERNATIVES", "MAX_BRACES", "alternatives"]

#: more alternatives than this are refused (a pattern is matched once per alternative)
MAX_ALTERNATIVES: Final = 64
#: more ``{`` than this in one pattern are refused
MAX_BRACES: Final = 64
#: an empty alternative, marked to tell it from the text around it (``_emptied``)
_EMPTY: Final = "\0"
#: bash's sequence expression: integers or single letters, an optional increment
_SEQUENCE: Final = re.compile(r"(-?[0-9]+|[A-Za-z])\.\.(-?[0-9]+|[A-Za-z])(?:\.\.(-?[0-9]+))?")


def alternatives(pattern: str) -> tuple[str, ...]:
    """The patterns ``pattern`` stands for (itself when it has no ``{a,b}``); raises
    ValueError when they cannot be used (see the module)."""
    if pattern.count("{") > MAX_BRACES:
        raise ValueError(f"it holds more than {MAX_BRACES} '{{'; write several rules")
    found = tuple(_expand(pattern))
    if not pattern.startswith(("/", "~")) and any(not o or o[0] == "/" for o in found):
        for one in _emptied(pattern):
            raise ValueError(
                f"a brace alternative makes it {one!r}, "
                + ("which names nothing" if not one else "an absolute path")
                + "; write each alternative in full (read(.env), read(src/.env))"
            )
    return found


def _emptied(pattern: str) -> list[str]:
    """The alternatives of ``pattern`` that an empty alternative leaves empty or absolute
    (``{,.env}``, ``{,src}/.env``); one written absolute in full (``{/etc,/root}/**``)
    is not. Every one that may be, when they cannot be told apart (too many)."""
    try:
        marked = _expand(pattern, _EMPTY)
    except ValueError:  # fail closed: every empty or absolute one
        return [one for one in _expand(pattern) if not one or one[0] == "/"]
    emptied = (one.lstrip(_EMPTY) for one in marked if one.startswith(_EMPTY))
    return [one for one in emptied if not one or one[0] == "/"]


def _too_many() -> ValueError:
    return ValueError(
        f"its braces stand for more than {MAX_ALTERNATIVES} alternatives; write several rules"
    )


def _expand(pattern: str, empty: str = "") -> list[str]:
    """Every expansion of the first ``{...}`` group, the rest expanded in turn, each
    once, an empty alternative written ``empty`` (raises ValueError past
    ``MAX_ALTERNATIVES``)."""
    start = 0
    while (open_at := pattern.find("{", start)) >= 0:
        parts = _split(pattern, open_at)
        if parts is None:
            start = open_at + 1
            continue
        choices, close_at = parts
        head, tail = pattern[:open_at], pattern[close_at + 1 :]
        expanded: dict[str, None] = {}
        for choice in choices:
            expanded.update(dict.fromkeys(_expand(head + (choice or empty) + tail, empty)))
            if len(expanded) > MAX_ALTERNATIVES:
                raise _too_many()
        return list(expanded)
    return [pattern]


def _split(pattern: str, open_at: int) -> tuple[list[str], int] | None:
    """The choices of the group opened at ``open_at`` (comma-separated, or a sequence)
    and where it closes, or None when it is no group (no closer, or neither)."""
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
                    return _sequence(pattern[begin:index], index)
                return [*choices, pattern[begin:index]], index
        elif char == "," and depth == 1:
            choices.append(pattern[begin:index])
            begin = index + 1
    return None


def _sequence(text: str, close_at: int) -> tuple[list[str], int] | None:
    """bash's ``{1..3}``, ``{a..c}``, ``{01..10..2}`` as choices, or None."""
    found = _SEQUENCE.fullmatch(text)
    if found is None:
        return None
    first, last, by = found.group(1), found.group(2), abs(int(found.group(3) or 1)) or 1
    if first.isalpha() != last.isalpha():
        return None
    if first.isalpha():
        low, high = ord(first), ord(last)
    else:
        low, high = int(first), int(last)
    if abs(high - low) // by + 1 > MAX_ALTERNATIVES:
        raise _too_many()
    step = by if high >= low else -by
    values = range(low, high + step, step)
    if first.isalpha():
        return [chr(v) for v in values], close_at
    padded = any(s.lstrip("-").startswith("0") and len(s.lstrip("-")) > 1 for s in (first, last))
    width = max(len(first), len(last)) if padded else 0
    return [f"{v:0{width}d}" for v in values], close_at
