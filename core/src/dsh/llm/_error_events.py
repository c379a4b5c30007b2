"""An error response whose body is an event stream: the error it streams is the error.

A server (or a gateway in front of it) may answer a streamed request that failed with
its error status and the error as events (``event: error`` then ``data: {"error":
{...}}``), as it would have sent one mid-stream. Read through the SSE parser, the first
data that is a JSON error object is the error's body, as the same object sent as JSON
is: its kind (``insufficient_quota``: not retried), words and wait. Quoted raw, its
kind was lost (``HTTP 429: event: error data: {...}``, retried).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from dsh.errors import ModelError
from dsh.llm._sse import SSEParser, is_event_stream

__all__ = ["error_in", "events_start", "streamed_error"]

#: How a body of events starts, whatever its Content-Type says: a field's name, or a
#: comment (``: keep-alive``), after a byte order mark, if any, and white space.
_EVENT_STARTS: Final = (b"data:", b"event:", b"id:", b"retry:", b":")
_BOM: Final = "\ufeff".encode()


def streamed_error(body: bytes, content_type: str) -> Any:
    """The first JSON error object (``{"error": ...}``, ``{"type": "error", ...}``, a
    list of them) among the data of ``body``'s events, if it is an event stream (by its
    ``content_type`` or its start); None for any other body, or one without such data."""
    if not (is_event_stream(content_type) or events_start(body)):
        return None
    parser = SSEParser()
    try:
        found = [*parser.feed(body), *parser.end()]
    except ModelError:  # a line without its end, far over an error body's size
        return None
    for data in found:
        if (payload := error_in(data)) is not None:
            return payload
    return None


def events_start(body: bytes) -> bool | None:
    """Whether ``body`` (a whole body, or its start) starts as an event stream; None
    while the start is too short to tell (white space, or a piece of a byte order mark
    or of a field's name)."""
    start = body.removeprefix(_BOM).lstrip()
    if start.startswith(_EVENT_STARTS):
        return True
    if _BOM.startswith(start) or any(name.startswith(start) for name in _EVENT_STARTS):
        return None
    return False


def error_in(data: str) -> Any:
    """``data`` (an event's) decoded, if it is a JSON error object (the first of a list
    of them, as Gemini sends); None for any other data."""
    try:
        payload = json.loads(data)
    except ValueError:
        return None
    if isinstance(payload, list) and payload:  # Gemini's list of one error
        payload = payload[0]
    return payload if _is_error(payload) else None


def _is_error(payload: object) -> bool:
    """An error object: with an ``error`` member, or of type (or object) ``error``."""
    return isinstance(payload, Mapping) and (
        payload.get("error") is not None
        or payload.get("type") == "error"
        or payload.get("object") == "error"
    )
