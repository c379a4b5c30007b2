"""The token counts of a provider's usage, read leniently: usage is bookkeeping, and a
server's mistake in it is no reason to discard a finished answer.

A count is a whole number of 0 or more: an int, a float with no fraction (``12.0``) or
its digits as text (``"12"``); null or missing is 0. Anything else (other text,
``true``, a negative or fractional number, a list or an object) is counted as 0 with a
warning, once per model and field in a process (a server that sends usage with every
chunk would repeat it), naming the model and the field, never the value (a server may
echo anything there, a key too).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from dsh._secrets import get_logger

__all__ = ["count", "mapping"]

log = get_logger(__name__)
_WARNED: Final[set[tuple[str, str]]] = set()  # (model, field): said once


def count(model: str, usage: Mapping[str, Any], field: str) -> int:
    """``usage[field]`` as a count; 0 (said once) for a value that is none."""
    value = usage.get(field)
    if value is None:
        return 0
    kind = type(value)
    if kind is int and value >= 0:
        return int(value)
    if kind is float and value >= 0 and value.is_integer():
        return int(value)
    if kind is str and value.isascii() and value.isdigit():
        return int(value)
    _unreadable(model, field, f"{kind.__name__}")
    return 0


def mapping(model: str, usage: Mapping[str, Any], field: str) -> Mapping[str, Any]:
    """``usage[field]``, an object of counts (``prompt_tokens_details``); empty (said
    once) for a value that is none."""
    value = usage.get(field)
    if value is None or isinstance(value, Mapping):
        return value or {}
    _unreadable(model, field, type(value).__name__)
    return {}


def _unreadable(model: str, field: str, kind: str) -> None:
    if (model, field) in _WARNED:
        return
    _WARNED.add((model, field))
    log.warning("model %r: the usage's %s is not a count (a %s): counted as 0", model, field, kind)
