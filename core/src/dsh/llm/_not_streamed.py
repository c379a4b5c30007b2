"""A 2xx answer not labelled an event stream: a stream under another type (read by its
start, ``unstreamed``), a whole JSON answer (``dsh.llm._whole_answer``), the server's
JSON error, or a mistake.

Its body is read as an error response's is (its first ``ERROR_BODY_LIMIT`` bytes; one
of a type that is not JSON only for a moment, see ``read_start``). A
JSON error (``{"error": ...}``, Anthropic's ``{"type": "error", "error": ...}``, the
Responses API's and vLLM's unwrapped ``{"type"|"object": "error", ...}``, the first of
a list of them as Gemini sends) is the server's error, coded as the same object inside
a stream is (its kind, its status, its words); anything else is MALFORMED_RESPONSE,
quoting the start of the body. The keys are hidden from both.
"""

from __future__ import annotations

import math
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from json import loads
from typing import Any, Final

import anyio
import httpx

from dsh._secrets import redact
from dsh.errors import ModelError
from dsh.llm._error_events import error_in, events_start
from dsh.llm._errors import error_from_body, sent_by
from dsh.llm._redact_json import quoted_start
from dsh.llm._sse import EVENT_LIMIT, Events, SSEParser, is_event_stream
from dsh.llm._sse import body as body_of
from dsh.llm._whole_answer import EXPECTED, answer_events

__all__ = [
    "ERROR_BODY_LIMIT",
    "error_object",
    "is_event_stream",
    "not_streamed",
    "read_start",
    "unstreamed",
]

#: How much of an error's body is read (a piece more at most): its words are quoted
#: from the start, and a server may send a whole page.
ERROR_BODY_LIMIT: Final = 64 * 1024
#: A body that is not JSON is read for its quote this long after its first piece, and
#: ``_QUOTE_LIMIT`` bytes at most: a stream of another type (``application/x-ndjson``)
#: may send a line a second, and its end is not waited for.
QUOTE_WAIT: Final = 1.0
_QUOTE_LIMIT: Final = 16 * 1024
#: Content-Types a whole JSON answer may come under besides JSON's own: none at all,
#: bytes, text.
_VAGUE_TYPES: Final = frozenset({"", "application/octet-stream", "text/plain"})
_BLANK: Final = b"\xef\xbb\xbf \t\r\n"  # a byte order mark, white space


async def read_start(
    response: httpx.Response,
    content_type: str | None = None,
    within: float = math.inf,
    *,
    start: bytes = b"",
    rest: AsyncGenerator[bytes, None] | None = None,
    whole: bool = False,
) -> bytes:
    """The start of ``response``'s body, ``ERROR_BODY_LIMIT`` bytes and at most a piece
    more; what came before a transport failure (the status says enough), but a body
    that cannot be decoded raises ``httpx.DecodingError`` (gzip said, and something
    else sent: an empty body it is not). A 2xx answer's
    ``content_type`` that is not JSON: what came in ``QUOTE_WAIT`` seconds after the
    first piece, ``_QUOTE_LIMIT`` bytes at most. An error's event stream (by its type,
    or a body that starts as one, whatever its type: ``dsh.llm._error_events``): up to
    its first error object, whose event is the error: a server may keep the stream open
    after it. Whatever the body, what came ``within`` seconds (the model's read timeout:
    a server may trickle its body a byte at a time, each in time for the read timeout).
    ``start``: what was read of it already, ``rest`` its pieces to come (by default the
    whole body). ``whole``: a JSON answer, read to its end (``EVENT_LIMIT`` at most)."""
    quick = content_type is not None and not _is_json(content_type) and not whole
    limit = EVENT_LIMIT if whole else _QUOTE_LIMIT if quick else ERROR_BODY_LIMIT
    streamed = content_type is None and is_event_stream(response.headers.get("content-type", ""))
    watch = SSEParser() if streamed else None
    sniff = content_type is None and not streamed  # its start may tell
    body = start
    try:  # closed here, not left to the garbage collector (trio warns of that)
        async with aclosing(body_of(response) if rest is None else rest) as parts:
            now = anyio.current_time()
            quoted = quick and bool(body)  # the wait for a quote has begun (``start``)
            wait = min(within, QUOTE_WAIT) if quoted else within
            with anyio.CancelScope(deadline=now + wait) as waiting:
                async for part in parts:
                    body += part
                    if sniff and (starts := events_start(body)) is not None:
                        sniff = False
                        if starts:  # watched from its first byte
                            watch, part = SSEParser(), body
                    if len(body) > limit or (watch is not None and _has_error(watch, part)):
                        break
                    if quick and not quoted:
                        quoted = True
                        waiting.deadline = min(waiting.deadline, anyio.current_time() + QUOTE_WAIT)
    except httpx.DecodingError:
        raise
    except httpx.HTTPError:
        pass
    return body


def _has_error(watch: SSEParser, part: bytes) -> bool:
    """Whether ``part`` of an event stream ends an event whose data is an error object."""
    try:
        return any(error_in(data) is not None for data in watch.feed(part))
    except ModelError:  # a line too long for the parser: read on, as any body
        return False


