"""Provider failures -> ``ModelError`` codes: HTTP statuses, error bodies, transport.

Every adapter maps failures through these functions, so the same failure gets the same
code whichever provider reported it. Messages name the model and quote the provider's
own words (shortened); an API key is never part of one: each function hides its
``secret``, the API key or every value to hide (the API key and the keys written into
``base_url``'s query, which a server may quote with the request's address:
``HttpModel.error_secrets``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import httpx

from dsh.errors import ModelError
from dsh.llm._error_events import streamed_error
from dsh.llm._not_found import not_found_hint
from dsh.llm._origin import seconds
from dsh.llm._pool import MAX_CONNECTIONS
from dsh.llm._redact_json import escapes_hidden, quoted_start
from dsh.llm._retry_after import body_wait, retry_after
from dsh.llm._window import context_sizes

if TYPE_CHECKING:
    from dsh.llm._origin import Timeouts

__all__ = [
    "RETRYABLE_STATUS",
    "error_from_body",
    "error_from_status",
    "error_from_transport",
    "malformed",
    "noted",
    "sent_by",
    "undecodable",
]

#: Statuses worth another try: the request was not served, nothing was streamed.
RETRYABLE_STATUS: Final = frozenset({408, 429, 500, 502, 503, 504, 529})
_MAX_MESSAGE = 300
#: What a message is cleared of: the API key, or every value to hide (the API key and
#: the keys written into base_url's query: ``HttpModel.error_secrets``); None for none.
Secrets: TypeAlias = str | Sequence[str] | None
# Provider error ``type``/``code`` values that mean "the prompt does not fit".
_CONTEXT_KINDS: Final = frozenset(
    {"context_length_exceeded", "exceed_context_size_error", "model_context_window_exceeded"}
)
# ...and the wording servers use when they give no such code (OpenAI, DeepSeek, vLLM,
# llama.cpp, Anthropic, Ollama, LM Studio, Gemini; _window.py quotes them).
_CONTEXT_WORDS: Final = re.compile(
    r"context[ _-]?(?:length|window|size|limit)|maximum model length|prompt is too long"
    r"|too many (?:input )?tokens|exceeds? the (?:available )?context"
    r"|input token count\W{0,3}[\d,]+\W{0,3} exceeds",
    re.IGNORECASE,
)
# Provider error types that name the failure family outright (Anthropic's, mostly).
_KIND_CODES: Final = {
    "authentication_error": "AUTH",
    "permission_error": "AUTH",
    "invalid_api_key": "AUTH",
    "rate_limit_error": "RATE_LIMIT",
    "rate_limit_exceeded": "RATE_LIMIT",
    "insufficient_quota": "RATE_LIMIT",
    "overloaded_error": "SERVER",
    "api_error": "SERVER",
    "server_error": "SERVER",
    "timeout_error": "TIMEOUT",
    "invalid_request_error": "INVALID_REQUEST",
    "not_found_error": "INVALID_REQUEST",
    "request_too_large": "INVALID_REQUEST",
}


def _status_code(status: int) -> str:
    if status in (401, 403):
        return "AUTH"
    if status == 429:
        return "RATE_LIMIT"
    if status == 408:
        return "TIMEOUT"
    if status >= 500:
        return "SERVER"
    return "INVALID_REQUEST"


def _first(payload: Any) -> Any:
    """The first error of a body that lists them (Gemini's ``[{"error": {...}}]``)."""
    if isinstance(payload, list) and payload and isinstance(payload[0], Mapping):
        return payload[0]
    return payload


def _details(payload: Any) -> tuple[str, str]:
    """(kind, message) from the error shapes servers send; kind may be ""."""
    if isinstance(payload, Mapping):
        inner = payload.get("error", payload)
        if isinstance(inner, str):  # Ollama: {"error": "..."}
            return "", inner
        if isinstance(inner, Mapping):
            message = inner.get("message") or inner.get("detail") or payload.get("detail")
            # a status written as text ("429": LiteLLM, Llama Stack) is a status, not a
            # kind, as the number is; "error" is the tag of an error event, not its kind
            kinds = [
                k
                for k in (inner.get("code"), inner.get("type"))
                if isinstance(k, str) and k != "error" and _status(k) is None
            ]
            kind = next((k for k in kinds if k in _CONTEXT_KINDS), "")
            kind = kind or next(iter(kinds), "")
            if message is None:  # shortened once the key is hidden (a cut could split it)
                message = json.dumps(inner)
            return kind, message if isinstance(message, str) else json.dumps(message)
    return "", str(payload)


def _status(code: object) -> int | None:
    """An error object's ``code`` as an HTTP-like status: a number, or three digits as
    text from 100 to 599; None for anything else (``"rate_limit_exceeded"``, or a
    provider's own number as text, ``"1301"``, which stays the error's kind)."""
    if isinstance(code, str):
        if len(code) == 3 and code.isascii() and code.isdigit() and "100" <= code < "600":
            return int(code)
        return None
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"


def _redact(text: str, secret: Secrets) -> str:
    """``text`` with the key (or each of the keys) hidden: whole, or a start or end of
    at least half of it (a server that quotes the key cut short, as some do), also where
    written with JSON escapes (a raw body, words decoded from JSON that quote some)."""
    values = _values(secret)
    return escapes_hidden(text, values) if values else text


def _values(secret: Secrets) -> tuple[str, ...]:
    """The keys of ``secret``, longest first."""
    if not secret:
        return ()
    if isinstance(secret, str):
        return (secret,)
    return tuple(sorted((value for value in secret if value), key=len, reverse=True))


def malformed(
    model: str,
    what: str,
    data: str,
    error: Exception,
    secret: Secrets,
    server: str | None = None,
) -> ModelError:
    """MALFORMED_RESPONSE for a stream item that cannot be read, quoting its start: the
    key is hidden before the cut (a cut could leave a piece of it no longer matching).
    One line: the error's words (a pydantic error's are several lines) joined, cut.
    ``server``: the server that sent it (``dsh.llm._origin.server_of``), named."""
    shown = quoted_start(data, _values(secret))
    cause = _shorten(_redact(f"{type(error).__name__}: {error}", secret))
    message = f"model {model!r}: unreadable {what} {shown}{sent_by(server, secret)} ({cause})"
    return ModelError("MALFORMED_RESPONSE", message)


def _is_context(kind: str, message: str) -> bool:
    return kind in _CONTEXT_KINDS or _CONTEXT_WORDS.search(message) is not None


def error_from_status(
    model: str,
    status: int,
    body: bytes,
    headers: Mapping[str, str],
    *,
    secret: Secrets = None,
    address: tuple[str, str] | None = None,
    unread: str | None = None,
    server: str | None = None,
) -> tuple[ModelError, bool]:
    """The error for an HTTP error response (its body already read), and whether the
    request is worth another try. ``address``: (base_url without its query, which may
    hold a key; the API's path): named on a 404 whose words do not name the model, with
    the setting that makes it (a base_url without ``/v1`` is the likeliest mistake).
    ``unread``: what a body that could not be read is (``undecodable``), said instead.
    ``server``: the server that answered (``dsh.llm._origin.server_of``), named."""
    text = body.decode("utf-8", "replace")
    payload: Any = None
    try:
        payload = _first(json.loads(text))
        kind, message = _details(payload)
    except ValueError:  # an event stream whose event is the error, or not JSON at all
        payload = streamed_error(body, headers.get("content-type", ""))
        said = _details(payload) if payload is not None else None
        kind, message = said or ("", unread or text or httpx.codes.get_reason_phrase(status))
    if 300 <= status < 400:  # dsh does not follow redirects: the address is not the API's
        target = headers.get("location")
        kind, message = "", "the server redirects" + (f" to {target}" if target else "")
        message += "; set base_url to the API's own address"
    code = _status_code(status)
    if code not in ("AUTH", "RATE_LIMIT") and _is_context(kind, message):
        code = "CONTEXT_WINDOW_EXCEEDED"
    wait = retry_after(headers)
    if wait is None:
        wait = body_wait(payload)
    # an exhausted quota is not a burst limit: waiting does not help
    retry = status in RETRYABLE_STATUS and code != "CONTEXT_WINDOW_EXCEEDED"
    retry = retry and kind != "insufficient_quota"
    sizes = _sizes(code, payload, message)
    hint = not_found_hint(message, address) if status == 404 else ""
    message = _message(model, f"HTTP {status}{sent_by(server, secret)}", kind, message, secret)
    return ModelError(code, message + _redact(hint, secret), retry_after=wait, **sizes), retry


def _sizes(code: str, payload: Any, message: str) -> dict[str, int | None]:
    """A context-window error's ``context_window`` and ``request_tokens`` (``_window``),
    read from the server's words before they are shortened."""
    if code != "CONTEXT_WINDOW_EXCEEDED":
        return {}
    window, request = context_sizes(payload, message)
    return {"context_window": window, "request_tokens": request}


def _message(model: str, where: str, kind: str, message: str, secret: Secrets) -> str:
    """The provider's kind and words, cleared of the keys as a whole (a server may write
    the key it refused into the error's ``code`` or ``type``), then shortened (a cut
    could leave a piece of a key no longer matching)."""
    what = f"{kind}: {message}" if kind and kind not in _shorten(message) else message
    return f"model {model!r}: {where}: {_shorten(_redact(what, secret))}"


def error_from_body(
    model: str,
    payload: Any,
    *,
    secret: Secrets = None,
    where: str = "error in the stream",
    server: str | None = None,
) -> ModelError:
    """The error for an error object (``{"error": {...}}``) sent inside a stream, or
    as a 2xx answer that is not one (``where`` says which, ``server`` who sent it)."""
    kind, message = _details(payload)
    code = _KIND_CODES.get(kind, "SERVER")
    error = payload.get("error") if isinstance(payload, Mapping) else None
    status = _status(error.get("code")) if isinstance(error, Mapping) else None
    if kind not in _KIND_CODES and status is not None and 400 <= status < 600:
        code = _status_code(status)  # llama.cpp: {"error": {"code": 400, ...}}, LiteLLM "429"
    if code not in ("AUTH", "RATE_LIMIT") and _is_context(kind, message):
        code = "CONTEXT_WINDOW_EXCEEDED"
    sizes = _sizes(code, payload, message)
    message = _message(model, where + sent_by(server, secret), kind, message, secret)
    return ModelError(code, message, retry_after=body_wait(payload), **sizes)


def sent_by(server: str | None, secret: Secrets = None) -> str:
    """`` from the server at SERVER``, what a message says after what came; "" without
    a ``server``."""
    return f" from the server at {_redact(server, secret)}" if server else ""


def error_from_transport(
    model: str,
    exc: httpx.HTTPError,
    *,
    streaming: bool,
    secret: Secrets = None,
    server: str | None = None,
    within: Timeouts | None = None,
) -> ModelError:
    """The error for a failure of the connection itself, caused by ``exc``.

    ``streaming``: the response had begun, so the answer is cut off (STREAM_CLOSED)
    unless the server went quiet for too long (TIMEOUT). ``server``: its address as a
    message names it (``dsh.llm._origin.server_of``); ``within``: the model's timeouts
    and their settings, said by a TIMEOUT. The HTTP client quotes a header
    it refuses whole (one the server echoed the key in, say): the key is hidden in the
    message, and then ``exc`` is not kept as the cause (``dsh -v`` prints causes). A
    request the client refuses to send (``LocalProtocolError``: a header of ours that is
    not valid HTTP) is INVALID_REQUEST, whose message does not quote it at all (its repr
    of the header writes a line break as backslash-n, so a key in it is not matched).
    """
    at = f" at {_redact(server, secret)}" if server else ""
    error = _transport(model, exc, streaming, secret, at, within)
    # the client's refusal of a header quotes its repr, where a line break in the key is
    # a backslash and an n: a key so quoted is not matched, so it is never kept
    refused = isinstance(exc, httpx.LocalProtocolError)
    shows_key = refused or _redact(str(exc), secret) != str(exc)
    error.__cause__ = None if shows_key else exc
    error.__suppress_context__ = True
    return error


def _transport(
    model: str,
    exc: httpx.HTTPError,
    streaming: bool,
    secret: Secrets,
    at: str,
    within: Timeouts | None,
) -> ModelError:
    if isinstance(exc, httpx.LocalProtocolError):  # its text quotes the header: not used
        return ModelError(
            "INVALID_REQUEST",
            f"model {model!r}: the HTTP client refused to send the request "
            "(LocalProtocolError): a header of it is not valid HTTP (a value of the "
            "model's headers setting with a line break or a character beyond ASCII?)",
        )
    detail = _redact(str(exc), secret) or type(exc).__name__
    kind = type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        how_long = "the timeout"
        if within is not None:  # a read is timed by read_timeout, if set; the rest by timeout
            value, setting = within[1] if isinstance(exc, httpx.ReadTimeout) else within[0]
            how_long = seconds(value)
            kind = f"{setting}; {kind}" if setting else kind
        if isinstance(exc, httpx.PoolTimeout):  # the request never left: none was free
            return ModelError(
                "TIMEOUT",
                f"model {model!r}: no free connection within {how_long}: all "
                f"{MAX_CONNECTIONS} of this model's connections are busy with other "
                f"requests ({kind})",
            )
        if isinstance(exc, httpx.ConnectTimeout):  # a firewalled or mistyped host
            what = f"could not connect to the server{at}"
        else:
            what = f"{'no data' if streaming else 'no response'} from the server{at}"
        return ModelError("TIMEOUT", f"model {model!r}: {what} within {how_long} ({kind})")
    if isinstance(exc, httpx.DecodingError):
        return ModelError("MALFORMED_RESPONSE", f"model {model!r}: {undecodable(exc, secret, at)}")
    if isinstance(exc, httpx.ReadError | httpx.WriteError):  # a reset: no words, often
        words = detail if str(exc).strip() else "the server reset or closed the connection"
        detail = f"{words} ({kind})"
    if streaming:
        cut = f"the stream from the server{at} was cut off before it finished"
        return ModelError("STREAM_CLOSED", f"model {model!r}: {cut}: {detail}")
    if isinstance(exc, httpx.RemoteProtocolError):
        if "disconnected" in detail:  # "Server disconnected without sending a response."
            said = f"the server{at} closed the connection before answering ({kind})"
        else:
            said = f"the server{at} did not answer in HTTP: {detail}"
    elif isinstance(exc, httpx.ReadError | httpx.WriteError):  # reached: then it broke
        said = f"the connection to the server{at} broke before it answered: {detail}"
    else:
        said = f"cannot reach the server{at}: {detail}"
    return ModelError("TRANSPORT", f"model {model!r}: {said}")


def undecodable(exc: httpx.DecodingError, secret: Secrets, at: str) -> str:
    """What a body the client could not decode is (gzip said, and something else sent);
    ``at`` names the server (`` at http://host:port``)."""
    detail = _redact(str(exc), secret) or type(exc).__name__
    return f"the body from the server{at} could not be decoded: {detail} ({type(exc).__name__})"


def noted(error: ModelError, note: str) -> ModelError:
    """``error`` with ``note`` after its message, in brackets (its cause kept)."""
    found = ModelError(
        error.code,
        f"{error.message} ({note})",
        retry_after=error.retry_after,
        context_window=error.context_window,
        request_tokens=error.request_tokens,
    )
    found.__cause__, found.__suppress_context__ = error.__cause__, True
    return found
