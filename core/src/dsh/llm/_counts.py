"""The token counts of a provider's usage, read leniently: usage is bookkeeping, and a
server's mistake in it is no reason to discard a finished answer.

A count is a whole number from 0 to 2**53: an int, a float with no fraction (``12.0``)
or its digits as text (``"12"``, at most 15 of them); null or missing is 0. Anything
else (other text, ``true``, a negative, fractional or larger number, a list or an
object) is counted as 0 with a warning, once per model and field in a process (a
server that sends usage with every chunk would repeat it), naming the model and the
field, never the value (a server may echo anything there, a key too). An object of
counts (``usage`` itself too) that is none counts as empty, with such a warning.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from dsh._secrets import get_logger

__all__ = ["count", "mapping"]

log = get_logger(__name__)
_WARNED: Final[set[tuple[str, str]]] = set()  # (model, field): said once
_MOST: Final = 2**53  # beyond it a float is no exact count, and no server counts so far
_DIGITS: Final = 15  # text longer is no count (and int() refuses 4301 digits)


def count(model: str, usage: Mapping[str, Any], field: str) -> int:
    """``usage[field]`` as a count; 0 (said once) for a value that is none."""
    value = usage.get(field)
    if value is None:
        return 0
    kind = type(value)
    if kind is int and 0 <= value <= _MOST:
        return int(value)
    if kind is float and 0 <= value <= _MOST and value.is_integer():
        return int(value)
    if kind is str and len(value) <= _DIGITS and value.isascii() and value.isdigit():
        return int(value)
    _unreadable(model, field, kind, "model %r: the usage's %s is not a count (%s): counted as 0")
    return 0


def mapping(model: str, usage: Mapping[str, Any], field: str) -> Mapping[str, Any]:
    """``usage[field]``, an object of counts (``prompt_tokens_details``, ``usage``
    itself, Groq's ``x_groq`` that holds it); empty (said once) for a value that is
    none."""
    value = usage.get(field)
    if value is None or isinstance(value, Mapping):
        return value or {}
    if field == "usage":
        said = "model %r: the %s is not an object of counts (%s): its counts are 0"
    elif field == "x_groq":
        said = "model %r: %s is not an object of counts (%s): its counts are 0"
    else:
        said = "model %r: the usage's %s is not an object of counts (%s): its counts are 0"
    _unreadable(model, field, type(value), said)
    return {}


def _unreadable(model: str, field: str, kind: type, said: str) -> None:
    if (model, field) in _WARNED:
        return
    _WARNED.add((model, field))
    name = kind.__name__
    log.warning(said, model, field, f"{'an' if name[0] in 'aeiou' else 'a'} {name}")