async def unstreamed(
    response: httpx.Response,
    model: str,
    protocol: str | None,
    within: float,
    secrets: tuple[str, ...],
    server: str,
    path: str | None = None,
) -> Events:
    """The events of a 2xx ``response`` whose Content-Type is not an event stream: its
    body's, if it starts as an event stream does (whatever its type); the events of a
    whole JSON answer in ``protocol``'s shape (``dsh.llm._whole_answer``). Anything else
    raises the error ``not_streamed`` words. ``within``: the read timeout (the time
    its start, and a body that is not a stream, are read for at most). ``path``:
    the API's path the request went to, after base_url's (``/chat/completions``)."""
    kind = response.headers.get("content-type", "")
    source = f"model {model!r}: the server at {server}"
    rest, start = body_of(response), b""
    deadline = anyio.current_time() + within
    try:  # the start tells: its first bytes that are not white space
        with anyio.CancelScope(deadline=deadline):
            async for part in rest:
                start += part
                if events_start(start) is not None:
                    break
    except httpx.TransportError:  # what came is quoted (read_start reads no more)
        pass
    if events_start(start):
        return Events(response, source, start, rest)
    # JSON, read whole: by its type, or its start under a type that says little (not a
    # stream of JSON lines, application/x-ndjson, which may go on for minutes)
    media = kind.partition(";")[0].strip().lower()
    json = start.lstrip(_BLANK)[:1] in (b"{", b"[") and (_is_json(kind) or media in _VAGUE_TYPES)
    left = max(deadline - anyio.current_time(), 0.0)
    body = await read_start(response, kind, left, start=start, rest=rest, whole=json)
    if json:
        try:
            payload = loads(body)
        except ValueError:
            payload = None
        if error_object(payload) is None:
            whole = answer_events(protocol, payload)
            if whole is not None:
                return Events(response, source, whole.events, _ended(), whole.fields)
    expected = EXPECTED.get(protocol or "")
    status = response.status_code
    raise not_streamed(model, status, kind, body, secrets, server, expected, path)


async def _ended() -> AsyncGenerator[bytes, None]:
    """The rest of a body read to its end: nothing."""
    nothing: tuple[bytes, ...] = ()
    for piece in nothing:
        yield piece


def not_streamed(
    model: str,
    status: int,
    content_type: str,
    body: bytes,
    secrets: tuple[str, ...],
    server: str | None = None,
    expected: str | None = None,
    path: str | None = None,
) -> ModelError:
    """The error for a ``status`` answer of ``content_type`` (not an event stream) whose
    body starts with ``body``, from ``server`` (named); ``secrets`` hidden. ``expected``:
    the whole JSON answer that would have been read, as a message names it; ``path``:
    the API's path the request went to, named when the body is a web page (a base_url
    that names a web UI, a login page, a portal; the server is named, never base_url's
    path, which may hold a key)."""
    got = redact(content_type, secrets) or "no content type"
    text = body.decode("utf-8", "replace")
    error = _error_object(text)
    by = sent_by(server, secrets)
    if error is not None:
        where = f"HTTP {status}{by} ({got}, not an event stream)"
        return error_from_body(model, error, secret=secrets, where=where)
    start = quoted_start(text, secrets, cut="...")
    said = f"whose body starts {start}" if text else "with an empty body"
    if path is not None and _is_page(content_type, text):
        hint = f"a web page: is base_url the API's address? requests go to base_url + {path}"
    else:
        hint = f"neither an event stream nor {expected}; " if expected else ""
        hint += "does the server stream?"
    return ModelError(
        "MALFORMED_RESPONSE",
        f"model {model!r}: expected a text/event-stream answer{by}, got {got!r} {said} ({hint})",
    )


def _is_page(content_type: str, text: str) -> bool:
    """Whether a body is a web page: by its type, or its start (``<!DOCTYPE html``,
    ``<html``)."""
    if content_type.partition(";")[0].strip().lower() == "text/html":
        return True
    return text.lstrip()[:14].lower().startswith(("<!doctype html", "<html"))


def _is_json(content_type: str) -> bool:
    """Whether a Content-Type is JSON (``application/json``, ``application/problem+json``;
    not ``application/x-ndjson``, a stream of lines)."""
    media = content_type.partition(";")[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def _error_object(text: str) -> Mapping[str, Any] | None:
    """The error object of a JSON error body, wrapped as ``{"error": ...}`` when the
    server sent it bare; None for any other body."""
    try:
        payload = loads(text)
    except ValueError:
        return None
    if isinstance(payload, list) and payload:  # Gemini: a list of one error
        payload = payload[0]
    return error_object(payload)


def error_object(payload: object) -> Mapping[str, Any] | None:
    """``payload`` (decoded JSON: a body, a chunk) as an error object
    (``{"error": ...}``) if it is one: with a non-null ``error`` member, or an
    error object without that wrapper (``{"type"|"object": "error", ...}``, with no
    ``choices``), then wrapped; None for anything else."""
    if not isinstance(payload, Mapping):
        return None
    if payload.get("error") is not None:
        return payload
    if not payload.get("choices") and (
        payload.get("type") == "error" or payload.get("object") == "error"
    ):
        return {"error": payload}
    return None
