"""How long a server asks to be left alone before a retry: ``retry-after-ms``,
``retry-after`` (seconds or an HTTP date) or ``retry_after`` in an error body."""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Mapping
from datetime import UTC
from typing import Any, Final

__all__ = ["MAX_RETRY_AFTER", "body_wait", "retry_after"]

#: The longest wait a server's retry-after is taken at, in seconds (a day): a longer
#: one, an endless one (``inf``) or a date further off is reported as this; what the
#: adapters wait for is bounded further (``max_wait``, 60 s by default).
MAX_RETRY_AFTER: Final = 86_400.0


def retry_after(
    headers: Mapping[str, str], now: float | None = None, *, cap: float = MAX_RETRY_AFTER
) -> float | None:
    """Seconds the server asks us to wait: ``retry-after-ms``, or ``retry-after`` in
    seconds or as an HTTP date, from 0 to ``cap`` (``MAX_RETRY_AFTER``; ``math.inf``:
    the wait as asked, to say it); None if absent or unreadable (``nan`` too)."""
    value = headers.get("retry-after-ms")
    if value is not None:
        wait = _seconds(value, 1000, cap)
        if wait is not None:
            return wait
    value = headers.get("retry-after")
    if value is None:
        return None
    wait = _seconds(value, cap=cap)
    if wait is not None:
        return wait
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # the asctime form and -0000: GMT (RFC 9110, 5.6.7), not local
        when = when.replace(tzinfo=UTC)
    return _seconds(when.timestamp() - (time.time() if now is None else now), cap=cap)


def body_wait(payload: Any) -> float | None:
    """The wait an error body gives as ``retry_after`` (seconds, a number or its text),
    in its error object or beside it; None if it gives none."""
    if not isinstance(payload, Mapping):
        return None
    inner = payload.get("error")
    for holder in (inner, payload):
        if isinstance(holder, Mapping) and "retry_after" in holder:
            value = holder["retry_after"]
            if isinstance(value, str | int | float) and not isinstance(value, bool):
                return _seconds(value)
    return None


def _seconds(value: str | float, per_second: int = 1, cap: float = MAX_RETRY_AFTER) -> float | None:
    """``value`` (seconds, or text of a number) / ``per_second``, within 0 and ``cap``;
    None for NaN or text that is not a number."""
    try:
        seconds = float(value) / per_second
    except (ValueError, OverflowError):
        return None
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), cap)
