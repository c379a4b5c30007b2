"""One hook impl, ready to call: what the dispatcher's plans (``dsh._calling``) hold."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from operator import itemgetter
from typing import Any, Final, final

from dsh.errors import HookError

__all__ = ["Impl", "binder", "called", "is_async_function"]


@final
class Impl:
    """One hook impl, ready to call: ``call(kwargs)`` passes only the names it takes.

    A slotted class rather than a NamedTuple: every call reads ``call`` and ``is_async``
    of each impl, and CPython specialises a slot read but not a NamedTuple field's."""

    __slots__ = ("argnames", "call", "function", "is_async", "plugin_name")

    def __init__(
        self,
        call: Callable[[dict[str, Any]], Any],
        function: Callable[..., Any],
        argnames: tuple[str, ...],
        is_async: bool,
        plugin_name: str,
    ) -> None:
        self.call: Final = call
        self.function: Final = function
        self.argnames: Final = argnames
        self.is_async: Final = is_async
        self.plugin_name: Final = plugin_name

    def __repr__(self) -> str:
        return f"Impl({self.plugin_name!r}, {self.describe()})"

    def describe(self) -> str:
        name = getattr(self.function, "__qualname__", repr(self.function))
        return f"{name}({', '.join(self.argnames)})"

    def fail(self, hook: str, exc: BaseException) -> HookError:
        return HookError(self.plugin_name, hook, self.describe(), exc)


def binder(function: Callable[..., Any], names: tuple[str, ...]) -> Callable[[dict[str, Any]], Any]:
    # Built once per impl when a plan is made: cheaper per call than building an
    # argument list each time.
    if not names:
        return lambda kwargs: function()
    if len(names) == 1:
        (name,) = names
        return lambda kwargs: function(kwargs[name])
    getter = itemgetter(*names)
    return lambda kwargs: function(*getter(kwargs))


def called(function: Callable[..., Any], names: tuple[str, ...]) -> tuple[Any, bool]:
    """``(call, is_async)`` of an impl: ``binder``'s call, and whether to await what it
    returns. A plain function wrapping an ``async def`` (``functools.wraps``) may pass
    the coroutine on or run it itself and return its result: its call gives an
    awaitable either way."""
    call = binder(function, names)
    if inspect.iscoroutinefunction(function):
        return call, True
    if not is_async_function(function):
        return call, False

    def awaitable(kwargs: dict[str, Any]) -> Any:
        result = call(kwargs)
        return result if inspect.isawaitable(result) else _ready(result)

    return awaitable, True


async def _ready(value: Any) -> Any:
    return value


def is_async_function(function: Callable[..., Any]) -> bool:
    """Whether calling ``function`` gives a coroutine to await: it is ``async def``, or it
    wraps one (a ``functools.wraps`` decorator passing the coroutine on), either way."""
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
        inspect.unwrap(function)
    )
