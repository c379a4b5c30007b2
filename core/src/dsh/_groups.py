"""What an exception group (a task group's failure, nested perhaps) holds."""

from __future__ import annotations

__all__ = ["first", "only"]


def only(error: BaseException, kind: type[BaseException]) -> bool:
    """Whether ``error`` is a ``kind``, or a group made only of them."""
    if isinstance(error, BaseExceptionGroup):
        return all(only(inner, kind) for inner in error.exceptions)
    return isinstance(error, kind)


def first(error: BaseException) -> BaseException:
    """The first exception in ``error``, an exception group perhaps."""
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error
