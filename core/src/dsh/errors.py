"""Error types: one per failure family, each with a code, a message and its origin."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from dsh._quoted import repr_cut

__all__ = [
    "AgentDisposedError",
    "ConfigError",
    "DshError",
    "EventDataError",
    "EventTypeError",
    "HistoryReducerError",
    "HookError",
    "ModelError",
    "PluginLoadError",
    "PluginValidationError",
    "SessionInUseError",
    "StepLimitError",
    "TurnError",
    "exception_words",
]


class DshError(Exception):
    """Base of every error dsh raises on purpose.

    ``code`` is a stable, machine-readable name of the failure family; ``str(error)``
    is the message a person reads. A copy (``copy.copy``, ``copy.deepcopy``) or a pickled
    error (sent to another process) keeps its type, message and every attribute.
    """

    code: str = "DSH"
    #: The status a ``dsh`` command exits with when it stops with this error: 2, a usage
    #: or configuration error; a subclass for a failure that may pass when tried again
    #: (another process holds a session) sets 1.
    exit_status: int = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt without calling __init__, whose arguments are a subclass's own (a
        # plugin's name, a cause), not ``args`` (the message): from ``args`` and every
        # attribute as they are. So ``copy``, ``deepcopy`` and ``pickle`` (to another
        # process) give an equal error, of any subclass, a plugin's too.
        return _rebuilt, (type(self), self.args), self.__dict__


def _rebuilt(cls: type[BaseException], args: tuple[Any, ...]) -> BaseException:
    error = cls.__new__(cls, *args)
    error.args = args  # OSError's __new__ leaves them to an __init__ a subclass replaced
    return error


class AgentDisposedError(DshError):
    """A prompt was sent to an agent that is disposed (or being disposed)."""

    code = "AGENT_DISPOSED"


class HookError(DshError):
    """A hook implementation raised. Names the plugin and the hook. The message (and
    ``for_user()``) quotes the cause with each secret dsh holds as ``***`` (a model API
    key, a plugin's secret variable, what ``Harness.add_secrets`` added: ``dsh.redact``);
    ``cause`` is the exception as raised."""

    code = "HOOK"

    def __init__(self, plugin: str, hook: str, impl: str, cause: BaseException) -> None:
        super().__init__(
            f"plugin {plugin!r} failed in hook {hook} (impl {impl}): "
            + _hidden(_failure_words(cause))
        )
        self.plugin = plugin
        self.hook = hook
        self.impl = impl
        self.cause = cause
        # hidden now, with the secrets this process holds (a copy in another process,
        # unpickled, holds none of them)
        self._for_user = (
            f"{_hidden(str(cause))} (plugin {plugin!r})" if isinstance(cause, DshError) else None
        )

    def for_user(self) -> str:
        """As a command tells it: a plugin's own ``DshError`` in its words, naming the
        plugin (how it was called is for ``-v``); any other failure whole."""
        return str(self) if self._for_user is None else self._for_user


def exception_words(exc: BaseException) -> str:
    """``exc`` in words, as dsh says a failure: ``Type: message``, or ``Type`` alone when
    its message is empty (``EOFError``, not ``EOFError: ``). Not redacted: pass what a
    person or model reads through ``dsh.redact``."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _failure_words(cause: BaseException) -> str:
    """``Type: message``; a stray cancellation's, which says nothing, says why it is a
    failure (imported when needed: ``import dsh`` imports no asyncio)."""
    from dsh._stray import failure_words

    return failure_words(cause)


def _hidden(text: str) -> str:
    """``text`` with the secrets dsh holds hidden (imported when needed: ``import dsh``
    stays cheap)."""
    from dsh._secrets import redact

    return redact(text)


class HistoryReducerError(DshError):
    """A plugin's history reducer raised on an event. Names the plugin, the event's
    type and seq, and the reducer; the cause is quoted with the secrets dsh holds
    hidden (``cause`` is the exception as raised). Raised by ``Session.emit`` (the
    event is then not logged and the history is as it was) and by loading a stored log
    (a resume) that holds an event the reducer refuses."""

    code = "HISTORY_REDUCER"

    def __init__(
        self, plugin: str, event_type: str, seq: int, reducer: str, cause: BaseException
    ) -> None:
        super().__init__(
            f"plugin {plugin!r}: its history reducer for {event_type!r} ({reducer}) "
            f"failed on event {seq}: " + _hidden(exception_words(cause))
        )
        self.plugin = plugin
        self.event_type = event_type
        self.seq = seq
        self.reducer = reducer
        self.cause = cause


class PluginValidationError(DshError):
    """A plugin cannot be registered: unknown hook, wrapper impl, bad signature."""

    code = "PLUGIN_INVALID"

    def __init__(self, plugin: str, message: str) -> None:
        super().__init__(f"plugin {plugin!r}: {message}")
        self.plugin = plugin


class PluginLoadError(DshError):
    """An entry-point plugin failed to import or register; start-up stops. Every other
    plugin is still tried: those that failed too are in ``more`` (and the message)."""

    code = "PLUGIN_LOAD"

    def __init__(
        self,
        name: str,
        distribution: str,
        value: str,
        cause: BaseException,
        more: Sequence[PluginLoadError] = (),
        *,
        uninstall: str = "",
    ) -> None:
        super().__init__(
            f"plugin {name!r} (distribution {distribution}, entry point "
            f"{name} = {value}) failed to load: {type(cause).__name__}: {cause}\n"
            + leave_out(name, uninstall or distribution)
            + "".join(f"\n{other}" for other in more)
        )
        self.name = name
        self.distribution = distribution
        self.value = value
        self.cause = cause
        self.more = tuple(more)
        #: what the message says to uninstall (both distributions of a clashing name)
        self.uninstall = uninstall or distribution

    def paragraphs(self) -> list[str]:
        """The message as one paragraph per plugin that failed (its failure and way out),
        for a front end to prefix each (``dsh: warning: ``)."""
        others = [other.message for other in self.more]
        first = self.message.removesuffix("".join(f"\n{other}" for other in others))
        return [first, *others]


def leave_out(plugin: str, distribution: str) -> str:
    """How to run dsh without an installed plugin that fails (to load, or at start-up)."""
    return (
        f"  disable it with `-p no:{plugin}`, or choose plugins with "
        f"DSH_LOAD_PLUGINS=a,b, or uninstall {distribution}"
    )


class ConfigError(DshError):
    """Configuration is invalid. Names the file, the key path and the reason: of the
    first problem in the file, with the others in ``more`` (``problems`` is all of
    them, in file order; ``dsh config check`` prints each)."""

    code = "CONFIG"

    def __init__(
        self, source: str, path: str, reason: str, more: Sequence[ConfigError] = ()
    ) -> None:
        where = f"{source}: {path}" if path else source
        #: This one problem as a line: ``file:line:column: key.path: reason``.
        self.problem = f"{where}: {reason}"
        self.more = tuple(more)
        count = len(self.more)
        also = f" ({count} more problem{'s' if count > 1 else ''} in the file)" if count else ""
        super().__init__(self.problem + also)
        self.source = source
        self.path = path
        self.reason = reason

    @property
    def problems(self) -> tuple[ConfigError, ...]:
        return (self, *self.more)


class EventDataError(DshError):
    """Event data is not lossless JSON and was refused before entering the log."""

    code = "EVENT_DATA"

    def __init__(self, event_type: str, path: str, reason: str) -> None:
        super().__init__(f"event {event_type!r} data at {path}: {reason}")
        self.event_type = event_type
        self.path = path
        self.reason = reason


class EventTypeError(DshError):
    """An event type a plugin may not log (one of the core's, or not ``name/what``),
    refused before entering the log."""

    code = "EVENT_TYPE"

    def __init__(self, event_type: str, reason: str) -> None:
        super().__init__(f"event type {event_type!r}: {reason}")
        self.event_type = event_type
        self.reason = reason


class SessionInUseError(DshError):
    """A session another agent is continuing (in another process, another harness
    sharing the store, or this harness) holds its claim: an agent created or resumed on
    it is refused until that one is disposed. Raised by persistence plugins
    (dsh-persistence's is its ``PersistenceError`` too), ``dsh.testing.InMemoryPersistence``
    and ``harness.agents`` itself for a session an agent of the same harness runs or is
    starting on (``session '...' is in use: it is already live in this harness``)."""

    code = "SESSION_IN_USE"
    exit_status = 1  # not a mistake of the command: it may pass when tried again


class StepLimitError(DshError):
    """A turn reached the agent's ``max_steps`` and was ended."""

    code = "MAX_STEPS"


class ModelError(DshError):
    """A model call failed. ``code`` is one of the provider failure codes:

    AUTH, RATE_LIMIT, CONTEXT_WINDOW_EXCEEDED, INVALID_REQUEST, SERVER, TIMEOUT,
    TRANSPORT, STREAM_CLOSED, MALFORMED_RESPONSE, NO_MODEL, UNKNOWN; and REFUSED, raised
    by the loop for an answer the provider stopped (stop reason ``error``).

    ``retry_after``: the wait in seconds the server asked for, if it said. For a
    CONTEXT_WINDOW_EXCEEDED, ``context_window`` is the context window in tokens the
    server says the model has, and ``request_tokens`` the size in tokens it counted for
    the refused request (its prompt); each None when the server's error does not say.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        retry_after: float | None = None,
        context_window: int | None = None,
        request_tokens: int | None = None,
    ) -> None:
        if not isinstance(code, str):  # logged in the turn's end: JSON, as it is stored
            raise TypeError(
                f"ModelError code must be a str, not {type(code).__name__}: {repr_cut(code, 80)}"
            )
        if retry_after is not None and retry_seconds(retry_after) is None:
            raise TypeError(
                "ModelError retry_after must be a finite number of seconds or None, not "
                f"{type(retry_after).__name__}: {repr_cut(retry_after, 80)}"
            )
        super().__init__(message)
        self.code = code
        self.retry_after = retry_after
        self.context_window = context_window
        self.request_tokens = request_tokens


class TurnError(DshError):
    """A turn that ended ``error``, raised by ``TurnResult.raise_for_error()``. ``code``
    and ``reason_message`` are the turn's own (``RATE_LIMIT``, ``MAX_STEPS``, ``HOOK``,
    ...: the code its ``turn/end`` event names); ``plugin`` and ``hook`` name the plugin
    that failed, when one did; ``retry_after`` is the wait in seconds the server asked
    for (a ``Retry-After`` header on a 429, 503 or other error, or ``retry_after`` in
    its error body), if it gave one; ``turn`` is the turn's number."""

    code = "TURN"

    def __init__(
        self,
        turn: int,
        code: str,
        message: str,
        plugin: str | None = None,
        hook: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"turn {turn} failed: {code}" + (f": {message}" if message else ""))
        self.turn = turn
        self.code = code
        self.reason_message = message
        self.plugin = plugin
        self.hook = hook
        self.retry_after = retry_after


def retry_seconds(value: object) -> float | None:
    """``value`` if it is a number of seconds (a finite int or float, not a bool), else
    None."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return value if math.isfinite(value) else None
        except OverflowError:  # an int too large for a float
            return None
    return None
