"""Lossless JSON, as the core writes it: ``loads`` refuses ``NaN``, ``Infinity`` and a
number too large for a float (``1e400``), which ``json.loads`` would read as floats no
event or meta can hold. The records (``_records``), a JSONL header (``_header``) and a
database's ``meta`` column (``_batch``) are read with it."""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["NotLossless", "loads"]

_INFINITIES = (math.inf, -math.inf)


class NotLossless(ValueError):
    """A number in stored JSON that the store cannot hold (NaN, an infinity)."""


def _constant(name: str) -> Any:
    raise NotLossless(f"{name} is not lossless JSON")


def _finite(text: str) -> float:
    # Called for each number with a fraction or an exponent, so a float's only cost
    # is this call: one parse per record stays one parse.
    value = float(text)
    if value in _INFINITIES:
        raise NotLossless(f"{text} is not lossless JSON (too large for a float)")
    return value


def loads(text: str | bytes) -> Any:
    """The JSON value of ``text``; ``NotLossless`` (a ValueError) when it holds NaN or
    a number a float cannot hold, which ``json.loads`` would read as floats."""
    return json.loads(text, parse_constant=_constant, parse_float=_finite)
