"""What the HTTP adapters share: settings, one client, retries, SSE events (the API key:
``dsh.llm._api_key``).

A request is retried (with backoff and jitter, at most ``max_retries`` times) only
while nothing of the answer has been received: on connection failures and on 408, 429
and 5xx responses. One lost on a reused connection the server had closed is first sent
again at once, silently, without counting, past each such pooled connection
(``dsh.llm._resend``). Once the response is
streaming, a failure ends the stream with an error and is never replayed. Leaving the
``events`` block (as an abort does) closes the HTTP response, and with it the
connection, at once.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, ClassVar, Final
from urllib.parse import urlsplit, urlunsplit

import anyio
import anyio.lowlevel
import httpx

from dsh._secrets import (
    get_logger,
    header_secrets,
    known_keys,
    longest_first,
    query_secrets,
    redact,
    remember,
)
from dsh.config import ModelConfig
from dsh.errors import ConfigError, ModelError
from dsh.llm import _origin as words
from dsh.llm import _pool, _proxied, _resend
from dsh.llm._api_key import KeyedModel
from dsh.llm._errors import error_from_status, error_from_transport, noted, undecodable
from dsh.llm._not_streamed import is_event_stream, read_start, unstreamed
from dsh.llm._redact_answer import hidden
from dsh.llm._retry_after import retry_after
from dsh.llm._sse import Events
from dsh.llm.base import Chunk, ModelInfo
from dsh.messages import ModelRequest

__all__ = ["HttpModel"]

log = get_logger(__name__)
_BACKOFF_CAP: Final = 8.0
# After the final event a server ends the response at once; waiting this long for that
# lets the connection go back to the pool (otherwise it is closed, which is also fine).
_DRAIN_WAIT: Final = 0.25
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


class HttpModel(KeyedModel):
    """Base of the models served over HTTP; subclasses implement ``chunks`` (the
    answer as the server streams it), never ``stream``: ``stream`` wraps ``chunks`` and
    hides every key dsh has read from the answer (a subclass that overrides it streams
    the keys a server or proxy writes into an answer into the session and the logs).

    ``name`` is the name the model is registered under; ``config`` its settings (the
    provider's defaults already filled in, see ``dsh.llm.providers.build_model``).
    ``env`` is where the API key is read (default ``os.environ``), at each request.
    ``backoff`` is the first retry delay in seconds (doubled each retry, with jitter);
    a ``retry-after`` longer than ``max_wait`` (default: the config's) is not waited
    for. ``key_optional``:
    an unset ``api_key_env`` variable means "send no key" instead of an AUTH error
    (a provider's default variable, with a base_url of your own, e.g. a local server).
    ``origin``: where the settings come from, for messages to name them
    (``dsh.llm._origin``; default: a ``models:`` entry that names ``api_key_env``).

    Use ``async with model:`` or ``await model.aclose()`` to close its connections.
    """

    default_base_url: ClassVar[str | None] = None
    protocol: ClassVar[str | None] = None  #: its protocol's name (dsh._provider_table)

    def __init__(
        self,
        name: str,
        config: ModelConfig,
        *,
        env: Mapping[str, str] | None = None,
        backoff: float = 0.5,
        max_wait: float | None = None,
        key_optional: bool = False,
        origin: words.Origin | None = None,
    ) -> None:
        base_url = config.base_url or self.default_base_url
        if not base_url:
            reason = f"provider {config.provider!r} needs a base_url (e.g. http://host:port/v1)"
            raise ConfigError("model settings", f"models.{name}.base_url", reason)
        self.name = name
        self.config = config
        #: The provider's name for the model (sent in every request).
        self.model_id = config.model or name
        # The adapter's path goes after base_url's path and before its query (Azure's
        # ?api-version=..., a proxy's ?key=value), which every request keeps.
        parts = urlsplit(base_url)
        self._root = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
        self._query = f"?{parts.query}" if parts.query else ""
        self.base_url = self._root + self._query
        # A key written into the query (?api-key=..., ?key=...; as written and as httpx
        # writes it) is shown wherever the address is (httpx's INFO record of each
        # request), a credential in headers where a server quotes it: hidden as keys.
        shown = {*query_secrets(base_url), *query_secrets(str(httpx.URL(base_url)))}
        shown.update(header_secrets(config.headers))
        self._written_secrets = longest_first(shown)
        remember(self._written_secrets)  # hidden from log records; a registry reads them
        self._info = ModelInfo(
            name,
            config.provider,
            context_window=config.context_window,
            max_output_tokens=config.max_output_tokens,
            max_wait=config.max_wait if max_wait is None else max_wait,
        )
        self._env = env
        self._backoff = backoff
        self._max_wait = self._info.max_wait
        self._key_optional = key_optional
        self._origin = words.Origin() if origin is None else origin
        self._max_wait_set = max_wait is None  # the config's: its setting is named
        #: the server, as messages name it: scheme, host and port (``_origin.server_of``)
        self.server = words.server_of(self._root)
        self._timeout = httpx.Timeout(config.timeout, read=config.read_timeout or config.timeout)
        #: how long an error's body (or a 2xx answer's that is not a stream) is read
        self._read_within = config.read_timeout or config.timeout
        self._client: httpx.AsyncClient | None = None
        self._loop: object = None

    @property
    def info(self) -> ModelInfo:
        return self._info

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self.name!r}, model={self.model_id!r}, "
            f"base_url={redact(self.base_url, self._written_secrets)!r})"
        )

    async def aclose(self) -> None:
        """Close the pooled connections (the model can still be used afterwards)."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def __aenter__(self) -> HttpModel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def url(self, path: str) -> str:
        """The address of the API's ``path`` (``/chat/completions``): ``base_url``'s
        path, then ``path``, then ``base_url``'s query, if it has one."""
        return self._root + path + self._query

    def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        """Stream the answer to ``request``: the adapter's ``chunks``, with every key dsh
        has read hidden from its text, reasoning and tool calls' arguments (a server or
        proxy may write one into it; see ``dsh.llm._redact_answer``). Without any key
        known, the adapter's chunks as they are."""
        chunks = self.chunks(request)
        secrets = {self.config.api_key(self._env) or "", *self._written_secrets, *known_keys()}
        found = longest_first(secrets)
        return hidden(chunks, found) if found else chunks

    def chunks(self, request: ModelRequest) -> AsyncGenerator[Chunk, None]:
        """The answer to ``request`` as the server streams it (implemented by each
        adapter; ``stream`` hides the keys in it)."""
        raise NotImplementedError

    def _http(self) -> httpx.AsyncClient:
        # A client's pooled connections belong to the event loop that opened them. One of
        # another loop is dropped, not closed: that loop may be closed (nothing of it can
        # be awaited) or run in another thread, with a request of its own under way.
        loop = anyio.lowlevel.current_token()
        client = self._client
        if client is None or self._loop != loop:
            client = _pool.client(self.name, self._timeout)
            self._client, self._loop = client, loop
        return client

    @asynccontextmanager
    async def events(
        self, path: str, body: dict[str, Any], headers: dict[str, str], secret: str | None
    ) -> AsyncIterator[Events]:
        """POST ``body`` as JSON to ``url(path)``; the block iterates the data of
        the response's server-sent events.

        ::

            async with self.events(path, body, headers, key) as events:
                async for data in events:
                    ...

        Leaving the block (finished, failed, closed or cancelled) closes the response.
        """
        response = await self._open(path, body, headers, secret)
        source: Events | None = None
        try:
            if is_event_stream(response.headers.get("content-type", "")):
                source = Events(response, f"model {self.name!r}: the server at {self.server}")
            else:  # a stream under another type, a whole JSON answer, a JSON error...
                hide = self.error_secrets(secret)
                within = self._read_within
                source = await unstreamed(
                    response, self.name, self.protocol, within, hide, self.server, path
                )
            yield source
        except httpx.HTTPError as exc:
            error = self._transport_error(exc, secret, streaming=True)
            raise error from error.__cause__  # exc, unless its text shows the key
        finally:
            # shielded: an abort cancels the step, and the connection must close anyway
            with anyio.CancelScope(shield=True):
                try:
                    if source is not None:
                        await source.aclose()
                finally:
                    await response.aclose()

    async def drain(self, events: Events) -> None:
        """Read to the end of the response after the final event, so that the
        connection can be reused. Whatever still comes is ignored."""
        with anyio.move_on_after(_DRAIN_WAIT):
            try:
                async for _ in events:
                    pass
            except httpx.HTTPError:
                pass

    async def _open(
        self, path: str, body: dict[str, Any], headers: dict[str, str], secret: str | None
    ) -> httpx.Response:
        client = self._http()
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
        try:
            content = text.encode()
        except UnicodeEncodeError:
            # A lone surrogate (a file name that is not UTF-8, say) is not UTF-8 either:
            # the model is sent U+FFFD in its place; the session log keeps the original.
            content = _LONE_SURROGATE.sub("\ufffd", text).encode()
        headers = _merged(
            {"content-type": "application/json", "accept": "text/event-stream", **headers},
            self.config.headers,
        )
        request = client.build_request("POST", self.url(path), content=content, headers=headers)
        attempt = 0
        resent = 0  # silently: past each pooled connection the server had closed
        while True:
            sent = _resend.Attempt()
            request.extensions = {**request.extensions, "trace": sent}
            try:
                response = await client.send(request, stream=True)
            except httpx.HTTPError as exc:
                if sent.lost(exc) and resent <= _pool.MAX_CONNECTIONS:
                    resent += 1  # the server never saw it: not a retry (_resend.py)
                    continue
                proxy = sent.proxy(request.url)
                error = self._transport_error(exc, secret, streaming=False, proxy=proxy)
                retry, asked = _resend.worth_another_try(exc), None
            else:
                if 200 <= response.status_code < 300:
                    return response
                error, retry = await self._failed(response, secret, path, sent.forwarded)
                # a wait over its cap (a day): the server's own, to say it
                asked = retry_after(response.headers, cap=math.inf)
                if note := self.refusal_note(response.status_code, error.message, body):
                    error = noted(error, note)
            if not retry or attempt >= self.config.max_retries:
                raise error
            delay = self._delay(attempt, error.retry_after)
            if delay is None:  # error.retry_after is over max_wait
                origin = self._origin if self._max_wait_set else None
                why = words.over_max_wait(
                    self.name, error.retry_after, self._max_wait, origin, asked
                )
                raise noted(error, why)
            attempt += 1
            # said, not silent: the person waiting sees why (the message is secret-free)
            log.warning(
                "%s (%s); retrying in %.1f s%s (%d of %d)",
                error,
                error.code,
                delay,
                words.capped(error.retry_after, asked),
                attempt,
                self.config.max_retries,
            )
            await anyio.sleep(delay)

    def refusal_note(self, status: int, said: str, body: dict[str, Any]) -> str | None:
        """What to change when the server refused the request ``body`` with HTTP
        ``status`` saying ``said`` (the error's message); None: nothing to say."""
        return None

    async def _failed(
        self, response: httpx.Response, secret: str | None, path: str, proxy: str | None = None
    ) -> tuple[ModelError, bool]:
        """The error for ``response`` (via the forward ``proxy``?), and whether to retry."""
        hide, unread = self.error_secrets(secret), None
        try:
            body = await read_start(response, within=self._read_within)
        except httpx.DecodingError as exc:  # said in place of its words, the status kept
            body, unread = b"", undecodable(exc, hide, "")  # the status names the server
        finally:
            with anyio.CancelScope(shield=True):
                await response.aclose()
        status = response.status_code
        error, retry = error_from_status(
            self.name,
            status,
            body,
            response.headers,
            secret=hide,
            address=(self._root, path),
            unread=unread,
            server=self.server,
        )
        if status in (401, 403) and secret:  # refused: where the key came from
            error = noted(error, self._said(words.key_from))
        if proxy is not None:  # the proxy's own answer, or the server's: see _proxied
            named = _pool.named(self._root, proxy)
            if own := _proxied.answered(self.name, status, named):
                return own, False
            error = noted(error, f"the answer came through {named}, which may have sent it")
        return error, retry

    def _transport_error(
        self, exc: httpx.HTTPError, secret: str | None, *, streaming: bool, proxy: str | None = None
    ) -> ModelError:
        """The error for ``exc``, naming the server (and ``proxy``, ``host:port``, the
        proxy the request went through) and the timeouts' settings."""
        server, hide = self.server, self.error_secrets(secret)
        if proxy is not None and isinstance(exc, httpx.ProxyError):  # the proxy's own
            named, detail = _pool.named(self._root, proxy), redact(str(exc), hide)
            return _proxied.refused(self.name, exc, named, server, detail or "no reason")
        return error_from_transport(
            self.name,
            exc,
            streaming=streaming,
            secret=hide,
            server=server + _pool.through(self._root, proxy),
            within=words.timeouts(self.name, self.config, self._origin),
        )

    def _delay(self, attempt: int, retry_after: float | None) -> float | None:
        """Seconds before the next try; None when the server asks for too long a wait."""
        if retry_after is not None:
            return retry_after if retry_after <= self._max_wait else None
        return min(self._backoff * 2.0**attempt, _BACKOFF_CAP) * random.uniform(0.5, 1.0)


def _merged(own: dict[str, str], given: dict[str, str]) -> dict[str, str]:
    """The adapter's headers and the config's (``given``), which win whatever the case
    of their names: each name sent once (a gateway's ``Authorization`` was sent beside
    the default variable's key)."""
    names = {name.lower() for name in given}
    return {**{k: v for k, v in own.items() if k.lower() not in names}, **given}
